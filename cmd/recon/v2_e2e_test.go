package main

// API v2 end to end, as a shop's server drives it (docs/api-v2.md; issue
// 20, "How it will be checked"): a real `recon serve` on each engine, a
// real receiver (testkit.Receiver), and an independent HTTP client: plain
// net/http and encoding/json, never the Go SDK, so that what these tests
// hold is the wire, not the SDK's reading of it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// v2Answer is one answer as a shop's server reads it: status, headers, the
// raw body and the body decoded.
type v2Answer struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// data is the answer's data object (nil when it is not one).
func (a v2Answer) data() map[string]any { m, _ := a.body["data"].(map[string]any); return m }

// list is the answer's data array.
func (a v2Answer) list() []any { l, _ := a.body["data"].([]any); return l }

func (a v2Answer) String() string { return fmt.Sprintf("%d %s", a.status, a.raw) }

// v2Call sends one request with net/http: the bearer token (none when
// empty), the idempotency key (none when empty), a JSON body (none when
// empty). An answer that is not a JSON object fails the test.
func v2Call(t testing.TB, method, url, token, key, body string) v2Answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("X-Idempotency-Key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	a := v2Answer{status: resp.StatusCode, header: resp.Header}
	if a.raw, err = io.ReadAll(resp.Body); err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	if err := json.Unmarshal(a.raw, &a.body); err != nil {
		t.Fatalf("%s %s: %d, not a JSON object: %q", method, url, a.status, a.raw)
	}
	return a
}

// wantV2Error holds a to the v2 error envelope (docs/api-v2.md, Envelope
// and errors): the status, the error_code, and the problem named in the
// message or in errors.
func wantV2Error(t testing.TB, what string, a v2Answer, status int, code, names string) {
	t.Helper()
	if a.status != status || a.body["status"] != "error" || a.body["error_code"] != code {
		t.Errorf("%s: %s, want %d %s in the v2 error envelope", what, a, status, code)
		return
	}
	msg, _ := a.body["message"].(string)
	if msg == "" {
		t.Errorf("%s: no message: %s", what, a)
	}
	if names == "" {
		return
	}
	errs, _ := a.body["errors"].(map[string]any)
	_, field := errs[names]
	if !strings.Contains(msg, names) && !field {
		t.Errorf("%s: %s names neither in its message nor in errors %q", what, a, names)
	}
}

// v2Shop is a company set up as a shop integrating API v2: its server's
// client-credentials token (orders, refunds, the bank feed's pushes), two
// Admins' user tokens (a@, b@: refunds need a person to approve), a bank
// account, and the gateway's merchant credentials (PUT /v1/ipn, /v1/order).
type v2Shop struct {
	base, dbURL    string
	company        string
	companyID      int64
	account        string // the bank account's id
	server         string // client credentials: order:*, refund:*, transaction:write
	adminA, adminB string // user tokens of two Admins
	clientID       string
	merchant, mKey string // Basic credentials of the gateway
	ict            *time.Location
	refs           *atomic.Int64 // the pushes' bank references
}

// v2Scopes are the scopes the shop's client is registered with.
const v2Scopes = "company exception:write order:read order:write refund:read refund:write transaction:read transaction:write"

// startV2Shop starts a server (with args) on a new database of engine and
// makes a shop of it there (newV2Shop; test: a test-mode one).
func startV2Shop(t *testing.T, engine string, test bool, args ...string) *v2Shop {
	t.Helper()
	dbURL := dbtest.NewMigratedURL(t, engine)
	base, _, _ := startServer(t, dbURL, args...)
	return newV2Shop(t, base, dbURL, test)
}

// subscribedV2Shop is startV2Shop on a sandbox server that may notify a
// loopback receiver, the shop subscribed to types (none: the v1 way) at a
// new receiver. Its sweep runs every 250 ms, not 15 s: the expiries the
// tests wait for come within a second.
func subscribedV2Shop(t *testing.T, engine string, test bool, types ...string) (*v2Shop, *testkit.Receiver) {
	t.Helper()
	rc := testkit.NewReceiver(t)
	s := startV2Shop(t, engine, test, "--sandbox", "--allow-private-targets", "--sweep-interval", "250ms")
	s.subscribe(t, rc.URL+"/ipn", types...)
	return s, rc
}

// newV2Shop sets a company up through the CLI, as an operator does; test
// makes every credential a test-mode one (docs/testmode.md).
func newV2Shop(t testing.TB, base, dbURL string, test bool) *v2Shop {
	t.Helper()
	s := &v2Shop{base: base, dbURL: dbURL, refs: &atomic.Int64{}}
	var mode []string
	if test {
		mode = []string{"--test"}
	}
	s.ict = time.FixedZone("ICT", 7*3600) // the default business time zone, Asia/Ho_Chi_Minh
	co := cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty TNHH Sao Mai", "--short-name", "SAOMAI")
	s.company, s.companyID = fmt.Sprint(co["id"]), int64(co["id"].(float64))
	cliJSON(t, dbURL, "user", "create", "--company", s.company, "--email", "a@saomai.vn", "--role", "Admin")
	cliJSON(t, dbURL, "user", "create", "--company", s.company, "--email", "b@saomai.vn", "--role", "Admin")
	s.clientID = cliJSON(t, dbURL, append([]string{"client", "create", "--company", s.company, "--name", "shop server", "--scopes", v2Scopes}, mode...)...)["client_id"].(string)
	s.server = cliJSON(t, dbURL, "token", "issue", "--client", s.clientID, "--user", "", "--ttl", "24h",
		"--scopes", "order:read order:write refund:read refund:write transaction:write")["access_token"].(string)
	s.adminA = s.userToken(t, s.clientID, "a@saomai.vn")
	s.adminB = s.userToken(t, s.clientID, "b@saomai.vn")
	s.account = fmt.Sprint(cliJSON(t, dbURL, append([]string{"bank-account", "create", "--company", s.company, "--bank", "Vietcombank",
		"--number", "0071000123456", "--holder", "CONG TY TNHH SAO MAI"}, mode...)...)["id"])
	creds := cliJSON(t, dbURL, append([]string{"merchant", "credentials", "--company", s.company}, mode...)...)
	s.merchant, s.mKey = creds["merchant_id"].(string), creds["secret_key"].(string)
	return s
}

// userToken issues a user's token through client (recon token issue: the
// token endpoint's grant for a named user).
func (s *v2Shop) userToken(t testing.TB, client, email string) string {
	t.Helper()
	return cliJSON(t, s.dbURL, "token", "issue", "--client", client, "--user", email, "--ttl", "24h",
		"--scopes", "company exception:write order:read order:write refund:read refund:write transaction:read")["access_token"].(string)
}

// v2 calls API v2 (or /api/v1) with a token.
func (s *v2Shop) v2(t testing.TB, method, path, token, key, body string) v2Answer {
	t.Helper()
	return v2Call(t, method, s.base+path, token, key, body)
}

// gateway calls a /v1 gateway route with the merchant's Basic credentials.
func (s *v2Shop) gateway(t testing.TB, method, path, body string) v2Answer {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(s.merchant, s.mKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := v2Answer{status: resp.StatusCode, header: resp.Header}
	a.raw, _ = io.ReadAll(resp.Body)
	if err := json.Unmarshal(a.raw, &a.body); err != nil {
		t.Fatalf("%s %s: %d %q", method, path, a.status, a.raw)
	}
	return a
}

// subscribe saves the IPN target through PUT /v1/ipn with types (none:
// the v1 way, without notification_types).
func (s *v2Shop) subscribe(t testing.TB, url string, types ...string) {
	t.Helper()
	body := `{"ipn_url":"` + url + `","auth_type":"SECRET_KEY","secret_key":"ipn-secret-0123456789"`
	if len(types) > 0 {
		b, _ := json.Marshal(types)
		body += `,"notification_types":` + string(b)
	}
	if a := s.gateway(t, "PUT", "/v1/ipn", body+"}"); a.status != 200 {
		t.Fatalf("PUT /v1/ipn: %s", a)
	}
}

// transfer is one incoming or outgoing bank transfer for push.
type transfer struct {
	in, out   int64
	memo, sub string
	reference string
	accountID string // default the shop's account
	date      time.Time
}

// push plays the bank feed: POST /api/v1/transactions with the shop's
// client-credentials token, one transfer per item; it returns the ids.
func (s *v2Shop) push(t testing.TB, transfers ...transfer) []int64 {
	t.Helper()
	var items []string
	for _, x := range transfers {
		ref := fmt.Sprintf("FT%08d", s.refs.Add(1))
		if x.reference != "" {
			ref = x.reference
		}
		account := s.account
		if x.accountID != "" {
			account = x.accountID
		}
		date := x.date
		if date.IsZero() {
			date = time.Now()
		}
		item := fmt.Sprintf(`{"bank_account_id":%s,"transaction_date":%q,"amount_in":%d,"amount_out":%d,"transaction_content":%q,"reference_number":%q`,
			account, date.In(s.ict).Format("2006-01-02 15:04:05"), x.in, x.out, x.memo, ref)
		if x.sub != "" {
			item += fmt.Sprintf(`,"sub_account":%q`, x.sub)
		}
		items = append(items, item+"}")
	}
	a := s.v2(t, "POST", "/api/v1/transactions", s.server, "", `{"transactions":[`+strings.Join(items, ",")+`]}`)
	if a.status != 200 {
		t.Fatalf("push: %s", a)
	}
	var ids []int64
	for _, it := range a.list() {
		ids = append(ids, int64(it.(map[string]any)["id"].(float64)))
	}
	return ids
}

// order makes an order through POST /v2/orders and returns its data.
func (s *v2Shop) order(t testing.TB, key, body string) map[string]any {
	t.Helper()
	a := s.v2(t, "POST", "/v2/orders", s.server, key, body)
	if a.status != 201 || a.body["status"] != "success" {
		t.Fatalf("POST /v2/orders %s: %s", body, a)
	}
	return a.data()
}

// orderBody is a POST /v2/orders body on the shop's account.
func (s *v2Shop) orderBody(invoice string, amount int64, extra string) string {
	b := fmt.Sprintf(`{"order_invoice_number":%q,"amount":%d,"bank_account_id":%s`, invoice, amount, s.account)
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// va is the order's first virtual account.
func va(o map[string]any) map[string]any {
	return o["virtual_accounts"].([]any)[0].(map[string]any)
}

// getOrder reads an order through GET /v2/orders/{id}.
func (s *v2Shop) getOrder(t testing.TB, id string) map[string]any {
	t.Helper()
	a := s.v2(t, "GET", "/v2/orders/"+id, s.server, "", "")
	if a.status != 200 {
		t.Fatalf("GET /v2/orders/%s: %s", id, a)
	}
	return a.data()
}

// v1Order finds the order of invoice in GET /v1/order.
func (s *v2Shop) v1Order(t testing.TB, invoice string) map[string]any {
	t.Helper()
	a := s.gateway(t, "GET", "/v1/order?per_page=100", "")
	if a.status != 200 {
		t.Fatalf("GET /v1/order: %s", a)
	}
	for _, it := range a.list() {
		if o := it.(map[string]any); o["order_invoice_number"] == invoice {
			return o
		}
	}
	t.Fatalf("GET /v1/order does not list %s: %s", invoice, a)
	return nil
}

// refund requests a refund (POST /v2/orders/{id}/refund or
// /v2/transactions/{id}/refund) and returns the answer.
func (s *v2Shop) refund(t testing.TB, token, path, key, body string) v2Answer {
	t.Helper()
	return s.v2(t, "POST", path, token, key, body)
}

// receiverJSON is a refund's receiver field.
const receiverJSON = `"receiver":{"bank_bin":"970436","account_number":"0071000999999","account_name":"NGUYEN VAN A"}`

// upload sends a CSV statement of the shop's account (POST
// /api/v1/bank-accounts/{id}/statements) with the feed's token.
func (s *v2Shop) upload(t testing.TB, csv string) v2Answer {
	t.Helper()
	status, header, raw := testkit.Send(t, "POST", fmt.Sprintf("%s/api/v1/bank-accounts/%s/statements?format=csv", s.base, s.account),
		testkit.Bearer(s.server), "text/csv", csv)
	a := v2Answer{status: status, header: header, raw: raw}
	if err := json.Unmarshal(raw, &a.body); err != nil || status != 200 {
		t.Fatalf("statement upload: %d %s", status, raw)
	}
	return a
}

// only fails unless every notification rc got is of one of types, and
// returns how many of each it got.
func only(t testing.TB, rc *testkit.Receiver, types ...string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, g := range rc.Got() {
		var m map[string]any
		if err := json.Unmarshal(g.Body, &m); err != nil {
			t.Fatalf("a notification that is not JSON: %q", g.Body)
		}
		typ, _ := m["notification_type"].(string)
		if !slices.Contains(types, typ) {
			t.Errorf("the receiver got %s, not one of %v: %s", typ, types, g.Body)
		}
		n[typ]++
	}
	return n
}

// TestV2E2EOrderPaidThroughItsVAInTwoParts: a shop's server makes an order
// with a partial virtual account (POST /v2/orders), the payer pays it in two
// transfers pushed by the bank feed (POST /api/v1/transactions): the
// receiver, subscribed to both types through PUT /v1/ipn, gets
// ORDER_PARTIALLY_PAID then ORDER_PAID, the order reads partially_paid then
// paid in v2, AUTHENTICATION_NOT_NEEDED then CAPTURED in GET /v1/order.
// Live, a memo VA (the payer writes its code in the memo; the live bank has
// no VA connector); test mode, a bank VA of the sandbox bank (SBR..., the
// transfer's sub_account).
func TestV2E2EOrderPaidThroughItsVAInTwoParts(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		for _, mode := range []string{"live memo VA", "test bank VA"} {
			t.Run(mode, func(t *testing.T) {
				test := mode == "test bank VA"
				rc := testkit.NewReceiver(t)
				s := newV2Shop(t, base, dbURL, test)
				s.subscribe(t, rc.URL+"/ipn", "ORDER_PAID", "ORDER_PARTIALLY_PAID")

				o := s.order(t, "order-DH-0042", s.orderBody("DH-0042", 500000,
					`"description":"Đơn hàng 0042","customer_id":"KH001","va":{"amount_mode":"partial","holder_name":"SAO MAI"}`))
				v := va(o)
				if o["status"] != "pending" || o["paid_amount"] != 0.0 || v["amount_mode"] != "partial" || v["status"] != "active" {
					t.Fatalf("the new order: %v", o)
				}
				number := v["va_number"].(string)
				pay := transfer{memo: "NGUYEN VAN A chuyen tien " + number}
				if test {
					if v["kind"] != "bank" || !strings.HasPrefix(number, recon.SandboxVAPrefix) {
						t.Fatalf("a test-mode order's VA: %v, want the sandbox bank's", v)
					}
					pay = transfer{memo: "NGUYEN VAN A chuyen tien", sub: number}
				} else if v["kind"] != "memo" {
					t.Fatalf("a live order's VA: %v, want a memo code", v)
				}
				if got := s.v1Order(t, "DH-0042"); got["order_status"] != "AUTHENTICATION_NOT_NEEDED" {
					t.Errorf("GET /v1/order of the pending v2 order: %v", got)
				}
				// The hosted checkout page (its URL is relative without
				// --base-url) shows the account and its VietQR.
				detail := s.gateway(t, "GET", "/v1/order/detail/DH-0042", "")
				payment, _ := detail.data()["payment"].(map[string]any)
				if url, _ := payment["checkout_url"].(string); url == "" {
					t.Errorf("GET /v1/order/detail of the v2 order: %s", detail)
				} else if status, page := testkit.Do(t, "GET", s.base+url, nil, "", ""); status != 200 || !strings.Contains(string(page), number) ||
					!strings.Contains(string(page), `alt="VietQR"`) {
					t.Errorf("the checkout page %s: %d, want the account %s and its QR:\n%.1500s", url, status, number, page)
				}

				first := pay
				first.in, first.date = 200000, time.Now().Truncate(time.Second)
				s.push(t, first)
				testkit.WaitFor(t, "ORDER_PARTIALLY_PAID", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderPartiallyPaid)) == 1 })
				if got := s.getOrder(t, o["id"].(string)); got["status"] != "partially_paid" || got["paid_amount"] != 200000.0 || va(got)["status"] != "active" {
					t.Fatalf("after 200 000 of 500 000: %v", got)
				}
				if got := s.v1Order(t, "DH-0042"); got["order_status"] != "AUTHENTICATION_NOT_NEEDED" {
					t.Errorf("GET /v1/order of the partially paid order: %v", got)
				}
				second := pay
				second.in = 300000
				s.push(t, second)
				testkit.WaitFor(t, "ORDER_PAID", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderPaid)) == 1 })

				pp, paid := rc.IPNs(recon.IPNOrderPartiallyPaid)[0], rc.IPNs(recon.IPNOrderPaid)[0]
				if o, tx := pp["order"].(map[string]any), pp["transaction"].(map[string]any); o["order_invoice_number"] != "DH-0042" ||
					o["order_status"] != "AUTHENTICATION_NOT_NEEDED" || o["order_amount"] != "500000.00" || tx["transaction_amount"] != "200000.00" ||
					tx["transaction_type"] != "PAYMENT" || tx["transaction_status"] != "APPROVED" {
					t.Errorf("ORDER_PARTIALLY_PAID: %v", pp)
				}
				if o, tx := paid["order"].(map[string]any), paid["transaction"].(map[string]any); o["order_invoice_number"] != "DH-0042" ||
					o["order_status"] != "CAPTURED" || tx["transaction_amount"] != "500000.00" {
					t.Errorf("ORDER_PAID: %v", paid)
				}
				// Both dated when their transfer was made (the bank's date, in
				// the business time zone).
				wantBusinessDate(t, "ORDER_PARTIALLY_PAID", pp["transaction"].(map[string]any)["transaction_date"], first.date, s.ict)
				wantBusinessDate(t, "ORDER_PAID", paid["transaction"].(map[string]any)["transaction_date"], first.date, s.ict)
				got := rc.Got()
				if len(got) != 2 || !strings.Contains(string(got[0].Body), recon.IPNOrderPartiallyPaid) {
					t.Errorf("the receiver got %d notifications, want ORDER_PARTIALLY_PAID then ORDER_PAID", len(got))
				}
				for _, g := range got {
					if keys := bodyKeys(t, g.Body); !slices.Equal(keys, v1IPNKeys) {
						t.Errorf("notification keys %v, want v1's %v", keys, v1IPNKeys)
					}
					if g.Header.Get("X-Secret-Key") != "ipn-secret-0123456789" || g.Header.Get("X-Recon-Signature") == "" {
						t.Errorf("a notification without the target's secret or a signature: %v", g.Header)
					}
				}
				o = s.getOrder(t, o["id"].(string))
				if o["status"] != "paid" || o["paid_amount"] != 500000.0 || o["paid_at"] == nil || va(o)["status"] != "paid" {
					t.Fatalf("the paid order: %v", o)
				}
				if got := s.v1Order(t, "DH-0042"); got["order_status"] != "CAPTURED" || got["order_amount"] != "500000.00" {
					t.Errorf("GET /v1/order of the paid order: %v", got)
				}
			})
		}
	})
}

// TestV2E2EExpiredVA: an order nobody pays expires by the server's own
// maintenance sweep (the real loop, every 250 ms here: the order is made
// with expires_in 1, and the test waits for the notification), its
// subscriber gets ORDER_EXPIRED, and money later sent to its expired
// virtual account is a va_inactive exception (GET /api/v1/exceptions) that
// changes nothing: the order stays expired and unpaid, no ORDER_PAID. A
// partially paid order past its expiry stays partially paid (its account
// expires, no ORDER_EXPIRED); an account added for the rest pays it.
func TestV2E2EExpiredVA(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s, rc := subscribedV2Shop(t, engine, false, "ORDER_PAID", "ORDER_PARTIALLY_PAID", "ORDER_EXPIRED")

		made := time.Now().Truncate(time.Second)
		o := s.order(t, "", s.orderBody("DH-EXP", 120000, `"expires_in":1,"customer_id":"KH001"`))
		number := va(o)["va_number"].(string)
		// A partially paid order past its expiry stays partially paid; its
		// account expires.
		part := s.order(t, "", s.orderBody("DH-EXP-PART", 100000, `"expires_in":5,"va":{"amount_mode":"partial"}`)) // 5 s: time for its first transfer
		partVA := va(part)["va_number"].(string)
		s.push(t, transfer{in: 30000, memo: "ck " + partVA})
		testkit.WaitFor(t, "ORDER_EXPIRED from the server's sweep", 45*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderExpired)) == 1 })
		exp := rc.IPNs(recon.IPNOrderExpired)[0]
		if b, tx := exp["order"].(map[string]any), exp["transaction"].(map[string]any); b["order_invoice_number"] != "DH-EXP" ||
			b["order_status"] != "CANCELLED" || tx["transaction_type"] != "EXPIRY" || tx["transaction_status"] != "EXPIRED" || tx["transaction_amount"] != "0.00" {
			t.Errorf("ORDER_EXPIRED: %v", exp)
		}
		wantBusinessDate(t, "ORDER_EXPIRED", exp["transaction"].(map[string]any)["transaction_date"], made, s.ict)
		o = s.getOrder(t, o["id"].(string))
		if o["status"] != "expired" || va(o)["status"] != "expired" {
			t.Fatalf("the order after the sweep: %v", o)
		}
		if got := s.v1Order(t, "DH-EXP"); got["order_status"] != "CANCELLED" {
			t.Errorf("GET /v1/order of the expired order: %v", got)
		}

		ids := s.push(t, transfer{in: 120000, memo: "NGUYEN VAN A chuyen tien " + number})
		a := s.v2(t, "GET", "/api/v1/exceptions?kind=va_inactive", s.adminA, "", "")
		if l := a.list(); a.status != 200 || len(l) != 1 {
			t.Fatalf("va_inactive exceptions: %s", a)
		}
		if e := fmt.Sprint(a.list()[0]); !strings.Contains(e, fmt.Sprint(ids[0])) || !strings.Contains(e, number) {
			t.Errorf("the exception names neither the transfer %d nor the account %s: %s", ids[0], number, e)
		}
		after := s.getOrder(t, o["id"].(string))
		if after["status"] != "expired" || after["paid_amount"] != 0.0 || va(after)["status"] != "expired" {
			t.Errorf("the expired order after money came to its VA: %v", after)
		}
		testkit.WaitFor(t, "the partially paid order's account expired", 40*time.Second, func() bool {
			return va(s.getOrder(t, part["id"].(string)))["status"] == "expired"
		})
		if got := s.getOrder(t, part["id"].(string)); got["status"] != "partially_paid" || got["paid_amount"] != 30000.0 {
			t.Fatalf("the partially paid order past its expiry: %v", got)
		}
		// A new account for the rest pays it.
		a = s.v2(t, "POST", "/v2/orders/"+part["id"].(string)+"/virtual-accounts", s.server, "", `{"amount":70000}`)
		if a.status != 201 || a.data()["status"] != "active" || a.data()["amount"] != 70000.0 {
			t.Fatalf("an account for the rest of a partially paid order past its expiry: %s", a)
		}
		s.push(t, transfer{in: 70000, memo: "ck " + a.data()["va_number"].(string)})
		if got := s.getOrder(t, part["id"].(string)); got["status"] != "paid" || got["paid_amount"] != 100000.0 {
			t.Fatalf("the order paid through its new account: %v", got)
		}
		testkit.WaitFor(t, "ORDER_PARTIALLY_PAID and ORDER_PAID of DH-EXP-PART", 20*time.Second, func() bool {
			return len(rc.IPNs(recon.IPNOrderPaid)) == 1 && len(rc.IPNs(recon.IPNOrderPartiallyPaid)) == 1
		})
		if n := only(t, rc, recon.IPNOrderExpired, recon.IPNOrderPaid, recon.IPNOrderPartiallyPaid); n[recon.IPNOrderExpired] != 1 {
			t.Errorf("notifications: %v, want one ORDER_EXPIRED (none for the partially paid order)", n)
		}
		if paid := rc.IPNs(recon.IPNOrderPaid)[0]; paid["order"].(map[string]any)["order_invoice_number"] != "DH-EXP-PART" {
			t.Errorf("ORDER_PAID: %v", paid)
		}
	})
}

// paidOrder makes an exact order and pays it with one pushed transfer; it
// returns the order's id and the transfer's id.
func (s *v2Shop) paidOrder(t testing.TB, invoice string, amount int64) (string, int64) {
	t.Helper()
	o := s.order(t, "", s.orderBody(invoice, amount, `"customer_id":"KH001"`))
	ids := s.push(t, transfer{in: amount, memo: "NGUYEN VAN A chuyen tien " + va(o)["va_number"].(string)})
	if got := s.getOrder(t, o["id"].(string)); got["status"] != "paid" {
		t.Fatalf("order %s after its transfer: %v", invoice, got)
	}
	return o["id"].(string), ids[0]
}

// TestV2E2ERefundsSettledByAStatement: a full refund of one order (by
// order) and a partial one of another (by transaction) are requested by
// the shop's server; the merchant sends them from the bank and uploads the
// statement (CSV, amount_out, the HT reference in the memo): each refund
// succeeds, REFUND_SUCCEEDED reaches the subscriber, the orders show what
// was refunded. Then four eyes: with a threshold, Admin a@'s refund above
// it waits in pending_approval; a@ cannot approve it (403, also through
// another OAuth2 client), b@ does.
func TestV2E2ERefundsSettledByAStatement(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s, rc := subscribedV2Shop(t, engine, false, "ORDER_PAID", "REFUND_SUCCEEDED", "REFUND_FAILED")
		full, _ := s.paidOrder(t, "DH-R1", 150000)
		part, partTx := s.paidOrder(t, "DH-R2", 80000)
		testkit.WaitFor(t, "the two ORDER_PAID", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderPaid)) == 2 })

		a := s.refund(t, s.server, "/v2/orders/"+full+"/refund", "refund-DH-R1", `{"reason":"hủy đơn",`+receiverJSON+`}`)
		if a.status != 201 {
			t.Fatalf("full refund: %s", a)
		}
		r1 := a.data()
		a = s.refund(t, s.server, fmt.Sprintf("/v2/transactions/%d/refund", partTx), "refund-DH-R2", `{"amount":30000,"reason":"thiếu hàng",`+receiverJSON+`}`)
		if a.status != 201 {
			t.Fatalf("partial refund: %s", a)
		}
		r2 := a.data()
		for _, r := range []map[string]any{r1, r2} {
			ref, _ := r["reference"].(string)
			ins, _ := r["instructions"].(map[string]any)
			if r["status"] != "pending" || !strings.HasPrefix(ref, "HT") || ins == nil || ins["memo"] != ref || ins["amount"] != r["amount"] {
				t.Fatalf("a refund waiting for the merchant's transfer: %v", r)
			}
		}
		if r1["amount"] != 150000.0 || r1["order_id"] != full || r2["amount"] != 30000.0 || r2["order_id"] != part || r2["transaction_id"] != float64(partTx) {
			t.Fatalf("refunds: %v %v", r1, r2)
		}
		if got := s.getOrder(t, part); got["refunded_amount"] != 30000.0 {
			t.Errorf("the partly refunded order holds %v, want 30000", got["refunded_amount"])
		}

		sent := time.Now().Truncate(time.Second)
		day := sent.In(s.ict).Format("2006-01-02 15:04:05")
		s.upload(t, "transaction_date,amount_in,amount_out,transaction_content,reference_number\n"+
			day+",0,150000,IBFT "+r1["reference"].(string)+" NGUYEN VAN A,OUT-1\n"+
			day+",0,30000,HOAN TIEN "+r2["reference"].(string)+",OUT-2\n")
		testkit.WaitFor(t, "two REFUND_SUCCEEDED", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNRefundSucceeded)) == 2 })
		for _, ipn := range rc.IPNs(recon.IPNRefundSucceeded) {
			tx, o := ipn["transaction"].(map[string]any), ipn["order"].(map[string]any)
			want := r1
			if tx["id"] == r2["id"] {
				want = r2
			}
			if tx["id"] != want["id"] || tx["transaction_id"] != want["reference"] || tx["transaction_type"] != "REFUND" ||
				tx["transaction_status"] != "APPROVED" || tx["transaction_amount"] != fmt.Sprintf("%.2f", want["amount"].(float64)) ||
				o["order_status"] != "CAPTURED" {
				t.Errorf("REFUND_SUCCEEDED: %v", ipn)
			}
			wantBusinessDate(t, "REFUND_SUCCEEDED", tx["transaction_date"], sent, s.ict)
		}
		for _, r := range []map[string]any{r1, r2} {
			a := s.v2(t, "GET", "/v2/refunds/"+r["id"].(string), s.server, "", "")
			if got := a.data(); a.status != 200 || got["status"] != "succeeded" || got["settled_transaction_id"] == nil || got["instructions"] != nil {
				t.Fatalf("the refund after the statement: %s", a)
			}
		}
		if got := s.getOrder(t, full); got["refunded_amount"] != 150000.0 || got["status"] != "paid" {
			t.Errorf("the refunded order: %v", got)
		}
		if n := only(t, rc, recon.IPNOrderPaid, recon.IPNRefundSucceeded); n[recon.IPNRefundSucceeded] != 2 {
			t.Errorf("notifications %v", n)
		}

		// Four eyes.
		if _, err := cli(t, s.dbURL, "refunds", "threshold", "--company", s.company, "--set", "50000", "--user", "a@saomai.vn"); err != nil {
			t.Fatal(err)
		}
		big, _ := s.paidOrder(t, "DH-R3", 110000)
		a = s.refund(t, s.adminA, "/v2/orders/"+big+"/refund", "refund-DH-R3", `{"amount":60000,"reason":"trả hàng",`+receiverJSON+`}`)
		if a.status != 201 || a.data()["status"] != "pending_approval" {
			t.Fatalf("a refund at the threshold: %s", a)
		}
		r3 := a.data()["id"].(string)
		wantV2Error(t, "the requester approves", s.v2(t, "POST", "/v2/refunds/"+r3+"/approve", s.adminA, "", ""), 403, "forbidden", "")
		other := cliJSON(t, s.dbURL, "client", "create", "--company", s.company, "--name", "back office", "--scopes", v2Scopes)["client_id"].(string)
		wantV2Error(t, "the requester approves through another client", s.v2(t, "POST", "/v2/refunds/"+r3+"/approve", s.userToken(t, other, "a@saomai.vn"), "", ""), 403, "forbidden", "")
		wantV2Error(t, "a client-credentials token approves", s.v2(t, "POST", "/v2/refunds/"+r3+"/approve", s.server, "", ""), 403, "forbidden", "")
		if a := s.v2(t, "GET", "/v2/refunds/"+r3, s.server, "", ""); a.data()["status"] != "pending_approval" {
			t.Fatalf("after the refused approvals: %s", a)
		}
		a = s.v2(t, "POST", "/v2/refunds/"+r3+"/approve", s.adminB, "", "")
		if got := a.data(); a.status != 200 || got["status"] != "pending" || got["approved_by"].(map[string]any)["email"] != "b@saomai.vn" ||
			got["requested_by"].(map[string]any)["email"] != "a@saomai.vn" {
			t.Fatalf("b@ approves: %s", a)
		}
		wantV2Error(t, "approved twice", s.v2(t, "POST", "/v2/refunds/"+r3+"/approve", s.adminB, "", ""), 422, "invalid_state", "")

		// The rest of the states and the 422 codes of the refundable amount.
		a = s.refund(t, s.adminA, "/v2/orders/"+big+"/refund", "refund-DH-R3-b", `{"amount":50000,"reason":"x",`+receiverJSON+`}`)
		if a.status != 201 || a.data()["status"] != "pending_approval" {
			t.Fatalf("a second refund at the threshold: %s", a)
		}
		r4 := a.data()["id"].(string)
		wantV2Error(t, "more than is left", s.refund(t, s.server, "/v2/orders/"+big+"/refund", "refund-DH-R3-c", `{"amount":1,"reason":"x",`+receiverJSON+`}`), 422, "already_refunded", "")
		if a := s.v2(t, "POST", "/v2/refunds/"+r4+"/reject", s.adminB, "", "{}"); a.status != 200 || a.data()["status"] != "rejected" {
			t.Fatalf("reject: %s", a)
		}
		wantV2Error(t, "more than the rejection freed", s.refund(t, s.server, "/v2/orders/"+big+"/refund", "refund-DH-R3-d", `{"amount":50001,"reason":"x",`+receiverJSON+`}`), 422, "amount_exceeds_refundable", "50000")
		a = s.refund(t, s.server, "/v2/orders/"+big+"/refund", "refund-DH-R3-e", `{"amount":40000,"reason":"x",`+receiverJSON+`}`)
		if a.status != 201 || a.data()["status"] != "pending" { // below the threshold
			t.Fatalf("the rest: %s", a)
		}
		if a := s.v2(t, "POST", "/v2/refunds/"+a.data()["id"].(string)+"/cancel", s.server, "", ""); a.status != 200 || a.data()["status"] != "cancelled" {
			t.Fatalf("cancel: %s", a)
		}
		wantV2Error(t, "a settled refund cancelled", s.v2(t, "POST", "/v2/refunds/"+r1["id"].(string)+"/cancel", s.server, "", ""), 422, "invalid_state", "")
		wantV2Error(t, "a refunded order refunded again", s.refund(t, s.server, "/v2/orders/"+full+"/refund", "refund-DH-R1-again", `{"reason":"x",`+receiverJSON+`}`), 422, "already_refunded", "")
		unpaid := s.order(t, "", s.orderBody("DH-R4", 10000, ""))["id"].(string)
		wantV2Error(t, "an unpaid order refunded", s.refund(t, s.server, "/v2/orders/"+unpaid+"/refund", "refund-DH-R4", `{"reason":"x",`+receiverJSON+`}`), 422, "nothing_to_refund", "")
		a = s.v2(t, "GET", "/v2/refunds?order_id="+big, s.server, "", "")
		if a.status != 200 || a.body["meta"].(map[string]any)["total"] != 3.0 {
			t.Errorf("GET /v2/refunds?order_id=: %s", a)
		}
	})
}

// TestV2E2EIdempotencyAcrossARestart: a POST /v2/orders with a key, the
// server stopped and started again on the same database: the same key and
// body (fields in another order, other spacing) replays the first answer
// (Idempotent-Replayed: true, the same status and body, no second order);
// another body with the key is 409 idempotency_key_reused.
func TestV2E2EIdempotencyAcrossARestart(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, stop := startServer(t, dbURL)
		s := newV2Shop(t, base, dbURL, false)
		body := s.orderBody("DH-IDEM", 99000, `"customer_id":"KH001"`)
		first := s.v2(t, "POST", "/v2/orders", s.server, "idem-DH-IDEM", body)
		if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %s %v", first, first.header)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		s.base, _, _ = startServer(t, dbURL)
		same := fmt.Sprintf(`{ "customer_id": "KH001", "bank_account_id": %s, "amount": 99000, "order_invoice_number": "DH-IDEM" }`, s.account)
		again := s.v2(t, "POST", "/v2/orders", s.server, "idem-DH-IDEM", same)
		if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.raw, first.raw) {
			t.Fatalf("after the restart: %s (Idempotent-Replayed %q), want the first answer %s replayed", again, again.header.Get("Idempotent-Replayed"), first.raw)
		}
		other := s.v2(t, "POST", "/v2/orders", s.server, "idem-DH-IDEM", s.orderBody("DH-IDEM", 99001, `"customer_id":"KH001"`))
		wantV2Error(t, "another body with the key", other, 409, "idempotency_key_reused", "")
		if a := s.v2(t, "GET", "/v2/orders?q=DH-IDEM", s.server, "", ""); len(a.list()) != 1 || a.body["meta"].(map[string]any)["total"] != 1.0 {
			t.Fatalf("orders DH-IDEM: %s, want the one", a)
		}
		id := first.data()["id"].(string)
		wantV2Error(t, "the key on another route", s.v2(t, "POST", "/v2/orders/"+id+"/cancel", s.server, "idem-DH-IDEM", ""), 409, "idempotency_key_reused", "")
		// Another company's key never meets this one.
		rival := newV2Shop(t, s.base, dbURL, false)
		if a := rival.v2(t, "POST", "/v2/orders", rival.server, "idem-DH-IDEM", rival.orderBody("DH-IDEM", 99000, `"customer_id":"KH001"`)); a.status != 201 || a.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the key at another company: %s", a)
		}
		// A test credential's key never meets a live one.
		test := newV2Shop(t, s.base, dbURL, true)
		if a := test.v2(t, "POST", "/v2/orders", test.server, "idem-DH-IDEM", test.orderBody("DH-IDEM", 5000, "")); a.status != 201 || a.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the key in test mode: %s", a)
		}
	})
}

// raceNodes sends the same POST with the same key to every node at the
// same moment, perNode times each (a start barrier), and returns the
// answers that made something (201 without Idempotent-Replayed); every other
// answer must be its replay or 409 idempotency_key_in_use. A retry after the
// race, on each node, replays the one made.
func raceNodes(t *testing.T, nodes []string, token, path, key, body string) v2Answer {
	t.Helper()
	const perNode = 8
	start := make(chan struct{})
	answers := make(chan v2Answer, len(nodes)*perNode)
	var wg sync.WaitGroup
	for _, base := range nodes {
		for range perNode {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				answers <- v2Call(t, "POST", base+path, token, key, body)
			}()
		}
	}
	close(start)
	wg.Wait()
	close(answers)
	var made []v2Answer
	replays, inUse := 0, 0
	for a := range answers {
		switch {
		case a.status == 201 && a.header.Get("Idempotent-Replayed") == "":
			made = append(made, a)
		case a.status == 201 && a.header.Get("Idempotent-Replayed") == "true":
			replays++
		case a.status == 409 && a.body["error_code"] == "idempotency_key_in_use":
			inUse++
		default:
			t.Errorf("POST %s: an answer neither the one made, its replay nor idempotency_key_in_use: %s", path, a)
		}
	}
	if len(made) != 1 {
		t.Fatalf("POST %s: %d requests made something, want 1 (%d replays, %d in use)", path, len(made), replays, inUse)
	}
	for _, base := range nodes {
		r := v2Call(t, "POST", base+path, token, key, body)
		if r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.raw, made[0].raw) {
			t.Errorf("a retry of POST %s at %s: %s", path, base, r)
		}
	}
	return made[0]
}

// TestV2E2EOneRefundFromTwoNodes: two `recon serve` on one PostgreSQL; a
// shop's server that retries sends the same request with the same key to
// both at the same moment, many times: exactly one order is made by POST
// /v2/orders, exactly one refund by POST /v2/transactions/{id}/refund;
// every other answer is its replay or 409 idempotency_key_in_use.
func TestV2E2EOneRefundFromTwoNodes(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "postgres")
	base1, _, _ := startServer(t, dbURL)
	base2, _, _ := startServer(t, dbURL)
	nodes := []string{base1, base2}
	s := newV2Shop(t, base1, dbURL, false)

	o := raceNodes(t, nodes, s.server, "/v2/orders", "order-once", s.orderBody("DH-2N", 200000, ""))
	if a := s.v2(t, "GET", "/v2/orders?q=DH-2N", s.server, "", ""); len(a.list()) != 1 || a.list()[0].(map[string]any)["id"] != o.data()["id"] {
		t.Fatalf("orders DH-2N: %s, want the one made", a)
	}
	ids := s.push(t, transfer{in: 200000, memo: "ck " + va(o.data())["va_number"].(string)})

	r := raceNodes(t, nodes, s.server, fmt.Sprintf("/v2/transactions/%d/refund", ids[0]), "refund-once", `{"amount":70000,"reason":"trả hàng",`+receiverJSON+`}`)
	a := s.v2(t, "GET", fmt.Sprintf("/v2/refunds?transaction_id=%d", ids[0]), s.server, "", "")
	if a.status != 200 || len(a.list()) != 1 || a.list()[0].(map[string]any)["id"] != r.data()["id"] {
		t.Fatalf("refunds of the transaction: %s, want the one made", a)
	}
	if got := s.getOrder(t, o.data()["id"].(string)); got["refunded_amount"] != 70000.0 {
		t.Errorf("the order after the race holds %v refunded, want 70000", got["refunded_amount"])
	}
}

// TestV2E2ESyncUnderConcurrentPushes: while four bank feeds push transfers
// concurrently (PostgreSQL), a shop's server pages GET
// /v2/transactions/sync with a small count until the pushes are done and
// has_more is false: it sees every transfer pushed exactly once, in added.
// Then the cursor past retention: the company keeps one day, the
// retention pass runs as the server's hourly loop runs it
// (sqlstore's ApplyRetention, here at a moment two days later, since the
// server's clock cannot be moved), and the old cursor is 409
// cursor_expired.
func TestV2E2ESyncUnderConcurrentPushes(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "postgres")
	base, _, _ := startServer(t, dbURL)
	s := newV2Shop(t, base, dbURL, false)
	accounts := []string{s.account}
	for i := 1; i < 4; i++ {
		accounts = append(accounts, fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", s.company, "--bank", "Vietcombank",
			"--number", fmt.Sprintf("007100012345%d", i), "--holder", "CONG TY TNHH SAO MAI")["id"]))
	}
	const batches, perBatch = 15, 7
	pushed := make(chan []int64, len(accounts)*batches)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, acc := range accounts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for b := range batches {
				var xs []transfer
				for k := range perBatch {
					xs = append(xs, transfer{in: int64(1000 + k), memo: "chuyen tien", accountID: acc, reference: fmt.Sprintf("SYNC-%d-%d-%d", i, b, k)})
				}
				pushed <- s.push(t, xs...)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	close(start)

	seen := map[float64]int{}
	cursor, first := "", ""
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		q := "/v2/transactions/sync?count=9"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		a := s.v2(t, "GET", q, s.adminA, "", "")
		if a.status != 200 {
			t.Fatalf("sync: %s", a)
		}
		d := a.data()
		for _, x := range d["added"].([]any) {
			seen[x.(map[string]any)["id"].(float64)]++
		}
		if l := d["modified"].([]any); len(l) > 0 || len(d["removed"].([]any)) > 0 {
			t.Fatalf("sync of plain pushes modified or removed: %s", a)
		}
		cursor = d["next_cursor"].(string)
		if first == "" {
			first = cursor
		}
		if finished && d["has_more"] == false {
			break
		}
	}
	close(pushed)
	total := 0
	for ids := range pushed {
		for _, id := range ids {
			total++
			if n := seen[float64(id)]; n != 1 {
				t.Errorf("transaction %d seen %d times", id, n)
			}
		}
	}
	if total != len(accounts)*batches*perBatch || len(seen) != total {
		t.Fatalf("pushed %d, synced %d", total, len(seen))
	}

	// Past retention.
	cliJSON(t, dbURL, "company", "update", s.company, "--data-storage-time", "1")
	db := dbtest.OpenURL(t, dbURL)
	if _, err := db.ApplyRetention(context.Background(), time.Now().Add(72*time.Hour).In(s.ict)); err != nil {
		t.Fatal(err)
	}
	wantV2Error(t, "a cursor past retention", s.v2(t, "GET", "/v2/transactions/sync?cursor="+first, s.adminA, "", ""), 409, "cursor_expired", "")
	if a := s.v2(t, "GET", "/v2/transactions/sync?count=500", s.adminA, "", ""); a.status != 200 {
		t.Errorf("a sync from the start after the purge: %s", a)
	}
}

// openAPIKeys are the properties of a schema of the v1 OpenAPI document
// (api/openapi.json), what v1's answers are documented to carry.
func openAPIKeys(t *testing.T, schema string) []string {
	t.Helper()
	raw, err := os.ReadFile("../../api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(doc.Components.Schemas[schema].Properties))
	if len(keys) == 0 {
		t.Fatalf("api/openapi.json has no schema %s", schema)
	}
	return keys
}

// topKeys are the sorted keys of a JSON object.
func topKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// TestV2E2EV1Unchanged: a target saved the v1 way (PUT /v1/ipn without
// notification_types) while API v2 is used: a v2 order paid in two parts
// through its VA, another expired by the sweep, a refund settled: it
// receives ORDER_PAID only (the v2 order's, then a v1 checkout order's), with
// v1's key set, and no new type;
// GET /v1/ipn, GET /v1/order (listing the v2 orders too) and GET
// /api/v1/transactions keep v1's key sets (docs/api.md; api/openapi.json's
// Order and Transaction).
func TestV2E2EV1Unchanged(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s, rc := subscribedV2Shop(t, engine, false) // the v1 way

		o := s.order(t, "", s.orderBody("DH-V1", 100000, `"va":{"amount_mode":"partial"}`))
		code := va(o)["va_number"].(string)
		s.push(t, transfer{in: 40000, memo: "chuyen tien " + code})
		ids := s.push(t, transfer{in: 60000, memo: "chuyen tien " + code})
		s.order(t, "", s.orderBody("DH-V1-EXP", 10000, `"expires_in":1`))
		a := s.refund(t, s.server, fmt.Sprintf("/v2/transactions/%d/refund", ids[0]), "v1-refund", `{"amount":10000,"reason":"x",`+receiverJSON+`}`)
		if a.status != 201 {
			t.Fatalf("refund: %s", a)
		}
		s.upload(t, "transaction_date,amount_in,amount_out,transaction_content,reference_number\n"+
			time.Now().In(s.ict).Format("2006-01-02 15:04:05")+",0,10000,HOAN TIEN "+a.data()["reference"].(string)+",OUT-V1\n")
		testkit.WaitFor(t, "the refund settled", 20*time.Second, func() bool {
			return s.v2(t, "GET", "/v2/refunds/"+a.data()["id"].(string), s.server, "", "").data()["status"] == "succeeded"
		})
		testkit.WaitFor(t, "the order expired by the sweep", 45*time.Second, func() bool {
			return s.v1Order(t, "DH-V1-EXP")["order_status"] == "CANCELLED"
		})
		// A v1 checkout order paid after all of it: when its ORDER_PAID
		// arrives, everything enqueued before it was sent.
		m := &merchantSetup{base: s.base, merchantID: s.merchant, secret: s.mKey, feedToken: s.server, account: s.account}
		if a := s.v2(t, "PATCH", "/api/v1/company/configurations", s.adminA, "",
			`{"payment_code_formats":[{"prefix":"DH","suffix_from":6,"suffix_to":10,"character_type":"NumberOnly","is_active":1}]}`); a.status != 200 {
			t.Fatalf("formats: %s", a)
		}
		m.pay(t, m.checkout(t, "INV-V1-LAST", 20000), 20000)
		testkit.WaitFor(t, "two ORDER_PAID", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderPaid)) == 2 })
		if n := only(t, rc, recon.IPNOrderPaid); n[recon.IPNOrderPaid] != 2 {
			t.Errorf("the v1 target got %v, want the 2 ORDER_PAID only", n)
		}
		for _, g := range rc.Got() {
			if keys := bodyKeys(t, g.Body); !slices.Equal(keys, v1IPNKeys) {
				t.Errorf("ORDER_PAID keys %v, want v1's %v", keys, v1IPNKeys)
			}
		}
		if paid := rc.IPNs(recon.IPNOrderPaid)[0]; paid["order"].(map[string]any)["order_invoice_number"] != "DH-V1" {
			t.Errorf("the first ORDER_PAID: %v", paid)
		}
		// The v1 checkout order is readable through v2.
		a = s.v2(t, "GET", "/v2/orders?q=INV-V1-LAST", s.server, "", "")
		if a.status != 200 || len(a.list()) != 1 {
			t.Fatalf("the v1 checkout order in GET /v2/orders: %s", a)
		}
		if got := s.getOrder(t, a.list()[0].(map[string]any)["id"].(string)); got["status"] != "paid" || got["paid_amount"] != 20000.0 || len(got["virtual_accounts"].([]any)) != 0 {
			t.Errorf("the v1 checkout order in v2: %v", got)
		}

		ipn := s.gateway(t, "GET", "/v1/ipn", "")
		// v1's keys, and the two the Standard Webhooks headers added beside
		// signing_secret (docs/design.md, D7, "Standard Webhooks."); none of API v2's.
		if keys := topKeys(ipn.data()); ipn.status != 200 || !slices.Equal(keys, []string{"active", "auth_type", "ipn_url", "previous_signing_secret_until", "secret_key",
			"signing_secret", "signing_secret_whsec"}) {
			t.Errorf("GET /v1/ipn keys %v: %s", keys, ipn)
		}
		orders := s.gateway(t, "GET", "/v1/order?per_page=100", "")
		want := openAPIKeys(t, "Order")
		if orders.status != 200 || len(orders.list()) != 3 || !slices.Equal(topKeys(orders.body), []string{"data", "meta"}) {
			t.Fatalf("GET /v1/order: %s", orders)
		}
		for _, it := range orders.list() {
			if keys := topKeys(it.(map[string]any)); !slices.Equal(keys, want) {
				t.Errorf("GET /v1/order item keys %v, want api/openapi.json's Order %v", keys, want)
			}
		}
		if keys := topKeys(orders.body["meta"].(map[string]any)); !slices.Equal(keys, []string{"current_page", "has_more", "page_count", "per_page", "total"}) {
			t.Errorf("GET /v1/order meta keys %v", keys)
		}
		txs := s.v2(t, "GET", "/api/v1/transactions", s.adminA, "", "")
		want = openAPIKeys(t, "Transaction")
		if txs.status != 200 || len(txs.list()) != 4 || !slices.Equal(topKeys(txs.body), []string{"data", "meta", "status"}) {
			t.Fatalf("GET /api/v1/transactions: %s", txs)
		}
		for _, it := range txs.list() {
			if keys := topKeys(it.(map[string]any)); !slices.Equal(keys, want) {
				t.Errorf("GET /api/v1/transactions item keys %v, want %v", keys, want)
			}
		}
	})
}

// TestV2E2EFailurePaths: malformed requests to v2 over HTTP, each a 4xx in
// the v2 error envelope naming the problem, and nothing written: no order,
// no refund, no key kept (the corrected request with the same key runs).
func TestV2E2EFailurePaths(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s := startV2Shop(t, engine, false)
		other := newV2Shop(t, s.base, s.dbURL, false) // another company
		test := newV2Shop(t, s.base, s.dbURL, true)   // a test credential of its own company
		theirs, theirTx := other.paidOrder(t, "DH-THEIRS", 50000)
		mine, myTx := s.paidOrder(t, "DH-MINE", 50000)
		outTx := s.push(t, transfer{out: 20000, memo: "chi phi"})[0]
		ordersBefore := len(s.v2(t, "GET", "/v2/orders", s.server, "", "").list())
		readOnly := cliJSON(t, s.dbURL, "token", "issue", "--client", s.clientID, "--user", "", "--scopes", "order:read")["access_token"].(string)

		refundPath := fmt.Sprintf("/v2/transactions/%d/refund", myTx)
		for _, c := range []struct {
			name, method, path, token, key, body string
			status                               int
			code, names                          string
		}{
			{"malformed JSON", "POST", "/v2/orders", s.server, "k1", `{"order_invoice_number":"X1",`, 400, "validation_error", ""},
			{"not an object", "POST", "/v2/orders", s.server, "k1", `[1,2]`, 400, "validation_error", ""},
			{"an unknown field", "POST", "/v2/orders", s.server, "k1", s.orderBody("X1", 1000, `"currency":"VND"`), 400, "validation_error", "currency"},
			{"a string amount", "POST", "/v2/orders", s.server, "k1", `{"order_invoice_number":"X1","amount":"1000","bank_account_id":` + s.account + `}`, 400, "validation_error", "amount"},
			{"a fractional amount", "POST", "/v2/orders", s.server, "k1", `{"order_invoice_number":"X1","amount":1000.5,"bank_account_id":` + s.account + `}`, 400, "validation_error", "amount"},
			{"amount 0", "POST", "/v2/orders", s.server, "k1", s.orderBody("X1", 0, ""), 400, "validation_error", "amount"},
			{"a negative amount", "POST", "/v2/orders", s.server, "k1", s.orderBody("X1", -5, ""), 400, "validation_error", "amount"},
			{"an amount above the max", "POST", "/v2/orders", s.server, "k1", s.orderBody("X1", recon.MaxAmount+1, ""), 400, "validation_error", "amount"},
			{"an unknown amount_mode", "POST", "/v2/orders", s.server, "k1", s.orderBody("X1", 1000, `"va":{"amount_mode":"sometimes"}`), 400, "validation_error", "amount_mode"},
			{"expires_in above 30 days", "POST", "/v2/orders", s.server, "k1", s.orderBody("X1", 1000, `"expires_in":2592001`), 400, "validation_error", "expires_in"},
			{"another company's bank account", "POST", "/v2/orders", s.server, "k1", `{"order_invoice_number":"X1","amount":1000,"bank_account_id":` + other.account + `}`, 400, "validation_error", "bank_account_id"},
			{"a malformed key", "POST", "/v2/orders", s.server, "k 1", s.orderBody("X1", 1000, ""), 400, "validation_error", "X-Idempotency-Key"},
			{"a key of 256 characters", "POST", "/v2/orders", s.server, strings.Repeat("k", 256), s.orderBody("X1", 1000, ""), 400, "validation_error", "X-Idempotency-Key"},
			{"a non-ASCII key", "POST", "/v2/orders", s.server, "khóa-1", s.orderBody("X1", 1000, ""), 400, "validation_error", "X-Idempotency-Key"},
			{"per_page 101", "GET", "/v2/orders?per_page=101", s.server, "", "", 400, "validation_error", "per_page"},
			{"page 0", "GET", "/v2/orders?page=0", s.server, "", "", 400, "validation_error", "page"},
			{"an unknown status filter", "GET", "/v2/orders?status=shipped", s.server, "", "", 400, "validation_error", "status"},
			{"an unknown query parameter", "GET", "/v2/orders?colour=red", s.server, "", "", 400, "validation_error", "colour"},
			{"another company's order", "GET", "/v2/orders/" + theirs, s.server, "", "", 404, "not_found", ""},
			{"cancel another company's order", "POST", "/v2/orders/" + theirs + "/cancel", s.server, "k2", "", 404, "not_found", ""},
			{"refund another company's order", "POST", "/v2/orders/" + theirs + "/refund", s.server, "k3", `{"reason":"x",` + receiverJSON + `}`, 404, "not_found", ""},
			{"refund another company's transaction", "POST", fmt.Sprintf("/v2/transactions/%d/refund", theirTx), s.server, "k3", `{"reason":"x",` + receiverJSON + `}`, 404, "not_found", ""},
			{"a test credential and a live order", "GET", "/v2/orders/" + mine, test.server, "", "", 404, "not_found", ""},
			{"a test credential refunds a live transaction", "POST", refundPath, test.server, "k4", `{"reason":"x",` + receiverJSON + `}`, 404, "not_found", ""},
			{"a refund amount 0", "POST", refundPath, s.server, "k5", `{"amount":0,"reason":"x",` + receiverJSON + `}`, 400, "validation_error", "amount"},
			{"a refund amount negative", "POST", refundPath, s.server, "k5", `{"amount":-1,"reason":"x",` + receiverJSON + `}`, 400, "validation_error", "amount"},
			{"a refund above the max", "POST", refundPath, s.server, "k5", fmt.Sprintf(`{"amount":%d,"reason":"x",%s}`, recon.MaxAmount+1, receiverJSON), 400, "validation_error", "amount"},
			{"a refund above the refundable", "POST", refundPath, s.server, "k8", `{"amount":50001,"reason":"x",` + receiverJSON + `}`, 422, "amount_exceeds_refundable", ""},
			{"a refund without a receiver", "POST", refundPath, s.server, "k9", `{"reason":"x"}`, 422, "receiver_required", ""},
			{"a refund without a reason", "POST", refundPath, s.server, "k5", `{` + receiverJSON + `}`, 400, "validation_error", "reason"},
			{"a refund with a string amount", "POST", refundPath, s.server, "k5", `{"amount":"10","reason":"x",` + receiverJSON + `}`, 400, "validation_error", "amount"},
			{"a refund without a key", "POST", refundPath, s.server, "", `{"reason":"x",` + receiverJSON + `}`, 422, "idempotency_key_required", ""},
			{"an unknown refund status filter", "GET", "/v2/refunds?status=done", s.server, "", "", 400, "validation_error", "status"},
			{"a token without order:write", "POST", "/v2/orders", readOnly, "k6", s.orderBody("X1", 1000, ""), 403, "forbidden", ""},
			{"a token without refund:read", "GET", "/v2/refunds", readOnly, "", "", 403, "forbidden", ""},
			{"no token", "POST", "/v2/orders", "", "k7", s.orderBody("X1", 1000, ""), 401, "unauthorized", ""},
			{"a made-up token", "GET", "/v2/orders", "ory_at_nothing.nothing", "", "", 401, "unauthorized", ""},
			{"an unknown buyer field", "POST", "/v2/orders", s.server, "k12", s.orderBody("X1", 1000, `"buyer":{"name":"A","age":3}`), 400, "validation_error", "age"},
			{"a malformed buyer email", "POST", "/v2/orders", s.server, "k12", s.orderBody("X1", 1000, `"buyer":{"email":"not-an-address"}`), 400, "validation_error", "email"},
			{"a malformed buyer tax code", "POST", "/v2/orders", s.server, "k12", s.orderBody("X1", 1000, `"buyer":{"tax_code":"12AB"}`), 400, "validation_error", "tax_code"},
			{"an invoice number with a space", "POST", "/v2/orders", s.server, "k12", s.orderBody("X 1", 1000, ""), 400, "validation_error", "order_invoice_number"},
			{"no invoice number", "POST", "/v2/orders", s.server, "k12", `{"amount":1000,"bank_account_id":` + s.account + `}`, 400, "validation_error", "order_invoice_number"},
			{"a va that is not an object", "POST", "/v2/orders", s.server, "k12", s.orderBody("X1", 1000, `"va":"partial"`), 400, "validation_error", "va"},
			{"an invoice number taken", "POST", "/v2/orders", s.server, "k10", s.orderBody("DH-MINE", 1000, ""), 409, "conflict", ""},
			{"a refund of an outgoing transaction", "POST", fmt.Sprintf("/v2/transactions/%d/refund", outTx), s.server, "k11", `{"reason":"x",` + receiverJSON + `}`, 422, "nothing_to_refund", ""},
			{"no such route", "GET", "/v2/shipments", s.server, "", "", 404, "not_found", ""},
			{"another method", "PUT", "/v2/orders", s.server, "", "{}", 405, "method_not_allowed", ""},
		} {
			a := s.v2(t, c.method, c.path, c.token, c.key, c.body)
			wantV2Error(t, c.name, a, c.status, c.code, c.names)
		}
		// Nothing was written: no order, no refund, and the keys of the
		// malformed requests are free (a 400, 403 or 404 keeps none; a 422
		// is kept: docs/api-v2.md, Idempotency).
		if n := len(s.v2(t, "GET", "/v2/orders", s.server, "", "").list()); n != ordersBefore {
			t.Errorf("%d orders after the refusals, %d before", n, ordersBefore)
		}
		if a := s.v2(t, "GET", "/v2/refunds", s.server, "", ""); len(a.list()) != 0 {
			t.Errorf("refunds after the refusals: %s", a)
		}
		if a := s.v2(t, "POST", "/v2/orders", s.server, "k1", s.orderBody("X1", 1000, "")); a.status != 201 || a.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the corrected order with the key of refused ones: %s", a)
		}
		if a := s.v2(t, "POST", refundPath, s.server, "k5", `{"amount":1000,"reason":"x",`+receiverJSON+`}`); a.status != 201 || a.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the corrected refund with the key of refused ones: %s", a)
		}
		// A 422 is kept: the same request again is its replay.
		if a := s.v2(t, "POST", refundPath, s.server, "k8", `{"amount":50001,"reason":"x",`+receiverJSON+`}`); a.status != 422 || a.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a 422 again: %s %v", a, a.header)
		}
	})
}

// exceptionsOf lists the shop's open exceptions of kind (GET
// /api/v1/exceptions, an Admin's token).
func (s *v2Shop) exceptionsOf(t testing.TB, kind string) []any {
	t.Helper()
	a := s.v2(t, "GET", "/api/v1/exceptions?kind="+kind, s.adminA, "", "")
	if a.status != 200 {
		t.Fatalf("exceptions %s: %s", kind, a)
	}
	return a.list()
}

// TestV2E2EVAModesAndCancel: the amount modes over HTTP (docs/api-v2.md,
// Virtual accounts): exact, a short transfer an underpaid exception whose
// money counts, a second account added for the rest and overpaid, an
// account added to a paid order 422 invalid_state; open, no amount, every
// transfer adds up until paid; cancel, an account deleted and the money
// sent to it a va_inactive exception, the order cancelled (CANCELLED in
// v1) and a second cancel 422 invalid_state.
func TestV2E2EVAModesAndCancel(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s := startV2Shop(t, engine, false)

		// exact
		o := s.order(t, "", s.orderBody("DH-EXACT", 100000, ""))
		if v := va(o); v["amount_mode"] != "exact" || v["amount"] != 100000.0 {
			t.Fatalf("the default account: %v", v)
		}
		s.push(t, transfer{in: 60000, memo: "ck " + va(o)["va_number"].(string)})
		if got := s.getOrder(t, o["id"].(string)); got["status"] != "partially_paid" || got["paid_amount"] != 60000.0 || len(s.exceptionsOf(t, "underpaid")) != 1 {
			t.Fatalf("exact, 60 000 of 100 000: %v, underpaid %v", got, s.exceptionsOf(t, "underpaid"))
		}
		a := s.v2(t, "POST", "/v2/orders/"+o["id"].(string)+"/virtual-accounts", s.server, "", "")
		if a.status != 201 || a.data()["amount"] != 40000.0 || a.data()["status"] != "active" {
			t.Fatalf("an account for the rest: %s", a)
		}
		s.push(t, transfer{in: 50000, memo: "ck " + a.data()["va_number"].(string)})
		got := s.getOrder(t, o["id"].(string))
		if got["status"] != "paid" || got["paid_amount"] != 110000.0 || len(s.exceptionsOf(t, "overpaid")) != 1 {
			t.Fatalf("exact, 110 000 of 100 000: %v, overpaid %v", got, s.exceptionsOf(t, "overpaid"))
		}
		for _, v := range got["virtual_accounts"].([]any) {
			if v.(map[string]any)["status"] != "paid" {
				t.Errorf("an account of the paid order: %v", v)
			}
		}
		wantV2Error(t, "an account for a paid order", s.v2(t, "POST", "/v2/orders/"+o["id"].(string)+"/virtual-accounts", s.server, "", "{}"), 422, "invalid_state", "")

		// open
		o = s.order(t, "", s.orderBody("DH-OPEN", 90000, `"va":{"amount_mode":"open"}`))
		if v := va(o); v["amount_mode"] != "open" || v["amount"] != nil {
			t.Fatalf("an open account: %v", v)
		}
		for i, want := range []string{"partially_paid", "partially_paid", "paid"} {
			// "lan N": the same memo and amount the same day would be a
			// possible duplicate (docs/statements.md, Possible duplicates).
			s.push(t, transfer{in: 30000, memo: fmt.Sprintf("ck %s lan %d", va(o)["va_number"].(string), i+1)})
			if got := s.getOrder(t, o["id"].(string)); got["status"] != want || got["paid_amount"] != float64(30000*(i+1)) {
				t.Fatalf("open, transfer %d: %v", i+1, got)
			}
		}

		// cancel
		o = s.order(t, "", s.orderBody("DH-CANCEL", 70000, ""))
		id, number := o["id"].(string), va(o)["va_number"].(string)
		a = s.v2(t, "DELETE", "/v2/orders/"+id+"/virtual-accounts/"+number, s.server, "", "")
		if a.status != 200 || a.data()["status"] != "cancelled" {
			t.Fatalf("DELETE the account: %s", a)
		}
		wantV2Error(t, "DELETE it again", s.v2(t, "DELETE", "/v2/orders/"+id+"/virtual-accounts/"+number, s.server, "", ""), 422, "invalid_state", "")
		s.push(t, transfer{in: 70000, memo: "ck " + number})
		if got := s.getOrder(t, id); got["status"] != "pending" || got["paid_amount"] != 0.0 || len(s.exceptionsOf(t, "va_inactive")) != 1 {
			t.Fatalf("money to a cancelled account: %v, va_inactive %v", got, s.exceptionsOf(t, "va_inactive"))
		}
		a = s.v2(t, "POST", "/v2/orders/"+id+"/cancel", s.server, "cancel-DH-CANCEL", "")
		if a.status != 200 || a.data()["status"] != "cancelled" {
			t.Fatalf("cancel: %s", a)
		}
		if got := s.v1Order(t, "DH-CANCEL"); got["order_status"] != "CANCELLED" {
			t.Errorf("GET /v1/order of the cancelled order: %v", got)
		}
		wantV2Error(t, "cancel again", s.v2(t, "POST", "/v2/orders/"+id+"/cancel", s.server, "", ""), 422, "invalid_state", "")

		// The filters.
		a = s.v2(t, "GET", "/v2/orders?status=paid", s.server, "", "")
		if l := a.list(); a.status != 200 || len(l) != 2 || l[0].(map[string]any)["order_invoice_number"] != "DH-OPEN" || l[1].(map[string]any)["order_invoice_number"] != "DH-EXACT" {
			t.Errorf("GET /v2/orders?status=paid: %s", a)
		}
		if a := s.v2(t, "GET", "/v2/orders?q=OPEN", s.server, "", ""); len(a.list()) != 1 {
			t.Errorf("GET /v2/orders?q=OPEN: %s", a)
		}
		if a := s.v2(t, "GET", "/v2/virtual-accounts?status=paid", s.server, "", ""); len(a.list()) != 3 {
			t.Errorf("GET /v2/virtual-accounts?status=paid: %s", a)
		}
		// The lists: newest first, with their meta.
		a = s.v2(t, "GET", "/v2/orders?per_page=2", s.server, "", "")
		if l := a.list(); a.status != 200 || len(l) != 2 || l[0].(map[string]any)["order_invoice_number"] != "DH-CANCEL" ||
			fmt.Sprint(a.body["meta"]) != "map[page:1 per_page:2 total:3]" {
			t.Errorf("GET /v2/orders?per_page=2: %s", a)
		}
		a = s.v2(t, "GET", "/v2/virtual-accounts?order_id="+id, s.server, "", "")
		if l := a.list(); a.status != 200 || len(l) != 1 || l[0].(map[string]any)["va_number"] != number {
			t.Errorf("GET /v2/virtual-accounts?order_id=: %s", a)
		}
	})
}

// TestV2E2ESandboxPayouts: in test mode the sandbox payout connector sends a
// refund itself (docs/api-v2.md, How a refund settles): a test-mode shop's
// order paid through its sandbox bank VA, two refunds by order; the one to
// an ordinary receiver succeeds through the server's loop (REFUND_SUCCEEDED),
// the one to the documented failing account 000000000001 fails
// (REFUND_FAILED, its amount refundable again), each at the test-mode
// target that subscribes.
func TestV2E2ESandboxPayouts(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s, rc := subscribedV2Shop(t, engine, true, "REFUND_SUCCEEDED", "REFUND_FAILED")
		o := s.order(t, "", s.orderBody("DH-SBX", 100000, ""))
		s.push(t, transfer{in: 100000, memo: "chuyen tien", sub: va(o)["va_number"].(string)})
		id := o["id"].(string)

		requested := time.Now().Truncate(time.Second)
		ok := s.refund(t, s.server, "/v2/orders/"+id+"/refund", "sbx-ok", `{"amount":30000,"reason":"x",`+receiverJSON+`}`)
		bad := s.refund(t, s.server, "/v2/orders/"+id+"/refund", "sbx-bad",
			`{"amount":20000,"reason":"x","receiver":{"bank_bin":"970436","account_number":"000000000001","account_name":"NGUYEN VAN B"}}`)
		if ok.status != 201 || ok.data()["status"] != "processing" || bad.status != 201 || bad.data()["status"] != "processing" {
			t.Fatalf("refunds taken by the sandbox connector: %s %s", ok, bad)
		}
		testkit.WaitFor(t, "REFUND_SUCCEEDED and REFUND_FAILED", 30*time.Second, func() bool {
			return len(rc.IPNs(recon.IPNRefundSucceeded)) == 1 && len(rc.IPNs(recon.IPNRefundFailed)) == 1
		})
		succeeded, failed := rc.IPNs(recon.IPNRefundSucceeded)[0]["transaction"].(map[string]any), rc.IPNs(recon.IPNRefundFailed)[0]["transaction"].(map[string]any)
		if succeeded["id"] != ok.data()["id"] || succeeded["transaction_status"] != "APPROVED" || succeeded["transaction_amount"] != "30000.00" {
			t.Errorf("REFUND_SUCCEEDED: %v", succeeded)
		}
		if failed["id"] != bad.data()["id"] || failed["transaction_status"] != "FAILED" || failed["transaction_amount"] != "20000.00" {
			t.Errorf("REFUND_FAILED: %v", failed)
		}
		wantBusinessDate(t, "REFUND_SUCCEEDED", succeeded["transaction_date"], requested, s.ict)
		wantBusinessDate(t, "REFUND_FAILED", failed["transaction_date"], requested, s.ict)
		if a := s.v2(t, "GET", "/v2/refunds/"+bad.data()["id"].(string), s.server, "", ""); a.data()["status"] != "failed" ||
			a.data()["failure_reason"] != "the receiving account does not exist" {
			t.Errorf("the failed refund: %s", a)
		}
		if got := s.getOrder(t, id); got["refunded_amount"] != 30000.0 {
			t.Errorf("the order holds %v refunded, want the 30000 that left", got["refunded_amount"])
		}
		if n := only(t, rc, recon.IPNRefundSucceeded, recon.IPNRefundFailed); len(rc.Got()) != 2 {
			t.Errorf("the test-mode target got %v", n)
		}
	})
}

// sync reads one page of GET /v2/transactions/sync after cursor with
// token.
func (s *v2Shop) sync(t testing.TB, token, cursor string) map[string]any {
	t.Helper()
	path := "/v2/transactions/sync"
	if cursor != "" {
		path += "?cursor=" + cursor
	}
	a := s.v2(t, "GET", path, token, "", "")
	if a.status != 200 {
		t.Fatalf("sync: %s", a)
	}
	return a.data()
}

// ids are the ids of a sync page's list.
func ids(list any) []float64 {
	var out []float64
	for _, x := range list.([]any) {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m["id"].(float64))
		} else {
			out = append(out, x.(float64))
		}
	}
	return out
}

// TestV2E2ESyncModifiedAndTestMode: GET /v2/transactions/sync on both
// engines: a transfer that underpays an order is added with its open
// exception; once a person resolves the exception (POST
// /api/v1/exceptions/{id}/resolve) it comes again in modified, resolved;
// a page with no change gives the cursor back; the test-mode tenant has a
// log of its own, and a live cursor is 400 there.
func TestV2E2ESyncModifiedAndTestMode(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s := startV2Shop(t, engine, false)
		o := s.order(t, "", s.orderBody("DH-SYNC", 100000, ""))
		tx := s.push(t, transfer{in: 40000, memo: "ck " + va(o)["va_number"].(string)})[0]

		page := s.sync(t, s.adminA, "")
		added := page["added"].([]any)
		if !slices.Equal(ids(page["added"]), []float64{float64(tx)}) || added[0].(map[string]any)["exception"] != "open" ||
			added[0].(map[string]any)["match_outcome"] != "underpaid" || len(page["modified"].([]any)) != 0 || page["has_more"] != false {
			t.Fatalf("the first page: %v", page)
		}
		cursor := page["next_cursor"].(string)
		if again := s.sync(t, s.adminA, cursor); again["next_cursor"] != cursor || len(again["added"].([]any)) != 0 {
			t.Fatalf("a page with no change: %v", again)
		}
		if a := s.v2(t, "POST", fmt.Sprintf("/api/v1/exceptions/%d/resolve", tx), s.adminA, "", `{"action":"ignore","note":"the customer pays the rest in cash"}`); a.status != 200 {
			t.Fatalf("resolve: %s", a)
		}
		page = s.sync(t, s.adminA, cursor)
		if !slices.Equal(ids(page["modified"]), []float64{float64(tx)}) || len(page["added"].([]any)) != 0 ||
			page["modified"].([]any)[0].(map[string]any)["exception"] != "resolved" {
			t.Fatalf("after the resolution: %v", page)
		}

		// The same company's test mode: a test client of its own, the same
		// Admin.
		test := *s
		client := cliJSON(t, s.dbURL, "client", "create", "--company", s.company, "--test", "--name", "shop server (test)", "--scopes", v2Scopes)["client_id"].(string)
		test.server = cliJSON(t, s.dbURL, "token", "issue", "--client", client, "--user", "", "--scopes", "transaction:write")["access_token"].(string)
		test.adminA = s.userToken(t, client, "a@saomai.vn")
		test.account = fmt.Sprint(cliJSON(t, s.dbURL, "bank-account", "create", "--company", s.company, "--test", "--bank", "Vietcombank",
			"--number", "0071000123456", "--holder", "CONG TY TNHH SAO MAI")["id"])
		ttx := test.push(t, transfer{in: 5000, memo: "test"})[0]
		if page := test.sync(t, test.adminA, ""); !slices.Equal(ids(page["added"]), []float64{float64(ttx)}) {
			t.Errorf("the test tenant's log: %v", page)
		}
		other := newV2Shop(t, s.base, s.dbURL, false)
		wantV2Error(t, "another company's cursor", other.v2(t, "GET", "/v2/transactions/sync?cursor="+cursor, other.adminA, "", ""), 400, "validation_error", "cursor")
		wantV2Error(t, "a made-up cursor", s.v2(t, "GET", "/v2/transactions/sync?cursor=AAAAAAAA", s.adminA, "", ""), 400, "validation_error", "cursor")
		wantV2Error(t, "a client-credentials token", s.v2(t, "GET", "/v2/transactions/sync", s.server, "", ""), 403, "forbidden", "")
		wantV2Error(t, "a live cursor in test mode", test.v2(t, "GET", "/v2/transactions/sync?cursor="+cursor, test.adminA, "", ""), 400, "validation_error", "cursor")
		if page := s.sync(t, s.adminA, page["next_cursor"].(string)); len(page["added"].([]any)) != 0 {
			t.Errorf("the live log after a test-mode transfer: %v", page)
		}
	})
}

// TestV2E2ESharedRefundable: an order paid by two transfers; a refund by
// order draws on the newest first, and the two routes share what is left
// (docs/api-v2.md, Refunds): neither route can refund a VND twice.
func TestV2E2ESharedRefundable(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s := startV2Shop(t, engine, false)
		o := s.order(t, "", s.orderBody("DH-SHARE", 100000, `"va":{"amount_mode":"partial"}`))
		memo := "ck " + va(o)["va_number"].(string)
		t1 := s.push(t, transfer{in: 60000, memo: memo})[0]
		t2 := s.push(t, transfer{in: 40000, memo: memo})[0]
		id := o["id"].(string)
		body := func(amount int64) string { return fmt.Sprintf(`{"amount":%d,"reason":"x",%s}`, amount, receiverJSON) }

		a := s.refund(t, s.server, "/v2/orders/"+id+"/refund", "share-1", body(50000))
		if a.status != 201 || fmt.Sprint(a.data()["allocations"]) != fmt.Sprintf("[map[amount:40000 transaction_id:%d] map[amount:10000 transaction_id:%d]]", t2, t1) {
			t.Fatalf("a refund by order, newest first: %s", a)
		}
		wantV2Error(t, "the newest transfer again", s.refund(t, s.server, fmt.Sprintf("/v2/transactions/%d/refund", t2), "share-2", body(1)), 422, "already_refunded", "")
		wantV2Error(t, "the older one beyond its rest", s.refund(t, s.server, fmt.Sprintf("/v2/transactions/%d/refund", t1), "share-3", body(50001)), 422, "amount_exceeds_refundable", "50000")
		wantV2Error(t, "the order beyond its rest", s.refund(t, s.server, "/v2/orders/"+id+"/refund", "share-4", body(50001)), 422, "amount_exceeds_refundable", "50000")
		if a := s.refund(t, s.server, fmt.Sprintf("/v2/transactions/%d/refund", t1), "share-5", body(50000)); a.status != 201 {
			t.Fatalf("the rest by transaction: %s", a)
		}
		wantV2Error(t, "the order, all refunded", s.refund(t, s.server, "/v2/orders/"+id+"/refund", "share-6", `{"reason":"x",`+receiverJSON+`}`), 422, "already_refunded", "")
		if got := s.getOrder(t, id); got["refunded_amount"] != 100000.0 || got["paid_amount"] != 100000.0 {
			t.Errorf("the order: %v", got)
		}
	})
}

// TestV2E2ERateLimit: past the burst a v2 request is 429 rate_limited with
// Retry-After, and every authenticated answer carries the X-RateLimit
// headers (docs/api-v2.md, Rate limits); nothing is done by the refused
// request.
func TestV2E2ERateLimit(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s := startV2Shop(t, engine, false, "--rate-limit", "0.01", "--rate-burst", "3")
		for i := range 3 {
			a := s.v2(t, "POST", "/v2/orders", s.server, "", s.orderBody(fmt.Sprintf("DH-RL-%d", i), 1000, ""))
			if a.status != 201 || a.header.Get("X-RateLimit-Limit") != "3" || a.header.Get("X-RateLimit-Remaining") != fmt.Sprint(2-i) || a.header.Get("X-RateLimit-Reset") == "" {
				t.Fatalf("request %d: %s %v", i+1, a, a.header)
			}
		}
		a := s.v2(t, "POST", "/v2/orders", s.server, "", s.orderBody("DH-RL-3", 1000, ""))
		wantV2Error(t, "past the burst", a, 429, "rate_limited", "")
		if a.header.Get("Retry-After") == "" || a.header.Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("the 429's headers: %v", a.header)
		}
		db := dbtest.OpenURL(t, s.dbURL)
		if _, n, err := db.Orders(context.Background(), recon.LiveTenant(s.companyID), recon.OrderFilter{Page: 1, PerPage: 10}); err != nil || n != 3 {
			t.Errorf("%d orders after the refused request, want 3 (%v)", n, err)
		}
	})
}

// wantBusinessDate holds an IPN's transaction_date to a moment from since
// to now, written in the business time zone loc as every IPN date is
// (docs/api-v2.md, Notifications). A date in another zone is hours off.
func wantBusinessDate(t testing.TB, what string, date any, since time.Time, loc *time.Location) {
	t.Helper()
	at, err := time.ParseInLocation("2006-01-02 15:04:05", fmt.Sprint(date), loc)
	if now := time.Now(); err != nil || at.Before(since) || at.After(now) {
		t.Errorf("%s transaction_date %v is not a moment from %s to %s in the business time zone (%s)",
			what, date, since.In(loc).Format("15:04:05"), now.In(loc).Format("15:04:05"), loc)
	}
}

// TestV2E2ELastVNDFromTwoNodes: two `recon serve` on one PostgreSQL, many
// refund requests of one order with different keys at the same moment,
// each for more than half of it: exactly one is made, every other is 422
// amount_exceeds_refundable, and the order's refunded amount is that one's.
func TestV2E2ELastVNDFromTwoNodes(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "postgres")
	base1, _, _ := startServer(t, dbURL)
	base2, _, _ := startServer(t, dbURL)
	s := newV2Shop(t, base1, dbURL, false)
	id, _ := s.paidOrder(t, "DH-LAST", 100000)

	const perNode = 6
	start := make(chan struct{})
	answers := make(chan v2Answer, 2*perNode)
	var wg sync.WaitGroup
	for n, base := range []string{base1, base2} {
		for i := range perNode {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				answers <- v2Call(t, "POST", base+"/v2/orders/"+id+"/refund", s.server, fmt.Sprintf("last-%d-%d", n, i), `{"amount":60000,"reason":"x",`+receiverJSON+`}`)
			}()
		}
	}
	close(start)
	wg.Wait()
	close(answers)
	made := 0
	for a := range answers {
		switch {
		case a.status == 201:
			made++
		case a.status == 422 && a.body["error_code"] == "amount_exceeds_refundable":
		default:
			t.Errorf("an answer neither the refund nor amount_exceeds_refundable: %s", a)
		}
	}
	if made != 1 {
		t.Fatalf("%d refunds of 60 000 made of an order of 100 000, want 1", made)
	}
	if got := s.getOrder(t, id); got["refunded_amount"] != 60000.0 {
		t.Errorf("the order holds %v refunded, want 60000", got["refunded_amount"])
	}
	if a := s.v2(t, "GET", "/v2/refunds?order_id="+id, s.server, "", ""); a.body["meta"].(map[string]any)["total"] != 1.0 {
		t.Errorf("refunds of the order: %s", a)
	}
}

// TestV2E2EExceptionResolvedAsRefund: money sent to an expired or cancelled
// account (va_inactive) goes back: a person resolves the exception as a
// refund with a receiver (POST /api/v1/exceptions/{id}/resolve), which
// makes a refund of the whole transfer, requested by that person, the note
// its reason, readable in API v2; the transfer sent with its reference
// settles it.
func TestV2E2EExceptionResolvedAsRefund(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		s := startV2Shop(t, engine, false)
		o := s.order(t, "", s.orderBody("DH-EXC", 45000, ""))
		number := va(o)["va_number"].(string)
		if a := s.v2(t, "POST", "/v2/orders/"+o["id"].(string)+"/cancel", s.server, "", ""); a.status != 200 {
			t.Fatalf("cancel: %s", a)
		}
		tx := s.push(t, transfer{in: 45000, memo: "ck " + number})[0]
		if l := s.exceptionsOf(t, "va_inactive"); len(l) != 1 {
			t.Fatalf("va_inactive: %v", l)
		}
		a := s.v2(t, "POST", fmt.Sprintf("/api/v1/exceptions/%d/resolve", tx), s.adminA, "",
			`{"action":"refund","note":"đơn đã huỷ, trả lại khách",`+receiverJSON+`}`)
		id, _ := a.data()["refund_id"].(string)
		if a.status != 200 || id == "" {
			t.Fatalf("resolve as a refund: %s", a)
		}
		a = s.v2(t, "GET", "/v2/refunds/"+id, s.server, "", "")
		r := a.data()
		if a.status != 200 || r["amount"] != 45000.0 || r["transaction_id"] != float64(tx) || r["status"] != "pending" ||
			r["reason"] != "đơn đã huỷ, trả lại khách" || r["requested_by"].(map[string]any)["email"] != "a@saomai.vn" {
			t.Fatalf("the resolution's refund: %s", a)
		}
		s.push(t, transfer{out: 45000, memo: "IBFT " + r["reference"].(string)})
		if a := s.v2(t, "GET", "/v2/refunds/"+id, s.server, "", ""); a.data()["status"] != "succeeded" {
			t.Errorf("after its transfer: %s", a)
		}
		wantV2Error(t, "the same transfer refunded again", s.refund(t, s.server, fmt.Sprintf("/v2/transactions/%d/refund", tx), "exc-again", `{"reason":"x",`+receiverJSON+`}`),
			422, "already_refunded", "")
	})
}
