package dashboard_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// TestDashboardOpsBrowser resolves an exception in headless Chromium by
// matching it to its suggested order through the confirmation page (the
// ORDER_PAID and where it goes, said before; received at the loopback
// receiver after), follows the result to the notification in the log, and
// replays it through its confirmation; both engines, screenshots under make
// screenshots.
func TestDashboardOpsBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newOpsEnv(t, engine)
		ctx := browsertest.New(t, browsertest.Options{})
		shot := browsertest.ScreenshotOnce(t, ctx, engine)
		do, click, text := browsertest.Steps(t, ctx)
		do("sign in", chromedp.Navigate(e.base+"/dashboard/"), chromedp.WaitVisible("#email"),
			chromedp.SendKeys("#email", "boss@saomai.vn"),
			chromedp.SendKeys("#password", dashPassword))
		click("#signin")

		// The queue, from the navigation: the HTML memo as text.
		click(`nav a[href="/dashboard/exceptions"]`)
		if got := text("#exceptions tbody"); !strings.Contains(got, `<script>alert("memo")</script>`) || !strings.Contains(got, "160,000 VND") ||
			!strings.Contains(got, "INV-EXC (its outstanding amount is this transfer") {
			t.Fatalf("queue: %q", got)
		}
		shot("dashboard-exceptions.png")

		// X1: suggested INV-EXC; match it.
		click(`a[href="` + e.excPath("X1") + `"]`)
		if got := text("#suggestions"); !strings.Contains(got, "INV-EXC") || !strings.Contains(got, "outstanding amount") {
			t.Fatalf("suggestions: %q", got)
		}
		do("fill the form", chromedp.Click(`input[value="match:INV-EXC"]`), chromedp.SendKeys("#note", "Khách gõ nhầm hai chữ số"))
		shot("dashboard-exception.png")
		click("#resolve")
		// The confirmation: the order, what it will have paid, the IPN and its URL.
		if got := text("#confirm-what"); !strings.Contains(got, "INV-EXC") || !strings.Contains(got, "160,000 VND") ||
			!strings.Contains(got, "ORDER_PAID → "+e.rc.URL+"/ipn") || !strings.Contains(got, "Khách gõ nhầm hai chữ số") {
			t.Fatalf("confirmation: %q", got)
		}
		e.stillOpen(t, "X1")
		shot("dashboard-confirm-match.png")
		click("#confirm-button")
		if got := text("#result"); !strings.Contains(got, "INV-EXC") || !strings.Contains(got, "Captured") {
			t.Fatalf("result: %q", got)
		}
		if got := text("#res-note"); got != "Khách gõ nhầm hai chữ số" {
			t.Errorf("note %q", got)
		}
		paid := e.deliveryOf(t, e.live, "ORDER_PAID", "INV-EXC")
		testkit.WaitFor(t, "ORDER_PAID sent", 10*time.Second, func() bool {
			return e.rc.Seen(fmt.Sprint(paid.ID)) == 1
		})

		// The log: the ORDER_PAID is the newest; open and replay it.
		click(`nav a[href="/dashboard/notifications"]`)
		if got := text("#deliveries tbody tr:first-child"); !strings.Contains(got, "ORDER_PAID") {
			t.Fatalf("newest delivery: %q", got)
		}
		shot("dashboard-notifications.png")
		click("#deliveries tbody tr:first-child a")
		if got := text("#event"); got != "ORDER_PAID" {
			t.Fatalf("event %q", got)
		}
		if got := text("#payload"); !strings.Contains(got, `"order_invoice_number": "INV-EXC"`) {
			t.Errorf("payload: %q", got)
		}
		curl, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#curl").value`))
		if err != nil || !strings.HasPrefix(curl, "curl -X POST '"+e.rc.URL+"/ipn'") || !strings.Contains(curl, "X-Recon-Signature: v1=") {
			t.Errorf("cURL: %q %v", curl, err)
		}
		shot("dashboard-delivery.png")
		click("#replay")
		if got := text("#c-notification"); got != "ORDER_PAID → "+e.rc.URL+"/ipn" {
			t.Errorf("replay's confirmation: %q", got)
		}
		click("#confirm-button")
		if got := text("#replayed"); !strings.Contains(got, "queued") {
			t.Errorf("replay notice: %q", got)
		}
		testkit.WaitFor(t, "ORDER_PAID replayed", 10*time.Second, func() bool {
			return e.rc.Seen(fmt.Sprint(paid.ID)) == 2
		})
	})
}
