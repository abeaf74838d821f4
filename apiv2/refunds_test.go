package apiv2

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/refunds"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// refundEnv is a server with the refund routes over a real database: a
// company with a bank account, an incoming transfer that paid no order
// (IN, 100000 VND) and an outgoing one (OUT), and tokens: "admin" (user 1),
// "admin2" (user 2), "clerk" (a Member with create_refunds), "reader" (a
// Member with view_transactions), "server" (client credentials), "test"
// (the admin in test mode), "other" (another company's admin).
type refundEnv struct {
	db       *sqlstore.DB
	dbURL    string
	auth     tokens
	url      string
	clock    *testkit.Clock
	co       *recon.Company
	in, out  int64
	account  int64
	receiver string
}

func newRefundEnv(t *testing.T, engine string) *refundEnv {
	ctx := context.Background()
	dbURL := dbtest.NewMigratedURL(t, engine)
	db := dbtest.OpenURL(t, dbURL)
	co, auth := company(t, db, "SM")
	_, other := company(t, db, "OT")
	auth["other"] = other["admin"]
	user := func(id int64, role recon.Role, perms ...string) *recon.User {
		return &recon.User{ID: id, Company: co.ID, Email: fmt.Sprintf("u%d@saomai.vn", id), Role: role, Permissions: perms}
	}
	auth["admin"].User = user(1, recon.RoleAdmin)
	auth["admin2"] = &recon.Caller{Tenant: co.Tenant(), ClientID: "dashboard", Scopes: recon.Scopes, User: user(2, recon.RoleAdmin)}
	auth["admin-cli"] = &recon.Caller{Tenant: co.Tenant(), ClientID: "cli", Scopes: recon.Scopes, User: user(1, recon.RoleAdmin)}
	auth["clerk"] = &recon.Caller{Tenant: co.Tenant(), ClientID: "dashboard", Scopes: recon.Scopes, User: user(3, recon.RoleMember, recon.PermCreateRefunds)}
	auth["reader"] = &recon.Caller{Tenant: co.Tenant(), ClientID: "dashboard", Scopes: recon.Scopes, User: user(4, recon.RoleMember, recon.PermViewTransactions)}
	auth["server"] = &recon.Caller{Tenant: co.Tenant(), ClientID: "shop-server", Scopes: recon.Scopes}
	a := &recon.BankAccount{CompanyID: co.ID, BankName: "Vietcombank", AccountNumber: "0011001", HolderName: "SAO MAI"}
	if err := db.CreateBankAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	res, err := db.IngestTransactions(ctx, co.Tenant(), []recon.TransactionInput{
		{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), AmountIn: 100_000, Content: "chuyen tien", ReferenceNumber: "IN"},
		{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC), AmountOut: 5_000, Content: "phi", ReferenceNumber: "OUT"},
	}, []string{"", ""})
	if err != nil {
		t.Fatal(err)
	}
	clock := testkit.NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	hcm, err := time.LoadLocation("Asia/Ho_Chi_Minh")
	if err != nil {
		t.Fatal(err)
	}
	svc := &refunds.Service{Store: db, Clock: clock, Location: hcm}
	_, srv := server(t, Config{Store: db, Auth: auth, Clock: clock, Location: hcm, Refunds: svc})
	return &refundEnv{db: db, dbURL: dbURL, auth: auth, url: srv.URL, clock: clock, co: co, in: res[0].ID, out: res[1].ID, account: a.ID,
		receiver: `{"bank_bin":"970436","account_number":"0071000123456","account_name":"NGUYEN VAN A"}`}
}

func (e *refundEnv) refund(t *testing.T, token, key, body string) (int, http.Header, map[string]any) {
	t.Helper()
	var headers []string
	if key != "" {
		headers = []string{IdempotencyHeader, key}
	}
	status, h, b := send(t, http.MethodPost, fmt.Sprintf("%s/v2/transactions/%d/refund", e.url, e.in), token, body, headers...)
	return status, h, decodeAnswer(t, b)
}

func decodeAnswer(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	return m
}

func data(m map[string]any) map[string]any { d, _ := m["data"].(map[string]any); return d }

// TestRefundErrors: every error of the refund routes over HTTP, each with
// its status and error_code.
func TestRefundErrors(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRefundEnv(t, engine)
		body := func(amount string) string {
			return `{"amount":` + amount + `,"reason":"trả hàng","receiver":` + e.receiver + `}`
		}
		txURL := func(id int64) string { return fmt.Sprintf("%s/v2/transactions/%d/refund", e.url, id) }
		key := 0
		next := func() []string { key++; return []string{IdempotencyHeader, fmt.Sprintf("k-%d", key)} }
		for _, c := range []struct {
			name, token, url, body string
			headers                []string
			status                 int
			code, msg              string
		}{
			{"no key", "admin", txURL(e.in), body("1000"), nil, 422, "idempotency_key_required", ""},
			{"malformed JSON", "admin", txURL(e.in), `{"amount":`, next(), 400, "validation_error", ""},
			{"unknown field", "admin", txURL(e.in), `{"amount":1,"reason":"x","tip":1}`, next(), 400, "validation_error", ""},
			{"wrong type", "admin", txURL(e.in), `{"amount":"1000","reason":"x"}`, next(), 400, "validation_error", ""},
			{"zero amount", "admin", txURL(e.in), body("0"), next(), 400, "validation_error", "amount must be a whole number of VND from 1 to 1000000000000000 (leave it out to refund everything refundable)"},
			{"negative amount", "admin", txURL(e.in), body("-5"), next(), 400, "validation_error", ""},
			{"fractional amount", "admin", txURL(e.in), body("1.5"), next(), 400, "validation_error", ""},
			{"huge amount", "admin", txURL(e.in), body("1000000000000000001"), next(), 400, "validation_error", ""},
			{"no reason", "admin", txURL(e.in), `{"receiver":` + e.receiver + `}`, next(), 400, "validation_error", "reason is required: say why the money goes back"},
			{"bad BIN", "admin", txURL(e.in), `{"reason":"x","receiver":{"bank_bin":"97","account_number":"1","account_name":"A"}}`, next(), 400, "validation_error", ""},
			{"empty receiver", "admin", txURL(e.in), `{"reason":"x","receiver":{}}`, next(), 400, "validation_error", ""},
			{"no receiver", "admin", txURL(e.in), `{"reason":"x"}`, next(), 422, "receiver_required", "receiver is required: the bank data of transaction " + fmt.Sprint(e.in) + " does not say whose account the money came from"},
			{"outgoing", "admin", txURL(e.out), body("1000"), next(), 422, "nothing_to_refund", ""},
			{"too much", "admin", txURL(e.in), body("100001"), next(), 422, "amount_exceeds_refundable", "amount 100001 VND exceeds what transaction " + fmt.Sprint(e.in) + " has left to refund, 100000 VND"},
			{"unknown transaction", "admin", txURL(999999), body("1"), next(), 404, "not_found", ""},
			{"not a transaction id", "admin", e.url + "/v2/transactions/abc/refund", body("1"), next(), 404, "not_found", ""},
			{"another company's transaction", "other", txURL(e.in), body("1"), next(), 404, "not_found", ""},
			{"test mode", "test", txURL(e.in), body("1"), next(), 404, "not_found", ""},
			{"unknown order", "admin", e.url + "/v2/orders/" + recon.NewXID() + "/refund", body("1"), next(), 404, "not_found", ""},
			{"a reader", "reader", txURL(e.in), body("1"), next(), 403, "forbidden", ""},
			{"unknown refund", "admin", e.url + "/v2/refunds/" + recon.NewXID(), "", nil, 404, "not_found", ""},
			{"malformed refund id", "admin", e.url + "/v2/refunds/HT123", "", nil, 404, "not_found", ""},
			{"list: unknown parameter", "admin", e.url + "/v2/refunds?state=x", "", nil, 400, "validation_error", ""},
			{"list: bad status", "admin", e.url + "/v2/refunds?status=done", "", nil, 400, "validation_error", ""},
			{"list: bad order id", "admin", e.url + "/v2/refunds?order_id=7", "", nil, 400, "validation_error", ""},
			{"list: bad transaction id", "admin", e.url + "/v2/refunds?transaction_id=-1", "", nil, 400, "validation_error", ""},
			{"list: bad date", "admin", e.url + "/v2/refunds?from_date=2026-13-01", "", nil, 400, "validation_error", ""},
			{"list: per_page", "admin", e.url + "/v2/refunds?per_page=101", "", nil, 400, "validation_error", ""},
		} {
			method := http.MethodPost
			if c.body == "" {
				method = http.MethodGet
			}
			status, _, b := send(t, method, c.url, c.token, c.body, c.headers...)
			m := decodeAnswer(t, b)
			if status != c.status || m["error_code"] != c.code || (c.msg != "" && m["message"] != c.msg) {
				t.Errorf("%s: %d %s, want %d %s %q", c.name, status, b, c.status, c.code, c.msg)
			}
		}
		// Nothing was made by any of them.
		status, _, b := send(t, http.MethodGet, e.url+"/v2/refunds", "admin", "")
		if status != 200 || decodeAnswer(t, b)["meta"].(map[string]any)["total"] != float64(0) {
			t.Fatalf("after the errors: %d %s", status, b)
		}

		// The state rules: already_refunded, invalid_state, four eyes.
		if _, err := e.db.CreateRefund(context.Background(), e.co.Tenant(), &recon.RefundRequest{TransactionID: e.in, Amount: 99_000, Reason: "x",
			Receiver: recon.RefundReceiver{BankBIN: "970436", AccountNumber: "1", AccountName: "A"}, By: recon.RefundActor{UserID: 1}}, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		status, _, m := e.refund(t, "admin", "rest", body("1000"))
		if status != 201 || data(m)["amount"] != float64(1000) {
			t.Fatalf("the last 1000: %d %v", status, m)
		}
		status, _, m = e.refund(t, "admin", "more", body("1"))
		if status != 422 || m["error_code"] != "already_refunded" {
			t.Fatalf("already refunded: %d %v", status, m)
		}
		id := data(func() map[string]any { _, _, m := e.refund(t, "admin", "rest", body("1000")); return m }())["id"].(string)
		for _, path := range []string{"cancel", "cancel"} {
			status, _, b = send(t, http.MethodPost, e.url+"/v2/refunds/"+id+"/"+path, "admin", "")
		}
		if m := decodeAnswer(t, b); status != 422 || m["error_code"] != "invalid_state" ||
			m["message"] != "refund "+id+" is cancelled: it cannot cancel (it is final)" {
			t.Fatalf("cancel twice: %d %s", status, b)
		}
		status, _, b = send(t, http.MethodPost, e.url+"/v2/refunds/"+id+"/approve", "admin2", "")
		if m := decodeAnswer(t, b); status != 422 || m["error_code"] != "invalid_state" {
			t.Fatalf("approve a cancelled refund: %d %s", status, b)
		}
		status, _, b = send(t, http.MethodPost, e.url+"/v2/refunds/"+id+"/cancel", "admin", `{"why":1}`)
		if status != 400 {
			t.Fatalf("a body on cancel: %d %s", status, b)
		}
		status, _, b = send(t, http.MethodPost, e.url+"/v2/refunds/"+id+"/cancel", "other", "")
		if status != 404 {
			t.Fatalf("another company cancels: %d %s", status, b)
		}
	})
}

// TestRefundByOrder: an order (its v2 id) paid by two transfers, refunded
// in part and then in full, newest transfer first; the listing by order.
func TestRefundByOrder(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newRefundEnv(t, engine)
		o := &recon.Order{CompanyID: e.co.ID, InvoiceNumber: "INV-7", PaymentCode: "DH70007", Amount: 150_000, BankAccountID: e.account}
		if err := e.db.CreateOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		var paid []int64
		for i, amount := range []int64{50_000, 100_000} {
			res, err := e.db.IngestTransactions(ctx, e.co.Tenant(), []recon.TransactionInput{{BankAccountID: e.account,
				TransactionDate: time.Date(2026, 3, 1, 12+i, 0, 0, 0, time.UTC), AmountIn: amount, Content: "DH70007", ReferenceNumber: fmt.Sprint("PAY", i)}}, []string{"DH70007"})
			if err != nil {
				t.Fatal(err)
			}
			paid = append(paid, res[0].ID)
		}
		url := e.url + "/v2/orders/" + o.PublicID + "/refund"
		status, _, b := send(t, http.MethodPost, url, "server", `{"amount":120000,"reason":"trả hàng","receiver":`+e.receiver+`}`, IdempotencyHeader, "o-1")
		r := data(decodeAnswer(t, b))
		// Its times are in the business time zone, as an order's.
		if status != 201 || r["order_id"] != o.PublicID || r["transaction_id"] != nil ||
			r["created_at"] != "2026-03-02T16:00:00+07:00" || r["updated_at"] != "2026-03-02T16:00:00+07:00" ||
			mustJSON(t, r["allocations"]) != fmt.Sprintf(`[{"amount":100000,"transaction_id":%d},{"amount":20000,"transaction_id":%d}]`, paid[1], paid[0]) {
			t.Fatalf("by order: %d %s", status, b)
		}
		status, _, b = send(t, http.MethodPost, url, "server", `{"amount":30001,"reason":"x","receiver":`+e.receiver+`}`, IdempotencyHeader, "o-2")
		if m := decodeAnswer(t, b); status != 422 || m["error_code"] != "amount_exceeds_refundable" || m["message"] != "amount 30001 VND exceeds what order INV-7 has left to refund, 30000 VND" {
			t.Fatalf("too much: %d %s", status, b)
		}
		// The rest, by the older transfer: the order's refundable shrinks too.
		status, _, b = send(t, http.MethodPost, fmt.Sprintf("%s/v2/transactions/%d/refund", e.url, paid[0]), "server", `{"reason":"x","receiver":`+e.receiver+`}`, IdempotencyHeader, "o-3")
		if r := data(decodeAnswer(t, b)); status != 201 || r["amount"] != float64(30_000) || r["order_id"] != o.PublicID {
			t.Fatalf("the rest by transaction: %d %s", status, b)
		}
		// The same key and body for the other transfer is another request, not a replay.
		status, h, b := send(t, http.MethodPost, fmt.Sprintf("%s/v2/transactions/%d/refund", e.url, paid[1]), "server", `{"reason":"x","receiver":`+e.receiver+`}`, IdempotencyHeader, "o-3")
		if m := decodeAnswer(t, b); status != 409 || m["error_code"] != "idempotency_key_reused" || h.Get(ReplayedHeader) != "" {
			t.Fatalf("the key of another transaction's refund: %d %s", status, b)
		}
		status, _, b = send(t, http.MethodPost, url, "server", `{"reason":"x","receiver":`+e.receiver+`}`, IdempotencyHeader, "o-4")
		if m := decodeAnswer(t, b); status != 422 || m["error_code"] != "already_refunded" {
			t.Fatalf("already refunded: %d %s", status, b)
		}
		status, _, b = send(t, http.MethodGet, e.url+"/v2/refunds?order_id="+o.PublicID, "server", "")
		if m := decodeAnswer(t, b); status != 200 || m["meta"].(map[string]any)["total"] != float64(2) {
			t.Fatalf("by order: %d %s", status, b)
		}
		status, _, b = send(t, http.MethodGet, e.url+"/v2/refunds?order_id="+recon.NewXID(), "server", "")
		if m := decodeAnswer(t, b); status != 200 || m["meta"].(map[string]any)["total"] != float64(0) {
			t.Fatalf("another order: %d %s", status, b)
		}
		// Another company's token does not find the order.
		status, _, _ = send(t, http.MethodPost, url, "other", `{"reason":"x","receiver":`+e.receiver+`}`, IdempotencyHeader, "o-5")
		if status != 404 {
			t.Fatalf("another company: %d", status)
		}
	})
}

// TestRefundFlow: a refund by transaction with the instructions, replayed
// by its key even after a day (the key lives as long as the refund), four
// eyes over HTTP, the listing's filters, and settlement by a pushed
// transfer.
func TestRefundFlow(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newRefundEnv(t, engine)
		status, h, m := e.refund(t, "clerk", "r-1", `{"amount":30000,"reason":"trả hàng","receiver":`+e.receiver+`}`)
		r := data(m)
		if status != 201 || h.Get(ReplayedHeader) != "" || r["status"] != "pending" || r["amount"] != float64(30000) ||
			r["transaction_id"] != float64(e.in) || r["order_id"] != nil || !strings.HasPrefix(r["reference"].(string), "HT") {
			t.Fatalf("requested: %d %v", status, m)
		}
		ref := r["reference"].(string)
		qr, _ := recon.VietQR{BIN: "970436", Account: "0071000123456", Amount: 30000, Purpose: ref}.Payload()
		want := map[string]any{"bank_account_id": float64(e.account), "amount": float64(30000), "memo": ref, "qr": map[string]any{"payload": qr},
			"receiver": map[string]any{"bank_bin": "970436", "account_number": "0071000123456", "account_name": "NGUYEN VAN A"}}
		if got, _ := json.Marshal(r["instructions"]); string(got) != mustJSON(t, want) {
			t.Fatalf("instructions %s, want %s", got, mustJSON(t, want))
		}
		if rb := r["requested_by"].(map[string]any); rb["user_id"] != float64(3) || rb["client_id"] != "dashboard" {
			t.Fatalf("requested_by %v", rb)
		}
		first, _ := json.Marshal(m)
		// The same key and body two days later: the same answer, replayed.
		e.clock.Advance(48 * time.Hour)
		if _, err := e.db.DeleteExpiredIdempotencyKeys(ctx, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		status, h, m = e.refund(t, "clerk", "r-1", `{"amount":30000,"reason":"trả hàng","receiver":`+e.receiver+`}`)
		again, _ := json.Marshal(m)
		if status != 201 || h.Get(ReplayedHeader) != "true" || string(again) != string(first) {
			t.Fatalf("replayed: %d %s\n%s", status, again, first)
		}
		status, _, m = e.refund(t, "clerk", "r-1", `{"amount":30001,"reason":"trả hàng","receiver":`+e.receiver+`}`)
		if status != 409 || m["error_code"] != "idempotency_key_reused" {
			t.Fatalf("reused: %d %v", status, m)
		}

		// Four eyes.
		if err := e.db.SetRefundApprovalThreshold(ctx, e.co.Tenant(), 50_000); err != nil {
			t.Fatal(err)
		}
		status, _, m = e.refund(t, "admin", "r-2", `{"reason":"hủy đơn","receiver":`+e.receiver+`}`)
		big := data(m)
		if status != 201 || big["status"] != "pending_approval" || big["amount"] != float64(70000) || big["instructions"] != nil {
			t.Fatalf("above the threshold: %d %v", status, m)
		}
		id := big["id"].(string)
		for _, c := range []struct {
			token, action string
			status        int
			code          string
		}{
			{"admin", "approve", 403, "forbidden"},     // the requester
			{"admin-cli", "approve", 403, "forbidden"}, // the requester through another client
			{"admin-cli", "reject", 403, "forbidden"},
			{"server", "approve", 403, "forbidden"}, // no person
			{"clerk", "approve", 403, "forbidden"},  // not an Admin
		} {
			status, _, b := send(t, http.MethodPost, e.url+"/v2/refunds/"+id+"/"+c.action, c.token, "")
			if status != c.status || decodeAnswer(t, b)["error_code"] != c.code {
				t.Errorf("%s %s: %d %s", c.token, c.action, status, b)
			}
		}
		status, _, b := send(t, http.MethodPost, e.url+"/v2/refunds/"+id+"/approve", "admin2", "{}", IdempotencyHeader, "approve-1")
		m = decodeAnswer(t, b)
		if status != 200 || data(m)["status"] != "pending" || data(m)["approved_by"].(map[string]any)["user_id"] != float64(2) || data(m)["instructions"] == nil {
			t.Fatalf("approved: %d %s", status, b)
		}

		// Listing and reading.
		status, _, b = send(t, http.MethodGet, fmt.Sprintf("%s/v2/refunds?transaction_id=%d&status=pending&per_page=1&page=2", e.url, e.in), "reader", "")
		m = decodeAnswer(t, b)
		if list := m["data"].([]any); status != 200 || len(list) != 1 || list[0].(map[string]any)["amount"] != float64(30000) ||
			fmt.Sprint(m["meta"]) != "map[page:2 per_page:1 total:2]" {
			t.Fatalf("list: %d %s", status, b)
		}
		status, _, b = send(t, http.MethodGet, e.url+"/v2/refunds?from_date=2026-03-04", "reader", "")
		if status != 200 || len(decodeAnswer(t, b)["data"].([]any)) != 1 {
			t.Fatalf("list by date: %d %s", status, b)
		}
		status, _, b = send(t, http.MethodGet, e.url+"/v2/refunds?to_date=2026-03-03", "reader", "")
		if status != 200 || len(decodeAnswer(t, b)["data"].([]any)) != 1 {
			t.Fatalf("list to a date: %d %s", status, b)
		}

		// The bank feed pushes the outgoing transfer: succeeded.
		in := recon.TransactionInput{BankAccountID: e.account, TransactionDate: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC), AmountOut: 30_000,
			Content: "IBFT " + ref, ReferenceNumber: "OUT-R1"}
		res, err := e.db.IngestTransactions(ctx, e.co.Tenant(), []recon.TransactionInput{in}, []string{""})
		if err != nil {
			t.Fatal(err)
		}
		status, _, b = send(t, http.MethodGet, e.url+"/v2/refunds/"+r["id"].(string), "server", "")
		m = data(decodeAnswer(t, b))
		if status != 200 || m["status"] != "succeeded" || m["settled_transaction_id"] != float64(res[0].ID) || m["instructions"] != nil {
			t.Fatalf("settled: %d %s", status, b)
		}

		// The audit log: the two requests and the approval, once each (the
		// replay and the refusals wrote none), by whom, from where.
		entries, total, err := e.db.AuditEntries(ctx, e.co.Tenant(), recon.AuditFilter{Family: "refund", Page: 1, PerPage: 10})
		if err != nil || total != 3 {
			t.Fatalf("audit entries: %d %v", total, err)
		}
		for i, want := range []struct{ action, object string }{
			{recon.AuditRefundApprove, "refund " + id}, {recon.AuditRefundRequest, "refund " + id}, {recon.AuditRefundRequest, "refund " + r["id"].(string)},
		} {
			got := entries[i]
			if got.Action != want.action || got.Object != want.object || got.Actor.Via != recon.AuditViaAPI || got.Actor.IP != "127.0.0.1" || got.Actor.ClientID == "" || got.Actor.UserID == 0 {
				t.Errorf("entry %d: %+v", i, got)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRefundKeyTwoNodes: two nodes on one database receive the same
// refund request with the same key at the same moment: one refund, and
// both answers are its (the other replayed, or 409 in use while it runs).
func TestRefundKeyTwoNodes(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRefundEnv(t, engine)
		other := dbtest.OpenURL(t, e.dbURL)
		_, srv2 := server(t, Config{Store: other, Auth: e.auth, Clock: e.clock, Refunds: &refunds.Service{Store: other, Clock: e.clock}})
		body := `{"amount":1000,"reason":"x","receiver":` + e.receiver + `}`
		for round := range 5 {
			key := fmt.Sprint("twin-", round)
			type result struct {
				status int
				body   string
			}
			results := make([]result, 2)
			start := make(chan struct{})
			done := make(chan struct{})
			for i, base := range []string{e.url, srv2.URL} {
				go func() {
					defer func() { done <- struct{}{} }()
					<-start
					status, _, b := send(t, http.MethodPost, fmt.Sprintf("%s/v2/transactions/%d/refund", base, e.in), "admin", body, IdempotencyHeader, key)
					results[i] = result{status, b}
				}()
			}
			close(start)
			<-done
			<-done
			ids := map[string]bool{}
			for _, r := range results {
				m := decodeAnswer(t, r.body)
				switch {
				case r.status == 201:
					ids[data(m)["id"].(string)] = true
				case r.status == 409 && m["error_code"] == "idempotency_key_in_use":
				default:
					t.Fatalf("round %d: %d %s", round, r.status, r.body)
				}
			}
			if len(ids) != 1 {
				t.Fatalf("round %d: refunds %v from one key", round, ids)
			}
		}
		if _, total, err := e.db.Refunds(context.Background(), e.co.Tenant(), recon.RefundFilter{}); err != nil || total != 5 {
			t.Fatalf("%d refunds for 5 keys: %v", total, err)
		}
	})
}
