package apiv2

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// ordersEnv is a server with one company (a Vietcombank account) and another
// company, on a database of the engine.
type ordersEnv struct {
	url    string
	co     *recon.Company
	bank   *recon.BankAccount
	other  string // another company's admin token
	ingest func(t *testing.T, tenant recon.TenantID, account int64, ref, memo, sub string, amount int64)
}

func newOrdersEnv(t *testing.T, engine string) *ordersEnv {
	t.Helper()
	db := dbtest.OpenStore(t, engine)
	co, auth := company(t, db, "SM")
	_, otherAuth := company(t, db, "OT")
	auth["other"] = otherAuth["admin"]
	bank := &recon.BankAccount{CompanyID: co.ID, BankName: "Vietcombank", AccountNumber: "0011223344", HolderName: "SAO MAI"}
	if err := db.CreateBankAccount(context.Background(), bank); err != nil {
		t.Fatal(err)
	}
	clock := testkit.NewClock(time.Now().UTC().Truncate(time.Second))
	_, srv := server(t, Config{Store: db, Auth: auth, Clock: clock})
	e := &ordersEnv{url: srv.URL, co: co, bank: bank, other: "other"}
	e.ingest = func(t *testing.T, tenant recon.TenantID, account int64, ref, memo, sub string, amount int64) {
		t.Helper()
		_, err := recon.Ingest(context.Background(), db, tenant, clock.Now(), []recon.TransactionInput{{BankAccountID: account,
			TransactionDate: clock.Now().Add(-time.Minute), AmountIn: amount, Content: memo, ReferenceNumber: ref, SubAccount: sub}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// call sends a request and decodes the answer's body as a map.
func (e *ordersEnv) call(t *testing.T, method, path, token, body string, headers ...string) (int, map[string]any, http.Header) {
	t.Helper()
	status, h, raw := send(t, method, e.url+path, token, body, headers...)
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("%s %s: answer %q is not a JSON object: %v", method, path, raw, err)
	}
	return status, m, h
}

// TestOrdersAPI walks the orders routes on both engines: creation and the
// order's shape, reading (a v1 order too), listing and filters, cancelling,
// adding and cancelling accounts, the 422 invalid_state, tenant isolation
// (another company, the test mode) and idempotency.
func TestOrdersAPI(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newOrdersEnv(t, engine)
		body := `{"order_invoice_number":"INV-1","amount":150000,"bank_account_id":` + itoa(e.bank.ID) + `,
			"description":"Đơn hàng 1","customer_id":"C-1","buyer":{"name":"Nguyễn Văn A","email":"a@example.vn","tax_code":"0101234567"},
			"expires_in":3600,"va":{"amount_mode":"partial","holder_name":"SAO MAI SHOP"}}`
		status, m, h := e.call(t, "POST", "/v2/orders", "admin", body, "X-Idempotency-Key", "k-1")
		if status != http.StatusCreated {
			t.Fatalf("create: %d %v", status, m)
		}
		o := data(m)
		id, _ := o["id"].(string)
		if !recon.ValidXID(id) || o["status"] != "pending" || o["amount"] != 150000.0 || o["paid_amount"] != 0.0 || o["refunded_amount"] != 0.0 ||
			o["customer_id"] != "C-1" || o["paid_at"] != nil || o["expires_at"] == nil || o["bank_account_id"] != float64(e.bank.ID) {
			t.Fatalf("created %v", o)
		}
		if b, _ := o["buyer"].(map[string]any); b["email"] != "a@example.vn" || b["tax_code"] != "0101234567" || b["phone"] != "" {
			t.Errorf("buyer %v", b)
		}
		vas, _ := o["virtual_accounts"].([]any)
		if len(vas) != 1 {
			t.Fatalf("accounts %v", vas)
		}
		va := vas[0].(map[string]any)
		number, _ := va["va_number"].(string)
		qr, _ := va["qr"].(map[string]any)
		if va["kind"] != "memo" || !recon.IsMemoVANumber(number) || va["amount_mode"] != "partial" || va["amount"] != 150000.0 ||
			va["status"] != "active" || va["holder_name"] != "SAO MAI SHOP" || va["order_id"] != id || va["expires_at"] != o["expires_at"] ||
			!strings.HasPrefix(qr["payload"].(string), "000201") || !isPNGDataURL(qr["image_url"]) {
			t.Fatalf("account %v", va)
		}
		// The same key and body: the first answer again.
		status, again, h2 := e.call(t, "POST", "/v2/orders", "admin", body, "X-Idempotency-Key", "k-1")
		if status != http.StatusCreated || h2.Get("Idempotent-Replayed") != "true" || data(again)["id"] != id || h.Get("Idempotent-Replayed") != "" {
			t.Errorf("replay: %d %v", status, again)
		}

		// Reading: by id, upper-case too; never another tenant's.
		for _, path := range []string{"/v2/orders/" + id, "/v2/orders/" + strings.ToUpper(id)} {
			if status, m, _ := e.call(t, "GET", path, "admin", ""); status != 200 || data(m)["id"] != id {
				t.Errorf("GET %s: %d %v", path, status, m)
			}
		}
		for _, c := range []struct{ token, path string }{
			{"other", "/v2/orders/" + id}, {"test", "/v2/orders/" + id}, {"admin", "/v2/orders/" + recon.NewXID()}, {"admin", "/v2/orders/INV-1"},
			{"other", "/v2/orders/" + id + "/virtual-accounts/" + number}, {"test", "/v2/virtual-accounts?order_id=" + id},
		} {
			method := "GET"
			if strings.Contains(c.path, "/virtual-accounts/") {
				method = "DELETE"
			}
			if status, m, _ := e.call(t, method, c.path, c.token, ""); status != 404 || m["error_code"] != "not_found" {
				t.Errorf("%s %s as %s: %d %v, want 404", method, c.path, c.token, status, m)
			}
		}
		for _, tok := range []string{"other", "test"} {
			if status, m, _ := e.call(t, "POST", "/v2/orders/"+id+"/cancel", tok, ""); status != 404 {
				t.Errorf("cancel as %s: %d %v", tok, status, m)
			}
			if status, m, _ := e.call(t, "GET", "/v2/orders", tok, ""); status != 200 || m["meta"].(map[string]any)["total"] != 0.0 {
				t.Errorf("list as %s: %d %v", tok, status, m)
			}
		}

		// Another account, then cancelling it; an unknown number is 404.
		status, m, _ = e.call(t, "POST", "/v2/orders/"+id+"/virtual-accounts", "admin", `{"amount":50000,"expires_in":600}`)
		second := data(m)
		if status != 201 || second["amount_mode"] != "partial" || second["amount"] != 50000.0 || second["order_id"] != id {
			t.Fatalf("add: %d %v", status, m)
		}
		status, m, _ = e.call(t, "POST", "/v2/orders/"+id+"/virtual-accounts", "admin", "")
		if status != 201 || data(m)["amount_mode"] != "exact" || data(m)["amount"] != 150000.0 {
			t.Fatalf("add with an empty body: %d %v", status, m)
		}
		n2 := second["va_number"].(string)
		if status, m, _ := e.call(t, "DELETE", "/v2/orders/"+id+"/virtual-accounts/"+n2, "admin", ""); status != 200 || data(m)["status"] != "cancelled" {
			t.Errorf("delete: %d %v", status, m)
		}
		if status, m, _ := e.call(t, "DELETE", "/v2/orders/"+id+"/virtual-accounts/"+n2, "admin", ""); status != 422 || m["error_code"] != "invalid_state" {
			t.Errorf("delete twice: %d %v", status, m)
		}
		if status, m, _ := e.call(t, "DELETE", "/v2/orders/"+id+"/virtual-accounts/SBR404", "admin", ""); status != 404 {
			t.Errorf("delete unknown: %d %v", status, m)
		}
		status, m, _ = e.call(t, "GET", "/v2/virtual-accounts?order_id="+id+"&status=active", "admin", "")
		if list, _ := m["data"].([]any); status != 200 || len(list) != 2 || m["meta"].(map[string]any)["total"] != 2.0 {
			t.Errorf("list accounts: %d %v", status, m)
		}

		// A partial payment through the memo code: partially_paid.
		e.ingest(t, e.co.Tenant(), e.bank.ID, "R1", "thanh toan "+number, "", 40000)
		_, m, _ = e.call(t, "GET", "/v2/orders/"+id, "admin", "")
		if data(m)["status"] != "partially_paid" || data(m)["paid_amount"] != 40000.0 {
			t.Errorf("after a partial payment: %v", data(m))
		}
		// Its account's QR now asks for the rest: 110 000 VND (EMVCo object 54).
		if qr := data(m)["virtual_accounts"].([]any)[0].(map[string]any)["qr"].(map[string]any); !strings.Contains(qr["payload"].(string), "5406110000") {
			t.Errorf("the QR after a partial payment: %v", qr)
		}
		for q, want := range map[string]float64{"status=partially_paid": 1, "status=pending": 0, "customer_id=C-1": 1, "q=" + "%C4%91%C6%A1n+h%C3%A0ng": 1, "q=nothing": 0} {
			if status, m, _ := e.call(t, "GET", "/v2/orders?"+q, "admin", ""); status != 200 || m["meta"].(map[string]any)["total"] != want {
				t.Errorf("list %s: %d %v, want total %v", q, status, m, want)
			}
		}

		// Cancel: then no more cancels or accounts.
		status, m, _ = e.call(t, "POST", "/v2/orders/"+id+"/cancel", "admin", "", "X-Idempotency-Key", "c-1")
		if status != 200 || data(m)["status"] != "cancelled" || data(m)["paid_amount"] != 40000.0 {
			t.Fatalf("cancel: %d %v", status, m)
		}
		for _, a := range data(m)["virtual_accounts"].([]any) {
			if a.(map[string]any)["status"] != "cancelled" {
				t.Errorf("an account after the cancel: %v", a)
			}
		}
		for _, c := range []struct{ path, body string }{{"/v2/orders/" + id + "/cancel", ""}, {"/v2/orders/" + id + "/virtual-accounts", "{}"}} {
			if status, m, _ := e.call(t, "POST", c.path, "admin", c.body); status != 422 || m["error_code"] != "invalid_state" || !strings.Contains(m["message"].(string), "cancelled") {
				t.Errorf("POST %s after the cancel: %d %v", c.path, status, m)
			}
		}
		// A transfer to a cancelled account changes nothing.
		e.ingest(t, e.co.Tenant(), e.bank.ID, "R2", number, "", 110000)
		if _, m, _ := e.call(t, "GET", "/v2/orders/"+id, "admin", ""); data(m)["paid_amount"] != 40000.0 {
			t.Errorf("after a transfer to a cancelled account: %v", data(m))
		}

		if status, m, _ := e.call(t, "POST", "/v2/orders", "admin", `{"order_invoice_number":"INV-1","amount":1,"bank_account_id":`+itoa(e.bank.ID)+`}`); status != 409 || m["error_code"] != "conflict" {
			t.Errorf("same invoice: %d %v", status, m)
		}
	})
}

// TestOrdersAPIRefusals: every malformed or invalid request is a 400 naming
// the problem, and nothing is stored.
func TestOrdersAPIRefusals(t *testing.T) {
	e := newOrdersEnv(t, "sqlite")
	acct := itoa(e.bank.ID)
	ok := func(extra string) string {
		return `{"order_invoice_number":"INV-9","amount":1000,"bank_account_id":` + acct + extra + `}`
	}
	for _, c := range []struct {
		name, body, field, contains string
		status                      int
	}{
		{"malformed", `{"order_invoice_number":`, "", "malformed JSON", 400},
		{"empty", ``, "", "empty", 400},
		{"unknown field", ok(`,"currency":"VND"`), "", "currency", 400},
		{"unknown nested field", ok(`,"buyer":{"nick":"x"}`), "", "nick", 400},
		{"wrong type", `{"order_invoice_number":"INV-9","amount":"1000","bank_account_id":` + acct + `}`, "", "amount", 400},
		{"fraction", `{"order_invoice_number":"INV-9","amount":10.5,"bank_account_id":` + acct + `}`, "", "amount", 400},
		{"beyond int64", `{"order_invoice_number":"INV-9","amount":99999999999999999999,"bank_account_id":` + acct + `}`, "", "amount", 400},
		{"zero amount", `{"order_invoice_number":"INV-9","amount":0,"bank_account_id":` + acct + `}`, "amount", "amount must be", 400},
		{"amount too large", `{"order_invoice_number":"INV-9","amount":1000000000000000001,"bank_account_id":` + acct + `}`, "amount", "amount must be", 400},
		{"no invoice", `{"amount":1,"bank_account_id":` + acct + `}`, "order_invoice_number", "required", 400},
		{"bad invoice", `{"order_invoice_number":"a b","amount":1,"bank_account_id":` + acct + `}`, "order_invoice_number", "letters", 400},
		{"no amount", `{"order_invoice_number":"INV-9","bank_account_id":` + acct + `}`, "amount", "required", 400},
		{"no bank account", `{"order_invoice_number":"INV-9","amount":1}`, "bank_account_id", "required", 400},
		{"another company's account", `{"order_invoice_number":"INV-9","amount":1,"bank_account_id":999999}`, "bank_account_id", "not a bank account", 400},
		// A nested field is named by its path, in errors and the message.
		{"unknown mode", ok(`,"va":{"amount_mode":"some"}`), "va.amount_mode", "va.amount_mode must be", 400},
		{"holder name too long", ok(`,"va":{"holder_name":"` + strings.Repeat("A", recon.MaxHolderName+1) + `"}`), "va.holder_name", "va.holder_name must be", 400},
		{"bad email", ok(`,"buyer":{"email":"nope"}`), "buyer.email", "buyer.email must be", 400},
		{"bad tax code", ok(`,"buyer":{"tax_code":"12"}`), "buyer.tax_code", "tax_code", 400},
		{"expires_in too long", ok(`,"expires_in":2592001`), "expires_in", "30 days", 400},
		{"expires_in negative", ok(`,"expires_in":-1`), "expires_in", "expires_in", 400},
	} {
		status, m, _ := e.call(t, "POST", "/v2/orders", "admin", c.body)
		msg, _ := m["message"].(string)
		if status != c.status || m["error_code"] != "validation_error" || !strings.Contains(msg, c.contains) {
			t.Errorf("%s: %d %v", c.name, status, m)
			continue
		}
		if c.field != "" {
			if errs, _ := m["errors"].(map[string]any); errs[c.field] == nil {
				t.Errorf("%s: errors %v do not name %s", c.name, m["errors"], c.field)
			}
		}
	}
	if _, m, _ := e.call(t, "GET", "/v2/orders", "admin", ""); m["meta"].(map[string]any)["total"] != 0.0 {
		t.Fatalf("a refused request stored an order: %v", m)
	}
	status, m, _ := e.call(t, "POST", "/v2/orders", "admin", ok(""))
	if status != 201 {
		t.Fatal(status, m)
	}
	id := data(m)["id"].(string)
	for _, c := range []struct{ method, path, body, contains string }{
		{"GET", "/v2/orders?status=refunded", "", "status must be one of"},
		{"GET", "/v2/orders?sort=asc", "", "unknown query parameter"},
		{"GET", "/v2/orders?from_date=2026-13-01", "", "from_date"},
		{"GET", "/v2/orders?per_page=101", "", "per_page"},
		{"GET", "/v2/virtual-accounts?status=gone", "", "status must be one of"},
		{"GET", "/v2/virtual-accounts?kind=bank", "", "unknown query parameter"},
		{"POST", "/v2/orders/" + id + "/virtual-accounts", `{"amount_mode":"open","amount":5}`, "open virtual account"},
		{"POST", "/v2/orders/" + id + "/virtual-accounts", `{"amount":1001}`, "outstanding"},
		{"POST", "/v2/orders/" + id + "/virtual-accounts", `{"amount_mode":"exact","amount":5}`, "exact"},
		{"POST", "/v2/orders/" + id + "/virtual-accounts", `{"holder":"x"}`, "holder"},
		{"POST", "/v2/orders/" + id + "/virtual-accounts", `[1]`, "must be an object"},
		{"POST", "/v2/orders/" + id + "/cancel", `{"reason":"x"}`, "reason"},
	} {
		status, m, _ := e.call(t, c.method, c.path, "admin", c.body)
		if msg, _ := m["message"].(string); status != 400 || !strings.Contains(msg, c.contains) {
			t.Errorf("%s %s %s: %d %v", c.method, c.path, c.body, status, m)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// isPNGDataURL reports whether v is a data: URL of a PNG image that decodes.
func isPNGDataURL(v any) bool {
	s, _ := v.(string)
	b64, ok := strings.CutPrefix(s, "data:image/png;base64,")
	if !ok {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return false
	}
	img, err := png.Decode(bytes.NewReader(raw))
	return err == nil && img.Bounds().Dx() > 100 && img.Bounds().Dx() == img.Bounds().Dy()
}
