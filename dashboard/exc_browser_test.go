package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// TestDashboardExceptionsBrowser closes exceptions in headless Chromium, in
// Vietnamese, as an accountant would (docs/dashboard.md, Exceptions an
// accountant can close (issue 22)): the totals and the memo search, two
// exceptions ignored at once through one confirmation, a match's
// overpayment warning, the remainder of an underpaid order asked for (its
// QR drawn in the history); then the queue on a phone fits the screen.
// Both engines; screenshots under make screenshots.
func TestDashboardExceptionsBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		over := e.checkout(t, e.live, "INV-OVER", 100000, "Đơn INV-OVER")
		xOver := e.pay(t, e.live, testkit.Typo(over), 150000)
		short := e.checkout(t, e.live, "INV-SHORT", 200000, "Đơn INV-SHORT")
		uShort := e.pay(t, e.live, short, 120000)
		for _, m := range []string{"LAI TIEN GUI THANG 10", "LAI TIEN GUI THANG 11"} {
			e.transfer(t, e.live, 1000, m)
		}
		ctx := browsertest.New(t, browsertest.Options{Language: "vi"})
		shot := browsertest.ScreenshotOnce(t, ctx, engine)
		do, click, text := browsertest.Steps(t, ctx)
		do("sign in", chromedp.Navigate(e.base+"/dashboard/lang/vi?back=/dashboard/signin"), chromedp.WaitVisible("#email"), chromedp.SendKeys("#email", "ketoan@saomai.vn"), chromedp.SendKeys("#password", dashPassword))
		click("#signin")
		do("the queue", chromedp.Navigate(e.base+"/dashboard/exceptions"), chromedp.WaitVisible("#totals"))
		if got := text("#totals"); !strings.Contains(got, "Đang mở") || !strings.Contains(got, "ngoại lệ") || !strings.Contains(got, "Trả thiếu") {
			t.Errorf("totals: %q", got)
		}
		shot("dashboard-exceptions-totals.png")
		do("memo search", chromedp.SendKeys("#x-q", "lãi tiền gửi"))
		click("#apply")
		if got := text("#total-count"); got != "2" {
			t.Fatalf("the memo search counts %q, want 2", got)
		}
		do("tick both", chromedp.Click(`#exceptions tbody tr:nth-child(1) input[type=checkbox]`), chromedp.Click(`#exceptions tbody tr:nth-child(2) input[type=checkbox]`),
			chromedp.SendKeys("#bulk-note", "Lãi tiền gửi, không phải đơn hàng"))
		click("#bulk-apply")
		if got := text("main"); !strings.Contains(got, "Xử lý các ngoại lệ đã chọn") || !strings.Contains(got, "LAI TIEN GUI THANG 10") || !strings.Contains(got, "LAI TIEN GUI THANG 11") {
			t.Errorf("the bulk confirmation: %q", got)
		}
		shot("dashboard-exceptions-bulk-confirm.png")
		click("#confirm-button")
		if got := text("#bulk-result"); strings.Count(got, "Đã xử lý") != 2 {
			t.Errorf("the bulk result: %q", got)
		}

		// A match paying more than the order lacks: the warning first.
		do("overpaid match", chromedp.Navigate(e.base+"/dashboard/exceptions/"+xOver), chromedp.WaitVisible("#pick-invoice"),
			chromedp.Click("#pick-invoice"), chromedp.SendKeys("#invoice", "INV-OVER"), chromedp.SendKeys("#note", "Khách gõ nhầm mã"))
		click("#resolve")
		if got := text("#confirm-warning"); !strings.Contains(got, "Trả thừa") || !strings.Contains(got, "150.000 ₫") || !strings.Contains(got, "50.000 ₫") {
			t.Errorf("the warning: %q", got)
		}
		shot("dashboard-exception-overpay-warning.png")

		// The underpaid order's remainder, asked for.
		do("underpaid", chromedp.Navigate(e.base+"/dashboard/exceptions/"+uShort), chromedp.WaitVisible("#pick-ask"),
			chromedp.Click("#pick-ask"), chromedp.SendKeys("#note", "Nhắc khách chuyển nốt"))
		click("#resolve")
		if got := text("#confirm"); !strings.Contains(got, "80.000 ₫") {
			t.Errorf("the ask's confirmation: %q", got)
		}
		click("#confirm-button")
		do("the QR drawn", chromedp.WaitVisible("#history img"), chromedp.Poll[chromedp.Void](`document.querySelector("#history img").complete && document.querySelector("#history img").naturalWidth > 0`, chromedp.WithPollingTimeout(10*time.Second)))
		hist := text("#history")
		if !strings.Contains(hist, "Đã yêu cầu trả phần còn thiếu") || !strings.Contains(hist, "80.000 ₫") || !strings.Contains(hist, "RECOVA") {
			t.Errorf("the history: %q", hist)
		}
		body := text("main")
		for _, en := range []string{"Remainder", "Write off", "Decision history", "Overpayment", "Resolve"} {
			if strings.Contains(body, en) {
				t.Errorf("the Vietnamese page shows %q", en)
			}
		}
		shot("dashboard-exception-history.png")

		// On a phone, the queue fits the screen.
		phone := browsertest.New(t, browsertest.Options{Mobile: true, Language: "vi"})
		pdo, pclick, _ := browsertest.Steps(t, phone)
		pdo("sign in", chromedp.Navigate(e.base+"/dashboard/lang/vi?back=/dashboard/signin"), chromedp.WaitVisible("#email"), chromedp.SendKeys("#email", "ketoan@saomai.vn"), chromedp.SendKeys("#password", dashPassword))
		pclick("#signin")
		pdo("the queue", chromedp.Navigate(e.base+"/dashboard/exceptions"), chromedp.WaitVisible("#totals"))
		w, err := chromedp.Run(phone, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil || w > 390 {
			t.Errorf("the queue is %d px wide on a 390 px phone (%v)", w, err)
		}
		browsertest.ScreenshotOnce(t, phone, engine)("dashboard-exceptions-phone.png")
	})
}
