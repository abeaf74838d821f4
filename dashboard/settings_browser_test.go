package dashboard_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// TestDashboardSettingsBrowser walks the settings, bank accounts and
// sandbox screens in headless Chromium: the memo tester, a test
// notification that reaches a loopback receiver, a sandbox transfer that
// pays an order; screenshots under make screenshots.
func TestDashboardSettingsBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		ctx := browsertest.New(t, browsertest.Options{})
		do, click, text := browsertest.Steps(t, ctx)
		shot := browsertest.ScreenshotOnce(t, ctx, engine)
		do("sign in", chromedp.Navigate(e.base+"/dashboard/lang/en?back=/dashboard/signin"), chromedp.WaitVisible("#email"),
			chromedp.SendKeys("#email", "boss@saomai.vn"), chromedp.SendKeys("#password", dashPassword))
		click("#signin")

		// Settings: the memo tester with the company's formats.
		click("#nav-settings")
		do("memo", chromedp.SendKeys("#memo", "Nguyen Van A chuyen khoan dh 123456 / DH7654321"))
		click("#try")
		if got := text("#found-code"); got != "DH7654321" {
			t.Errorf("tester found %q", got)
		}
		if got := text("#summary"); got == "" {
			t.Error("no summary sentence")
		}
		// A test notification to the loopback receiver: it arrives.
		before := len(e.rc.Got())
		click("#test-ipn")
		if got := text("#test-sent"); !strings.Contains(got, "on its way") {
			t.Errorf("test notification: %q", got)
		}
		testkit.WaitFor(t, "the test notification", 30*time.Second, func() bool {
			for _, r := range e.rc.Got()[before:] {
				if bytes.Contains(r.Body, []byte(recon.TestNotificationEvent)) {
					return true
				}
			}
			return false
		})
		do("back to the tester", chromedp.SendKeys("#memo", "thanh toan DH2024001"))
		click("#try")
		shot("dashboard-settings.png")

		// Bank accounts.
		do("bank accounts", chromedp.Navigate(e.base+"/dashboard/bank-accounts"), chromedp.WaitVisible("#accounts"))
		if got := text("#account-" + fmt.Sprint(e.live.account)); !strings.Contains(got, "0071000123456") {
			t.Errorf("account row: %q", got)
		}
		shot("dashboard-bank-accounts.png")

		// Sandbox, in test mode: pay an order, which is then captured.
		e.checkout(t, e.test, "INV-SB-1", 250000, "Đơn thử nghiệm")
		click("#switch-mode")
		click("#nav-sandbox")
		do("invoice", chromedp.SendKeys("#pay-invoice", "INV-SB-1"))
		click("#pay-send")
		if got := text("#sandbox-done"); !strings.Contains(got, "arrived") {
			t.Fatalf("sandbox payment: %q", got)
		}
		shot("dashboard-sandbox.png")
		click("#sandbox-order")
		if got := text("#status"); got != "Captured" {
			t.Errorf("order after the sandbox payment: %q", got)
		}
	})
}
