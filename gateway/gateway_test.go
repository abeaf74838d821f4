package gateway_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon"
	"recon/checkout"
	"recon/gateway"
	"recon/internal/testkit"
	"recon/ipn"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
	"recon/web"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var hcm = time.FixedZone("ICT", 7*3600)

var errBlocked = errors.New("the address is internal")

// checkURL stands in for package delivery's save-time check: https only,
// 127.0.0.1 blocked.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return errors.New("an absolute https URL is required")
	}
	if u.Hostname() == "127.0.0.1" {
		return errBlocked
	}
	return nil
}

type merchant struct {
	id, secret string
	company    recon.TenantID
	account    int64
}

type bundle struct {
	srv    *httptest.Server
	db     *sqlstore.DB
	clock  *testkit.Clock
	a, b   merchant // companies with a bank account each
	noBank merchant // a company without bank accounts
}

// setup starts the gateway on a fresh database of the engine, on loopback.
// Merchant A's company has the format DH + 6..8 digits and a Vietcombank
// account; B's has an MBBank account and no format; C has no account.
func setup(t *testing.T, engine string, opts ...func(*gateway.Handler)) *bundle {
	t.Helper()
	ctx := context.Background()
	clk := testkit.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, hcm))
	db, err := sqlstore.Open(ctx, dbtest.NewMigratedURL(t, engine), sqlstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.UseSecretKey(ctx, sqlstore.KeySource{File: filepath.Join(t.TempDir(), "recon.key")}); err != nil {
		t.Fatal(err)
	}
	b := &bundle{db: db, clock: clk}
	for i, m := range []*merchant{&b.a, &b.b, &b.noBank} {
		c := &recon.Company{FullName: "Công ty TNHH Sao Mai " + string(rune('A'+i)), ShortName: "SAOMAI", Status: recon.CompanyActive,
			Config: recon.CompanyConfig{Paycode: true, DataStorageDays: 365}}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		m.company = c.Tenant()
		m.id = "SP-TEST-" + string(rune('A'+i)) + "1"
		m.secret = "spsk_test_" + strings.Repeat(string(rune('a'+i)), 30)
		if err := db.SetMerchant(ctx, &recon.Merchant{Tenant: c.Tenant(), MerchantID: m.id, SecretKey: m.secret}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ReplacePaymentCodeFormats(ctx, b.a.company.ID(), []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 6, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*merchant{&b.b, &b.noBank} {
		if _, err := db.ReplacePaymentCodeFormats(ctx, m.company.ID(), []recon.PaymentCodeFormat{
			{Prefix: "DH", SuffixFrom: 8, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []struct {
		m              *merchant
		bank, number   string
		holder         string
		extraAccountOf bool
	}{{&b.a, "Vietcombank", "0071000123456", "CONG TY TNHH SAO MAI", true}, {&b.b, "MBBank", "0801234567", "SAO MAI B", false}} {
		acct := &recon.BankAccount{CompanyID: x.m.company.ID(), BankName: x.bank, AccountNumber: x.number, HolderName: x.holder}
		if err := db.CreateBankAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		x.m.account = acct.ID
		if x.extraAccountOf { // a second account: checkout uses the first
			if err := db.CreateBankAccount(ctx, &recon.BankAccount{CompanyID: x.m.company.ID(), BankName: "ACB", AccountNumber: "99887766"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := &gateway.Handler{Store: db, Checkout: &checkout.Service{Store: db, Location: hcm, Clock: clk}, IPN: &ipn.Service{Store: db, CheckURL: checkURL, Blocked: func(err error) bool { return errors.Is(err, errBlocked) }},
		Location: hcm, Clock: clk, Logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(h)
	}
	mux := web.NewMux()
	h.Register(mux)
	b.srv = httptest.NewServer((&web.Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux))
	t.Cleanup(b.srv.Close)
	return b
}

// client does not follow redirects, so that tests see the 303.
var client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("body is not JSON: %q", r.body)
	}
	return out
}

// request sends a request (testkit.Send); headers are name, value pairs.
func (b *bundle) request(t *testing.T, method, path, body string, headers ...string) response {
	t.Helper()
	status, header, raw := testkit.Send(t, method, b.srv.URL+path, func(req *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
	}, "", body)
	return response{status, header, raw}
}

// api sends an API request with the merchant's Basic credentials and a JSON body.
func (b *bundle) api(t *testing.T, m merchant, method, path, body string) response {
	t.Helper()
	return b.request(t, method, path, body, "Authorization", basic(m.id, m.secret), "Content-Type", "application/json")
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func wantError(code, message string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": message}, "message": message}
}

// checkJSON compares a response's status and whole JSON body.
func checkJSON(t *testing.T, what string, r response, status int, want map[string]any) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d; body %s", what, r.status, status, r.body)
		return
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	if d := cmp.Diff(want, r.json(t)); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// pair is one form field, in posting order.
type pair struct{ k, v string }

// sdkSignedFields is the list the public SDKs sign (sepay-pg-php
// SignatureGenerator::signCheckoutFields, docs/design.md, D6).
var sdkSignedFields = []string{"merchant", "env", "operation", "payment_method", "order_amount", "currency",
	"order_invoice_number", "order_description", "customer_id", "agreement_id", "agreement_name", "agreement_type",
	"agreement_payment_frequency", "agreement_amount_per_payment", "success_url", "error_url", "cancel_url", "order_id"}

// sdkSign signs fields as the SDK does: the signed fields present, in the
// order of the form, as "k=v" joined by ",", HMAC-SHA256, base64.
func sdkSign(secret string, fields []pair) string { return signFields(secret, fields, sdkSignedFields) }

// reconSign signs fields as Recon's SDK does: custom_data signed too
// (docs/api.md, Payment gateway).
func reconSign(secret string, fields []pair) string {
	return signFields(secret, fields, append(slices.Clone(sdkSignedFields), "custom_data"))
}

func signFields(secret string, fields []pair, names []string) string {
	var parts []string
	for _, f := range fields {
		if slices.Contains(names, f.k) {
			parts = append(parts, f.k+"="+f.v)
		}
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strings.Join(parts, ",")))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// encode renders fields as a form body, in order, as a browser posts them.
func encode(fields []pair) string {
	var parts []string
	for _, f := range fields {
		parts = append(parts, url.QueryEscape(f.k)+"="+url.QueryEscape(f.v))
	}
	return strings.Join(parts, "&")
}

// checkoutForm is a form as the PHP SDK builds it (prepareFormFields order).
func checkoutForm(m merchant, invoice, amount string) []pair {
	return []pair{
		{"merchant", m.id}, {"currency", "VND"}, {"order_amount", amount}, {"operation", "PURCHASE"},
		{"order_description", "Thanh toán đơn hàng " + invoice}, {"payment_method", "BANK_TRANSFER"},
		{"order_invoice_number", invoice}, {"customer_id", "CUST-7"}, {"success_url", "https://shop.example.vn/ok?x=1&y=2"},
		{"error_url", "https://shop.example.vn/error"}, {"cancel_url", "https://shop.example.vn/cancel"},
	}
}

// signed appends the SDK signature to fields.
func signed(secret string, fields []pair) []pair {
	return append(fields, pair{"signature", sdkSign(secret, fields)})
}

// checkout posts a form to /v1/checkout/init as a browser would.
func (b *bundle) checkout(t *testing.T, fields []pair, headers ...string) response {
	t.Helper()
	h := append([]string{"Content-Type", "application/x-www-form-urlencoded", "User-Agent", "Mozilla/5.0 (Test)"}, headers...)
	return b.request(t, "POST", "/v1/checkout/init", encode(fields), h...)
}

// newOrder checks out an order of m at the clock's time and returns the
// hosted page path the gateway redirected to.
func (b *bundle) newOrder(t *testing.T, m merchant, invoice, amount string, extra ...pair) string {
	t.Helper()
	form := append(checkoutForm(m, invoice, amount), extra...)
	r := b.checkout(t, signed(m.secret, form))
	if r.status != http.StatusSeeOther {
		t.Fatalf("checkout %s: %d %s", invoice, r.status, r.body)
	}
	return r.header.Get("Location")
}

// pay ingests a transfer naming code into the merchant's account, which
// matching applies to the order.
func (b *bundle) pay(t *testing.T, m merchant, code string, amount int64, ref string) {
	t.Helper()
	_, err := b.db.IngestTransactions(context.Background(), m.company, []recon.TransactionInput{{
		BankAccountID: m.account, TransactionDate: recon.WallClock(b.clock.Now().In(hcm)), AmountIn: amount,
		Content: "NGUYEN VAN A chuyen tien " + code, ReferenceNumber: ref,
	}}, []string{code})
	if err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) order(t *testing.T, m merchant, invoice string) *recon.Order {
	t.Helper()
	o, err := b.db.Order(context.Background(), m.company, invoice)
	if err != nil {
		t.Fatalf("order %s: %v", invoice, err)
	}
	return o
}

func (b *bundle) orderCount(t *testing.T, m merchant) int64 {
	t.Helper()
	_, n, err := b.db.Orders(context.Background(), m.company, recon.OrderFilter{Page: 1, PerPage: 1})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBasicAuth(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		for _, tt := range []struct {
			name, auth string
			status     int
		}{
			{"none", "", 401},
			{"bearer", "Bearer abc", 401},
			{"wrong secret", basic(b.a.id, b.b.secret), 401},
			{"unknown merchant", basic("SP-NOPE", b.a.secret), 401},
			{"not base64", "Basic !!!", 401},
			{"right", basic(b.a.id, b.a.secret), 200},
		} {
			for _, path := range []string{"/v1/order", "/v1/order/detail/X", "/v1/ipn"} {
				r := b.request(t, "GET", path, "", "Authorization", tt.auth)
				if tt.status == 200 {
					if r.status == 401 {
						t.Errorf("%s %s: 401", tt.name, path)
					}
					continue
				}
				msg := "the merchant id or secret key is wrong"
				if tt.name == "none" || tt.name == "bearer" || tt.name == "not base64" {
					msg = "send Authorization: Basic base64(merchant_id:secret_key)"
				}
				checkJSON(t, tt.name+" "+path, r, 401, wantError("unauthorized", msg))
				if got := r.header.Get("WWW-Authenticate"); got != `Basic realm="recon"` {
					t.Errorf("%s %s: WWW-Authenticate %q", tt.name, path, got)
				}
			}
		}
		// Authentication comes before validation.
		r := b.request(t, "POST", "/v1/order/cancel", "{bad json", "Content-Type", "application/json")
		checkJSON(t, "cancel without auth", r, 401, wantError("unauthorized", "send Authorization: Basic base64(merchant_id:secret_key)"))
	})
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func TestIPNSettings(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		// None yet.
		checkJSON(t, "GET before PUT", b.api(t, b.a, "GET", "/v1/ipn", ""), 200, map[string]any{"data": nil})

		// A target that never chose receives the v1 types (docs/api-v2.md,
		// Notifications).
		secret := "whsec_0123456789abcdefWXYZ"
		// signingOf returns the signing secret of a PUT answer, checking that
		// it is shown in full: 48 letters and digits.
		signingOf := func(what string, r response) string {
			t.Helper()
			if r.status != 200 {
				t.Fatalf("%s: %d %s", what, r.status, r.body)
			}
			s, _ := r.json(t)["data"].(map[string]any)["signing_secret"].(string)
			if len(s) != recon.SecretLen || strings.Trim(s, alnum) != "" {
				t.Fatalf("%s: signing secret %q, want %d letters and digits", what, s, recon.SecretLen)
			}
			return s
		}
		r := b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn","auth_type":"SECRET_KEY","secret_key":"`+secret+`","active":1}`)
		signing := signingOf("PUT", r)
		checkJSON(t, "PUT", r, 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://shop.example.vn/ipn", "auth_type": "SECRET_KEY", "secret_key": secret, "signing_secret": signing, "signing_secret_whsec": recon.WhsecSecret(signing), "previous_signing_secret_until": nil, "active": 1.0}})
		checkJSON(t, "GET masked", b.api(t, b.a, "GET", "/v1/ipn", ""), 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://shop.example.vn/ipn", "auth_type": "SECRET_KEY", "secret_key": "***WXYZ", "signing_secret": "***" + signing[44:], "signing_secret_whsec": recon.MaskSecret(recon.WhsecSecret(signing)), "previous_signing_secret_until": nil, "active": 1.0}})
		// Another merchant sees its own (none).
		checkJSON(t, "GET other merchant", b.api(t, b.b, "GET", "/v1/ipn", ""), 200, map[string]any{"data": nil})

		// No secret given: the stored ones are kept, and shown masked (only the
		// answer that created or rotated a secret shows it in full); active 0.
		r = b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn2","active":0}`)
		checkJSON(t, "PUT keeps secret", r, 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://shop.example.vn/ipn2", "auth_type": "SECRET_KEY", "secret_key": "***WXYZ", "signing_secret": "***" + signing[44:], "signing_secret_whsec": recon.MaskSecret(recon.WhsecSecret(signing)), "previous_signing_secret_until": nil, "active": 0.0}})
		if bytes.Contains(r.body, []byte(secret)) || bytes.Contains(r.body, []byte(signing)) {
			t.Fatalf("PUT without secret_key shows a stored secret: %s", r.body)
		}
		target, err := b.db.DeliveryTarget(context.Background(), b.a.company.ID(), recon.DeliveryIPN)
		if err != nil || target.Secret != secret || target.SigningSecret != signing || target.Active || target.URL != "https://shop.example.vn/ipn2" {
			t.Fatalf("stored target %+v, %v", target, err)
		}

		// Rotating the signing secret shows the new one, once; secret_key stays masked.
		r = b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn2","active":0,"rotate_signing_secret":true}`)
		rotated := signingOf("PUT rotate", r)
		if rotated == signing {
			t.Fatal("rotate_signing_secret kept the signing secret")
		}
		// The replaced one signs a day more (docs/design.md, D7, "Standard
		// Webhooks."): the store's clock, in the business time zone.
		until := b.clock.Now().Add(recon.SigningOverlap).In(hcm).Format(recon.DateTimeLayout)
		checkJSON(t, "PUT rotate", r, 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://shop.example.vn/ipn2", "auth_type": "SECRET_KEY", "secret_key": "***WXYZ", "signing_secret": rotated, "signing_secret_whsec": recon.WhsecSecret(rotated), "previous_signing_secret_until": until, "active": 0.0}})
		if target, err := b.db.DeliveryTarget(context.Background(), b.a.company.ID(), recon.DeliveryIPN); err != nil || target.SigningSecret != rotated || target.Secret != secret {
			t.Fatalf("stored target after rotation %+v, %v", target, err)
		}

		// A first PUT without a secret generates 48 characters, shown once.
		r = b.api(t, b.b, "PUT", "/v1/ipn", `{"ipn_url":"https://b.example.vn/ipn"}`)
		signingB := signingOf("PUT generated", r)
		gen, _ := r.json(t)["data"].(map[string]any)["secret_key"].(string)
		if len(gen) != recon.SecretLen || strings.Trim(gen, alnum) != "" {
			t.Fatalf("generated secret %q", gen)
		}
		checkJSON(t, "GET generated", b.api(t, b.b, "GET", "/v1/ipn", ""), 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://b.example.vn/ipn", "auth_type": "SECRET_KEY", "secret_key": "***" + gen[44:], "signing_secret": "***" + signingB[44:], "signing_secret_whsec": recon.MaskSecret(recon.WhsecSecret(signingB)), "previous_signing_secret_until": nil, "active": 1.0}})

		// NONE: no secret_key, but a signing secret all the same.
		r = b.api(t, b.b, "PUT", "/v1/ipn", `{"ipn_url":"https://b.example.vn/ipn","auth_type":"NONE"}`)
		checkJSON(t, "PUT NONE", r, 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://b.example.vn/ipn", "auth_type": "NONE", "secret_key": nil, "signing_secret": "***" + signingB[44:], "signing_secret_whsec": recon.MaskSecret(recon.WhsecSecret(signingB)), "previous_signing_secret_until": nil, "active": 1.0}})

		bad := func(reason, message string) map[string]any {
			e := map[string]any{"code": "validation_error", "message": message}
			if reason != "" {
				e["reason"] = reason
			}
			return map[string]any{"error": e, "message": message}
		}
		for _, tt := range []struct{ name, body, reason, message string }{
			{"invalid URL", `{"ipn_url":"not a url"}`, "INVALID_URL", "ipn_url is not usable: an absolute https URL is required"},
			{"plain http", `{"ipn_url":"http://shop.example.vn/ipn"}`, "INVALID_URL", "ipn_url is not usable: an absolute https URL is required"},
			{"blocked", `{"ipn_url":"https://127.0.0.1/ipn"}`, "BLOCKED_ADDRESS", "ipn_url points to an internal address, which is blocked: the address is internal"},
			{"too long", `{"ipn_url":"https://a.vn/` + strings.Repeat("x", 2000) + `"}`, "INVALID_URL", "ipn_url must be at most 2000 characters"},
			{"missing URL", `{"auth_type":"NONE"}`, "", "ipn_url is required"},
			{"bad auth_type", `{"ipn_url":"https://a.vn/ipn","auth_type":"BASIC"}`, "", "auth_type must be SECRET_KEY or NONE"},
			{"active 2", `{"ipn_url":"https://a.vn/ipn","active":2}`, "", "active must be 0 or 1"},
			{"active true", `{"ipn_url":"https://a.vn/ipn","active":true}`, "", "active must be 0 or 1"},
			{"secret too long", `{"ipn_url":"https://a.vn/ipn","secret_key":"` + strings.Repeat("s", 501) + `"}`, "", "secret_key must be 1 to 500 characters"},
			{"secret with NONE", `{"ipn_url":"https://a.vn/ipn","auth_type":"NONE","secret_key":"abc"}`, "", "secret_key is not used with auth_type NONE"},
			{"unknown field", `{"ipn_url":"https://a.vn/ipn","events":[]}`, "", `unknown field "events"`},
			{"malformed", `{"ipn_url":`, "", "malformed JSON: the body ends early"},
			{"rotate not a boolean", `{"ipn_url":"https://a.vn/ipn","rotate_signing_secret":1}`, "", "rotate_signing_secret must be a boolean, not number"},
			{"unknown notification type", `{"ipn_url":"https://a.vn/ipn","notification_types":["ORDER_PAID","ORDER_SHIPPED"]}`, "",
				`unknown notification type "ORDER_SHIPPED" (known: ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED)`},
			{"no notification type", `{"ipn_url":"https://a.vn/ipn","notification_types":[]}`, "",
				"notification_types needs at least one of ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED"},
			{"notification type twice", `{"ipn_url":"https://a.vn/ipn","notification_types":["ORDER_PAID","ORDER_PAID"]}`, "",
				`notification type "ORDER_PAID" is listed twice`},
			{"notification_types a string", `{"ipn_url":"https://a.vn/ipn","notification_types":"ORDER_PAID"}`, "",
				"notification_types must be an array, not string"},
			{"notification_types of numbers", `{"ipn_url":"https://a.vn/ipn","notification_types":[1]}`, "",
				"notification_types must be a string, not number"},
			{"notification_types an object", `{"ipn_url":"https://a.vn/ipn","notification_types":{"ORDER_PAID":true}}`, "",
				"notification_types must be an array, not object"},
		} {
			checkJSON(t, tt.name, b.api(t, b.a, "PUT", "/v1/ipn", tt.body), 400, bad(tt.reason, tt.message))
		}
		// Nothing of the failures was stored.
		if target, _ := b.db.DeliveryTarget(context.Background(), b.a.company.ID(), recon.DeliveryIPN); target.URL != "https://shop.example.vn/ipn2" || target.Settings != "{}" {
			t.Fatalf("a failed PUT changed the target: %+v", target)
		}

		// notification_types: saved, shown by PUT and GET, kept by a PUT
		// without it (v1's), and by a rotation; null is "not given".
		chosen := []any{"ORDER_PAID", "ORDER_PARTIALLY_PAID", "ORDER_EXPIRED"}
		r = b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn2","active":0,"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID","ORDER_EXPIRED"]}`)
		checkJSON(t, "PUT types", r, 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://shop.example.vn/ipn2", "auth_type": "SECRET_KEY", "secret_key": "***WXYZ", "signing_secret": "***" + rotated[44:], "signing_secret_whsec": recon.MaskSecret(recon.WhsecSecret(rotated)), "previous_signing_secret_until": until, "active": 0.0, "notification_types": chosen}})
		for _, body := range []string{`{"ipn_url":"https://shop.example.vn/ipn2","active":0}`, `{"ipn_url":"https://shop.example.vn/ipn2","active":0,"notification_types":null}`} {
			checkJSON(t, "PUT without types: "+body, b.api(t, b.a, "PUT", "/v1/ipn", body), 200, map[string]any{"data": map[string]any{
				"ipn_url": "https://shop.example.vn/ipn2", "auth_type": "SECRET_KEY", "secret_key": "***WXYZ", "signing_secret": "***" + rotated[44:], "signing_secret_whsec": recon.MaskSecret(recon.WhsecSecret(rotated)), "previous_signing_secret_until": until, "active": 0.0, "notification_types": chosen}})
		}
		r = b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn2","active":0,"rotate_signing_secret":true}`)
		if got := r.json(t)["data"].(map[string]any)["notification_types"]; !cmp.Equal(got, chosen) {
			t.Fatalf("a rotation changed notification_types: %v", got)
		}
		again := signingOf("PUT rotate again", r)
		checkJSON(t, "GET types", b.api(t, b.a, "GET", "/v1/ipn", ""), 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://shop.example.vn/ipn2", "auth_type": "SECRET_KEY", "secret_key": "***WXYZ",
			"signing_secret": "***" + again[44:], "signing_secret_whsec": recon.MaskSecret(recon.WhsecSecret(again)), "previous_signing_secret_until": until, "active": 0.0, "notification_types": chosen}})
		// The other merchant's target keeps its own.
		checkJSON(t, "GET other types", b.api(t, b.b, "GET", "/v1/ipn", ""), 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://b.example.vn/ipn", "auth_type": "NONE", "secret_key": nil, "signing_secret": "***" + signingB[44:], "signing_secret_whsec": recon.MaskSecret(recon.WhsecSecret(signingB)), "previous_signing_secret_until": nil, "active": 1.0}})
		if target, _ := b.db.DeliveryTarget(context.Background(), b.a.company.ID(), recon.DeliveryIPN); target.Settings != `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID","ORDER_EXPIRED"]}` {
			t.Fatalf("stored settings %s", target.Settings)
		}
		// Rotated twice within the day: the first secret no longer signs,
		// the second does until the day is over; then none but the current.
		if target, _ := b.db.DeliveryTarget(context.Background(), b.a.company.ID(), recon.DeliveryIPN); target.PreviousSigningSecret != rotated ||
			len(target.SigningSecrets(b.clock.Now())) != 2 {
			t.Fatalf("after a second rotation: previous %q, want %q", target.PreviousSigningSecret, rotated)
		}
		b.clock.Advance(recon.SigningOverlap)
		checkJSON(t, "GET a day after", b.api(t, b.a, "GET", "/v1/ipn", ""), 200, map[string]any{"data": map[string]any{
			"ipn_url": "https://shop.example.vn/ipn2", "auth_type": "SECRET_KEY", "secret_key": "***WXYZ",
			"signing_secret": "***" + again[44:], "signing_secret_whsec": recon.MaskSecret(recon.WhsecSecret(again)), "previous_signing_secret_until": nil, "active": 0.0, "notification_types": chosen}})
	})
}

// TestInactiveCompany: the merchant of an inactive company is refused with
// 403 in the gateway envelope (after its credentials are checked), on the
// Basic-authenticated API and at checkout; its orders are kept, and it works
// again once active.
func TestInactiveCompany(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		b.newOrder(t, b.a, "INV-KEPT", "100000")
		setStatus := func(status string) {
			t.Helper()
			if _, err := b.db.UpdateCompany(context.Background(), b.a.company.ID(), func(c *recon.Company) error {
				c.Status = status
				return c.Validate()
			}); err != nil {
				t.Fatal(err)
			}
		}
		setStatus(recon.CompanyInactive)
		msg := fmt.Sprintf("company %d is inactive: its API access and notifications are suspended until an operator activates it", b.a.company.ID())
		for _, path := range []string{"/v1/order", "/v1/order/detail/INV-KEPT", "/v1/ipn"} {
			checkJSON(t, "inactive "+path, b.api(t, b.a, "GET", path, ""), 403, wantError("forbidden", msg))
		}
		checkJSON(t, "inactive cancel", b.api(t, b.a, "POST", "/v1/order/cancel", `{"order_invoice_number":"INV-KEPT"}`), 403, wantError("forbidden", msg))
		checkJSON(t, "inactive checkout", b.checkout(t, signed(b.a.secret, checkoutForm(b.a, "INV-NEW", "50000"))), 403, wantError("forbidden", msg))
		// A wrong secret is still a 401: the status is told only to the merchant.
		r := b.request(t, "GET", "/v1/order", "", "Authorization", basic(b.a.id, b.b.secret))
		checkJSON(t, "inactive, wrong secret", r, 401, wantError("unauthorized", "the merchant id or secret key is wrong"))
		// Other merchants are not affected; the order is kept.
		if r := b.api(t, b.b, "GET", "/v1/order", ""); r.status != 200 {
			t.Fatalf("other merchant: %d %s", r.status, r.body)
		}
		if o := b.order(t, b.a, "INV-KEPT"); o.Status != recon.OrderAwaitingPayment {
			t.Fatalf("kept order %+v", o)
		}
		if n := b.orderCount(t, b.a); n != 1 {
			t.Fatalf("%d orders after a refused checkout, want 1", n)
		}

		setStatus(recon.CompanyActive)
		if r := b.api(t, b.a, "GET", "/v1/order/detail/INV-KEPT", ""); r.status != 200 {
			t.Fatalf("after activation: %d %s", r.status, r.body)
		}
		b.newOrder(t, b.a, "INV-NEW", "50000")
	})
}
