package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// TestDashboardLinksBrowser walks the links between pages in headless
// Chromium, in Vietnamese, both engines: from the home's unmatched count to
// the transactions list, from a transfer's row to its order, from the order
// to its customer's page, from there to the exception and back to the
// order, then the orders search by payment code; on a phone-sized window
// the customer's page fits its width. Screenshots dashboard-links-*.png
// under make screenshots.
func TestDashboardLinksBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newLinksEnv(t, engine)
		ctx := browsertest.New(t, browsertest.Options{Language: "vi"})
		shot := browsertest.ScreenshotOnce(t, ctx, engine)
		do, click, text := browsertest.Steps(t, ctx)
		do("sign in", chromedp.Navigate(e.base+"/dashboard/"), chromedp.WaitVisible("#email"),
			chromedp.SendKeys("#email", "boss@saomai.vn"), chromedp.SendKeys("#password", dashPassword))
		click("#signin")

		// Home → today's unmatched transfers: the count is the list's.
		tile := text("#today .n-unmatched")
		click("#today .n-unmatched")
		if got := text("#total"); !strings.HasPrefix(got, strings.Fields(tile)[0]+" ") {
			t.Errorf("the tile says %q, the list %q", tile, got)
		}
		do("all transfers", chromedp.Navigate(e.base+"/dashboard/transactions"))
		row := text(`#transactions tbody tr:has(a[href="/dashboard/transactions/` + e.underTx + `"])`)
		for _, want := range []string{"INV-L1", "Đã khớp", "Trả thiếu · Đang mở"} {
			if !strings.Contains(row, want) {
				t.Errorf("row: no %q in %q", want, row)
			}
		}
		shot("dashboard-links-transactions.png")

		// Row → order → customer → exception → order.
		click(`#transactions tbody tr:has(a[href="/dashboard/transactions/` + e.underTx + `"]) .tx-order`)
		if got := text("#invoice"); got != "INV-L1" {
			t.Fatalf("the row's order: %q", got)
		}
		if got := text("#order-transfers"); !strings.Contains(got, "60.000 ₫") || !strings.Contains(got, "Trả thiếu") {
			t.Errorf("the order's transfers: %q", got)
		}
		click("#customer-link")
		if got := text("#customer-id"); got != "KH-LINKS" {
			t.Fatalf("customer: %q", got)
		}
		if got := text("#customer-orders"); !strings.Contains(got, "INV-L1") || !strings.Contains(got, "INV-L2") || strings.Contains(got, "INV-PAID") {
			t.Errorf("the customer's orders: %q", got)
		}
		shot("dashboard-links-customer.png")
		click(`#customer-exceptions a[href="/dashboard/exceptions/` + e.underTx + `"]`)
		if got := text("#txid"); got != e.underTx {
			t.Fatalf("exception: %q", got)
		}
		click(`a[href="/dashboard/order?invoice=INV-L1"]`)
		if got := text("#invoice"); got != "INV-L1" {
			t.Errorf("the exception's order: %q", got)
		}

		// The orders search by payment code, typed in lower case.
		do("search", chromedp.Navigate(e.base+"/dashboard/orders"), chromedp.SendKeys("#o-q", strings.ToLower(e.code1)))
		click("#apply")
		if got := text("#orders tbody"); !strings.Contains(got, "INV-L1") || strings.Contains(got, "INV-L2") {
			t.Errorf("search by code: %q", got)
		}

		// On a phone-sized window the customer's page is no wider than the
		// screen (the same browser, its viewport made a phone's).
		do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch),
			chromedp.Navigate(e.base+"/dashboard/customers/KH-LINKS"), chromedp.WaitVisible("#customer-id"))
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
		if err != nil || wide {
			t.Errorf("the customer's page is wider than the phone (%v)", err)
		}
		shot("dashboard-links-customer-phone.png")
	})
}
