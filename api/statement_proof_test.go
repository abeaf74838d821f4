package api_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"recon/api"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestStatementProof (docs/statements.md, Balance proof; docs/api.md,
// Statement imports), both engines, with real files of each format: an
// MT940 statement that proves, imported again changing nothing; a
// camt.053 statement of a day on which Recon also holds a feed's row (only
// in Recon, the difference and the row); a CSV statement with a balance
// column whose opening does not join the camt.053's closing (a
// discontinuity); a camt.053 statement with an entry skipped as invalid
// (missing in Recon, its amount unknown); one whose entry Recon holds with
// another amount (amount differs); the reconciliation report's
// balances of those days; the list, paginated; 404, 403 and 400 paths.
func TestStatementProof(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine, func(h *api.Handler) { h.Clock = testkit.NewClock(time.Date(2026, 9, 20, 9, 0, 0, 0, time.UTC)) })
		acct := b.account(t, b.company.ID, "101234567890")
		other := b.account(t, b.other.ID, "101234567890")
		upload := func(file, query string) map[string]any {
			t.Helper()
			raw, err := os.ReadFile("testdata/" + file)
			if err != nil {
				t.Fatal(err)
			}
			status, body := b.post(t, fmt.Sprintf("/api/v1/bank-accounts/%d/statements%s", acct, query), "application/octet-stream", raw)
			data, _ := body["data"].(map[string]any)
			if status != 200 || data["import_id"] == nil || data["import_id"] == 0.0 {
				t.Fatalf("upload %s: %d %v", file, status, body)
			}
			return data
		}
		get := func(token, path string, want int) map[string]any {
			t.Helper()
			status, body := testkit.Call(t, "GET", b.srv.URL+path, token, "")
			if status != want {
				t.Fatalf("GET %s as %s: %d %v, want %d", path, token, status, body, want)
			}
			return body
		}
		proofPath := func(id any) string { return fmt.Sprintf("/api/v1/bank-accounts/%d/statements/%v", acct, id) }
		proof := func(id any) map[string]any {
			t.Helper()
			return get("banker", proofPath(id), 200)["data"].(map[string]any)
		}
		js := func(v any) string { j, _ := json.Marshal(v); return string(j) }

		// Day 1, MT940: 1,000,000 + 500,000 - 200,000 = 1,300,000.
		day1 := upload("proof_day1.sta", "")
		p := proof(day1["import_id"])
		imp := p["import"].(map[string]any)
		if p["proved"] != true || p["difference"] != 0.0 || p["unexplained"] != 0.0 || p["discontinuity"] != nil || len(p["causes"].([]any)) != 0 ||
			imp["from_date"] != "2026-09-10" || imp["to_date"] != "2026-09-10" || imp["opening_balance"] != 1e6 || imp["closing_balance"] != 1.3e6 ||
			imp["entries"] != 2.0 || imp["amount_in"] != 5e5 || imp["amount_out"] != 2e5 || imp["format"] != "mt940" {
			t.Fatalf("day 1 proof: %s", js(p))
		}
		if r := p["recon"].(map[string]any); r["rows"] != 2.0 || r["closing_balance"] != 1.3e6 {
			t.Fatalf("day 1 Recon: %s", js(p))
		}
		// The same file again changes nothing: the same import, no new row.
		again := upload("proof_day1.sta", "")
		if again["import_id"] != day1["import_id"] || again["repeated"] != true || again["imported"] != 0.0 || again["duplicates"] != 2.0 {
			t.Fatalf("repeated import: %v (first %v)", again, day1)
		}
		if p2 := proof(day1["import_id"]); js(p2) != js(p) {
			t.Fatalf("proof after the repeat:\n%s\nbefore:\n%s", js(p2), js(p))
		}

		// A feed's row on day 2, which the bank's statement of day 2 does not hold.
		status, body := testkit.Call(t, "POST", b.srv.URL+"/api/v1/transactions", "feeder", fmt.Sprintf(`{"transactions":[
			{"bank_account_id": %d, "transaction_date": "2026-09-11 10:00:00", "amount_in": 70000, "transaction_content": "FEED chuyen tien", "reference_number": "FEED-0911-1"}]}`, acct))
		if status != 200 {
			t.Fatalf("feed push: %d %v", status, body)
		}
		feedID := body["data"].([]any)[0].(map[string]any)["id"]

		// Day 2, camt.053: 1,300,000 + 100,000 = 1,400,000; Recon holds 1,470,000.
		day2 := upload("proof_day2.xml", "")
		p = proof(day2["import_id"])
		causes := p["causes"].([]any)
		if p["proved"] != false || p["difference"] != -70000.0 || p["unexplained"] != 0.0 || p["discontinuity"] != nil || len(causes) != 1 {
			t.Fatalf("day 2 proof: %s", js(p))
		}
		c := causes[0].(map[string]any)
		rows := c["rows"].([]any)
		if c["kind"] != "only_in_recon" || c["count"] != 1.0 || c["effect"] != -70000.0 || len(rows) != 1 ||
			rows[0].(map[string]any)["transaction_id"] != feedID || rows[0].(map[string]any)["reference_number"] != "FEED-0911-1" {
			t.Fatalf("day 2 causes: %s", js(causes))
		}

		// Day 3, CSV with a balance column: its opening (1,460,000 - 50,000)
		// does not join day 2's closing 1,400,000.
		day3 := upload("proof_day3.csv", "")
		p = proof(day3["import_id"])
		d, _ := p["discontinuity"].(map[string]any)
		if p["proved"] != true || d == nil || d["previous_import_id"] != day2["import_id"] || d["previous_closing_balance"] != 1.4e6 ||
			d["opening_balance"] != 1.41e6 || d["gap"] != 10000.0 || d["previous_to_date"] != "2026-09-11" {
			t.Fatalf("day 3 proof: %s", js(p))
		}

		// Day 4, camt.053 with an entry whose amount cannot be read, skipped:
		// missing in Recon, its amount unknown, the difference unexplained.
		day4 := upload("proof_day4_skip.xml", "?skip_invalid=true")
		p = proof(day4["import_id"])
		causes = p["causes"].([]any)
		if p["difference"] != 20000.0 || p["unexplained"] != nil || len(causes) != 1 {
			t.Fatalf("day 4 proof: %s", js(p))
		}
		c = causes[0].(map[string]any)
		row := c["rows"].([]any)[0].(map[string]any)
		if c["kind"] != "missing_in_recon" || c["count"] != 1.0 || c["unknown"] != 1.0 || row["transaction_id"] != nil || row["statement_amount"] != nil ||
			!strings.Contains(fmt.Sprint(row["note"]), "row ") {
			t.Fatalf("day 4 causes: %s", js(causes))
		}

		// Day 5, camt.053: its entry's reference is a feed's row stored
		// before with another amount (45,000, not 40,000).
		status, body = testkit.Call(t, "POST", b.srv.URL+"/api/v1/transactions", "feeder", fmt.Sprintf(`{"transactions":[
			{"bank_account_id": %d, "transaction_date": "2026-09-14 09:05:00", "amount_in": 45000, "transaction_content": "FEED", "reference_number": "FT26257000001"}]}`, acct))
		if status != 200 {
			t.Fatalf("feed push: %d %v", status, body)
		}
		day5 := upload("proof_day5_amount.xml", "")
		p = proof(day5["import_id"])
		causes = p["causes"].([]any)
		if day5["duplicates"] != 1.0 || p["difference"] != -5000.0 || p["unexplained"] != 0.0 || p["discontinuity"] != nil || len(causes) != 1 {
			t.Fatalf("day 5 proof: %v %s", day5, js(p))
		}
		if c := causes[0].(map[string]any); c["kind"] != "amount_differs" || c["count"] != 1.0 || c["effect"] != -5000.0 ||
			c["rows"].([]any)[0].(map[string]any)["statement_amount"] != 40000.0 || c["rows"].([]any)[0].(map[string]any)["amount_in"] != 45000.0 {
			t.Fatalf("day 5 causes: %s", js(causes))
		}

		// The list, the latest period first, paginated.
		list := get("banker", fmt.Sprintf("/api/v1/bank-accounts/%d/statements?limit=2&page=2", acct), 200)
		data := list["data"].([]any)
		if pg := list["meta"].(map[string]any)["pagination"].(map[string]any); pg["total"] != 5.0 || pg["last_page"] != 3.0 || len(data) != 2 ||
			data[0].(map[string]any)["id"] != day3["import_id"] || data[1].(map[string]any)["id"] != day2["import_id"] {
			t.Fatalf("list: %s", js(list))
		}

		// The reconciliation report's balances.
		rep := get("viewer", fmt.Sprintf("/api/v1/reconciliation?from_date=2026-09-09&to_date=2026-09-12&bank_account_id=%d", acct), 200)
		bal := rep["data"].(map[string]any)["balances"].([]any)
		want := []string{
			`{"account_number":"101234567890","bank_account_id":%d,"bank_balance":null,"basis":null,"causes":[],"date":"2026-09-09","difference":null,"recon_balance":null,"statement_import_id":null}`,
			`{"account_number":"101234567890","bank_account_id":%d,"bank_balance":1300000,"basis":"statement","causes":[],"date":"2026-09-10","difference":0,"recon_balance":1300000,"statement_import_id":%v}`,
			`{"account_number":"101234567890","bank_account_id":%d,"bank_balance":1400000,"basis":"statement","causes":[{"count":1,"effect":-70000,"kind":"only_in_recon","unknown":0}],"date":"2026-09-11","difference":-70000,"recon_balance":1470000,"statement_import_id":%v}`,
			`{"account_number":"101234567890","bank_account_id":%d,"bank_balance":1460000,"basis":"statement","causes":[],"date":"2026-09-12","difference":0,"recon_balance":1460000,"statement_import_id":%v}`,
		}
		ids := []any{nil, day1["import_id"], day2["import_id"], day3["import_id"]}
		if len(bal) != len(want) {
			t.Fatalf("balances: %s", js(bal))
		}
		for i, w := range want {
			if i == 0 {
				w = fmt.Sprintf(w, acct)
			} else {
				w = fmt.Sprintf(w, acct, ids[i])
			}
			if got := js(bal[i]); got != w {
				t.Errorf("balance %d:\n got %s\nwant %s", i, got, w)
			}
		}
		// Every account of the company without bank_account_id.
		rep = get("viewer", "/api/v1/reconciliation?from_date=2026-09-10&to_date=2026-09-10", 200)
		if bal := rep["data"].(map[string]any)["balances"].([]any); len(bal) != 1 || bal[0].(map[string]any)["bank_balance"] != 1.3e6 {
			t.Fatalf("balances of every account: %s", js(rep))
		}

		// Another company's account or import: 404; roles and scopes: 403;
		// malformed ids and parameters: 400.
		for _, tt := range []struct {
			token, path string
			status      int
			message     string
		}{
			{"other-banker", proofPath(day1["import_id"]), 404, "not found"},
			{"other-banker", fmt.Sprintf("/api/v1/bank-accounts/%d/statements", acct), 404, "not found"},
			{"banker", fmt.Sprintf("/api/v1/bank-accounts/%d/statements", other), 404, "not found"},
			{"banker", fmt.Sprintf("/api/v1/bank-accounts/%d/statements/%v", other, day1["import_id"]), 404, "not found"},
			{"banker", proofPath(999999), 404, "not found"},
			{"viewer", fmt.Sprintf("/api/v1/reconciliation?bank_account_id=%d", other), 404, "not found"},
			{"member-banker", proofPath(day1["import_id"]), 403, ""},
			{"member-banker", fmt.Sprintf("/api/v1/bank-accounts/%d/statements", acct), 403, ""},
			{"noscope-read", proofPath(day1["import_id"]), 403, ""},
			{"banker", "/api/v1/bank-accounts/abc/statements", 400, "positive integer"},
			{"banker", "/api/v1/bank-accounts/abc/statements/1", 400, "positive integer"},
			{"banker", proofPath("xyz"), 400, "statement import id in the path must be a positive integer"},
			{"banker", proofPath(0), 400, "statement import id in the path must be a positive integer"},
			{"banker", proofPath(day1["import_id"]) + "?verbose=1", 400, `unknown query parameter "verbose"`},
			{"banker", fmt.Sprintf("/api/v1/bank-accounts/%d/statements?limit=0", acct), 400, "limit"},
			{"banker", fmt.Sprintf("/api/v1/bank-accounts/%d/statements?from_date=2026-09-01", acct), 400, `unknown query parameter "from_date"`},
			{"viewer", "/api/v1/reconciliation?bank_account_id=abc", 400, "bank_account_id must be a positive integer"},
			{"viewer", "/api/v1/reconciliation?from_date=2025-01-01&to_date=2026-09-12", 400, "at most 366 days"},
		} {
			body := get(tt.token, tt.path, tt.status)
			if !strings.Contains(fmt.Sprint(body["message"]), tt.message) {
				t.Errorf("GET %s as %s: %v, want a message with %q", tt.path, tt.token, body, tt.message)
			}
		}
	})
}
