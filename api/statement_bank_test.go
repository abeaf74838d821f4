package api_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestUploadBankExports (docs/statements.md, Bank exports; docs/api.md,
// Transactions), both engines: a bank's xlsx export and a Vietnamese
// CSV export import through the API; the answer counts the new rows, the
// duplicates, the orders paid and the exceptions opened; a preview answers
// the rows as they would be stored and stores nothing; a saved mapping
// reads a layout no alias knows, and is another company's 404; bad files
// are 400s that name the problem, storing nothing.
func TestUploadBankExports(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		ctx := context.Background()
		if _, err := b.store.ReplacePaymentCodeFormats(ctx, b.company.ID, []recon.PaymentCodeFormat{
			{Prefix: "DH", SuffixFrom: 4, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
			t.Fatal(err)
		}
		acct := b.account(t, b.company.ID, "0071001234567")
		other := b.account(t, b.other.ID, "0071001234567")
		for _, o := range []*recon.Order{
			{CompanyID: b.company.ID, InvoiceNumber: "SM-01126", PaymentCode: "DH14625", Amount: 2_467_000, BankAccountID: acct},
			{CompanyID: b.company.ID, InvoiceNumber: "SM-01130", PaymentCode: "DH14630", Amount: 200_000, BankAccountID: acct},
		} {
			if err := b.store.CreateOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		count := func() int64 {
			_, n, err := b.store.Transactions(ctx, recon.LiveTenant(b.company.ID), recon.TransactionFilter{Page: 1, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		xlsx, err := os.ReadFile("../statement/testdata/bank_vietcombank.xlsx")
		if err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/api/v1/bank-accounts/%d/statements", acct)
		// Preview: the first rows as stored, nothing stored.
		status, body := b.post(t, path+"?preview=true", "application/octet-stream", xlsx)
		data, _ := body["data"].(map[string]any)
		rows, _ := data["rows"].([]any)
		if status != 200 || data["format"] != "xlsx" || data["row_count"] != 3.0 || len(rows) != 3 || count() != 0 {
			t.Fatalf("preview: %d %v (stored %d)", status, body, count())
		}
		first := rows[0].(map[string]any)
		if first["row"] != 8.0 || first["amount_in"] != 2467000.0 || first["code"] != "DH14625" || first["transaction_date"] != "2026-11-01 08:15:02" || first["reference_number"] != "5213 - 40817" {
			t.Fatalf("preview row: %v", first)
		}
		// Import: counts.
		status, body = b.post(t, path, "application/octet-stream", xlsx)
		data, _ = body["data"].(map[string]any)
		if status != 200 || data["imported"] != 3.0 || data["duplicates"] != 0.0 || data["orders_paid"] != 1.0 || data["exceptions_opened"] != 1.0 {
			t.Fatalf("xlsx import: %d %v", status, body)
		}
		status, body = b.post(t, path, "application/octet-stream", xlsx)
		data, _ = body["data"].(map[string]any)
		if status != 200 || data["imported"] != 0.0 || data["duplicates"] != 3.0 || data["orders_paid"] != 0.0 {
			t.Fatalf("xlsx again: %d %v", status, body)
		}
		csv, err := os.ReadFile("../statement/testdata/bank_bidv.csv")
		if err != nil {
			t.Fatal(err)
		}
		status, body = b.post(t, path, "text/csv", csv)
		data, _ = body["data"].(map[string]any)
		if status != 200 || data["format"] != "csv" || data["imported"] != 3.0 || count() != 6 {
			t.Fatalf("Vietnamese CSV: %d %v", status, body)
		}
		// A layout no alias knows: refused until a mapping is saved.
		odd := []byte("Báo cáo giao dịch\nThời điểm,Tiền về,Tiền đi,Lời nhắn,Mã\n05/11/2026 10:00,\"1.000.000\",,chuyen DH9,X1\n")
		status, body = b.post(t, path, "text/csv", odd)
		if status != 400 || !strings.Contains(fmt.Sprint(body["message"]), "no header row found") {
			t.Fatalf("unknown layout: %d %v", status, body)
		}
		mpath := fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", acct)
		mapping := `{"date":"Thời điểm","amount_in":"Tiền về","amount_out":"Tiền đi","content":"Lời nhắn","reference":"Mã"}`
		if st, _, got := b.do(t, "PUT", mpath, "feeder", mapping); st != 200 {
			t.Fatalf("PUT mapping: %d %v", st, got)
		}
		st, _, got := b.do(t, "GET", mpath, "banker", "")
		m, _ := got["data"].(map[string]any)["mapping"].(map[string]any)
		if st != 200 || m["date"] != "Thời điểm" || m["reference"] != "Mã" {
			t.Fatalf("GET mapping: %d %v", st, got)
		}
		status, body = b.post(t, path, "text/csv", odd)
		data, _ = body["data"].(map[string]any)
		if status != 200 || data["imported"] != 1.0 {
			t.Fatalf("mapped layout: %d %v", status, body)
		}
		for _, tc := range []struct {
			method, path, token, body string
			status                    int
			message                   string
		}{
			{"PUT", mpath, "feeder", `{"date":"A","content":"B"}`, 400, "amount_in"},
			{"PUT", mpath, "feeder", `{"date":"A","content":"B","amount":"C","colour":"x"}`, 400, "colour"},
			{"PUT", mpath, "feeder", `{"date":1}`, 400, "date"},
			{"PUT", mpath, "feeder", `not json`, 400, ""},
			{"PUT", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", other), "feeder", mapping, 404, "not found"},
			{"GET", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", other), "banker", "", 404, "not found"},
			{"GET", "/api/v1/bank-accounts/x/statement-mapping", "banker", "", 400, "positive integer"},
		} {
			st, _, got := b.do(t, tc.method, tc.path, tc.token, tc.body)
			if st != tc.status || !strings.Contains(fmt.Sprint(got["message"]), tc.message) {
				t.Errorf("%s %s %s: %d %v, want %d %q", tc.method, tc.path, tc.body, st, got, tc.status, tc.message)
			}
		}
		if st, _, got := b.do(t, "DELETE", mpath, "feeder", ""); st != 200 {
			t.Fatalf("DELETE mapping: %d %v", st, got)
		}
		if st, _, got := b.do(t, "GET", mpath, "banker", ""); st != 200 || got["data"].(map[string]any)["mapping"] != nil {
			t.Fatalf("GET after DELETE: %d %v", st, got)
		}
		// Bad files: 400 naming the problem, nothing stored.
		before := count()
		for _, tc := range []struct {
			name    string
			body    []byte
			query   string
			message string
		}{
			{"bad row", []byte("Ngày giao dịch;Ghi có;Diễn giải;Số tham chiếu\n01/11/2026;1.000;DH1;Z1\n02/11/2026;abc;DH2;Z2\n"), "", `row 3: Ghi có: "abc" is not an amount`},
			{"zip not a workbook", append([]byte("PK\x03\x04"), make([]byte, 40)...), "?format=xlsx", "not an Excel workbook"},
			{"broken xlsx", xlsx[:len(xlsx)/2], "", "not an Excel workbook"},
			{"preview of a bad file", []byte("a,b\n1,2\n"), "?preview=true", "no header row found"},
			{"bad preview flag", csv, "?preview=maybe", "preview must be true or false"},
		} {
			status, body := b.post(t, path+tc.query, "application/octet-stream", tc.body)
			if status != 400 || !strings.Contains(fmt.Sprint(body["message"]), tc.message) {
				t.Errorf("%s: %d %v, want 400 %q", tc.name, status, body, tc.message)
			}
		}
		if n := count(); n != before {
			t.Fatalf("bad files stored %d rows", n-before)
		}
	})
}
