package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sign is the server's signature, written out here from docs/design.md, D7
// (the end-to-end test in cmd/recon checks it against the real server).
func sign(secret string, ts int64, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	io.WriteString(mac, strconv.FormatInt(ts, 10)+"."+body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// signStandard is the server's Standard Webhooks signature under the key,
// written out here from docs/design.md, D7.
func signStandard(key, id string, ts int64, body string) string {
	mac := hmac.New(sha256.New, []byte(key))
	io.WriteString(mac, id+"."+strconv.FormatInt(ts, 10)+"."+body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func TestVerifyStandardWebhook(t *testing.T) {
	now := time.Unix(1_735_689_600, 0)
	ts := now.Unix()
	tsStr := strconv.FormatInt(ts, 10)
	const key, id = "0YUKLfVJZ6ckDlcLEuoZeXTXotX4wtsvKyzahkRdJVxXdM1Z", "msg_42"
	whsec := "whsec_" + base64.StdEncoding.EncodeToString([]byte(key))
	body := `{"notification_type":"ORDER_PAID","order":{"order_invoice_number":"INV-1"}}`
	good := signStandard(key, id, ts, body)
	old := signStandard("the-secret-before-the-rotation", id, ts, body)
	for _, tc := range []struct {
		name                      string
		secret, id, timestamp, sg string
		body                      string
		now                       time.Time
		tolerance                 time.Duration
		ok                        bool
	}{
		{"the specification's example", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330",
			"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", `{"test": 2432232314}`, time.Unix(1614265330, 0), DefaultTolerance, true},
		{"valid, whsec form", whsec, id, tsStr, good, body, now, time.Minute, true},
		{"valid, plain signing secret", key, id, tsStr, good, body, now, time.Minute, true},
		{"rotation: the new secret, signed by both", whsec, id, tsStr, good + " " + old, body, now, time.Minute, true},
		{"rotation: the old secret, signed by both", "the-secret-before-the-rotation", id, tsStr, good + " " + old, body, now, time.Minute, true},
		{"after the rotation: the old secret alone", "the-secret-before-the-rotation", id, tsStr, good, body, now, time.Minute, false},
		{"another scheme listed first", whsec, id, tsStr, "v2,abc " + good, body, now, time.Minute, true},
		{"4 minutes late within 5", whsec, id, tsStr, good, body, now.Add(4 * time.Minute), DefaultTolerance, true},
		{"no tolerance check", whsec, id, tsStr, good, body, now.Add(24 * time.Hour), 0, true},
		{"stale", whsec, id, tsStr, good, body, now.Add(6 * time.Minute), DefaultTolerance, false},
		{"from the future", whsec, id, tsStr, good, body, now.Add(-6 * time.Minute), DefaultTolerance, false},
		{"wrong secret", "whsec_" + base64.StdEncoding.EncodeToString([]byte("other")), id, tsStr, good, body, now, time.Minute, false},
		{"whsec not base64", "whsec_not*base64", id, tsStr, good, body, now, time.Minute, false},
		{"empty secret", "", id, tsStr, signStandard("", id, ts, body), body, now, time.Minute, false},
		{"empty whsec", "whsec_", id, tsStr, signStandard("", id, ts, body), body, now, time.Minute, false},
		{"tampered body", whsec, id, tsStr, good, strings.Replace(body, "INV-1", "INV-2", 1), now, time.Minute, false},
		{"tampered id", whsec, "msg_43", tsStr, good, body, now, time.Minute, false},
		{"tampered timestamp", whsec, id, strconv.FormatInt(ts+1, 10), good, body, now, time.Minute, false},
		{"missing id", whsec, "", tsStr, good, body, now, time.Minute, false},
		{"missing signature", whsec, id, tsStr, "", body, now, time.Minute, false},
		{"timestamp not a number", whsec, id, "yesterday", good, body, now, time.Minute, false},
		{"the X-Recon-Signature form", whsec, id, tsStr, "v1=" + strings.TrimPrefix(good, "v1,"), body, now, time.Minute, false},
		{"comma-separated, as X-Recon-Signature lists", whsec, id, tsStr, old + "," + good, body, now, time.Minute, false},
		{"truncated", whsec, id, tsStr, good[:len(good)-4], body, now, time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyStandardWebhook(tc.secret, tc.id, tc.timestamp, tc.sg, []byte(tc.body), tc.now, tc.tolerance)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrSignature) {
				t.Fatalf("err = %v, want ErrSignature", err)
			}
		})
	}
}

func TestVerifySignature(t *testing.T) {
	now := time.Unix(1_735_689_600, 0)
	ts := now.Unix()
	body := `{"notification_type":"ORDER_PAID","order":{"order_invoice_number":"INV-1"}}`
	good := sign("whsec", ts, body)
	tsStr := strconv.FormatInt(ts, 10)
	for _, tc := range []struct {
		name                      string
		secret, timestamp, header string
		body                      string
		now                       time.Time
		tolerance                 time.Duration
		ok                        bool
	}{
		{"valid", "whsec", tsStr, good, body, now, time.Minute, true},
		{"valid, 4 minutes late within 5", "whsec", tsStr, good, body, now.Add(4 * time.Minute), DefaultTolerance, true},
		{"valid among several v1 values (rotation)", "whsec", tsStr, sign("old", ts, body) + ", " + good, body, now, time.Minute, true},
		{"upper-case hex", "whsec", tsStr, "v1=" + strings.ToUpper(strings.TrimPrefix(good, "v1=")), body, now, time.Minute, true},
		{"no tolerance check", "whsec", tsStr, good, body, now.Add(24 * time.Hour), 0, true},
		{"wrong secret", "other", tsStr, good, body, now, time.Minute, false},
		{"empty secret", "", tsStr, sign("", ts, body), body, now, time.Minute, false},
		{"stale", "whsec", tsStr, good, body, now.Add(6 * time.Minute), 5 * time.Minute, false},
		{"from the future", "whsec", tsStr, good, body, now.Add(-6 * time.Minute), 5 * time.Minute, false},
		{"tampered body", "whsec", tsStr, good, strings.Replace(body, "INV-1", "INV-2", 1), now, time.Minute, false},
		{"tampered timestamp", "whsec", strconv.FormatInt(ts+1, 10), good, body, now, time.Minute, false},
		{"missing signature", "whsec", tsStr, "", body, now, time.Minute, false},
		{"missing timestamp", "whsec", "", good, body, now, time.Minute, false},
		{"timestamp not a number", "whsec", "yesterday", good, body, now, time.Minute, false},
		{"no v1 prefix", "whsec", tsStr, strings.TrimPrefix(good, "v1="), body, now, time.Minute, false},
		{"other scheme only", "whsec", tsStr, "v0=" + strings.TrimPrefix(good, "v1="), body, now, time.Minute, false},
		{"not hex", "whsec", tsStr, "v1=zz" + good[5:], body, now, time.Minute, false},
		{"truncated", "whsec", tsStr, good[:len(good)-2], body, now, time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifySignature(tc.secret, tc.timestamp, tc.header, []byte(tc.body), tc.now, tc.tolerance)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrSignature) {
				t.Fatalf("err = %v, want ErrSignature", err)
			}
		})
	}
}

func TestWebhookHandler(t *testing.T) {
	body := `{"timestamp":1735689600,"notification_type":"ORDER_PAID","order":{"order_invoice_number":"INV-1","order_amount":"150000.00","custom_data":[]},"transaction":{"transaction_status":"APPROVED"},"customer":{"customer_id":"KH1"}}`
	var calls atomic.Int32
	var got *Notification
	var nextBody string
	h := WebhookHandler("whsec", 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		got, _ = NotificationFrom(r.Context())
		b, _ := io.ReadAll(r.Body)
		nextBody = string(b)
	}))
	now := time.Now().Unix()
	post := func(ts int64, sig, b string) int {
		r := httptest.NewRequest("POST", "/ipn", strings.NewReader(b))
		if ts != 0 {
			r.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
		}
		if sig != "" {
			r.Header.Set(HeaderSignature, sig)
		}
		r.Header.Set(HeaderDelivery, "42")
		r.Header.Set(HeaderEvent, "ORDER_PAID")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, tc := range []struct {
		name   string
		ts     int64
		sig    string
		body   string
		status int
	}{
		{"missing signature", now, "", body, 401},
		{"missing timestamp", 0, sign("whsec", now, body), body, 401},
		{"wrong secret", now, sign("nope", now, body), body, 401},
		{"stale", now - 600, sign("whsec", now-600, body), body, 401},
		{"tampered", now, sign("whsec", now, body), strings.Replace(body, "150000", "1", 1), 401},
		{"too large", now, sign("whsec", now, strings.Repeat("x", 2<<20)), strings.Repeat("x", 2<<20), 413},
	} {
		if status := post(tc.ts, tc.sig, tc.body); status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, status, tc.status)
		}
	}
	if calls.Load() != 0 {
		t.Fatalf("next called %d times for refused notifications", calls.Load())
	}
	if status := post(now, sign("whsec", now, body), body); status != 200 || calls.Load() != 1 {
		t.Fatalf("valid: %d, %d calls", status, calls.Load())
	}
	if got == nil || got.DeliveryID != "42" || got.Event != "ORDER_PAID" || got.Timestamp.Unix() != now || string(got.Body) != body || nextBody != body {
		t.Fatalf("notification %+v, next read %q", got, nextBody)
	}
	ipn, err := got.IPN()
	if err != nil || ipn.Order.OrderInvoiceNumber != "INV-1" || ipn.Transaction.TransactionStatus != "APPROVED" || ipn.Customer.CustomerID != "KH1" || string(ipn.Order.CustomData) != "[]" {
		t.Fatalf("IPN %+v %v", ipn, err)
	}
}

func TestReceiverHandleIPN(t *testing.T) {
	now := time.Unix(1_735_689_600, 0)
	rc := &Receiver{Secrets: []string{"new", "old"}, Now: func() time.Time { return now }}
	fail := false
	var seen []string
	h := rc.HandleIPN(func(ctx context.Context, n *Notification, ipn *IPN) error {
		if fail {
			return errors.New("database down")
		}
		seen = append(seen, ipn.NotificationType+" "+ipn.Order.OrderInvoiceNumber)
		return nil
	})
	post := func(secret, body string) int {
		r := httptest.NewRequest("POST", "/ipn", strings.NewReader(body))
		r.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		r.Header.Set(HeaderSignature, sign(secret, now.Unix(), body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	void := `{"notification_type":"TRANSACTION_VOID","order":{"order_invoice_number":"INV-9"}}`
	for _, tc := range []struct {
		name, secret, body string
		fail               bool
		status             int
	}{
		{"the current secret", "new", void, false, 200},
		{"the previous secret, after a rotation", "old", void, false, 200},
		{"an unknown secret", "other", void, false, 401},
		{"not an IPN", "new", `{"event":"BANK_ACCOUNT_LINKED"}`, false, 400},
		{"the callback fails: 500, the server retries", "new", void, true, 500},
	} {
		fail = tc.fail
		if status := post(tc.secret, tc.body); status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, status, tc.status)
		}
	}
	if len(seen) != 2 || seen[0] != "TRANSACTION_VOID INV-9" {
		t.Fatalf("seen %v", seen)
	}
}

func TestParseHubEvent(t *testing.T) {
	e, err := ParseHubEvent([]byte(`{"timestamp":1735689600,"xid":"0b9e","version":"1.0","event":"BANK_ACCOUNT_LINKED","metadata":{"bank_account_xid":"ba-1","account_number":"0071000123456","account_type":"individual","brand_name":"Vietcombank"}}`))
	if err != nil || e.Event != "BANK_ACCOUNT_LINKED" || e.XID != "0b9e" {
		t.Fatalf("%+v %v", e, err)
	}
	m, err := e.Meta()
	if err != nil || m.BankAccountXID != "ba-1" || m.AccountType != "individual" || m.BrandName != "Vietcombank" || m.Unlinked {
		t.Fatalf("%+v %v", m, err)
	}
	for _, bad := range []string{`{}`, `not json`, `{"notification_type":"ORDER_PAID"}`} {
		if _, err := ParseHubEvent([]byte(bad)); err == nil {
			t.Errorf("ParseHubEvent(%s) accepted it", bad)
		}
	}
	if _, err := ParseIPN([]byte(`{"event":"X"}`)); err == nil {
		t.Error("ParseIPN accepted a hub event")
	}
}

func TestSignCheckout(t *testing.T) {
	base := []Field{{"merchant", "MC0001"}, {"operation", "PURCHASE"}, {"order_invoice_number", "INV-1001"}, {"order_amount", "150000"}, {"currency", "VND"}}
	sig, err := SignCheckout("merchant-secret", base)
	// printf 'merchant=MC0001,operation=PURCHASE,order_invoice_number=INV-1001,order_amount=150000,currency=VND' |
	//   openssl dgst -sha256 -hmac merchant-secret -binary | base64
	if err != nil || sig != "JzvDXTcAZHMbpphqrOTjQZq0YnMabvMBiaOIU8wDPQg=" {
		t.Fatalf("signature %q, %v", sig, err)
	}
	// Unsigned fields (signature, unknown) do not change it.
	withUnsigned := append([]Field{{"signature", "x"}}, base...)
	withUnsigned = append(withUnsigned, Field{"branch_code", "1"})
	if s2, err := SignCheckout("merchant-secret", withUnsigned); err != nil || s2 != sig {
		t.Fatalf("with unsigned fields: %q %v", s2, err)
	}
	// custom_data is signed, in its place (docs/api.md, Payment gateway).
	withCustom := append([]Field{{"custom_data", `["x"]`}}, base...)
	// printf 'custom_data=["x"],merchant=MC0001,operation=PURCHASE,order_invoice_number=INV-1001,order_amount=150000,currency=VND' |
	//   openssl dgst -sha256 -hmac merchant-secret -binary | base64
	if s2, err := SignCheckout("merchant-secret", withCustom); err != nil || s2 != "1phB3hOIhQ8XS4182YipODtWsNAFY0eq5Oh6y6YNi1E=" {
		t.Fatalf("with custom_data: %q %v", s2, err)
	}
	// The order matters.
	swapped := append([]Field{base[1], base[0]}, base[2:]...)
	if s3, _ := SignCheckout("merchant-secret", swapped); s3 == sig {
		t.Fatal("the order of the fields does not change the signature")
	}
	for _, tc := range []struct {
		name     string
		fields   []Field
		boundary bool
	}{
		{"boundary shift in a signed value", []Field{{"order_description", "note,order_amount=1,customer_id=y"}, {"order_amount", "500000"}}, true},
		{"boundary shift naming any signed field", []Field{{"customer_id", "a,merchant=b"}}, true},
		{"boundary shift in custom_data", []Field{{"custom_data", "x,order_amount=1"}}, true},
		{"boundary shift naming custom_data", []Field{{"order_description", "x,custom_data=1"}}, true},
		{"repeated field", []Field{{"merchant", "a"}, {"merchant", "b"}}, false},
		{"empty name", []Field{{"", "a"}}, false},
		{"invalid UTF-8", []Field{{"order_description", "\xff"}}, false},
	} {
		_, err := SignCheckout("s", tc.fields)
		if err == nil || errors.Is(err, ErrBoundary) != tc.boundary {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
	// Commas and = elsewhere are fine, and so is the pattern in an unsigned field.
	for _, ok := range [][]Field{
		{{"order_description", "a, b = c, order_amount 5"}},
		{{"branch_code", "x,order_amount=1"}},
		{{"order_description", "x,unknown=1"}},
	} {
		if _, err := SignCheckout("s", ok); err != nil {
			t.Errorf("%v refused: %v", ok, err)
		}
	}
}

func TestCheckoutForm(t *testing.T) {
	f, err := NewCheckoutForm("https://pay.example.vn/", "merchant-secret", Checkout{MerchantID: "MC0001", InvoiceNumber: "INV-1",
		Amount: 150000, Description: `Đơn "1" <b>`, SuccessURL: "https://shop.vn/ok?a=1&b=2", CustomData: `["gift"]`})
	if err != nil {
		t.Fatal(err)
	}
	if f.Action != "https://pay.example.vn/v1/checkout/init" {
		t.Errorf("action %q", f.Action)
	}
	// The signed order is the posted order, whichever way the form is posted.
	var names []string
	for _, x := range f.Fields {
		names = append(names, x.Name)
	}
	if got := strings.Join(names, " "); got != "currency custom_data merchant operation order_amount order_description order_invoice_number payment_method signature success_url" {
		t.Fatalf("fields %s", got)
	}
	if f.Values().Encode() != f.Encode() {
		t.Fatalf("url.Values posts another order:\n%s\n%s", f.Values().Encode(), f.Encode())
	}
	sig, _ := SignCheckout("merchant-secret", f.Fields)
	if f.Values().Get("signature") != sig {
		t.Fatal("the form's signature is not SignCheckout's")
	}
	// custom_data is signed: the signature over the other fields differs.
	if other, _ := SignCheckout("merchant-secret", slices.DeleteFunc(slices.Clone(f.Fields), func(x Field) bool { return x.Name == "custom_data" })); other == sig {
		t.Fatal("the form's signature does not cover custom_data")
	}
	page, err := f.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`action="https://pay.example.vn/v1/checkout/init"`, `name="order_description" value="Đơn &#34;1&#34; &lt;b&gt;"`,
		`value="https://shop.vn/ok?a=1&amp;b=2"`, `name="signature" value="` + strings.ReplaceAll(sig, "+", "&#43;") + `"`, `.submit()`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s:\n%s", want, page)
		}
	}
	if _, err := NewCheckoutForm("https://pay.example.vn", "s", Checkout{MerchantID: "M", InvoiceNumber: "I", Amount: 1, CustomerID: "x,order_amount=9"}); !errors.Is(err, ErrBoundary) {
		t.Fatalf("boundary: %v", err)
	}
}

func TestNetworkErrorRetriedForIdempotentRequests(t *testing.T) {
	var n atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close() // the connection drops before an answer
			return
		}
		io.WriteString(w, companyOK)
	})
	c, rec := newTestClient(t, h)
	if _, err := c.Company(context.Background()); err != nil || n.Load() != 2 || len(rec.waits) != 1 {
		t.Fatalf("err %v, %d requests, waits %v", err, n.Load(), rec.waits)
	}
	n.Store(0)
	if _, err := c.VoidOrder(context.Background(), "INV-1"); err == nil || n.Load() != 1 {
		t.Fatalf("void after a dropped connection: err %v, %d requests", err, n.Load())
	}
}
