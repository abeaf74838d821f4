package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// TestDashboardAuditAlertsBrowser walks, on a phone in Vietnamese, to the
// alerts page by the menu, saves the company's alert settings with the
// form, then reads that change on the audit log: who, what, before →
// after, in the business time zone; screenshots under make screenshots.
func TestDashboardAuditAlertsBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		ctx := browsertest.New(t, browsertest.Options{Mobile: true, Language: "vi"})
		shot := browsertest.ScreenshotOnce(t, ctx, engine)
		do, click, text := browsertest.Steps(t, ctx)
		do("sign in", chromedp.Navigate(e.base+"/dashboard/lang/vi?back=/dashboard/signin"), chromedp.WaitVisible("#email"),
			chromedp.SendKeys("#email", "boss@saomai.vn"),
			chromedp.SendKeys("#password", dashPassword))
		click("#signin")
		click("#nav-alerts")
		if got := text("#mine"); !strings.Contains(got, "Tóm tắt hằng ngày") {
			t.Fatalf("the switches: %q", got)
		}
		do("the threshold", chromedp.SetValue("#al-queue", "25"))
		click("#save-settings")
		if got := text("#alerts-saved"); got != "Đã lưu cài đặt cảnh báo của công ty." {
			t.Errorf("saved: %q", got)
		}
		shot("dashboard-alerts-phone.png")
		click("#nav-audit")
		row := text("#audit tbody tr")
		for _, want := range []string{"boss@saomai.vn", "Đổi cài đặt cảnh báo", "Ngưỡng hàng đợi ngoại lệ: 50 → 25"} {
			if !strings.Contains(row, want) {
				t.Errorf("the entry lacks %q: %q", want, row)
			}
		}
		shot("dashboard-audit-phone.png")
	})
}
