package api_test

import (
	"fmt"
	"os"
	"testing"

	"recon"
	"recon/api"
	"recon/sqlstore/dbtest"
)

// TestPossibleDuplicateFeedThenCamt: the example end to end over
// HTTP (docs/statements.md, Possible duplicates): a CSV feed's transfer of
// 2,500,000 VND under FT26260987654321-FEED, then the day's camt.053 with
// the same entry under FT26260987654321: the second row is a possible
// duplicate, shown with its state, its exception resolved over the API;
// the window is a company setting checked on PATCH.
func TestPossibleDuplicateFeedThenCamt(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine, func(h *api.Handler) {
			auth := h.Auth.(tokens)
			auth["resolver"] = &recon.Caller{Tenant: auth["admin"].Tenant, ClientID: "c", User: auth["admin"].User,
				Scopes: []string{recon.ScopeCompany, recon.ScopeTransactionRead, recon.ScopeExceptionWrite, recon.ScopeBankAccountRead}}
		})
		acct := b.account(t, b.company.ID, "0071001234567")
		path := fmt.Sprintf("/api/v1/bank-accounts/%d/statements", acct)
		feed := "transaction_date,amount_in,transaction_content,reference_number\n" +
			"2026-09-17 10:02:11,2500000,Trần Thị Bích Ngọc thanh toán đơn hàng DH1710,FT26260987654321-FEED\n"
		if status, body := b.post(t, path, "text/csv", []byte(feed)); status != 200 {
			t.Fatalf("feed: %d %v", status, body)
		}
		camt, err := os.ReadFile("../statement/testdata/camt053_v02_vietcombank.xml")
		if err != nil {
			t.Fatal(err)
		}
		status, body := b.post(t, path, "application/xml", camt)
		data, _ := body["data"].(map[string]any)
		if status != 200 || data["imported"] != 5.0 || data["duplicates"] != 0.0 {
			t.Fatalf("camt: %d %v", status, body)
		}
		// The statement's proof (docs/statements.md, Balance proof): Recon
		// counts the transfer once, through the feed's row, so the balances
		// agree; the possible duplicate is listed, with no effect, until it
		// is resolved, and the feed's row is not "only in Recon".
		proofPath := fmt.Sprintf("%s/%v", path, data["import_id"])
		proofCauses := func() (difference any, kinds []string) {
			t.Helper()
			status, _, body := b.do(t, "GET", proofPath, "resolver", "")
			p, _ := body["data"].(map[string]any)
			if status != 200 || p == nil {
				t.Fatalf("proof: %d %v", status, body)
			}
			for _, c := range p["causes"].([]any) {
				c := c.(map[string]any)
				kinds = append(kinds, fmt.Sprintf("%v:%v:%v", c["kind"], c["count"], c["effect"]))
			}
			return p["difference"], kinds
		}
		if diff, kinds := proofCauses(); diff != 0.0 || fmt.Sprint(kinds) != "[possible_duplicate:1:0]" {
			t.Fatalf("proof with the possible duplicate: difference %v, causes %v", diff, kinds)
		}
		defer func() {
			if diff, kinds := proofCauses(); diff != 0.0 || len(kinds) != 0 {
				t.Errorf("proof once resolved a duplicate: difference %v, causes %v", diff, kinds)
			}
		}()
		status, _, body = b.do(t, "GET", fmt.Sprintf("/api/v1/transactions?bank_account_id=%d&limit=100", acct), "admin", "")
		list, _ := body["data"].([]any)
		if status != 200 || len(list) != 6 {
			t.Fatalf("list: %d %v", status, body)
		}
		var first, second float64
		for _, x := range list {
			row := x.(map[string]any)
			switch row["reference_number"] {
			case "FT26260987654321-FEED":
				first = row["id"].(float64)
			case "FT26260987654321":
				second = row["id"].(float64)
				if row["dup_state"] != "possible" {
					t.Fatalf("the statement's row: %v", row)
				}
				defer func(row map[string]any) {
					if row["duplicate_of"] != first {
						t.Errorf("duplicate_of %v, want %v", row["duplicate_of"], first)
					}
				}(row)
				continue
			}
			if _, ok := row["dup_state"]; ok {
				t.Fatalf("an ordinary row shows dup_state: %v", row)
			}
		}
		status, _, body = b.do(t, "POST", fmt.Sprintf("/api/v1/exceptions/%.0f/resolve", second), "resolver", `{"action":"ignore","note":"x"}`)
		if status != 409 {
			t.Fatalf("ignore: %d %v", status, body)
		}
		status, _, body = b.do(t, "POST", fmt.Sprintf("/api/v1/exceptions/%.0f/resolve", second), "resolver", `{"action":"duplicate","note":"the statement's copy of the feed's transfer"}`)
		if status != 200 {
			t.Fatalf("resolve: %d %v", status, body)
		}
		status, _, body = b.do(t, "GET", fmt.Sprintf("/api/v1/transactions/%.0f", second), "admin", "")
		if row, _ := body["data"].(map[string]any); status != 200 || row["dup_state"] != "duplicate" {
			t.Fatalf("after: %d %v", status, body)
		}
		// The window: 0 to 7 days, a 400 naming the field otherwise.
		status, _, body = b.do(t, "PATCH", "/api/v1/company", "admin", `{"duplicate_window_days":8}`)
		if errs, _ := body["errors"].(map[string]any); status != 400 || errs["duplicate_window_days"] == nil {
			t.Fatalf("window 8: %d %v", status, body)
		}
		status, _, body = b.do(t, "PATCH", "/api/v1/company", "admin", `{"duplicate_window_days":1}`)
		if data, _ := body["data"].(map[string]any); status != 200 || data["duplicate_window_days"] != 1.0 {
			t.Fatalf("window 1: %d %v", status, body)
		}
		// The next day's same transfer is one within the new window: the
		// look-up made with the window of the batches before (0 days) is
		// made again with the tenant's window of now.
		next := "transaction_date,amount_in,transaction_content,reference_number\n" +
			"2026-09-18 09:00:00,2500000,Trần Thị Bích Ngọc thanh toán đơn hàng DH1710,FT26261000000001\n"
		if status, body := b.post(t, path, "text/csv", []byte(next)); status != 200 {
			t.Fatalf("the next day's feed: %d %v", status, body)
		}
		status, _, body = b.do(t, "GET", fmt.Sprintf("/api/v1/transactions?bank_account_id=%d&limit=100", acct), "admin", "")
		list, _ = body["data"].([]any)
		if status != 200 {
			t.Fatalf("list after the next day's feed: %d %v", status, body)
		}
		var nextDay map[string]any
		for _, x := range list {
			if row := x.(map[string]any); row["reference_number"] == "FT26261000000001" {
				nextDay = row
			}
		}
		if nextDay["dup_state"] != "possible" || nextDay["duplicate_of"] != first {
			t.Fatalf("the next day's transfer in a 1-day window: %v, want a possible duplicate of %v", nextDay, first)
		}
	})
}
