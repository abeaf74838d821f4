package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// TestDashboardSearchBrowser searches the transactions in headless Chromium,
// both engines: a memo typed without accents with the matched state, a
// payment code typed in lower case, then the matched transfers a page at a
// time (Next, Newest) and the export link carrying the filters; screenshot
// dashboard-transactions-search.png under make screenshots.
func TestDashboardSearchBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		e.history(t)
		code := e.checkout(t, e.live, "INV-SEARCH", 42000, "Thanh toán đơn hàng INV-SEARCH")
		e.transfer(t, e.live, 42000, "Thanh toán "+code)
		e.transfer(t, e.live, 8000, "Nguyễn Văn Bình chuyển khoản tiền nhà")
		ctx := browsertest.New(t, browsertest.Options{})
		do, click, text := browsertest.Steps(t, ctx)
		do("sign in", chromedp.Navigate(e.base+"/dashboard/"), chromedp.WaitVisible("#email"),
			chromedp.SendKeys("#email", "boss@saomai.vn"),
			chromedp.SendKeys("#password", dashPassword))
		click("#signin")

		click(`nav a[href="/dashboard/transactions"]`)
		do("memo and state", chromedp.SendKeys("#f-memo", "nguyen van binh"), chromedp.SetValue("#f-matched", "unmatched"))
		click("#apply")
		if got := text("#transactions tbody"); !strings.Contains(got, "Nguyễn Văn Bình chuyển khoản tiền nhà") || strings.Count(got, "VND") != 1 {
			t.Errorf("memo search: %q", got)
		}
		if got := text("#searched"); !strings.Contains(got, "Searched") || !strings.Contains(got, "Nothing older is left to search.") {
			t.Errorf("what was searched: %q", got)
		}
		if got := text("#total"); !strings.Contains(got, "1 transfer found on this page") {
			t.Errorf("count line: %q", got)
		}
		if engine == "sqlite" {
			browsertest.Screenshot(t, ctx, "dashboard-transactions-search.png")
		}

		do("code", chromedp.Navigate(e.base+"/dashboard/transactions"), chromedp.SendKeys("#f-code", strings.ToLower(code)))
		click("#apply")
		if got := text("#transactions tbody"); !strings.Contains(got, code) || !strings.Contains(got, "42,000 VND") || strings.Count(got, "VND") != 1 {
			t.Errorf("code search: %q", got)
		}

		// The matched transfers, 5 a page: an exact total from the day counts.
		do("matched", chromedp.Navigate(e.base+"/dashboard/transactions"), chromedp.SetValue("#f-matched", "matched"), chromedp.SendKeys("#f-limit", "5"))
		click("#apply")
		total := text("#total")
		first := text("#transactions tbody")
		if !strings.HasSuffix(total, "transfers") || strings.Contains(total, "found on this page") || strings.Count(first, "VND") != 5 {
			t.Fatalf("matched: %q, %q", total, first)
		}
		click("#next")
		if second := text("#transactions tbody"); second == first || strings.Count(second, "VND") == 0 {
			t.Errorf("next page: %q", second)
		}
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#export").getAttribute("href")`))
		if err != nil || !strings.Contains(href, "matched=matched") || strings.Contains(href, "before=") {
			t.Errorf("export link %q (%v)", href, err)
		}
		click("#first")
		if got := text("#transactions tbody"); got != first {
			t.Errorf("Newest: %q, want %q", got, first)
		}
	})
}
