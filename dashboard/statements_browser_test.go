package dashboard_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"recon"
	"recon/web/browsertest"
)

// TestDashboardStatementBrowser uploads a bank's xlsx export in headless
// Chromium, in Vietnamese, through upload.js: the Preview button shows the
// rows (nothing stored), Confirm imports them and the result links to the
// lists; the pages show no English (screenshots under make screenshots).
func TestDashboardStatementBrowser(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t, "sqlite")
	ctx := context.Background()
	company, _ := parseID(e.live.company)
	if err := e.db.CreateOrder(ctx, &recon.Order{CompanyID: company, InvoiceNumber: "SM-01126", PaymentCode: "DH146250", Amount: 2_467_000, BankAccountID: e.live.account}); err != nil {
		t.Fatal(err)
	}
	day := time.Now().In(e.loc).AddDate(0, 0, -1).Format("02/01/2006")
	path := filepath.Join(t.TempDir(), "SaoKe_VCB.xlsx")
	if err := os.WriteFile(path, bankWorkbook(t, [][]any{
		{1, day + " 08:15:02", "5213 - 40817", nil, 2467000, 12467000, "NGUYEN VAN A chuyen tien DH146250"},
		{2, day + " 10:02:45", "5213 - 51002", 500000, nil, 11967000, "Phi dich vu SMS Banking"},
	}), 0o644); err != nil {
		t.Fatal(err)
	}
	bctx := browsertest.New(t, browsertest.Options{})
	shot := browsertest.ScreenshotOnce(t, bctx, "sqlite")
	do, click, text := browsertest.Steps(t, bctx)
	do("sign in", chromedp.Navigate(e.base+"/dashboard/lang/vi?back=/dashboard/signin"), chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", "boss@saomai.vn"),
		chromedp.SendKeys("#password", dashPassword))
	click("#signin")
	do("bank accounts", chromedp.Navigate(e.base+"/dashboard/bank-accounts"), chromedp.WaitVisible("#upload"))
	do("choose", chromedp.SetUploadFiles("#up-file", []string{path}))
	do("click", chromedp.Click("#preview-button"))
	wctx, cancel := context.WithTimeout(bctx, 30*time.Second)
	_, werr := chromedp.Run(wctx, chromedp.WaitVisible("#preview"))
	cancel()
	if werr != nil {
		dump, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.location.href + "\n" + document.body.innerText`))
		t.Fatalf("preview: %v\n%s", werr, dump)
	}
	if got := text("#preview"); !strings.Contains(got, "Xem trước: chưa lưu gì") || !strings.Contains(got, "2.467.000 ₫") || !strings.Contains(got, "DH146250") ||
		!strings.Contains(got, "500.000 ₫") || strings.Contains(got, "Preview") {
		t.Fatalf("preview: %q", got)
	}
	_, n, err := e.db.Transactions(ctx, e.live.id, recon.TransactionFilter{Page: 1, Limit: 1, BankAccountID: e.live.account})
	if err != nil {
		t.Fatal(err)
	}
	shot("dashboard-statement-preview.png")
	click("#confirm-button")
	do("result", chromedp.WaitVisible("#upload-done"))
	if got := text("#upload-done"); !strings.Contains(got, "Giao dịch mới: 2") || !strings.Contains(got, "Đơn hàng đã thanh toán: 1") || !strings.Contains(got, "Xem các giao dịch") {
		t.Fatalf("result: %q", got)
	}
	_, m, err := e.db.Transactions(ctx, e.live.id, recon.TransactionFilter{Page: 1, Limit: 1, BankAccountID: e.live.account})
	if err != nil || m != n+2 {
		t.Fatalf("stored %d rows (%v), want 2", m-n, err)
	}
	for _, en := range []string{"Preview", "Import without", "Money in", "New transactions", "Orders paid", "column mapping"} {
		if body := text("main"); strings.Contains(body, en) {
			t.Errorf("the Vietnamese page shows %q", en)
		}
	}
	shot("dashboard-statement-result.png")
	click("#result-orders")
	if got := text("main"); !strings.Contains(got, "SM-01126") {
		t.Fatalf("the paid orders: %q", got)
	}
}
