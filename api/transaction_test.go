package api_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon"
	"recon/sqlstore/dbtest"
)

func TestTransactionsAuth(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		for _, tt := range []struct {
			token  string
			status int
			code   string
		}{
			{"", 401, "unauthorized"},
			{"noscope-read", 403, "forbidden"}, // transaction:write only
			{"machine", 403, "forbidden"},      // no user, so no permission
			{"member", 403, "forbidden"},       // Member without view_transactions
			{"accountant", 403, "forbidden"},   // Accountant without view_transactions
			{"admin", 200, ""},                 // Admin reads money data (docs/design.md, D9)
			{"viewer", 200, ""},
		} {
			status, _, body := b.do(t, "GET", "/api/v1/transactions", tt.token, "")
			if status != tt.status || (tt.code != "" && body["error"] != tt.code) {
				t.Errorf("token %q: %d %v", tt.token, status, body)
			}
		}
		// Auth before validation: a bad parameter without permission is a 403.
		if status, _, _ := b.do(t, "GET", "/api/v1/transactions?limit=abc", "member", ""); status != 403 {
			t.Errorf("bad parameter without permission: %d", status)
		}
	})
}

func TestTransactionsListValidation(t *testing.T) {
	b := setup(t, "sqlite")
	for _, tt := range []struct{ query, message string }{
		{"limit=0", "limit must be an integer from 1 to 100"},
		{"limit=101", "limit must be an integer from 1 to 100"},
		{"limit=abc", "limit must be an integer from 1 to 100"},
		{"page=0", "page must be an integer from 1 to 1000000"},
		{"page=-1", "page must be an integer from 1 to 1000000"},
		{"page=1.5", "page must be an integer from 1 to 1000000"},
		{"bank_account_id=x", "bank_account_id must be an integer from 1 to 9223372036854775807"},
		{"from_date=2026-02-30", "from_date must be a date in the form YYYY-MM-DD"},
		{"to_date=21/11/2026", "to_date must be a date in the form YYYY-MM-DD"},
		{"from_date=2026-03-02&to_date=2026-03-01", "from_date must not be after to_date"},
		{"amount_in=12.5", "amount_in must be a non-negative whole number of VND: VND has no minor unit"},
		{"amount_out=-5", `amount_out must be a non-negative whole number of VND: "-5" is not a number`},
		{"sort=asc", "unknown query parameter \"sort\" (known: bank_account_id, account_number, reference_number, from_date, to_date, amount_out, amount_in, page, limit)"},
		{"page=1&page=2", "query parameter page is given 2 times"},
		{"reference_number=", "reference_number must be 1 to 128 characters"},
	} {
		status, _, body := b.do(t, "GET", "/api/v1/transactions?"+tt.query, "viewer", "")
		if status != 400 || body["error"] != "validation_error" || body["message"] != tt.message {
			t.Errorf("%s: %d %v, want 400 %q", tt.query, status, body, tt.message)
		}
	}
}

func TestPushAndList(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		acct := b.account(t, b.company.ID, "0071000123456")
		otherAcct := b.account(t, b.other.ID, "999")
		// The company's formats: DH + 4..8 digits.
		b.do(t, "PATCH", "/api/v1/company/configurations", "admin", `{"payment_code_formats":[{"prefix":"DH","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}`)
		push := fmt.Sprintf(`{"transactions":[
			{"bank_account_id":%d,"transaction_date":"2026-03-01 08:15:00","amount_in":150000,"amount_out":0,"transaction_content":"NGUYEN VAN A chuyen tien DH1709 thanh toan","reference_number":"FT001"},
			{"bank_account_id":%d,"transaction_date":"2026-03-01 09:00:00","amount_in":0,"amount_out":20000,"transaction_content":"Phi dich vu","reference_number":"FT002","accumulated":130000},
			{"bank_account_id":%d,"transaction_date":"2026-03-01T10:00:00+07:00","amount_in":"500000.00","transaction_content":"Thanh toán đơn hàng ĐH123456","reference_number":"FT003","sub_account":"VA01"}
		]}`, acct, acct, acct)
		status, _, body := b.do(t, "POST", "/api/v1/transactions", "feeder", push)
		if status != 200 {
			t.Fatalf("push: %d %v", status, body)
		}
		data := body["data"].([]any)
		codes := []any{"DH1709", nil, "DH123456"}
		for i, d := range data {
			m := d.(map[string]any)
			if m["duplicate"] != false || m["code"] != codes[i] || m["id"].(float64) <= 0 {
				t.Fatalf("item %d: %v", i, m)
			}
		}
		// The same push again: every item a duplicate with the same id.
		_, _, again := b.do(t, "POST", "/api/v1/transactions", "feeder", push)
		for i, d := range again["data"].([]any) {
			m := d.(map[string]any)
			if m["duplicate"] != true || m["id"] != data[i].(map[string]any)["id"] {
				t.Fatalf("repeat item %d: %v", i, m)
			}
		}
		status, _, list := b.do(t, "GET", "/api/v1/transactions", "viewer", "")
		if status != 200 {
			t.Fatalf("list: %d %v", status, list)
		}
		first := list["data"].([]any)[0].(map[string]any)
		want := map[string]any{
			"id": data[2].(map[string]any)["id"], "bank_account_id": float64(acct), "bank_brand_name": "Vietcombank",
			"account_number": "0071000123456", "transaction_date": "2026-03-01 10:00:00", "amount_out": 0.0,
			"amount_in": 500000.0, "accumulated": 630000.0, "transaction_content": "Thanh toán đơn hàng ĐH123456",
			"reference_number": "FT003", "code": "DH123456", "sub_account": "VA01", "livemode": true,
		}
		if d := cmp.Diff(want, first); d != "" {
			t.Fatalf("newest transaction (-want +got):\n%s", d)
		}
		wantMeta := map[string]any{"pagination": map[string]any{"total": 3.0, "per_page": 20.0, "current_page": 1.0, "last_page": 1.0}}
		if d := cmp.Diff(wantMeta, list["meta"]); d != "" {
			t.Fatalf("meta (-want +got):\n%s", d)
		}
		// A page past the end: empty data, right meta.
		_, _, past := b.do(t, "GET", "/api/v1/transactions?page=9&limit=2", "viewer", "")
		if len(past["data"].([]any)) != 0 || past["meta"].(map[string]any)["pagination"].(map[string]any)["last_page"] != 2.0 {
			t.Fatalf("past the end: %v", past)
		}
		// Another company's bank account: 400, nothing stored.
		status, _, body = b.do(t, "POST", "/api/v1/transactions", "feeder", fmt.Sprintf(`{"transactions":[
			{"bank_account_id":%d,"transaction_date":"2026-03-02 08:00:00","amount_in":1,"reference_number":"X1"},
			{"bank_account_id":%d,"transaction_date":"2026-03-02 08:00:00","amount_in":1,"reference_number":"X2"}]}`, acct, otherAcct))
		if status != 400 || !strings.Contains(body["message"].(string), "not found") {
			t.Fatalf("other company's account: %d %v", status, body)
		}
		_, _, list = b.do(t, "GET", "/api/v1/transactions", "viewer", "")
		if n := list["meta"].(map[string]any)["pagination"].(map[string]any)["total"]; n != 3.0 {
			t.Fatalf("partial write: total %v", n)
		}
		// The other company sees none of it.
		_, _, ol := b.do(t, "GET", "/api/v1/transactions", "other-viewer", "")
		if len(ol["data"].([]any)) != 0 {
			t.Fatalf("other company sees %v", ol["data"])
		}
	})
}

func TestPushValidation(t *testing.T) {
	b := setup(t, "sqlite")
	acct := b.account(t, b.company.ID, "111")
	item := func(extra string) string {
		return fmt.Sprintf(`{"transactions":[{"bank_account_id":%d,"transaction_date":"2026-03-01 08:00:00","reference_number":"R1"%s}]}`, acct, extra)
	}
	for _, tt := range []struct{ name, body, message string }{
		{"empty", `{"transactions":[]}`, "transactions is required: an array of 1 to 1000 transactions"},
		{"missing", `{}`, "transactions is required: an array of 1 to 1000 transactions"},
		{"no amounts", item(``), "transactions[0]: exactly one of amount_in and amount_out must be positive"},
		{"both amounts", item(`,"amount_in":1,"amount_out":1`), "transactions[0]: exactly one of amount_in and amount_out must be positive"},
		{"fraction", item(`,"amount_in":1.5`), "transactions[0].amount_in must be a non-negative whole number of VND: VND has no minor unit"},
		{"negative", item(`,"amount_in":-1`), `transactions[0].amount_in must be a non-negative whole number of VND: "-1" is not a number`},
		{"huge", item(`,"amount_in":1e400`), `transactions[0].amount_in must be a non-negative whole number of VND: "1e400" is not a number`},
		{"too large", item(`,"amount_in":9000000000000000000`), "transactions[0].amount_in must be a non-negative whole number of VND: at most 1000000000000000"},
		{"bad date", item(`,"amount_in":1,"transaction_date":"01/03/2026"`), ""},
		{"unknown field", item(`,"amount_in":1,"memo":"x"`), `transactions[0]: unknown field "memo"`},
		{"wrong type", item(`,"amount_in":1,"transaction_content":5`), "transactions[0]: transaction_content must be a string, not number"},
		{"no reference", fmt.Sprintf(`{"transactions":[{"bank_account_id":%d,"transaction_date":"2026-03-01 08:00:00","amount_in":1}]}`, acct), "transactions[0].reference_number is required and must be at most 128 characters"},
		{"bad account", `{"transactions":[{"bank_account_id":"abc","transaction_date":"2026-03-01 08:00:00","amount_in":1,"reference_number":"R"}]}`, ""},
		{"unknown account", `{"transactions":[{"bank_account_id":424242,"transaction_date":"2026-03-01 08:00:00","amount_in":1,"reference_number":"R"}]}`, fmt.Sprintf("bank account 424242 not found in company %d", b.company.ID)},
		{"not an array", `{"transactions":{}}`, "transactions must be an array, not object"},
	} {
		status, _, body := b.do(t, "POST", "/api/v1/transactions", "feeder", tt.body)
		if status != 400 || body["error"] != "validation_error" || (tt.message != "" && body["message"] != tt.message) {
			t.Errorf("%s: %d %v, want 400 %q", tt.name, status, body, tt.message)
		}
	}
	over := `{"transactions":[` + strings.Repeat(`{},`, 1000) + `{}]}`
	if status, _, body := b.do(t, "POST", "/api/v1/transactions", "feeder", over); status != 400 || body["message"] != "a batch holds at most 1000 transactions, not 1001" {
		t.Errorf("1001 items: %d %v", status, body)
	}
	if _, _, list := b.do(t, "GET", "/api/v1/transactions", "viewer", ""); len(list["data"].([]any)) != 0 {
		t.Fatalf("a refused push stored %v", list["data"])
	}
}

// TestPushConcurrentDuplicates pushes the same batch from many clients at
// once: every reference is stored exactly once and all see the same ids.
func TestPushConcurrentDuplicates(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		acct := b.account(t, b.company.ID, "111")
		var items []string
		for i := range 200 {
			items = append(items, fmt.Sprintf(`{"bank_account_id":%d,"transaction_date":"2026-03-01 08:00:00","amount_in":1000,"transaction_content":"DH%04d","reference_number":"R%d"}`, acct, i, i))
		}
		body := `{"transactions":[` + strings.Join(items, ",") + `]}`
		var wg sync.WaitGroup
		results := make([][]any, 8)
		for w := range 8 {
			wg.Go(func() {
				status, _, resp := b.do(t, "POST", "/api/v1/transactions", "feeder", body)
				if status == 200 {
					results[w] = resp["data"].([]any)
				}
			})
		}
		wg.Wait()
		fresh := 0
		for w, res := range results {
			if len(res) != 200 {
				t.Fatalf("worker %d got %d results", w, len(res))
			}
			for i, r := range res {
				if r.(map[string]any)["id"] != results[0][i].(map[string]any)["id"] {
					t.Fatalf("worker %d item %d: different id", w, i)
				}
				if r.(map[string]any)["duplicate"] == false {
					fresh++
				}
			}
		}
		_, _, list := b.do(t, "GET", "/api/v1/transactions?limit=1", "viewer", "")
		if total := list["meta"].(map[string]any)["pagination"].(map[string]any)["total"]; fresh != 200 || total != 200.0 {
			t.Fatalf("fresh %d, total %v; want 200 each", fresh, total)
		}
	})
}

func (b *bundle) account(t *testing.T, companyID int64, number string) int64 {
	t.Helper()
	a := &recon.BankAccount{CompanyID: companyID, BankName: "Vietcombank", AccountNumber: number}
	if err := b.store.CreateBankAccount(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	return a.ID
}
