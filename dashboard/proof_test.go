package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestDashboardStatementProof (docs/dashboard.md, Statement proofs and
// Report), both engines: a CSV statement with a balance column uploaded
// through the form links to its proof, which proves; a feed's row of the
// same day makes it differ, the row shown only in Recon, in Vietnamese and
// English; the account's statements list it; the report shows the day's
// balances and difference and exports them as CSV; another company's
// account or import and malformed ids are 404s.
func TestDashboardStatementProof(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		company, _ := parseID(e.live.company)
		b := e.signedIn(t, "boss@saomai.vn")
		b.Lang = "vi"
		account := fmt.Sprint(e.live.account)
		csv, err := os.ReadFile("../api/testdata/proof_day3.csv")
		if err != nil {
			t.Fatal(err)
		}
		status, body := uploadAction(b, account, "SaoKe_0912.csv", csv, "import")
		m := regexp.MustCompile(`id="result-proof" href="(/dashboard/bank-accounts/` + account + `/statements/(\d+))"`).FindStringSubmatch(body)
		if status != 200 || m == nil || !strings.Contains(body, "Xem đối chiếu số dư của sao kê") {
			t.Fatalf("upload: %d %s", status, body)
		}
		proof, importID := m[1], m[2]
		if status, body := b.Get(proof); status != 200 || !strings.Contains(body, `id="proof-state">Khớp:`) || !strings.Contains(body, "SaoKe_0912.csv") {
			t.Fatalf("proof: %d %s", status, body)
		}
		if _, err := e.db.IngestTransactions(context.Background(), recon.LiveTenant(company), []recon.TransactionInput{{BankAccountID: e.live.account,
			TransactionDate: time.Date(2026, 9, 12, 15, 0, 0, 0, time.UTC), AmountIn: 70000, Content: "FEED", ReferenceNumber: "FEED-0912-1"}}, []string{""}); err != nil {
			t.Fatal(err)
		}
		status, body = b.Get(proof)
		if status != 200 || !strings.Contains(body, `id="proof-difference">-70.000 ₫<`) || !strings.Contains(body, `id="cause-only_in_recon">Chỉ có trong Recon: 1`) || !strings.Contains(body, "FEED-0912-1") {
			t.Fatalf("proof with a feed row: %d %s", status, body)
		}
		b.Lang = "en"
		if status, body := b.Get(proof); status != 200 || !strings.Contains(body, "Only in Recon: 1") || !strings.Contains(body, "Not proved") {
			t.Fatalf("proof in English: %d %s", status, body)
		}
		b.Lang = "vi"
		list := "/dashboard/bank-accounts/" + account + "/statements"
		if status, body := b.Get(list); status != 200 || !strings.Contains(body, `id="statement-`+importID+`"`) || !strings.Contains(body, "2026-09-12 – 2026-09-12") {
			t.Fatalf("statements: %d %s", status, body)
		}
		status, body = b.Get("/dashboard/report?from_date=2026-09-11&to_date=2026-09-12&bank_account_id=" + account)
		row := regexp.MustCompile(`(?s)<tr id="bal-` + account + `-2026-09-12">.*?</tr>`).FindString(body)
		if status != 200 || !strings.Contains(row, "1.460.000 ₫") || !strings.Contains(row, "1.530.000 ₫") || !strings.Contains(row, "-70.000 ₫") || !strings.Contains(row, "Chỉ có trong Recon: 1") ||
			strings.Contains(body, `id="bal-`+account+`-2026-09-11"`) {
			t.Fatalf("report balances: %d %s", status, body)
		}
		status, body = b.Get("/dashboard/report-balances.csv?from_date=2026-09-12&to_date=2026-09-12")
		if status != 200 || !strings.Contains(body, "bank_account_id,account_number,date,bank_balance,recon_balance,difference,causes,statement_import_id\n") ||
			!strings.Contains(body, fmt.Sprintf("%s,0071000123456,2026-09-12,1460000,1530000,-70000,only_in_recon 1 -70000,%s\n", account, importID)) {
			t.Fatalf("balances CSV: %d %s", status, body)
		}
		if status, body := b.Get("/dashboard/report?from_date=2025-01-01&to_date=2026-09-12"); status != 400 || !strings.Contains(body, "Báo cáo tối đa 366 ngày") {
			t.Fatalf("a report of more than 366 days: %d %s", status, body)
		}
		if status, body := b.Get("/dashboard/report?bank_account_id=x"); status != 400 || !strings.Contains(body, "Hãy chọn một tài khoản ngân hàng") {
			t.Fatalf("a report of a bad account: %d %s", status, body)
		}
		for _, path := range []string{
			"/dashboard/bank-accounts/" + fmt.Sprint(e.other.account) + "/statements",
			"/dashboard/bank-accounts/" + fmt.Sprint(e.other.account) + "/statements/" + importID,
			list + "/999999", list + "/abc", "/dashboard/bank-accounts/abc/statements",
		} {
			if status, _ := b.Get(path); status != 404 {
				t.Errorf("GET %s: %d, want 404", path, status)
			}
		}
	})
}
