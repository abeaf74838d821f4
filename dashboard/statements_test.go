package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// uploadAction posts a statement file to the upload form with its button
// (action "preview" or "import") in the browser's language.
func uploadAction(b *testkit.Browser, account, name string, content []byte, action string) (int, string) {
	b.T.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("csrf", b.CSRF("/dashboard/bank-accounts"))
	_ = w.WriteField("account", account)
	_ = w.WriteField("step", action)
	f, _ := w.CreateFormFile("file", name)
	_, _ = f.Write(content)
	_ = w.Close()
	req, _ := http.NewRequest("POST", b.Base+"/dashboard/bank-accounts/statement", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", b.Base)
	req.Header.Set("Accept-Language", b.Lang)
	resp, err := b.Client.Do(req)
	if err != nil {
		b.T.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
}

// bankWorkbook is a bank's xlsx export as Vietcombank lays it out: title
// lines, a Vietnamese header and an English one, totals.
func bankWorkbook(t *testing.T, rows [][]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	all := append([][]any{
		{"NGÂN HÀNG TMCP NGOẠI THƯƠNG VIỆT NAM"}, {"SAO KÊ TÀI KHOẢN"}, {},
		{"STT", "Ngày giao dịch", "Số tham chiếu", "Số tiền ghi nợ", "Số tiền ghi có", "Số dư", "Mô tả"},
		{"No.", "Transaction Date", "Reference No.", "Debit", "Credit", "Balance", "Description"},
	}, rows...)
	all = append(all, []any{"", "Tổng cộng / Total"})
	for i, row := range all {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &row); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDashboardStatementPreview (docs/dashboard.md, Settings, bank accounts and sandbox), both
// engines, in Vietnamese: a bank's xlsx export is previewed (its rows as
// they will be stored, money in Vietnamese, nothing stored), then confirmed
// once (the result counts the new rows, the orders paid and the exceptions
// opened, and links to the lists); a Vietnamese CSV with a bad row is
// refused naming its row and column in Vietnamese, storing nothing; a
// column mapping is refused, saved, used and removed; another company's
// account is a 404.
func TestDashboardStatementPreview(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		ctx := context.Background()
		company, _ := parseID(e.live.company)
		tenant := recon.LiveTenant(company)
		for _, o := range []*recon.Order{
			{CompanyID: company, InvoiceNumber: "SM-01126", PaymentCode: "DH146250", Amount: 2_467_000, BankAccountID: e.live.account},
			{CompanyID: company, InvoiceNumber: "SM-01130", PaymentCode: "DH146300", Amount: 200_000, BankAccountID: e.live.account},
		} {
			if err := e.db.CreateOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		count := func() int64 {
			_, n, err := e.db.Transactions(ctx, tenant, recon.TransactionFilter{Page: 1, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		b := e.signedIn(t, "boss@saomai.vn")
		b.Lang = "vi"
		account := fmt.Sprint(e.live.account)
		day := time.Now().In(e.loc).AddDate(0, 0, -1).Format("02/01/2006")
		xlsx := bankWorkbook(t, [][]any{
			{1, day + " 08:15:02", "5213 - 40817", nil, 2467000, 12467000, "NGUYEN VAN A chuyen tien DH146250"},
			{2, day + " 10:02:45", "5213 - 51002", 500000, nil, 11967000, "Phi dich vu SMS Banking"},
			{3, day + " 14:30:00", "5214 - 00931", nil, 150000, 12117000, "TRAN THI B CK DH146300"},
		})
		before := count()
		status, body := uploadAction(b, account, "SaoKe_VCB.xlsx", xlsx, "preview")
		if status != 200 || !strings.Contains(body, `id="preview-count">3<`) || !strings.Contains(body, "2.467.000 ₫") || !strings.Contains(body, "DH146250") ||
			!strings.Contains(body, "Xác nhận nhập") || !strings.Contains(body, "Xem trước: chưa lưu gì") || strings.Contains(body, "Preview") {
			t.Fatalf("preview: %d %s", status, body)
		}
		if n := count(); n != before {
			t.Fatalf("the preview stored %d rows", n-before)
		}
		m := regexp.MustCompile(`name="token" value="([0-9a-f]+)"`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no confirmation token: %s", body)
		}
		confirm := url.Values{"account": {account}, "token": {m[1]}}
		// Another company's account, with the token: 404, nothing stored.
		if status, _, body := b.PostFrom("/dashboard/bank-accounts", "/dashboard/bank-accounts/statement/confirm", url.Values{"account": {fmt.Sprint(e.other.account)}, "token": {m[1]}}); status != 404 {
			t.Fatalf("confirm into another company's account: %d %s", status, body)
		}
		status, _, body = b.PostFrom("/dashboard/bank-accounts", "/dashboard/bank-accounts/statement/confirm", confirm)
		if status != 200 || !strings.Contains(body, `id="result-new">3<`) || !strings.Contains(body, `id="result-paid">1<`) || !strings.Contains(body, `id="result-exc">1<`) ||
			!strings.Contains(body, `href="/dashboard/transactions?bank_account_id=`+account) || !strings.Contains(body, `id="result-exceptions" href="/dashboard/exceptions?bank_account_id=`+account) ||
			!strings.Contains(body, `id="result-orders" href="/dashboard/orders?order_status=CAPTURED"`) || !strings.Contains(body, "Đơn hàng đã thanh toán") {
			t.Fatalf("confirm: %d %s", status, body)
		}
		if n := count(); n != before+3 {
			t.Fatalf("confirm stored %d rows, want 3", n-before)
		}
		// The result's links lead to the lists they count.
		link := regexp.MustCompile(`id="result-tx" href="([^"]+)"`).FindStringSubmatch(body)
		if status, page := b.Get(strings.ReplaceAll(link[1], "&amp;", "&")); status != 200 || !strings.Contains(page, "5213 - 40817") {
			t.Fatalf("transactions link %s: %d", link[1], status)
		}
		// The token is used up.
		status, _, body = b.PostFrom("/dashboard/bank-accounts", "/dashboard/bank-accounts/statement/confirm", confirm)
		if status != 400 || !strings.Contains(body, "Bản xem trước đã hết hạn") || count() != before+3 {
			t.Fatalf("confirm twice: %d %s", status, body)
		}
		// A Vietnamese CSV with a bad row: refused in Vietnamese, naming the
		// row and the column; nothing stored.
		csv := "Sao kê tài khoản\nNgày giao dịch;Ghi có;Diễn giải;Số tham chiếu\n" + day + ";1.000;DH1;Z1\n" + day + ";abc;DH2;Z2\n"
		for _, action := range []string{"import", "preview"} {
			status, body = uploadAction(b, account, "bidv.csv", []byte(csv), action)
			if !strings.Contains(body, `Dòng 4: Ghi có: &#34;abc&#34; không phải là số tiền`) || strings.Contains(body, "is not an amount") || strings.Contains(body, `name="token"`) {
				t.Fatalf("%s of a bad CSV: %d %s", action, status, body)
			}
		}
		if count() != before+3 {
			t.Fatal("a bad file stored rows")
		}
		// A file of no known layout: refused in Vietnamese, then read with a mapping.
		odd := []byte("Báo cáo\nThời điểm,Tiền về,Lời nhắn,Mã\n" + day + " 10:00,\"1.000.000\",chuyen DH9,X1\n")
		status, body = uploadAction(b, account, "odd.csv", odd, "preview")
		if status != 400 || !strings.Contains(body, "Không tìm thấy dòng tiêu đề") {
			t.Fatalf("unknown layout: %d %s", status, body)
		}
		status, _, body = b.PostFrom("/dashboard/bank-accounts", "/dashboard/bank-accounts/mapping", url.Values{"account": {account}, "action": {"save"}, "date": {"Thời điểm"}, "amount_in": {"Tiền về"}})
		if status != 400 || !strings.Contains(body, "Cần nhập cột nội dung.") || !strings.Contains(body, `value="Thời điểm"`) {
			t.Fatalf("mapping without content: %d %s", status, body)
		}
		mapping := url.Values{"account": {account}, "action": {"save"}, "date": {"Thời điểm"}, "amount_in": {"Tiền về"}, "content": {"Lời nhắn"}, "reference": {"Mã"}}
		status, _, body = b.PostFrom("/dashboard/bank-accounts", "/dashboard/bank-accounts/mapping", mapping)
		if status != 200 || !strings.Contains(body, "Đã lưu ánh xạ cột.") || !strings.Contains(body, "«Lời nhắn»") {
			t.Fatalf("mapping: %d %s", status, body)
		}
		status, body = uploadAction(b, account, "odd.csv", odd, "preview")
		if status != 200 || !strings.Contains(body, `id="preview-count">1<`) || !strings.Contains(body, "1.000.000 ₫") {
			t.Fatalf("mapped preview: %d %s", status, body)
		}
		mapping.Set("account", fmt.Sprint(e.other.account))
		if status, _, body := b.PostFrom("/dashboard/bank-accounts", "/dashboard/bank-accounts/mapping", mapping); status != 404 {
			t.Fatalf("another company's mapping: %d %s", status, body)
		}
		status, _, body = b.PostFrom("/dashboard/bank-accounts", "/dashboard/bank-accounts/mapping", url.Values{"account": {account}, "action": {"clear"}})
		if status != 200 || !strings.Contains(body, "Đã xóa ánh xạ cột.") || !strings.Contains(body, "Chưa lưu ánh xạ nào") {
			t.Fatalf("clear: %d %s", status, body)
		}
	})
}
