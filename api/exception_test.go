package api_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon"
	"recon/api"
	"recon/internal/testkit"
	"recon/orders"
	"recon/sqlstore/dbtest"
	"recon/web"
)

// exceptionBundle is a tenant with a paid order, an open one and two
// exceptions: U1 (a code naming no order, a typo of OPEN's) and DUP (a
// second payment of PAID).
type exceptionBundle struct {
	*bundle
	account            int64
	open, paid         *recon.Order
	matched, u1, dup   int64
	otherTx, otherOpen int64
}

func exceptionSetup(t *testing.T, engine string) *exceptionBundle {
	t.Helper()
	ctx := t.Context()
	db := dbtest.OpenStore(t, engine)
	b := &exceptionBundle{bundle: &bundle{store: db}}
	for _, c := range []**recon.Company{&b.company, &b.other} {
		*c = &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive, Config: recon.CompanyConfig{Paycode: true}}
		if err := db.CreateCompany(ctx, *c); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ReplacePaymentCodeFormats(ctx, (*c).ID, []recon.PaymentCodeFormat{
			{Prefix: "DH", SuffixFrom: 4, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetIPN(ctx, b.company.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	b.account = b.bundle.account(t, b.company.ID, "111")
	b.open = &recon.Order{CompanyID: b.company.ID, InvoiceNumber: "OPEN", PaymentCode: "DH10001", Amount: 150_000, CustomerID: "C1", BankAccountID: b.account}
	b.paid = &recon.Order{CompanyID: b.company.ID, InvoiceNumber: "PAID", PaymentCode: "DH10003", Amount: 100_000, CustomerID: "C1", BankAccountID: b.account}
	for _, o := range []*recon.Order{b.open, b.paid} {
		if err := db.CreateOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	ingest := func(company, account int64, ref, date, memo string, amount int64) int64 {
		t.Helper()
		d, _ := time.Parse(recon.DateTimeLayout, date)
		res, err := recon.Ingest(ctx, db, recon.LiveTenant(company), d, []recon.TransactionInput{{BankAccountID: account, TransactionDate: d, AmountIn: amount, Content: memo, ReferenceNumber: ref}})
		if err != nil {
			t.Fatal(err)
		}
		return res[0].ID
	}
	b.matched = ingest(b.company.ID, b.account, "MATCHED", "2026-03-01 09:00:00", "thanh toan DH10003", 100_000)
	b.u1 = ingest(b.company.ID, b.account, "U1", "2026-03-01 10:00:00", "thanh toan DH10010", 150_000)
	b.dup = ingest(b.company.ID, b.account, "DUP", "2026-03-02 10:00:00", "DH10003 lan 2", 100_000)
	otherAccount := b.bundle.account(t, b.other.ID, "999")
	other := &recon.Order{CompanyID: b.other.ID, InvoiceNumber: "X", PaymentCode: "DH20001", Amount: 150_000}
	if err := db.CreateOrder(ctx, other); err != nil {
		t.Fatal(err)
	}
	b.otherOpen = other.ID
	b.otherTx = ingest(b.other.ID, otherAccount, "O1", "2026-03-01 10:00:00", "DH99999", 150_000)

	user := func(id int64, company int64, role recon.Role, perms ...string) *recon.User {
		return &recon.User{ID: id, Company: company, Email: strings.ToLower(string(role)) + "@saomai.vn", Role: role, Permissions: perms}
	}
	both := []string{recon.ScopeTransactionRead, recon.ScopeExceptionWrite}
	auth := tokens{
		"admin":      {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: both, User: user(1, b.company.ID, recon.RoleAdmin)},
		"accountant": {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: both, User: user(2, b.company.ID, recon.RoleAccountant)},
		"viewer":     {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: both, User: user(3, b.company.ID, recon.RoleMember, recon.PermViewTransactions)},
		"member":     {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: both, User: user(4, b.company.ID, recon.RoleMember)},
		"noscope":    {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: []string{recon.ScopeTransactionRead}, User: user(1, b.company.ID, recon.RoleAdmin)},
		"machine":    {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: both},
		"other":      {Tenant: recon.LiveTenant(b.other.ID), ClientID: "d", Scopes: both, User: user(5, b.other.ID, recon.RoleAdmin)},
	}
	mux := web.NewMux()
	clock := testkit.NewClock(time.Date(2026, 3, 10, 1, 30, 0, 0, time.UTC)) // 08:30 in Ho Chi Minh City
	(&api.Handler{Store: db, Auth: auth, Location: hcm, Clock: clock, Logger: slog.New(slog.DiscardHandler),
		VAs: &orders.Service{Store: db, Clock: clock}}).Register(mux)
	b.srv = httptest.NewServer((&web.Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux))
	t.Cleanup(b.srv.Close)
	return b
}

// wantBody fails t unless the body equals the JSON text want.
func wantBody(t *testing.T, what string, got map[string]any, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the wanted body is not JSON: %v\n%s", what, err, want)
	}
	if d := cmp.Diff(w, got); d != "" {
		t.Errorf("%s: body mismatch (-want +got):\n%s", what, d)
	}
}

func TestExceptionsAPI(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := exceptionSetup(t, engine)
		created := func(o *recon.Order) string { return o.CreatedAt.In(hcm).Format(recon.DateTimeLayout) }
		txJSON := func(id int64, date string, amount int64, memo, ref, code string, balance int64) string {
			return fmt.Sprintf(`{"id":%d,"bank_account_id":%d,"bank_brand_name":"Vietcombank","account_number":"111","transaction_date":%q,
				"amount_out":0,"amount_in":%d,"accumulated":%d,"transaction_content":%q,"reference_number":%q,"code":%q,"sub_account":null,"livemode":true}`,
				id, b.account, date, amount, balance, memo, ref, code)
		}
		openSuggestion := fmt.Sprintf(`{"order_id":%d,"order_invoice_number":"OPEN","order_amount":"150000.00","paid_amount":"0.00",
			"payment_code":"DH10001","customer_id":"C1","created_at":%q,"reasons":%%s}`, b.open.ID, created(b.open))
		u1 := fmt.Sprintf(`{"transaction_id":%d,"kind":"unmatched","reason":"no order with payment code DH10010","order_id":null,"status":"open",
			"transaction":%s,"suggestions":[%s],"resolution":null,"livemode":true}`,
			b.u1, txJSON(b.u1, "2026-03-01 10:00:00", 150_000, "thanh toan DH10010", "U1", "DH10010", 250_000),
			fmt.Sprintf(openSuggestion, `["same_amount","similar_code"]`))
		dup := fmt.Sprintf(`{"transaction_id":%d,"kind":"duplicate","reason":"payment code DH10003 names order PAID, which is already captured","order_id":%d,"status":"open",
			"transaction":%s,"suggestions":[%s],"resolution":null,"livemode":true}`,
			b.dup, b.paid.ID, txJSON(b.dup, "2026-03-02 10:00:00", 100_000, "DH10003 lan 2", "DUP", "DH10003", 350_000),
			fmt.Sprintf(openSuggestion, `["similar_code","same_customer"]`))
		page := func(items string, more bool, next string) string {
			return fmt.Sprintf(`{"status":"success","data":[%s],"meta":{"pagination":{"per_page":%%d,"has_more":%v,"next_after":%s}}}`, items, more, next)
		}

		status, _, body := b.do(t, "GET", "/api/v1/exceptions", "viewer", "")
		if status != 200 {
			t.Fatalf("list: %d %v", status, body)
		}
		wantBody(t, "list", body, fmt.Sprintf(page(dup+","+u1, false, "null"), 20))
		_, _, body = b.do(t, "GET", "/api/v1/exceptions?limit=1", "viewer", "")
		wantBody(t, "page 1", body, fmt.Sprintf(page(dup, true, fmt.Sprint(b.dup)), 1))
		_, _, body = b.do(t, "GET", fmt.Sprintf("/api/v1/exceptions?limit=1&after=%d", b.dup), "viewer", "")
		wantBody(t, "page 2", body, fmt.Sprintf(page(u1, false, "null"), 1))
		for q, want := range map[string]string{
			"kind=duplicate":  dup,
			"kind=underpaid":  "",
			"status=resolved": "",
			"status=open&from_date=2026-03-01&to_date=2026-03-01": u1,
			fmt.Sprintf("bank_account_id=%d", b.account):          dup + "," + u1,
			"bank_account_id=999999":                              "",
		} {
			_, _, body := b.do(t, "GET", "/api/v1/exceptions?"+q, "admin", "")
			wantBody(t, q, body, fmt.Sprintf(page(want, false, "null"), 20))
		}
		// The other tenant sees its own exception only.
		_, _, body = b.do(t, "GET", "/api/v1/exceptions", "other", "")
		if data := body["data"].([]any); len(data) != 1 || data[0].(map[string]any)["transaction_id"] != float64(b.otherTx) {
			t.Fatalf("other tenant's list: %v", body)
		}

		// Bad input: 400 naming the problem.
		invalid := func(field, msg string) string {
			return fmt.Sprintf(`{"status":"error","error":"validation_error","message":%q,"errors":{%q:[%q]}}`, msg, field, msg)
		}
		for _, c := range []struct{ query, field, msg string }{
			{"kind=lost", "kind", "kind must be one of unmatched, underpaid, overpaid, duplicate, refund_transfer, va_inactive, possible_duplicate"},
			{"status=all", "status", "status must be open or resolved"},
			{"limit=0", "limit", "limit must be an integer from 1 to 100"},
			{"limit=101", "limit", "limit must be an integer from 1 to 100"},
			{"after=x", "after", "after must be an integer from 1 to 9223372036854775807"},
			{fmt.Sprintf("after=%d", b.otherTx), "after", fmt.Sprintf("after must be the transaction id of an exception of a previous page; %d is none", b.otherTx)},
			{"from_date=2026-3-1", "from_date", "from_date must be a date in the form YYYY-MM-DD"},
			{"from_date=2026-03-02&to_date=2026-03-01", "from_date", "from_date must not be after to_date"},
			{"kind=unmatched&kind=duplicate", "kind", "query parameter kind is given 2 times"},
			{"page=2", "page", `unknown query parameter "page" (known: kind, bank_account_id, from_date, to_date, status, limit, after, q)`},
		} {
			status, _, body := b.do(t, "GET", "/api/v1/exceptions?"+c.query, "viewer", "")
			if status != 400 {
				t.Errorf("%s: %d", c.query, status)
			}
			wantBody(t, c.query, body, invalid(c.field, c.msg))
		}

		// One exception: suggestions and history.
		status, _, body = b.do(t, "GET", fmt.Sprintf("/api/v1/exceptions/%d", b.u1), "viewer", "")
		if status != 200 {
			t.Fatalf("show: %d %v", status, body)
		}
		u1Detail := strings.TrimSuffix(u1, "}") + fmt.Sprintf(`,"match_decisions":[{"order_id":null,"outcome":"unmatched","rule":"","code":"DH10010",
			"amount":150000,"order_amount":0,"paid_total":0,"reason":"no order with payment code DH10010","at":%q}]}`,
			body["data"].(map[string]any)["match_decisions"].([]any)[0].(map[string]any)["at"])
		wantBody(t, "show", body, `{"status":"success","data":`+u1Detail+`}`)
		notFound := func(msg string) string {
			return fmt.Sprintf(`{"status":"error","error":"not_found","message":%q}`, msg)
		}
		for _, c := range []struct {
			path, token string
			status      int
			body        string
		}{
			{fmt.Sprintf("/api/v1/exceptions/%d", b.otherTx), "viewer", 404, notFound(fmt.Sprintf("transaction %d is not an exception", b.otherTx))},
			{fmt.Sprintf("/api/v1/exceptions/%d", b.u1), "other", 404, notFound(fmt.Sprintf("transaction %d is not an exception", b.u1))},
			{fmt.Sprintf("/api/v1/exceptions/%d", b.matched), "viewer", 404, notFound(fmt.Sprintf("transaction %d is not an exception", b.matched))},
			{"/api/v1/exceptions/x", "viewer", 400, invalid("id", "the id in the path must be a positive integer")},
			{fmt.Sprintf("/api/v1/exceptions/%d", b.u1), "member", 403, `{"status":"error","error":"forbidden",
				"message":"to read money data you need role Admin or SuperAdmin or the view_transactions permission; your role is Member"}`},
		} {
			status, _, body := b.do(t, "GET", c.path, c.token, "")
			if status != c.status {
				t.Errorf("GET %s as %s: %d, want %d", c.path, c.token, status, c.status)
			}
			wantBody(t, c.path, body, c.body)
		}

		// Resolving: failures write nothing.
		resolve := func(id int64) string { return fmt.Sprintf("/api/v1/exceptions/%d/resolve", id) }
		conflictBody := func(msg string) string { return fmt.Sprintf(`{"status":"error","error":"conflict","message":%q}`, msg) }
		forbidden := func(msg string) string {
			return fmt.Sprintf(`{"status":"error","error":"forbidden","message":%q}`, msg)
		}
		for _, c := range []struct {
			name, token string
			id          int64
			body        string
			status      int
			want        string
		}{
			{"member", "member", b.u1, `{"action":"ignore","note":"x"}`, 403, forbidden("to resolve exceptions you need role Admin, SuperAdmin or Accountant; your role is Member")},
			{"member with view_transactions", "viewer", b.u1, `{"action":"ignore","note":"x"}`, 403, forbidden("to resolve exceptions you need role Admin, SuperAdmin or Accountant; your role is Member")},
			{"no user", "machine", b.u1, `{"action":"ignore","note":"x"}`, 403, forbidden("only a token issued to a user may resolve exceptions; this token has no user")},
			{"no scope", "noscope", b.u1, `{"action":"ignore","note":"x"}`, 403, forbidden(`the access token lacks the scope "exception:write"`)},
			{"malformed", "accountant", b.u1, `{"action":`, 400, `{"status":"error","error":"validation_error","message":"malformed JSON: the body ends early"}`},
			{"unknown field", "accountant", b.u1, `{"action":"ignore","note":"x","by":"me"}`, 400, invalid("by", `unknown field "by"`)},
			{"no action", "accountant", b.u1, `{"note":"x"}`, 400, invalid("action", "action is required: match, refund, ignore, write_off, ask_remainder, duplicate, distinct")},
			{"bad action", "accountant", b.u1, `{"action":"delete","note":"x"}`, 400, invalid("action", "action must be one of match, refund, ignore, write_off, ask_remainder, duplicate, distinct")},
			{"no note", "accountant", b.u1, `{"action":"ignore"}`, 400, invalid("note", "note is required: say why")},
			{"long note", "accountant", b.u1, `{"action":"ignore","note":"` + strings.Repeat("é", 251) + `"}`, 400, invalid("note", "note must be at most 500 bytes, not 502")},
			{"order as text", "accountant", b.u1, `{"action":"match","order_id":"OPEN","note":"x"}`, 400, ``},
			{"order zero", "accountant", b.u1, `{"action":"match","order_id":0,"note":"x"}`, 400, invalid("order_id", "order_id must be a positive integer: the id of an open order")},
			{"no order", "accountant", b.u1, `{"action":"match","note":"x"}`, 400, invalid("order_id", "order_id is required to match: the id of an open order")},
			{"paid order", "accountant", b.u1, fmt.Sprintf(`{"action":"match","order_id":%d,"note":"x"}`, b.paid.ID), 409, conflictBody(fmt.Sprintf("order %d (PAID) is already paid", b.paid.ID))},
			{"other tenant's order", "accountant", b.u1, fmt.Sprintf(`{"action":"match","order_id":%d,"note":"x"}`, b.otherOpen), 404, notFound(fmt.Sprintf("order %d not found", b.otherOpen))},
			{"other tenant's transaction", "accountant", b.otherTx, `{"action":"ignore","note":"x"}`, 404, notFound(fmt.Sprintf("transaction %d is not an exception", b.otherTx))},
			{"not an exception", "accountant", b.matched, `{"action":"ignore","note":"x"}`, 404, notFound(fmt.Sprintf("transaction %d is not an exception", b.matched))},
			{"refund amount zero", "accountant", b.dup, `{"action":"refund","note":"x","amount":0}`, 400, invalid("amount", "amount must be a whole number of VND from 1 to 1000000000000000")},
			{"refund amount as text", "accountant", b.dup, `{"action":"refund","note":"x","amount":"5"}`, 400, ``},
			{"empty receiver", "accountant", b.dup, `{"action":"refund","note":"x","receiver":{}}`, 400, invalid("receiver", "receiver needs bank_bin, account_number and account_name")},
			{"bad receiver", "accountant", b.dup, `{"action":"refund","note":"x","receiver":{"bank_bin":"1","account_number":"2","account_name":"A"}}`, 400, ``},
			{"receiver to ignore", "accountant", b.dup, `{"action":"ignore","note":"x","receiver":{"bank_bin":"970436","account_number":"2","account_name":"A"}}`, 400, ``},
			{"refund too much", "accountant", b.dup, `{"action":"refund","note":"x","amount":100001,"receiver":{"bank_bin":"970436","account_number":"2","account_name":"A"}}`, 400, ``},
		} {
			status, _, body := b.do(t, "POST", resolve(c.id), c.token, c.body)
			if status != c.status {
				t.Errorf("%s: %d %v, want %d", c.name, status, body, c.status)
			}
			if c.want != "" {
				wantBody(t, c.name, body, c.want)
			} else if body["error"] != "validation_error" {
				t.Errorf("%s: %v", c.name, body)
			}
		}
		_, _, body = b.do(t, "GET", "/api/v1/exceptions?status=resolved", "viewer", "")
		wantBody(t, "resolved after the failures", body, fmt.Sprintf(page("", false, "null"), 20))

		// A match by an Accountant: the order is paid, the decision recorded.
		status, _, body = b.do(t, "POST", resolve(b.u1), "accountant", fmt.Sprintf(`{"action":"match","order_id":%d,"note":"DH10010 is a typo of DH10001"}`, b.open.ID))
		if status != 200 {
			t.Fatalf("resolve: %d %v", status, body)
		}
		resolution := fmt.Sprintf(`{"id":%v,"transaction_id":%d,"action":"match","order_id":%d,"note":"DH10010 is a typo of DH10001",
			"resolved_by":{"user_id":2,"email":"accountant@saomai.vn"},"resolved_at":"2026-03-10 08:30:00",
			"previous_state":{"status":"open","kind":"unmatched","reason":"no order with payment code DH10010","order_status":"AUTHENTICATION_NOT_NEEDED","order_paid_amount":"0.00"},
			%%s"closes":true,"livemode":true}`, body["data"].(map[string]any)["id"], b.u1, b.open.ID)
		decision := fmt.Sprintf(`{"order_id":%d,"outcome":"matched","rule":"manual","code":"DH10010","amount":150000,"order_amount":150000,"paid_total":150000,
			"reason":"a match by hand names order OPEN: 150000 of 150000 VND paid","at":"2026-03-10 08:30:00"}`, b.open.ID)
		wantBody(t, "resolution", body, `{"status":"success","data":`+fmt.Sprintf(resolution, `"decision":`+decision+",")+`}`)
		o, err := b.store.Order(t.Context(), b.company.Tenant(), "OPEN")
		if err != nil || o.Status != recon.OrderCaptured || o.PaidTransactionID != b.u1 {
			t.Fatalf("order after the match: %+v %v", o, err)
		}
		status, _, body = b.do(t, "POST", resolve(b.u1), "admin", `{"action":"ignore","note":"again"}`)
		if status != 409 {
			t.Fatalf("twice: %d", status)
		}
		wantBody(t, "twice", body, conflictBody(fmt.Sprintf("transaction %d is already resolved (match by accountant@saomai.vn at 2026-03-10T01:30:00Z)", b.u1)))
		// It leaves the open list, and its history shows who, when and why.
		_, _, body = b.do(t, "GET", "/api/v1/exceptions", "viewer", "")
		dupNow := strings.Replace(dup, fmt.Sprintf(openSuggestion, `["similar_code","same_customer"]`), "", 1) // OPEN is paid now
		wantBody(t, "open after", body, fmt.Sprintf(page(dupNow, false, "null"), 20))
		_, _, body = b.do(t, "GET", fmt.Sprintf("/api/v1/exceptions/%d", b.u1), "viewer", "")
		data := body["data"].(map[string]any)
		wantBody(t, "resolved resolution", map[string]any{"r": data["resolution"]}, `{"r":`+fmt.Sprintf(resolution, "")+`}`)
		if data["status"] != "resolved" || len(data["suggestions"].([]any)) != 0 || len(data["match_decisions"].([]any)) != 1 ||
			data["match_decisions"].([]any)[0].(map[string]any)["rule"] != "manual" {
			t.Fatalf("resolved exception: %v", data)
		}

		// A refund with a receiver creates a refund (docs/api-v2.md, Refunds).
		status, _, body = b.do(t, "POST", resolve(b.dup), "accountant", `{"action":"refund","note":"paid twice","amount":60000,"receiver":{"bank_bin":"970436","account_number":"0071000123456","account_name":"NGUYEN VAN A"}}`)
		refundID, _ := body["data"].(map[string]any)["refund_id"].(string)
		if status != 200 || refundID == "" {
			t.Fatalf("resolve as refund: %d %v", status, body)
		}
		r, err := b.store.Refund(t.Context(), b.company.Tenant(), refundID)
		if err != nil || r.Amount != 60_000 || r.TransactionID != b.dup || r.Reason != "paid twice" || r.Status != recon.RefundPending {
			t.Fatalf("the refund: %+v %v", r, err)
		}
	})
}
