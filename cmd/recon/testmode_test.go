package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// The cross-mode test (issue 9, docs/design.md, D10): one company, live and
// test credentials of every kind, the same data in both modes (bank
// accounts with the same number, orders with the same invoice numbers and
// payment codes), then every /api/v1 and gateway /v1 route tried with each
// mode's credentials against the other mode's ids and data.

// allScopes are the scopes the cross-mode test's clients hold.
const allScopes = "company transaction:read transaction:write bank-account:read delivery:read delivery:write exception:write"

// The orders each mode has. INV-1 and INV-2 exist in both modes with the
// same payment code (checkout draws codes at random, so these are written
// with CreateOrder, the store call checkout makes); ONLY-LIVE and ONLY-TEST
// exist in one mode each.
const (
	sharedCode1 = "DH12345678"
	sharedCode2 = "DH22222222"
)

// side is one mode of the company: its credentials and the ids of its data.
type side struct {
	name         string // "live" or "test"
	live         bool
	tenant       recon.TenantID // the mode's rows
	admin        string         // bearer token of the Admin user (allScopes)
	feed         string         // client-credentials token (transaction:write)
	clientID     string
	clientSecret string
	merchantID   string
	merchantKey  string
	account      int64 // its bank account: the same number in both modes
	amount1      int64 // INV-1's amount: differs between the modes
	amount2      int64 // INV-2's
	only         string
	signing      string // the IPN signing secret, when set through the CLI
	// Counts of what the mode holds, kept up to date by the cases that add.
	transactions int64
	orders       int64
	hub          *hubSide // the mode's hub data (testmode_hub_test.go), made on first use
}

// modeData is a company with both modes set up on a running server.
type modeData struct {
	base, dbURL string
	company     int64
	db          *sqlstore.DB
	live, test  *side
	day         time.Time // the business day of the pushed transactions
}

// cross calls fn(me, other) in both directions.
func (md *modeData) cross(fn func(me, other *side)) {
	fn(md.live, md.test)
	fn(md.test, md.live)
}

func (s *side) basic(r *http.Request) { r.SetBasicAuth(s.merchantID, s.merchantKey) }

// api calls /api/v1 with the side's Admin token.
func (md *modeData) api(t testing.TB, s *side, method, path, body string) (int, map[string]any) {
	t.Helper()
	return testkit.Call(t, method, md.base+path, s.admin, body)
}

// gw calls a gateway route with the side's merchant credentials.
func (md *modeData) gw(t testing.TB, s *side, method, path, body string) (int, map[string]any) {
	t.Helper()
	status, raw := testkit.Do(t, method, md.base+path, s.basic, "application/json", body)
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s as %s: %d, not JSON: %q", method, path, s.name, status, raw)
	}
	return status, v
}

// order returns the side's order as GET /v1/order/detail shows it.
func (md *modeData) order(t testing.TB, s *side, invoice string) map[string]any {
	t.Helper()
	status, body := md.gw(t, s, "GET", "/v1/order/detail/"+invoice, "")
	if status != 200 {
		t.Fatalf("%s order %s: %d %v", s.name, invoice, status, body)
	}
	return body["data"].(map[string]any)
}

// pushUnmatched pushes, in each mode, a transfer whose code names no order
// (an exception), and returns each mode's transaction id.
func (md *modeData) pushUnmatched(t *testing.T, ref string) map[*side]int64 {
	t.Helper()
	ids := map[*side]int64{}
	for _, s := range []*side{md.live, md.test} {
		status, body := testkit.Call(t, "POST", md.base+"/api/v1/transactions", s.feed, fmt.Sprintf(`{"transactions":[
			{"bank_account_id":%d,"transaction_date":"%s 11:00:00","amount_in":7000,"transaction_content":"chuyen tien DH99999999 %s","reference_number":%q}]}`,
			s.account, md.day.Format(recon.DateLayout), ref, ref)) // the reference in the memo: not a possible duplicate of the one before
		if status != 200 {
			t.Fatalf("%s push: %d %v", s.name, status, body)
		}
		ids[s] = int64(body["data"].([]any)[0].(map[string]any)["id"].(float64))
		s.transactions++
	}
	return ids
}

// listTotal returns the pagination total of GET /api/v1/transactions for s.
func (md *modeData) transactionTotal(t testing.TB, s *side) int64 {
	t.Helper()
	status, body := md.api(t, s, "GET", "/api/v1/transactions?limit=1", "")
	if status != 200 {
		t.Fatalf("%s transactions: %d %v", s.name, status, body)
	}
	return int64(body["meta"].(map[string]any)["pagination"].(map[string]any)["total"].(float64))
}

// deliveryIDs returns the ids of the tenant's deliveries, from the store.
func (md *modeData) deliveryIDs(t testing.TB, s *side) []int64 {
	t.Helper()
	ds, err := md.db.Deliveries(context.Background(), s.tenant, recon.DeliveryFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}

// checkoutBody signs a checkout form for the side's merchant with key.
func checkoutBody(merchantID, key, invoice string, amount int64) string {
	return checkoutForm(key, [][2]string{
		{"merchant", merchantID}, {"operation", "PURCHASE"}, {"payment_method", "BANK_TRANSFER"},
		{"order_invoice_number", invoice}, {"order_amount", fmt.Sprint(amount)}, {"currency", "VND"},
		{"order_description", "Thanh toán đơn hàng " + invoice}, {"customer_id", "KH001"},
		{"success_url", "https://shop.example.vn/ok"}, {"error_url", "https://shop.example.vn/err"}, {"cancel_url", "https://shop.example.vn/cancel"},
	})
}

// setupModes makes, on the running server at base, a company with an Admin,
// a DH format, and in each mode: an OAuth2 client, an Admin token and a
// client-credentials token, merchant credentials, a bank account with the
// same number, and orders INV-1 and INV-2 with the same payment codes. With
// ipn, each mode's IPN URL is set through PUT /v1/ipn, on a host under
// .invalid, which never resolves (a production server refuses loopback
// targets, and the dispatcher must not reach a real host).
func setupModes(t *testing.T, base, dbURL string, ipn bool) *modeData {
	t.Helper()
	ctx := context.Background()
	md := &modeData{base: base, dbURL: dbURL, db: dbtest.OpenURL(t, dbURL)}
	md.live = &side{name: "live", live: true, amount1: 150000, amount2: 120000, only: "ONLY-LIVE"}
	md.test = &side{name: "test", live: false, amount1: 99000, amount2: 88000, only: "ONLY-TEST"}
	co := cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty TNHH Hai Chế Độ", "--short-name", "HAICHEDO")
	company := fmt.Sprint(co["id"])
	md.company = int64(co["id"].(float64))
	cliJSON(t, dbURL, "user", "create", "--company", company, "--email", "admin@haichedo.vn", "--role", "Admin")
	hcm, err := time.LoadLocation("Asia/Ho_Chi_Minh")
	if err != nil {
		t.Fatal(err)
	}
	md.day = time.Now().In(hcm).AddDate(0, 0, -1)

	for _, s := range []*side{md.live, md.test} {
		flag := []string{}
		if !s.live {
			flag = []string{"--test"}
		}
		cl := cliJSON(t, dbURL, append([]string{"client", "create", "--company", company, "--name", "erp " + s.name, "--scopes", allScopes}, flag...)...)
		s.clientID, s.clientSecret = cl["client_id"].(string), cl["client_secret"].(string)
		if isTest := strings.HasPrefix(s.clientID, "test_") && strings.HasPrefix(s.clientSecret, "test_"); isTest == s.live || cl["livemode"] != s.live {
			t.Fatalf("%s client: %v", s.name, cl)
		}
		s.admin = cliJSON(t, dbURL, "token", "issue", "--client", s.clientID, "--user", "admin@haichedo.vn", "--scopes", allScopes)["access_token"].(string)
		// Client credentials at the token endpoint, as a bank feed gets them.
		form := url.Values{"grant_type": {"client_credentials"}, "scope": {"transaction:write"}}
		status, raw := testkit.Do(t, "POST", base+"/oauth/token", func(r *http.Request) { r.SetBasicAuth(s.clientID, s.clientSecret) },
			"application/x-www-form-urlencoded", form.Encode())
		var tr map[string]any
		if json.Unmarshal(raw, &tr); status != 200 || tr["access_token"] == nil {
			t.Fatalf("%s client credentials: %d %s", s.name, status, raw)
		}
		s.feed = tr["access_token"].(string)
		mc := cliJSON(t, dbURL, append([]string{"merchant", "credentials", "--company", company}, flag...)...)
		s.merchantID, s.merchantKey = mc["merchant_id"].(string), mc["secret_key"].(string)
		if isTest := strings.HasPrefix(s.merchantID, "TEST-") && strings.HasPrefix(s.merchantKey, "test_"); isTest == s.live {
			t.Fatalf("%s merchant credentials: %v", s.name, mc)
		}
		ba := cliJSON(t, dbURL, append([]string{"bank-account", "create", "--company", company, "--bank", "Vietcombank", "--number", "0071000123456", "--holder", "CONG TY HAI CHE DO"}, flag...)...)
		s.account = int64(ba["id"].(float64))
		tenant, err := md.db.TenantOf(ctx, md.company, s.live)
		if err != nil {
			t.Fatal(err)
		}
		s.tenant = tenant.ID
	}
	if md.live.tenant.ID() != md.company || md.test.tenant.ID() == md.company || md.live.account == md.test.account {
		t.Fatalf("tenants %d/%d, accounts %d/%d", md.live.tenant.ID(), md.test.tenant.ID(), md.live.account, md.test.account)
	}
	// The formats are the company's: set with a live credential, refused
	// with a test one (company settings PATCH case below).
	if status, body := md.api(t, md.live, "PATCH", "/api/v1/company/configurations",
		`{"payment_code_formats":[{"prefix":"DH","suffix_from":6,"suffix_to":10,"character_type":"NumberOnly","is_active":1}]}`); status != 200 {
		t.Fatalf("formats: %d %v", status, body)
	}

	for _, s := range []*side{md.live, md.test} {
		for _, o := range []*recon.Order{
			{InvoiceNumber: "INV-1", Amount: s.amount1, PaymentCode: sharedCode1},
			{InvoiceNumber: "INV-2", Amount: s.amount2, PaymentCode: sharedCode2},
			{InvoiceNumber: s.only, Amount: 10000, PaymentCode: map[bool]string{true: "DH30000001", false: "DH30000002"}[s.live]},
		} {
			o.CompanyID, o.BankAccountID, o.CustomerID, o.Description = s.tenant.ID(), s.account, "KH001", "Đơn "+o.InvoiceNumber
			if err := md.db.CreateOrder(ctx, o); err != nil {
				t.Fatalf("%s order %s: %v", s.name, o.InvoiceNumber, err)
			}
			s.orders++
		}
		if ipn {
			if status, body := md.gw(t, s, "PUT", "/v1/ipn", fmt.Sprintf(`{"ipn_url":"https://%s.shop.invalid/ipn","auth_type":"SECRET_KEY"}`, s.name)); status != 200 {
				t.Fatalf("%s PUT /v1/ipn: %d %v", s.name, status, body)
			}
		}
	}
	return md
}

// addTransactions gives each mode transactions of every way in: a bank-feed
// push with a balance discontinuity, a statement upload (live has one row
// more, so that counts tell the modes apart) and the transfer that pays the
// mode's INV-1: a sandbox transfer in test mode, a pushed one in live mode.
func (md *modeData) addTransactions(t *testing.T) {
	t.Helper()
	day := md.day.Format(recon.DateLayout)
	for _, s := range []*side{md.live, md.test} {
		push := fmt.Sprintf(`{"transactions":[
			{"bank_account_id":%[1]d,"transaction_date":"%[2]s 09:00:00","amount_in":100000,"transaction_content":"tien hang","reference_number":"FT-A","accumulated":100000},
			{"bank_account_id":%[1]d,"transaction_date":"%[2]s 09:05:00","amount_in":50000,"transaction_content":"tien hang","reference_number":"FT-B","accumulated":999999}]}`,
			s.account, day)
		if status, body := testkit.Call(t, "POST", md.base+"/api/v1/transactions", s.feed, push); status != 200 {
			t.Fatalf("%s push: %d %v", s.name, status, body)
		}
		s.transactions += 2
		csv := "transaction_date,amount_in,transaction_content,reference_number\n" +
			day + ",20000,phi dich vu,ST-1\n" + day + ",30000,phi dich vu,ST-2\n"
		rows := int64(2)
		if s.live {
			csv += day + ",40000,phi dich vu,ST-3\n"
			rows++
		}
		status, raw := testkit.Do(t, "POST", fmt.Sprintf("%s/api/v1/bank-accounts/%d/statements?format=csv", md.base, s.account), testkit.Bearer(s.feed), "text/csv", csv)
		if status != 200 {
			t.Fatalf("%s statement: %d %s", s.name, status, raw)
		}
		s.transactions += rows
	}
	// The test transfer pays the test INV-1 only.
	status, body := testkit.Call(t, "POST", md.base+"/api/v1/sandbox/transfers", md.test.feed,
		fmt.Sprintf(`{"bank_account_id":%d,"amount":%d,"transaction_content":"NGUYEN VAN A chuyen tien %s"}`, md.test.account, md.test.amount1, sharedCode1))
	if status != 200 || body["data"].(map[string]any)["livemode"] != false {
		t.Fatalf("test transfer: %d %v", status, body)
	}
	md.test.transactions++
	if o := md.order(t, md.test, "INV-1"); o["order_status"] != recon.OrderCaptured {
		t.Fatalf("test INV-1 after the test transfer: %v", o)
	}
	if o := md.order(t, md.live, "INV-1"); o["order_status"] != recon.OrderAwaitingPayment || o["payment"].(map[string]any)["paid_amount"] != "0.00" {
		t.Fatalf("a test transfer touched the live INV-1: %v", o)
	}
	// The live transfer (a bank feed: no sandbox in production) pays the live INV-1 only.
	if status, body := testkit.Call(t, "POST", md.base+"/api/v1/transactions", md.live.feed, fmt.Sprintf(`{"transactions":[
		{"bank_account_id":%d,"transaction_date":"%s 10:00:00","amount_in":%d,"transaction_content":"TRAN THI B chuyen tien %s","reference_number":"FT-PAY"}]}`,
		md.live.account, day, md.live.amount1, sharedCode1)); status != 200 {
		t.Fatalf("live transfer: %d %v", status, body)
	}
	md.live.transactions++
	if o := md.order(t, md.live, "INV-1"); o["order_status"] != recon.OrderCaptured || o["payment"].(map[string]any)["paid_amount"] != "150000.00" {
		t.Fatalf("live INV-1 after the live transfer: %v", o)
	}
	if o := md.order(t, md.test, "INV-1"); o["payment"].(map[string]any)["paid_amount"] != "99000.00" || len(o["match_decisions"].([]any)) != 1 {
		t.Fatalf("a live transfer touched the test INV-1: %v", o)
	}
}

// ownTransaction returns the id of one of the side's transactions.
func (md *modeData) ownTransaction(t testing.TB, s *side) int64 {
	t.Helper()
	status, body := md.api(t, s, "GET", "/api/v1/transactions?limit=1", "")
	if status != 200 || len(body["data"].([]any)) != 1 {
		t.Fatalf("%s transactions: %d %v", s.name, status, body)
	}
	return int64(body["data"].([]any)[0].(map[string]any)["id"].(float64))
}

// importStatement uploads a one-row statement into the side's account
// (counted in its transactions) and returns the import's id.
func (md *modeData) importStatement(t testing.TB, s *side) int64 {
	t.Helper()
	s.transactions++
	csv := "transaction_date,amount_in,transaction_content,reference_number\n" +
		md.day.Format(recon.DateLayout) + fmt.Sprintf(",%d,sao ke %s %d,PROOF-%s-%d\n", 7000+s.transactions, s.name, s.transactions, s.name, s.transactions)
	status, raw := testkit.Do(t, "POST", fmt.Sprintf("%s/api/v1/bank-accounts/%d/statements", md.base, s.account), testkit.Bearer(s.feed), "text/csv", csv)
	var body struct {
		Data struct {
			ImportID int64 `json:"import_id"`
			Imported int   `json:"imported"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); status != 200 || err != nil || body.Data.Imported != 1 || body.Data.ImportID == 0 {
		t.Fatalf("%s's statement upload: %d %s", s.name, status, raw)
	}
	return body.Data.ImportID
}

// ownDelivery returns the id of one of the side's deliveries.
func (md *modeData) ownDelivery(t testing.TB, s *side) int64 {
	t.Helper()
	ids := md.deliveryIDs(t, s)
	if len(ids) == 0 {
		t.Fatalf("%s has no delivery", s.name)
	}
	return ids[0]
}

// crossModeCases holds, for every /api/v1 and gateway /v1 route, what it
// must do with one mode's credentials against both modes' data. Each case
// runs in both directions (md.cross); the test fails for a route without a
// case, so a new route cannot skip the check.
var crossModeCases = map[string]func(t *testing.T, md *modeData){
	"GET /api/v1/company": func(t *testing.T, md *modeData) {
		md.cross(func(me, _ *side) {
			status, body := md.api(t, me, "GET", "/api/v1/company", "")
			d, _ := body["data"].(map[string]any)
			if status != 200 || d["id"] != float64(md.company) || d["livemode"] != me.live || d["short_name"] != "HAICHEDO" {
				t.Errorf("GET company as %s: %d %v", me.name, status, body)
			}
		})
	},
	"PATCH /api/v1/company": func(t *testing.T, md *modeData) {
		// The seller's legal details are the company's, shared by both
		// modes (docs/api.md, Company API): a test credential may not change them.
		const seller = `{"legal_name":"Công ty TNHH Hải Chè Đỗ","tax_code":"0100112437","address":"12 Lý Thường Kiệt, Hà Nội"}`
		if status, body := md.api(t, md.test, "PATCH", "/api/v1/company", seller); status != 403 || body["error"] != "forbidden" {
			t.Errorf("PATCH with a test credential: %d %v, want 403", status, body)
		}
		if co, err := md.db.Company(context.Background(), md.company); err != nil || co.Config.Seller.TaxCode != "" {
			t.Errorf("the refused PATCH changed the seller: %+v %v", co, err)
		}
		if status, body := md.api(t, md.live, "PATCH", "/api/v1/company", seller); status != 200 {
			t.Errorf("PATCH with a live credential: %d %v", status, body)
		}
		md.cross(func(me, _ *side) {
			_, body := md.api(t, me, "GET", "/api/v1/company", "")
			if s, _ := body["data"].(map[string]any)["seller"].(map[string]any); s["tax_code"] != "0100112437" {
				t.Errorf("%s sees the seller %v, want the company's", me.name, body["data"])
			}
		})
	},
	"PATCH /api/v1/company/configurations": func(t *testing.T, md *modeData) {
		const formats = `{"payment_code_formats":[{"prefix":"DH","suffix_from":6,"suffix_to":10,"character_type":"NumberOnly","is_active":1},{"prefix":"TM","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":0}]}`
		// The settings are the company's, shared by both modes: a test credential may not change them.
		status, body := md.api(t, md.test, "PATCH", "/api/v1/company/configurations", formats)
		if status != 403 || body["error"] != "forbidden" {
			t.Errorf("PATCH with a test credential: %d %v, want 403", status, body)
		}
		co, err := md.db.Company(context.Background(), md.company)
		if err != nil || len(co.Config.PaymentCodeFormats) != 1 {
			t.Errorf("the refused PATCH changed the formats: %+v %v", co, err)
		}
		if status, body := md.api(t, md.live, "PATCH", "/api/v1/company/configurations", formats); status != 200 {
			t.Errorf("PATCH with a live credential: %d %v", status, body)
		}
		// Both modes see the company's formats.
		md.cross(func(me, _ *side) {
			_, body := md.api(t, me, "GET", "/api/v1/company", "")
			if n := len(body["data"].(map[string]any)["configurations"].(map[string]any)["payment_code_formats"].([]any)); n != 2 {
				t.Errorf("%s sees %d formats, want the company's 2", me.name, n)
			}
		})
	},
	"POST /api/v1/company/try-memo": func(t *testing.T, md *modeData) {
		// The formats are the company's: both modes try memos with them.
		md.cross(func(me, _ *side) {
			status, body := md.api(t, me, "POST", "/api/v1/company/try-memo", `{"memo":"chuyen tien `+sharedCode1+`"}`)
			if status != 200 || body["data"].(map[string]any)["code"] != sharedCode1 {
				t.Errorf("%s try-memo: %d %v", me.name, status, body)
			}
		})
	},
	"GET /api/v1/transactions": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			for _, q := range []string{"?limit=100", "?limit=100&account_number=0071000123456", "?limit=100&reference_number=ST-1",
				fmt.Sprintf("?limit=100&bank_account_id=%d", me.account)} {
				status, body := md.api(t, me, "GET", "/api/v1/transactions"+q, "")
				if status != 200 {
					t.Fatalf("%s transactions%s: %d %v", me.name, q, status, body)
				}
				want := me.transactions
				if strings.Contains(q, "reference_number") {
					want = 1
				}
				if total := body["meta"].(map[string]any)["pagination"].(map[string]any)["total"]; total != float64(want) || len(body["data"].([]any)) != int(want) {
					t.Errorf("%s transactions%s: total %v, %d rows, want %d", me.name, q, total, len(body["data"].([]any)), want)
				}
				for _, tx := range body["data"].([]any) {
					if tx := tx.(map[string]any); tx["bank_account_id"] != float64(me.account) || tx["livemode"] != me.live {
						t.Errorf("%s transactions%s lists %v", me.name, q, tx)
					}
				}
			}
			// The other mode's account id filters to nothing.
			status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/transactions?bank_account_id=%d", other.account), "")
			if status == 200 && body["meta"].(map[string]any)["pagination"].(map[string]any)["total"] != 0.0 || status >= 500 || status/100 == 3 {
				t.Errorf("%s filtering by %s's account: %d %v", me.name, other.name, status, body)
			}
			// Pages count this mode's rows only.
			_, body = md.api(t, me, "GET", "/api/v1/transactions?limit=2", "")
			if last := body["meta"].(map[string]any)["pagination"].(map[string]any)["last_page"]; last != float64((me.transactions+1)/2) {
				t.Errorf("%s last_page %v with %d transactions", me.name, last, me.transactions)
			}
		})
		if md.live.transactions == md.test.transactions {
			t.Fatal("the modes must hold different numbers of transactions for the counts to tell them apart")
		}
	},
	"POST /api/v1/transactions": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			before := md.transactionTotal(t, other)
			status, body := testkit.Call(t, "POST", md.base+"/api/v1/transactions", me.feed, fmt.Sprintf(`{"transactions":[
				{"bank_account_id":%d,"transaction_date":"%s 11:00:00","amount_in":1000,"transaction_content":"x","reference_number":"FT-CROSS"}]}`,
				other.account, md.day.Format(recon.DateLayout)))
			if status/100 != 4 {
				t.Errorf("%s pushing to %s's account: %d %v, want 4xx", me.name, other.name, status, body)
			}
			if after := md.transactionTotal(t, other); after != before || md.transactionTotal(t, me) != me.transactions {
				t.Errorf("%s pushing to %s's account changed the counts", me.name, other.name)
			}
		})
	},
	"GET /api/v1/transactions/{id}": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			id := md.ownTransaction(t, me)
			status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/transactions/%d", id), "")
			if status != 200 || body["data"].(map[string]any)["livemode"] != me.live {
				t.Errorf("%s own transaction: %d %v", me.name, status, body)
			}
			if status, body := md.api(t, other, "GET", fmt.Sprintf("/api/v1/transactions/%d", id), ""); status != 404 {
				t.Errorf("%s reads %s's transaction %d: %d %v, want 404", other.name, me.name, id, status, body)
			}
		})
	},
	"GET /api/v1/bank-accounts": func(t *testing.T, md *modeData) {
		md.cross(func(me, _ *side) {
			status, body := md.api(t, me, "GET", "/api/v1/bank-accounts", "")
			data, _ := body["data"].([]any)
			if status != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != float64(me.account) ||
				data[0].(map[string]any)["livemode"] != me.live || data[0].(map[string]any)["account_number"] != "0071000123456" {
				t.Errorf("%s bank accounts: %d %v", me.name, status, body)
			}
		})
	},
	"GET /api/v1/balance-discontinuities": func(t *testing.T, md *modeData) {
		md.cross(func(me, _ *side) {
			status, body := md.api(t, me, "GET", "/api/v1/balance-discontinuities", "")
			data, _ := body["data"].([]any)
			if status != 200 || len(data) != 1 || data[0].(map[string]any)["bank_account_id"] != float64(me.account) {
				t.Errorf("%s discontinuities: %d %v, want its own one", me.name, status, body)
			}
		})
	},
	"POST /api/v1/bank-accounts/{id}/statements": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			csv := "transaction_date,amount_in,transaction_content,reference_number\n" + md.day.Format(recon.DateLayout) + ",5000,x,ST-CROSS\n"
			status, raw := testkit.Do(t, "POST", fmt.Sprintf("%s/api/v1/bank-accounts/%d/statements", md.base, other.account), testkit.Bearer(me.feed), "text/csv", csv)
			if status != 404 {
				t.Errorf("%s uploads into %s's account: %d %s, want 404", me.name, other.name, status, raw)
			}
			if md.transactionTotal(t, other) != other.transactions || md.transactionTotal(t, me) != me.transactions {
				t.Errorf("%s's upload into %s's account changed the counts", me.name, other.name)
			}
		})
	},
	// Statement imports and their proofs (docs/statements.md, Balance
	// proof): each mode lists and proves its own account's imports only;
	// another mode's account, or its import under one's own account, is 404.
	"GET /api/v1/bank-accounts/{id}/statements": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			md.importStatement(t, me)
			if status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/bank-accounts/%d/statements", other.account), ""); status != 404 {
				t.Errorf("%s lists %s's statements: %d %v, want 404", me.name, other.name, status, body)
			}
			status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/bank-accounts/%d/statements", me.account), "")
			if data, _ := body["data"].([]any); status != 200 || len(data) == 0 {
				t.Errorf("%s lists its own statements: %d %v", me.name, status, body)
			}
		})
	},
	"GET /api/v1/bank-accounts/{id}/statements/{import}": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			mine, theirs := md.importStatement(t, me), md.importStatement(t, other)
			for _, path := range []string{
				fmt.Sprintf("/api/v1/bank-accounts/%d/statements/%d", other.account, theirs),
				fmt.Sprintf("/api/v1/bank-accounts/%d/statements/%d", me.account, theirs),
			} {
				if status, body := md.api(t, me, "GET", path, ""); status != 404 {
					t.Errorf("%s reads %s: %d %v, want 404", me.name, path, status, body)
				}
			}
			if status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/bank-accounts/%d/statements/%d", me.account, mine), ""); status != 200 {
				t.Errorf("%s reads its own proof: %d %v", me.name, status, body)
			}
		})
	},
	// A bank account's saved column mapping (docs/statements.md, Column
	// mappings): each mode reads, saves and clears its own account's only.
	"GET /api/v1/bank-accounts/{id}/statement-mapping": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			if status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", other.account), ""); status != 404 {
				t.Errorf("%s reads %s's mapping: %d %v, want 404", me.name, other.name, status, body)
			}
			if status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", me.account), ""); status != 200 {
				t.Errorf("%s reads its own mapping: %d %v", me.name, status, body)
			}
		})
	},
	"PUT /api/v1/bank-accounts/{id}/statement-mapping": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			m := `{"date":"Ngay GD ` + me.name + `","amount_in":"Co","content":"Dien giai"}`
			if status, body := md.api(t, me, "PUT", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", other.account), m); status != 404 {
				t.Errorf("%s saves %s's mapping: %d %v, want 404", me.name, other.name, status, body)
			}
			if status, body := md.api(t, me, "PUT", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", me.account), m); status != 200 {
				t.Errorf("%s saves its own mapping: %d %v", me.name, status, body)
			}
			_, body := md.api(t, other, "GET", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", other.account), "")
			if strings.Contains(fmt.Sprint(body), "Ngay GD "+me.name) {
				t.Errorf("%s's mapping reached %s's account: %v", me.name, other.name, body)
			}
		})
	},
	"DELETE /api/v1/bank-accounts/{id}/statement-mapping": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			m := `{"date":"Ngay","amount_in":"Co","content":"Dien giai"}`
			if status, body := md.api(t, other, "PUT", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", other.account), m); status != 200 {
				t.Fatalf("%s saves its mapping: %d %v", other.name, status, body)
			}
			if status, body := md.api(t, me, "DELETE", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", other.account), ""); status != 404 {
				t.Errorf("%s clears %s's mapping: %d %v, want 404", me.name, other.name, status, body)
			}
			if _, body := md.api(t, other, "GET", fmt.Sprintf("/api/v1/bank-accounts/%d/statement-mapping", other.account), ""); !strings.Contains(fmt.Sprint(body), "Dien giai") {
				t.Errorf("%s's mapping after %s's DELETE: %v", other.name, me.name, body)
			}
		})
	},
	"GET /api/v1/reconciliation": func(t *testing.T, md *modeData) {
		q := fmt.Sprintf("?from_date=%s&to_date=%s", md.day.AddDate(0, 0, -2).Format(recon.DateLayout), md.day.AddDate(0, 0, 2).Format(recon.DateLayout))
		md.cross(func(me, _ *side) {
			status, body := md.api(t, me, "GET", "/api/v1/reconciliation"+q, "")
			if status != 200 {
				t.Fatalf("%s report: %d %v", me.name, status, body)
			}
			d := body["data"].(map[string]any)
			var n float64
			for _, s := range d["summary"].(map[string]any) {
				n += s.(map[string]any)["count"].(float64)
			}
			captured, _ := d["summary"].(map[string]any)[recon.MatchCaptured].(map[string]any)
			if n != float64(me.transactions) || captured == nil || captured["count"] != 1.0 || captured["amount"] != float64(me.amount1) {
				t.Errorf("%s report counts %v transactions (want %d): %v", me.name, n, me.transactions, d["summary"])
			}
			for _, u := range d["unmatched"].([]any) {
				if u := u.(map[string]any); u["bank_account_id"] != float64(me.account) || u["livemode"] != me.live {
					t.Errorf("%s report lists %v", me.name, u)
				}
			}
		})
	},
	"GET /api/v1/deliveries": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			status, body := md.api(t, me, "GET", "/api/v1/deliveries?limit=100", "")
			if status != 200 {
				t.Fatalf("%s deliveries: %d %v", me.name, status, body)
			}
			var got []int64
			for _, d := range body["data"].([]any) {
				d := d.(map[string]any)
				got = append(got, int64(d["id"].(float64)))
				if d["livemode"] != me.live {
					t.Errorf("%s delivery %v", me.name, d)
				}
			}
			want := md.deliveryIDs(t, me)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("%s lists deliveries %v, its tenant holds %v", me.name, got, want)
			}
			for _, id := range md.deliveryIDs(t, other) {
				if slices.Contains(got, id) {
					t.Errorf("%s lists %s's delivery %d", me.name, other.name, id)
				}
			}
		})
	},
	"GET /api/v1/exceptions": func(t *testing.T, md *modeData) {
		ids := md.pushUnmatched(t, "EXC-LIST")
		md.cross(func(me, other *side) {
			status, body := md.api(t, me, "GET", "/api/v1/exceptions?limit=100", "")
			if status != 200 {
				t.Fatalf("%s exceptions: %d %v", me.name, status, body)
			}
			var got []int64
			for _, e := range body["data"].([]any) {
				e := e.(map[string]any)
				got = append(got, int64(e["transaction_id"].(float64)))
				if e["livemode"] != me.live || e["transaction"].(map[string]any)["livemode"] != me.live {
					t.Errorf("%s exception %v", me.name, e)
				}
			}
			if !slices.Contains(got, ids[me]) || slices.Contains(got, ids[other]) {
				t.Errorf("%s lists %v (its own %d, %s's %d)", me.name, got, ids[me], other.name, ids[other])
			}
			if status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/exceptions?after=%d", ids[other]), ""); status != 400 {
				t.Errorf("%s pages from %s's exception: %d %v, want 400", me.name, other.name, status, body)
			}
		})
	},
	"GET /api/v1/exceptions/{id}": func(t *testing.T, md *modeData) {
		ids := md.pushUnmatched(t, "EXC-SHOW")
		md.cross(func(me, other *side) {
			if status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/exceptions/%d", ids[me]), ""); status != 200 || body["data"].(map[string]any)["livemode"] != me.live {
				t.Errorf("%s reads its exception: %d %v", me.name, status, body)
			}
			if status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/exceptions/%d", ids[other]), ""); status != 404 {
				t.Errorf("%s reads %s's exception: %d %v, want 404", me.name, other.name, status, body)
			}
		})
	},
	"POST /api/v1/exceptions/{id}/resolve": func(t *testing.T, md *modeData) {
		ids := md.pushUnmatched(t, "EXC-RESOLVE")
		md.cross(func(me, other *side) {
			path := func(id int64) string { return fmt.Sprintf("/api/v1/exceptions/%d/resolve", id) }
			before, err := md.db.Exception(t.Context(), other.tenant, ids[other])
			if err != nil {
				t.Fatal(err)
			}
			if status, body := md.api(t, me, "POST", path(ids[other]), `{"action":"ignore","note":"not mine"}`); status != 404 {
				t.Errorf("%s resolves %s's exception: %d %v, want 404", me.name, other.name, status, body)
			}
			if e, err := md.db.Exception(t.Context(), other.tenant, ids[other]); err != nil || fmt.Sprint(e.Resolution) != fmt.Sprint(before.Resolution) {
				t.Errorf("%s's exception after %s's attempt: %+v %v", other.name, me.name, e, err)
			}
			theirs, err := md.db.Order(t.Context(), other.tenant, other.only)
			if err != nil {
				t.Fatal(err)
			}
			if status, body := md.api(t, me, "POST", path(ids[me]), fmt.Sprintf(`{"action":"match","order_id":%d,"note":"wrong mode"}`, theirs.ID)); status != 404 {
				t.Errorf("%s matches to %s's order %d: %d %v, want 404", me.name, other.name, theirs.ID, status, body)
			}
			if now, _ := md.db.Order(t.Context(), other.tenant, other.only); now.Status != theirs.Status || now.PaidAmount != theirs.PaidAmount {
				t.Errorf("%s's %s changed: %+v", other.name, other.only, now)
			}
			if status, body := md.api(t, me, "POST", path(ids[me]), `{"action":"ignore","note":"mine"}`); status != 200 || body["data"].(map[string]any)["livemode"] != me.live {
				t.Errorf("%s resolves its exception: %d %v", me.name, status, body)
			}
		})
	},
	"GET /api/v1/exceptions/totals": func(t *testing.T, md *modeData) {
		count := func(s *side) float64 {
			status, body := md.api(t, s, "GET", "/api/v1/exceptions/totals", "")
			d, _ := body["data"].(map[string]any)
			if status != 200 || d["livemode"] != s.live {
				t.Fatalf("%s totals: %d %v", s.name, status, body)
			}
			n, _ := d["count"].(float64)
			return n
		}
		before := map[*side]float64{md.live: count(md.live), md.test: count(md.test)}
		md.pushUnmatched(t, "EXC-TOTALS") // one more in each mode
		md.cross(func(me, other *side) {
			if n := count(me); n != before[me]+1 {
				t.Errorf("%s counts %v open exceptions, want %v: its own, not %s's", me.name, n, before[me]+1, other.name)
			}
		})
	},
	"POST /api/v1/exceptions/resolve": func(t *testing.T, md *modeData) {
		ids := md.pushUnmatched(t, "EXC-BULK")
		md.cross(func(me, other *side) {
			body := fmt.Sprintf(`{"transaction_ids":[%d,%d],"action":"ignore","note":"several"}`, ids[me], ids[other])
			status, got := md.api(t, me, "POST", "/api/v1/exceptions/resolve", body)
			items, _ := got["data"].([]any)
			if status != 200 || len(items) != 2 || items[0].(map[string]any)["status"] != "resolved" || items[1].(map[string]any)["error"] != "not_found" {
				t.Errorf("%s resolves its own and %s's: %d %v", me.name, other.name, status, got)
			}
		})
	},
	"GET /api/v1/deliveries/{id}": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			id := md.ownDelivery(t, me)
			if status, body := md.api(t, me, "GET", fmt.Sprintf("/api/v1/deliveries/%d", id), ""); status != 200 || body["data"].(map[string]any)["livemode"] != me.live {
				t.Errorf("%s own delivery: %d %v", me.name, status, body)
			}
			if status, body := md.api(t, other, "GET", fmt.Sprintf("/api/v1/deliveries/%d", id), ""); status != 404 {
				t.Errorf("%s reads %s's delivery: %d %v, want 404", other.name, me.name, status, body)
			}
		})
	},
	"POST /api/v1/deliveries/{id}/replay": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			id := md.ownDelivery(t, me)
			before, err := md.db.Delivery(context.Background(), me.tenant, id)
			if err != nil {
				t.Fatal(err)
			}
			if status, body := md.api(t, other, "POST", fmt.Sprintf("/api/v1/deliveries/%d/replay", id), ""); status != 404 {
				t.Errorf("%s replays %s's delivery: %d %v, want 404", other.name, me.name, status, body)
			}
			after, err := md.db.Delivery(context.Background(), me.tenant, id)
			if err != nil || after.Attempts < before.Attempts || (after.Status == recon.DeliveryPending) != (before.Status == recon.DeliveryPending) {
				t.Errorf("the refused replay changed delivery %d: %+v → %+v (%v)", id, before, after, err)
			}
			if status, body := md.api(t, me, "POST", fmt.Sprintf("/api/v1/deliveries/%d/replay", id), ""); status != 200 || body["data"].(map[string]any)["livemode"] != me.live {
				t.Errorf("%s replays its own delivery: %d %v", me.name, status, body)
			}
		})
	},
	"POST /api/v1/deliveries/replay": func(t *testing.T, md *modeData) {
		// A dead delivery in each mode (the dispatcher leaves dead ones
		// alone): replaying one mode's failed ones leaves the other's dead.
		ctx := context.Background()
		dead := map[*side]*recon.Delivery{}
		for _, s := range []*side{md.live, md.test} {
			d := &recon.Delivery{CompanyID: s.tenant.ID(), Kind: recon.DeliveryIPN, Event: recon.IPNOrderPaid, Payload: []byte(`{}`)}
			if err := md.db.EnqueueDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
			if err := md.db.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: time.Now(),
				URL: "https://x.invalid", Error: "gave up"}, Status: recon.DeliveryDead}}); err != nil {
				t.Fatal(err)
			}
			dead[s] = d
		}
		md.cross(func(me, other *side) {
			since := dead[me].CreatedAt.Add(-time.Second).UTC().Format(time.RFC3339)
			status, body := md.api(t, me, "POST", "/api/v1/deliveries/replay", `{"since":"`+since+`","kind":"ipn"}`)
			if status != 200 || body["data"].(map[string]any)["replayed"].(float64) < 1 {
				t.Errorf("%s replays its failed deliveries: %d %v", me.name, status, body)
			}
			if d, err := md.db.Delivery(ctx, me.tenant, dead[me].ID); err != nil || d.Status == recon.DeliveryDead {
				t.Errorf("%s's dead delivery after its replay: %+v %v", me.name, d, err)
			}
			if me == md.live { // the first pass: the test mode's is still dead, and stays so
				if d, err := md.db.Delivery(ctx, other.tenant, dead[other].ID); err != nil || d.Status != recon.DeliveryDead {
					t.Errorf("%s's replay reached %s's dead delivery: %+v %v", me.name, other.name, d, err)
				}
			}
		})
	},
	"GET /api/v1/deliveries/stats": func(t *testing.T, md *modeData) {
		md.cross(func(me, _ *side) {
			status, body := md.api(t, me, "GET", "/api/v1/deliveries/stats?since=2000-01-01%2000:00:00", "")
			var total float64
			for _, k := range body["data"].([]any) {
				k := k.(map[string]any)
				total += k["delivered"].(float64) + k["pending"].(float64) + k["dead"].(float64)
			}
			if n := len(md.deliveryIDs(t, me)); status != 200 || total != float64(n) {
				t.Errorf("%s stats count %v deliveries, it has %d: %d %v", me.name, total, n, status, body)
			}
		})
	},
	"POST /api/v1/deliveries/test": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			theirs := md.deliveryIDs(t, other)
			status, body := md.api(t, me, "POST", "/api/v1/deliveries/test", `{"kind":"ipn"}`)
			if status != 201 || body["data"].(map[string]any)["livemode"] != me.live {
				t.Fatalf("%s test notification: %d %v", me.name, status, body)
			}
			id := int64(body["data"].(map[string]any)["id"].(float64))
			if !slices.Contains(md.deliveryIDs(t, me), id) || !slices.Equal(md.deliveryIDs(t, other), theirs) {
				t.Errorf("%s's test notification %d is not in its own outbox only", me.name, id)
			}
		})
	},
	"POST /api/v1/sandbox/transfers": func(t *testing.T, md *modeData) {
		// A production server: the test caller has simulated transfers, the live one does not.
		body := func(account int64) string {
			return fmt.Sprintf(`{"bank_account_id":%d,"amount":5000,"transaction_content":"chuyen tien %s"}`, account, sharedCode2)
		}
		if status, b := testkit.Call(t, "POST", md.base+"/api/v1/sandbox/transfers", md.live.feed, body(md.live.account)); status != 404 || b["error"] != "not_found" {
			t.Errorf("live sandbox transfer on a production server: %d %v, want 404", status, b)
		}
		if status, b := testkit.Call(t, "POST", md.base+"/api/v1/sandbox/transfers", md.test.feed, body(md.live.account)); status != 400 || !strings.Contains(fmt.Sprint(b), "bank_account_id") {
			t.Errorf("test sandbox transfer to the live account: %d %v, want 400 naming bank_account_id", status, b)
		}
		status, b := testkit.Call(t, "POST", md.base+"/api/v1/sandbox/transfers", md.test.feed, body(md.test.account))
		if status != 200 || b["data"].(map[string]any)["livemode"] != false || b["data"].(map[string]any)["code"] != sharedCode2 {
			t.Errorf("test sandbox transfer: %d %v", status, b)
		}
		md.test.transactions++
		// It paid (part of) the test INV-2 only.
		if o := md.order(t, md.test, "INV-2"); o["payment"].(map[string]any)["paid_amount"] != "5000.00" {
			t.Errorf("test INV-2 after a 5000 test transfer: %v", o["payment"])
		}
		if o := md.order(t, md.live, "INV-2"); o["payment"].(map[string]any)["paid_amount"] != "0.00" {
			t.Errorf("a test transfer paid the live INV-2: %v", o["payment"])
		}
		if md.transactionTotal(t, md.live) != md.live.transactions || md.transactionTotal(t, md.test) != md.test.transactions {
			t.Error("sandbox transfers changed the wrong mode's counts")
		}
	},
	"GET /v1/order": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			status, body := md.gw(t, me, "GET", "/v1/order?per_page=100", "")
			if status != 200 || body["meta"].(map[string]any)["total"] != float64(me.orders) {
				t.Fatalf("%s orders: %d %v, want %d", me.name, status, body, me.orders)
			}
			var invoices []string
			for _, o := range body["data"].([]any) {
				o := o.(map[string]any)
				invoices = append(invoices, o["order_invoice_number"].(string))
				if o["livemode"] != me.live {
					t.Errorf("%s order %v", me.name, o)
				}
			}
			if !slices.Contains(invoices, me.only) || slices.Contains(invoices, other.only) {
				t.Errorf("%s lists %v", me.name, invoices)
			}
			_, body = md.gw(t, me, "GET", "/v1/order?per_page=1", "")
			if body["meta"].(map[string]any)["page_count"] != float64(me.orders) {
				t.Errorf("%s page_count %v with %d orders", me.name, body["meta"], me.orders)
			}
		})
	},
	"GET /v1/order/detail/{invoice}": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			o := md.order(t, me, "INV-1")
			p := o["payment"].(map[string]any)
			if o["order_amount"] != recon.MoneyText(me.amount1) || o["livemode"] != me.live || p["code"] != sharedCode1 ||
				p["bank_account"].(map[string]any)["id"] != float64(me.account) {
				t.Errorf("%s INV-1: %v", me.name, o)
			}
			if status, body := md.gw(t, me, "GET", "/v1/order/detail/"+other.only, ""); status != 404 {
				t.Errorf("%s reads %s's %s: %d %v, want 404", me.name, other.name, other.only, status, body)
			}
		})
	},
	"POST /v1/order/cancel": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			theirs := md.order(t, other, "INV-2")
			if status, body := md.gw(t, me, "POST", "/v1/order/cancel", `{"order_invoice_number":"`+other.only+`"}`); status != 404 {
				t.Errorf("%s cancels %s's %s: %d %v, want 404", me.name, other.name, other.only, status, body)
			}
			// INV-2 may be partly paid in test mode (sandbox transfers case): cancel the unpaid one only.
			if md.order(t, me, "INV-2")["payment"].(map[string]any)["paid_amount"] == "0.00" {
				if status, body := md.gw(t, me, "POST", "/v1/order/cancel", `{"order_invoice_number":"INV-2"}`); status != 200 || body["data"].(map[string]any)["livemode"] != me.live {
					t.Errorf("%s cancels its INV-2: %d %v", me.name, status, body)
				}
				if md.order(t, me, "INV-2")["order_status"] != recon.OrderCancelled {
					t.Errorf("%s INV-2 not cancelled", me.name)
				}
			}
			if now := md.order(t, other, "INV-2"); now["order_status"] != theirs["order_status"] || now["updated_at"] != theirs["updated_at"] {
				t.Errorf("%s's cancel changed %s's INV-2: %v → %v", me.name, other.name, theirs, now)
			}
			if md.order(t, other, other.only)["order_status"] != recon.OrderAwaitingPayment {
				t.Errorf("%s's %s changed", other.name, other.only)
			}
		})
	},
	"POST /v1/order/voidTransaction": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			theirs := md.order(t, other, "INV-1")
			voids := func(s *side) int {
				ds, err := md.db.Deliveries(context.Background(), s.tenant, recon.DeliveryFilter{Limit: 500})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, d := range ds {
					if d.Event == recon.IPNTransactionVoid {
						n++
					}
				}
				return n
			}
			mine, others := voids(me), voids(other)
			if status, body := md.gw(t, me, "POST", "/v1/order/voidTransaction", `{"order_invoice_number":"`+other.only+`"}`); status != 404 {
				t.Errorf("%s voids %s's %s: %d %v, want 404", me.name, other.name, other.only, status, body)
			}
			if status, body := md.gw(t, me, "POST", "/v1/order/voidTransaction", `{"order_invoice_number":"INV-1"}`); status != 200 || body["data"].(map[string]any)["order_status"] != recon.OrderCancelled {
				t.Errorf("%s voids its INV-1: %d %v", me.name, status, body)
			}
			if now := md.order(t, other, "INV-1"); now["order_status"] != theirs["order_status"] || now["updated_at"] != theirs["updated_at"] {
				t.Errorf("%s's void changed %s's INV-1: %v → %v", me.name, other.name, theirs["order_status"], now["order_status"])
			}
			// TRANSACTION_VOID goes to the voiding mode's outbox only.
			if voids(me) != mine+1 || voids(other) != others {
				t.Errorf("after %s's void: %d/%d TRANSACTION_VOID, want %d/%d", me.name, voids(me), voids(other), mine+1, others)
			}
		})
	},
	"GET /v1/ipn": func(t *testing.T, md *modeData) {
		md.cross(func(me, _ *side) {
			status, body := md.gw(t, me, "GET", "/v1/ipn", "")
			if status != 200 || !strings.HasPrefix(fmt.Sprint(body["data"].(map[string]any)["ipn_url"]), "https://"+me.name+".shop.invalid/") {
				t.Errorf("%s GET /v1/ipn: %d %v", me.name, status, body)
			}
		})
	},
	// recon listen is test mode's alone; TestListen covers the stream itself.
	"GET /v1/listen": func(t *testing.T, md *modeData) {
		if status, body := md.gw(t, md.live, "GET", "/v1/listen", ""); status != 403 {
			t.Errorf("live GET /v1/listen: %d %v", status, body)
		}
		if status, body := md.gw(t, md.test, "GET", "/v1/listen?events=NOPE", ""); status != 400 {
			t.Errorf("test GET /v1/listen?events=NOPE: %d %v", status, body)
		}
	},
	"POST /v1/listen/answers": func(t *testing.T, md *modeData) {
		live, err := md.db.Deliveries(t.Context(), md.live.tenant, recon.DeliveryFilter{Limit: 1})
		if err != nil || len(live) == 0 {
			t.Fatalf("a live delivery: %v, %v", live, err)
		}
		answer := fmt.Sprintf(`{"delivery_id":%d,"listener_id":"l_x","status_code":200}`, live[0].ID)
		if status, body := md.gw(t, md.live, "POST", "/v1/listen/answers", answer); status != 403 {
			t.Errorf("live POST /v1/listen/answers: %d %v", status, body)
		}
		if status, body := md.gw(t, md.test, "POST", "/v1/listen/answers", answer); status != 404 {
			t.Errorf("test answer to live delivery %d: %d %v", live[0].ID, status, body)
		}
	},
	"PUT /v1/ipn": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			_, theirs := md.gw(t, other, "GET", "/v1/ipn", "")
			u := "https://" + me.name + ".shop.invalid/ipn-v2"
			if status, body := md.gw(t, me, "PUT", "/v1/ipn", `{"ipn_url":"`+u+`","auth_type":"NONE"}`); status != 200 || body["data"].(map[string]any)["ipn_url"] != u {
				t.Errorf("%s PUT /v1/ipn: %d %v", me.name, status, body)
			}
			if _, now := md.gw(t, other, "GET", "/v1/ipn", ""); fmt.Sprint(now) != fmt.Sprint(theirs) {
				t.Errorf("%s's PUT /v1/ipn changed %s's: %v → %v", me.name, other.name, theirs, now)
			}
		})
	},
	"POST /v1/checkout/init": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			invoice := "CO-" + me.name
			// My merchant id signed with the other mode's key: refused, nothing made.
			status, raw := testkit.Do(t, "POST", md.base+"/v1/checkout/init", nil, "application/x-www-form-urlencoded", checkoutBody(me.merchantID, other.merchantKey, invoice, 70000))
			if status != 400 || !strings.Contains(string(raw), "signature") {
				t.Errorf("%s checkout signed with %s's key: %d %s", me.name, other.name, status, raw)
			}
			status, raw = testkit.Do(t, "POST", md.base+"/v1/checkout/init", nil, "application/x-www-form-urlencoded", checkoutBody(me.merchantID, me.merchantKey, invoice, 70000))
			if status != http.StatusSeeOther {
				t.Fatalf("%s checkout: %d %s", me.name, status, raw)
			}
			me.orders++
			if o := md.order(t, me, invoice); o["livemode"] != me.live || o["payment"].(map[string]any)["bank_account"].(map[string]any)["id"] != float64(me.account) {
				t.Errorf("%s checkout made %v", me.name, o)
			}
			if status, _ := md.gw(t, other, "GET", "/v1/order/detail/"+invoice, ""); status != 404 {
				t.Errorf("%s's checkout order is visible to %s: %d", me.name, other.name, status)
			}
		})
	},
	"GET /v1/checkout/{merchant}/{invoice}": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			page := md.order(t, me, me.only)["payment"].(map[string]any)["checkout_url"].(string)
			status, raw := testkit.Do(t, "GET", md.base+page, nil, "", "")
			if status != 200 || !strings.Contains(string(raw), me.only) || strings.Contains(string(raw), `id="sandbox"`) == me.live {
				t.Errorf("%s's checkout page: %d (sandbox banner shown: %v)", me.name, status, strings.Contains(string(raw), `id="sandbox"`))
			}
			// The other mode's merchant in the path, my page token: no page.
			cross := strings.Replace(page, "/"+me.merchantID+"/", "/"+other.merchantID+"/", 1)
			if status, raw := testkit.Do(t, "GET", md.base+cross, nil, "", ""); status != 404 || strings.Contains(string(raw), me.only) {
				t.Errorf("%s's page under %s's merchant: %d", me.name, other.name, status)
			}
			// The shared invoice INV-1 under my page token shows my order, never the other's amount.
			inv1 := md.order(t, me, "INV-1")["payment"].(map[string]any)["checkout_url"].(string)
			_, raw = testkit.Do(t, "GET", md.base+inv1, nil, "", "")
			if !strings.Contains(string(raw), formatAmount(me.amount1)) || strings.Contains(string(raw), formatAmount(other.amount1)) {
				t.Errorf("%s's INV-1 page does not show its own amount %s", me.name, formatAmount(me.amount1))
			}
		})
	},
	"GET /v1/checkout/{merchant}/{invoice}/qr.png": func(t *testing.T, md *modeData) {
		md.cross(func(me, other *side) {
			page := md.order(t, me, me.only)["payment"].(map[string]any)["checkout_url"].(string)
			path, query, _ := strings.Cut(page, "?")
			if status, raw := testkit.Do(t, "GET", md.base+path+"/qr.png?"+query, nil, "", ""); status != 200 || !strings.HasPrefix(string(raw), "\x89PNG") {
				t.Errorf("%s's QR: %d", me.name, status)
			}
			cross := strings.Replace(path, "/"+me.merchantID+"/", "/"+other.merchantID+"/", 1)
			if status, _ := testkit.Do(t, "GET", md.base+cross+"/qr.png?"+query, nil, "", ""); status != 404 {
				t.Errorf("%s's QR under %s's merchant: %d, want 404", me.name, other.name, status)
			}
		})
	},
}

// formatAmount writes whole VND as the checkout page does (150.000).
func formatAmount(n int64) string {
	s := fmt.Sprint(n)
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, '.')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// TestEveryRouteKeepsTheModesApart is the route-by-route cross-mode test
// of issue 9 on a production server (no --sandbox), on both engines: every
// /api/v1 and gateway /v1 route the server registers must have a case in
// crossModeCases, and each case tries the route with each mode's
// credentials against the other mode's ids and data. Then `recon test-data
// wipe` from the command line: live data intact, test data gone, test
// credentials still working.
func TestEveryRouteKeepsTheModesApart(t *testing.T) {
	t.Parallel()
	// The routes the server serves, from the same server.New serve uses.
	db := dbtest.OpenStore(t, "sqlite")
	var patterns []string
	for _, p := range routePatterns(t, db, false) {
		if _, path, _ := strings.Cut(p, " "); strings.HasPrefix(path, "/api/v1/") || strings.HasPrefix(path, "/v1/") {
			patterns = append(patterns, p)
		}
	}
	slices.Sort(patterns)
	if len(patterns) < 20 {
		t.Fatalf("only %d tenant routes found: %v", len(patterns), patterns)
	}
	for _, p := range patterns {
		if crossModeCases[p] == nil {
			t.Errorf("route %q has no cross-mode case in crossModeCases", p)
		}
	}
	for p := range crossModeCases {
		if !slices.Contains(patterns, p) {
			t.Errorf("crossModeCases names %q, which the server does not serve", p)
		}
	}
	if t.Failed() {
		return
	}

	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL) // production mode
		md := setupModes(t, base, dbURL, true)
		md.addTransactions(t)
		for _, p := range patterns {
			t.Run(strings.NewReplacer("/", "_", " ", "_").Replace(p), func(t *testing.T) { crossModeCases[p](t, md) })
		}

		// recon test-data wipe, from outside while the server runs.
		liveDeliveries := md.deliveryIDs(t, md.live)
		res := cliJSON(t, dbURL, "test-data", "wipe", "--company", fmt.Sprint(md.company))
		if res["transactions"] != float64(md.test.transactions) || res["orders"] != float64(md.test.orders) || res["deliveries"].(float64) < 1 ||
			res["bank_accounts"] != 2.0 || res["hub_companies"] != 1.0 { // its own account and the one linked on the hub page
			t.Errorf("wipe deleted %v; the test mode held %d transactions and %d orders", res, md.test.transactions, md.test.orders)
		}
		if n := md.transactionTotal(t, md.live); n != md.live.transactions {
			t.Errorf("live transactions after the wipe: %d, want %d", n, md.live.transactions)
		}
		if _, body := md.gw(t, md.live, "GET", "/v1/order", ""); body["meta"].(map[string]any)["total"] != float64(md.live.orders) {
			t.Errorf("live orders after the wipe: %v", body["meta"])
		}
		if _, body := md.api(t, md.live, "GET", "/api/v1/bank-accounts", ""); len(body["data"].([]any)) != 1 {
			t.Errorf("live bank accounts after the wipe: %v", body)
		}
		if _, body := md.hubCall(t, md.live, "GET", "/v1/company", ""); listLen(body) != 1 {
			t.Errorf("live hub companies after the wipe: %v", body)
		}
		if _, body := md.hubCall(t, md.test, "GET", "/v1/company", ""); listLen(body) != 0 {
			t.Errorf("test hub companies after the wipe: %v", body)
		}
		if got := md.deliveryIDs(t, md.live); !slices.Equal(got, liveDeliveries) {
			t.Errorf("live deliveries after the wipe: %v, want %v", got, liveDeliveries)
		}
		// Test mode is empty, and its credentials and settings still work.
		if n := md.transactionTotal(t, md.test); n != 0 {
			t.Errorf("test transactions after the wipe: %d", n)
		}
		for _, path := range []string{"/api/v1/bank-accounts", "/api/v1/deliveries", "/api/v1/balance-discontinuities"} {
			if status, body := md.api(t, md.test, "GET", path, ""); status != 200 || len(body["data"].([]any)) != 0 {
				t.Errorf("test %s after the wipe: %d %v", path, status, body)
			}
		}
		if status, body := md.gw(t, md.test, "GET", "/v1/order", ""); status != 200 || body["meta"].(map[string]any)["total"] != 0.0 {
			t.Errorf("test orders after the wipe: %d %v", status, body)
		}
		if status, body := md.gw(t, md.test, "GET", "/v1/ipn", ""); status != 200 || body["data"] == nil {
			t.Errorf("test IPN settings after the wipe: %d %v", status, body)
		}
		if status, body := testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", md.test.feed, fmt.Sprintf(`{"bank_account_id":%d,"amount":1000}`, md.test.account)); status != 400 {
			t.Errorf("test feed token after the wipe: %d %v, want 400 (its account is gone)", status, body)
		}
		// A new test account works at once with the same credentials.
		ba := cliJSON(t, dbURL, "bank-account", "create", "--company", fmt.Sprint(md.company), "--test", "--bank", "MBBank", "--number", "190366886868")
		if status, body := testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", md.test.feed, fmt.Sprintf(`{"bank_account_id":%v,"amount":1000}`, ba["id"])); status != 200 {
			t.Errorf("test transfer after the wipe: %d %v", status, body)
		}
	})
}

// TestNotificationsStayInTheirMode: test notifications never go to the
// live IPN URL, live ones never to the test URL, and a test notification
// without a test IPN URL is held in the test outbox (for recon listen),
// never sent to the live URL. It runs on a --sandbox server: the two
// receivers are on loopback, which only --allow-private-targets reaches,
// and serve refuses that flag in production mode. The route-by-route
// test above covers the production server.
func TestNotificationsStayInTheirMode(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		liveRC, testRC := testkit.NewReceiver(t), testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		md := setupModes(t, base, dbURL, false)
		company := fmt.Sprint(md.company)
		setIPN := func(s *side, rc *testkit.Receiver) {
			args := []string{"ipn", "set", "--company", company, "--url", rc.URL + "/ipn-" + s.name, "--auth-type", "SECRET_KEY",
				"--secret", "secret-of-" + s.name, "--sandbox", "--allow-private-targets"}
			if !s.live {
				args = append(args, "--test")
			}
			s.signing = cliJSON(t, dbURL, args...)["signing_secret"].(string)
		}
		setIPN(md.live, liveRC)
		pay := func(s *side, amount int64, code string) {
			t.Helper()
			status, body := testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", s.feed,
				fmt.Sprintf(`{"bank_account_id":%d,"amount":%d,"transaction_content":"chuyen tien %s"}`, s.account, amount, code))
			if status != 200 || body["data"].(map[string]any)["livemode"] != s.live {
				t.Fatalf("%s transfer: %d %v", s.name, status, body)
			}
		}
		// The test mode has no IPN URL yet: its ORDER_PAID is held in the
		// test outbox for listeners, and the live URL never sees it.
		pay(md.test, md.test.amount1, sharedCode1)
		held, err := md.db.Deliveries(context.Background(), md.test.tenant, recon.DeliveryFilter{})
		if err != nil || len(held) != 1 || held[0].Event != recon.IPNOrderPaid || held[0].Status != recon.DeliveryPending ||
			held[0].NextAttemptAt.Before(time.Now().Add(recon.ListenerHold-time.Hour)) {
			t.Fatalf("held test notification: %+v %v", held, err)
		}
		setIPN(md.test, testRC)
		pay(md.test, md.test.amount2, sharedCode2)
		pay(md.live, md.live.amount1, sharedCode1)
		pay(md.live, md.live.amount2, sharedCode2)
		for _, s := range []*side{md.test, md.live} {
			md.gw(t, s, "POST", "/v1/order/voidTransaction", `{"order_invoice_number":"INV-1"}`)
		}
		// Wait until every notification due is delivered: then what the
		// receivers hold is all they will ever get.
		testkit.WaitFor(t, "the notifications", 20*time.Second, func() bool {
			for _, s := range []*side{md.live, md.test} {
				ds, err := md.db.Deliveries(context.Background(), s.tenant, recon.DeliveryFilter{Status: recon.DeliveryDelivered})
				if err != nil || len(ds) != 3-map[bool]int{true: 0, false: 1}[s.live] {
					return false
				}
			}
			return true
		})
		for _, c := range []struct {
			s  *side
			rc *testkit.Receiver
		}{{md.live, liveRC}, {md.test, testRC}} {
			got := c.rc.Got()
			want := map[string]bool{}
			for _, id := range md.deliveryIDs(t, c.s) {
				want[fmt.Sprint(id)] = true
			}
			var events []string
			for _, g := range got {
				var body map[string]any
				if err := json.Unmarshal(g.Body, &body); err != nil {
					t.Fatalf("%s receiver got %q", c.s.name, g.Body)
				}
				order := body["order"].(map[string]any)
				events = append(events, fmt.Sprintf("%s %s %s", body["notification_type"], order["order_invoice_number"], order["order_amount"]))
				if !want[g.Header.Get("X-Recon-Delivery")] {
					t.Errorf("the %s URL got delivery %s, which is not the %s mode's", c.s.name, g.Header.Get("X-Recon-Delivery"), c.s.name)
				}
				if g.Header.Get("X-Secret-Key") != "secret-of-"+c.s.name {
					t.Errorf("the %s URL got X-Secret-Key %q", c.s.name, g.Header.Get("X-Secret-Key"))
				}
				if err := delivery.Verify(c.s.signing, g.Header.Get("X-Recon-Timestamp"), g.Header.Get("X-Recon-Signature"), g.Body, time.Now(), time.Minute); err != nil {
					t.Errorf("the %s URL got a body not signed with the %s signing secret: %v", c.s.name, c.s.name, err)
				}
			}
			slices.Sort(events)
			wantEvents := []string{
				"ORDER_PAID INV-1 " + recon.MoneyText(c.s.amount1), "ORDER_PAID INV-2 " + recon.MoneyText(c.s.amount2),
				"TRANSACTION_VOID INV-1 " + recon.MoneyText(c.s.amount1),
			}
			if !c.s.live { // the test INV-1's ORDER_PAID is held, not sent
				wantEvents = wantEvents[1:]
			}
			if !slices.Equal(events, wantEvents) {
				t.Errorf("the %s URL got %v, want %v", c.s.name, events, wantEvents)
			}
		}
	})
}

// bannerValue returns the first whitespace-separated word after marker in
// the demo banner, without a closing quote.
func bannerValue(t *testing.T, text, marker string) string {
	t.Helper()
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("demo banner lacks %q:\n%s", marker, text)
	}
	return strings.Trim(strings.Fields(text[i+len(marker):])[0], `"'`)
}

// TestDemoPrintsTestCredentials: `serve --demo` seeds the live company as
// before and prints test credentials that work and see only test data; a
// second start on the same database prints fresh test tokens.
func TestDemoPrintsTestCredentials(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	base, out, stop := startServer(t, dbURL, "--demo")
	check := func(text string, first bool) {
		t.Helper()
		test := text[strings.Index(text, "==== Test mode ===="):]
		token := bannerValue(t, test, "export TEST_TOKEN=")
		status, body := testkit.Call(t, "GET", base+"/api/v1/company", token, "")
		if status != 200 || body["data"].(map[string]any)["livemode"] != false || body["data"].(map[string]any)["short_name"] != "SAOMAI" {
			t.Fatalf("test token: %d %v", status, body)
		}
		status, body = testkit.Call(t, "GET", base+"/api/v1/bank-accounts", token, "")
		if data := body["data"].([]any); status != 200 || len(data) != 1 || data[0].(map[string]any)["livemode"] != false ||
			fmt.Sprint(data[0].(map[string]any)["id"]) != bannerValue(t, test, "Test bank account:  ") {
			t.Fatalf("test bank accounts: %d %v", status, body)
		}
		// The printed test transfer works and stays in test mode.
		j := strings.Index(test, "/api/v1/sandbox/transfers")
		feed := bannerValue(t, test[j:], "Bearer ")
		data := test[j:][strings.Index(test[j:], "-d '")+len("-d '"):]
		data = data[:strings.Index(data, "'")]
		status, body = testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", feed, data)
		if status != 200 || body["data"].(map[string]any)["livemode"] != false {
			t.Fatalf("test transfer as printed: %d %v", status, body)
		}
		merchant := bannerValue(t, test, "Test merchant:      ")
		key := bannerValue(t, test, "secret_key: ")
		if !strings.HasPrefix(merchant, "TEST-") || !strings.HasPrefix(key, "test_") {
			t.Fatalf("test merchant %s %s", merchant, key)
		}
		status, raw := testkit.Do(t, "GET", base+"/v1/order", func(r *http.Request) { r.SetBasicAuth(merchant, key) }, "", "")
		if status != 200 || !strings.Contains(string(raw), `"total":0`) {
			t.Fatalf("test orders: %d %s", status, raw)
		}
		clientID := bannerValue(t, test, "Test OAuth2 client: ")
		if secret := bannerValue(t, test, "secret: "); clientID != "test_demo-erp" || strings.HasPrefix(secret, "test_") != first {
			t.Fatalf("test client %s, secret %s (first run: %v)", clientID, secret, first)
		}
		// The live data is the demo's, untouched by the test transfer.
		live := bannerValue(t, text, "export TOKEN=")
		status, body = testkit.Call(t, "GET", base+"/api/v1/transactions?limit=1", live, "")
		if status != 200 || body["meta"].(map[string]any)["pagination"].(map[string]any)["total"] != 300.0 {
			t.Fatalf("live transactions: %d %v", status, body["meta"])
		}
	}
	check(out.String(), true)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	base, out, _ = startServer(t, dbURL, "--demo")
	check(out.String(), false)
}
