package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// checkoutForm signs fields (in this order) the way the public gateway SDKs do.
func checkoutForm(secret string, fields [][2]string) string {
	signed := map[string]bool{"merchant": true, "env": true, "operation": true, "payment_method": true, "order_amount": true,
		"currency": true, "order_invoice_number": true, "order_description": true, "customer_id": true,
		"success_url": true, "error_url": true, "cancel_url": true, "order_id": true}
	var parts, form []string
	for _, f := range fields {
		if signed[f[0]] {
			parts = append(parts, f[0]+"="+f[1])
		}
		form = append(form, url.QueryEscape(f[0])+"="+url.QueryEscape(f[1]))
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strings.Join(parts, ",")))
	return strings.Join(form, "&") + "&signature=" + url.QueryEscape(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}

type merchantSetup struct {
	base, dbURL, company, account string
	merchantID, secret            string
	signingSecret                 string
	feedToken                     string
}

// setupMerchant makes a company with a bank account, DH formats, merchant
// credentials and an IPN target at ipnURL, on a running server.
func setupMerchant(t testing.TB, base, dbURL, ipnURL string) *merchantSetup {
	t.Helper()
	m := &merchantSetup{base: base, dbURL: dbURL}
	m.company = fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty TNHH Sao Mai", "--short-name", "SAOMAI")["id"])
	cliJSON(t, dbURL, "user", "create", "--company", m.company, "--email", "admin@saomai.vn", "--role", "Admin")
	client := cliJSON(t, dbURL, "client", "create", "--company", m.company, "--name", "shop", "--scopes", "company transaction:write")["client_id"].(string)
	admin := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "admin@saomai.vn", "--scopes", "company")["access_token"].(string)
	m.feedToken = cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "", "--scopes", "transaction:write", "--ttl", "24h")["access_token"].(string)
	m.account = fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", m.company, "--bank", "Vietcombank", "--number", "0071000123456", "--holder", "CONG TY TNHH SAO MAI")["id"])
	if status, body := testkit.Call(t, "PATCH", base+"/api/v1/company/configurations", admin,
		`{"payment_code_formats":[{"prefix":"DH","suffix_from":6,"suffix_to":10,"character_type":"NumberOnly","is_active":1}]}`); status != 200 {
		t.Fatalf("formats: %d %v", status, body)
	}
	creds := cliJSON(t, dbURL, "merchant", "credentials", "--company", m.company)
	m.merchantID, m.secret = creds["merchant_id"].(string), creds["secret_key"].(string)
	ipn := cliJSON(t, dbURL, "ipn", "set", "--company", m.company, "--url", ipnURL, "--auth-type", "SECRET_KEY", "--secret", "ipn-secret-0123456789",
		"--sandbox", "--allow-private-targets")
	m.signingSecret, _ = ipn["signing_secret"].(string)
	if len(m.signingSecret) != recon.SecretLen || ipn["secret_key"] != "ipn-secret-0123456789" {
		t.Fatalf("recon ipn set answered %v: want the secrets it made in full", ipn)
	}
	return m
}

// checkout creates an order through POST /v1/checkout/init and returns its payment code.
func (m *merchantSetup) checkout(t testing.TB, invoice string, amount int) string {
	t.Helper()
	body := checkoutForm(m.secret, [][2]string{
		{"merchant", m.merchantID}, {"operation", "PURCHASE"}, {"payment_method", "BANK_TRANSFER"},
		{"order_invoice_number", invoice}, {"order_amount", fmt.Sprint(amount)}, {"currency", "VND"},
		{"order_description", "Thanh toán đơn hàng " + invoice}, {"customer_id", "KH001"},
		{"success_url", "https://shop.example.vn/ok"}, {"error_url", "https://shop.example.vn/err"}, {"cancel_url", "https://shop.example.vn/cancel"},
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Post(m.base+"/v1/checkout/init", "application/x-www-form-urlencoded", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("checkout: %d %s", resp.StatusCode, raw)
	}
	detail := m.gateway(t, "GET", "/v1/order/detail/"+invoice, "")
	return detail["data"].(map[string]any)["payment"].(map[string]any)["code"].(string)
}

// gateway calls a /v1 endpoint with the merchant's Basic credentials.
func (m *merchantSetup) gateway(t testing.TB, method, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, m.base+path, strings.NewReader(body))
	req.SetBasicAuth(m.merchantID, m.secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return v
}

// pay plays the payer: a sandbox transfer with the code in the memo.
func (m *merchantSetup) pay(t testing.TB, code string, amount int) {
	t.Helper()
	status, body := testkit.Call(t, "POST", m.base+"/api/v1/sandbox/transfers", m.feedToken,
		fmt.Sprintf(`{"bank_account_id":%s,"amount":%d,"transaction_content":"NGUYEN VAN A chuyen tien %s"}`, m.account, amount, code))
	if status != 200 {
		t.Fatalf("transfer: %d %v", status, body)
	}
}

// TestIPNLoop closes the main loop on a real server, on both engines:
// checkout, a transfer with the order's code, ORDER_PAID at the merchant's
// endpoint with every field and header; then a void and TRANSACTION_VOID.
func TestIPNLoop(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		rc := testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
		code := m.checkout(t, "INV-0001", 150000)
		if !strings.HasPrefix(code, "DH") {
			t.Fatalf("payment code %q does not fit the DH format", code)
		}
		m.pay(t, code, 100000) // short: no IPN yet
		m.pay(t, code, 50000)  // completes the payment
		testkit.WaitFor(t, "ORDER_PAID", 10*time.Second, func() bool { return len(rc.IPNs("ORDER_PAID")) > 0 })
		paid := rc.IPNs("ORDER_PAID")
		if len(paid) != 1 {
			t.Fatalf("%d ORDER_PAID IPNs, want 1", len(paid))
		}
		ipn := paid[0]
		order, tx, cust := ipn["order"].(map[string]any), ipn["transaction"].(map[string]any), ipn["customer"].(map[string]any)
		for k, want := range map[string]any{"order_invoice_number": "INV-0001", "order_status": "CAPTURED", "order_amount": "150000.00",
			"order_currency": "VND", "order_description": "Thanh toán đơn hàng INV-0001"} {
			if order[k] != want {
				t.Errorf("order.%s = %v, want %v", k, order[k], want)
			}
		}
		for k, want := range map[string]any{"payment_method": "BANK_TRANSFER", "transaction_status": "APPROVED", "transaction_amount": "150000.00", "transaction_currency": "VND"} {
			if tx[k] != want {
				t.Errorf("transaction.%s = %v, want %v", k, tx[k], want)
			}
		}
		if cust["customer_id"] != "KH001" || ipn["timestamp"].(float64) < 1e9 {
			t.Errorf("customer %v timestamp %v", cust, ipn["timestamp"])
		}
		h, body := rc.Got()[0].Header, rc.Got()[0].Body
		if h.Get("X-Secret-Key") != "ipn-secret-0123456789" || h.Get("Content-Type") != "application/json" {
			t.Errorf("headers: %v", h)
		}
		if err := delivery.Verify(m.signingSecret, h.Get("X-Recon-Timestamp"), h.Get("X-Recon-Signature"), body, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
		}
		// The order is CAPTURED, with both decisions explained.
		detail := m.gateway(t, "GET", "/v1/order/detail/INV-0001", "")["data"].(map[string]any)
		if detail["order_status"] != "CAPTURED" || len(detail["match_decisions"].([]any)) != 2 {
			t.Fatalf("detail: %v", detail)
		}
		// Void: CANCELLED and TRANSACTION_VOID with VOIDED.
		m.gateway(t, "POST", "/v1/order/voidTransaction", `{"order_invoice_number":"INV-0001"}`)
		testkit.WaitFor(t, "TRANSACTION_VOID", 10*time.Second, func() bool { return len(rc.IPNs("TRANSACTION_VOID")) > 0 })
		void := rc.IPNs("TRANSACTION_VOID")[0]
		if void["order"].(map[string]any)["order_status"] != "CANCELLED" || void["transaction"].(map[string]any)["transaction_status"] != "VOIDED" {
			t.Fatalf("void IPN: %v", void)
		}
	})
}

// TestDeliveriesCLIOperations: recon deliveries test, stats and replay
// --failed-since against a real server and receiver: the test notification
// reaches the receiver signed; one that failed is replayed and delivered.
func TestDeliveriesCLIOperations(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		rc := testkit.NewReceiver(t)
		rc.Answer(func(int) int { return 503 })
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Hoa Sen", "--short-name", "HOASEN")["id"])
		if _, err := cli(t, dbURL, "deliveries", "test", "--company", co); err == nil || !strings.Contains(err.Error(), "no active ipn target") {
			t.Fatalf("test without a target: %v", err)
		}
		signing := cliJSON(t, dbURL, "ipn", "set", "--company", co, "--url", rc.URL+"/ipn", "--sandbox", "--allow-private-targets")["signing_secret"].(string)
		d := cliJSON(t, dbURL, "deliveries", "test", "--company", co)
		if d["event"] != "TEST_NOTIFICATION" {
			t.Fatalf("test: %v", d)
		}
		testkit.WaitFor(t, "the failed attempt", 20*time.Second, func() bool {
			return len(rc.Got()) > 0
		})
		testkit.WaitFor(t, "the attempt recorded", 20*time.Second, func() bool {
			st := cliJSONList(t, dbURL, "deliveries", "stats", "--company", co)
			return len(st) == 1 && st[0]["failing"] == 1.0
		})
		rc.Answer(nil)
		if res := cliJSON(t, dbURL, "deliveries", "replay", "--failed-since", "2000-01-01 00:00:00", "--company", co); res["replayed"] != 1.0 {
			t.Fatalf("replay: %v", res)
		}
		testkit.WaitFor(t, "the replay delivered", 20*time.Second, func() bool {
			st := cliJSONList(t, dbURL, "deliveries", "stats", "--company", co)
			return len(st) == 1 && st[0]["delivered"] == 1.0
		})
		last := rc.Got()[len(rc.Got())-1]
		if err := delivery.Verify(signing, last.Header.Get("X-Recon-Timestamp"), last.Header.Get("X-Recon-Signature"), last.Body, time.Now(), time.Minute); err != nil ||
			!strings.Contains(string(last.Body), "TEST_NOTIFICATION") {
			t.Fatalf("the test notification: %v %s", err, last.Body)
		}
	})
}

// TestOperatorCommandsRefuseBadInput: the commands this session added say
// what is wrong, and change nothing, on bad input.
func TestOperatorCommandsRefuseBadInput(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Hoa Sen", "--short-name", "HOASEN")["id"])
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"deliveries", "replay", "--failed-since", "yesterday", "--company", co}, "is not a time of the form YYYY-MM-DD HH:MM:SS"},
		{[]string{"deliveries", "replay", "--failed-since", "2026-11-24 00:00:00"}, "--failed-since needs --company"},
		{[]string{"deliveries", "replay", "--failed-since", "2026-11-24 00:00:00", "--company", co, "--kind", "sms"}, "kind"},
		{[]string{"deliveries", "stats", "--company", co, "--since", "x"}, "--since"},
		{[]string{"deliveries", "stats", "--company", "999"}, "999"},
		{[]string{"deliveries", "test", "--company", co, "--kind", "sms"}, "kind"},
		{[]string{"company", "try-memo", "999", "DH1234"}, "999"},
		{[]string{"hub", "events", "00000000-0000-4000-8000-000000000000", "--company", co}, "not found"},
		{[]string{"hub", "link-token", "create", "--company", co, "--test", "--customer", "nope"}, "not found"},
		{[]string{"hub", "company", "create", "--company", co, "--full-name", " "}, "full_name"},
	} {
		if out, err := cli(t, dbURL, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("recon %s: %v (output %q), want an error naming %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
	if list := cliJSONList(t, dbURL, "hub", "company", "list", "--company", co); len(list) != 0 {
		t.Fatalf("a refused command made hub companies: %v", list)
	}
}
