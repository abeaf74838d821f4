package dashboard_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"recon"
	"recon/web/browsertest"
)

// TestDashboardTestModeBrowser walks the test mode of someone who does not
// use the command line, on a phone, in Vietnamese (docs/testmode.md, The
// dashboard's sandbox): the sandbox seen from live data offers the switch,
// a test order is made and paid, a hub company is made. Storage is the
// HTTP test's (TestDashboardTestMode, both engines): SQLite here.
func TestDashboardTestModeBrowser(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t, "sqlite")
	ctx := browsertest.New(t, browsertest.Options{Mobile: true, Language: "vi"})
	do, click, text := browsertest.Steps(t, ctx)
	shot := func(name string) {
		if os.Getenv(browsertest.EnvScreenshots) != "" {
			browsertest.Screenshot(t, ctx, name)
		}
	}
	do("sign in", chromedp.Navigate(e.base+"/dashboard/lang/vi?back=/dashboard/signin"), chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", "boss@saomai.vn"), chromedp.SendKeys("#password", dashPassword))
	click("#signin")

	// From live data: the page says it changes nothing live and offers the switch.
	do("sandbox", chromedp.Navigate(e.base+"/dashboard/sandbox"), chromedp.WaitVisible("#sandbox-live"))
	if got := text("#sandbox-live"); !strings.Contains(got, "không bao giờ thay đổi dữ liệu này") {
		t.Errorf("the live sandbox page: %q", got)
	}
	shot("dashboard-sandbox-live-vi-phone.png")
	click("#sandbox-switch")

	// A test order: the amount typed as a Vietnamese would, then paid.
	do("test order", chromedp.WaitVisible("#to-create"), chromedp.Clear("#to-amount"),
		chromedp.SendKeys("#to-amount", "250.000"), chromedp.SendKeys("#to-description", "Áo dài lụa"))
	click("#to-create")
	code := text("#test-order-code")
	if !strings.HasPrefix(code, "DH") || !strings.Contains(text("#test-order-amount"), "250.000") {
		t.Fatalf("the test order: code %q, amount %q", code, text("#test-order-amount"))
	}
	shot("dashboard-sandbox-test-order-vi-phone.png")
	invoice := text("#test-order-link")
	click("#pay-send")
	if got := text("#sandbox-done"); !strings.Contains(got, "Chuyển khoản đã đến") {
		t.Errorf("the payment: %q", got)
	}
	if o, err := e.db.Order(context.Background(), e.test.id, invoice); err != nil || o.Status != recon.OrderCaptured || o.PaidAmount != 250000 {
		t.Fatalf("the test order after its payment: %+v %v", o, err)
	}

	// A hub company, for test links.
	do("hub companies", chromedp.Navigate(e.base+"/dashboard/hub-companies"), chromedp.WaitVisible("#hc-create"),
		chromedp.SendKeys("#hc-full-name", "Công ty TNHH Hoa Sen"), chromedp.SendKeys("#hc-short-name", "HOASEN"))
	click("#hc-create")
	if got := text("#hc-done"); !strings.Contains(got, "Đã tạo công ty") {
		t.Errorf("the hub company: %q", got)
	}
	if got := text("#hc-rows"); !strings.Contains(got, "Công ty TNHH Hoa Sen") || !strings.Contains(got, "Đang hoạt động") {
		t.Errorf("the hub companies: %q", got)
	}
	shot("dashboard-hub-companies-vi-phone.png")
}
