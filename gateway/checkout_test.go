package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"recon"
	"recon/checkout"
	"recon/gateway"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

var pagePath = regexp.MustCompile(`^/v1/checkout/([^/?]+)/([^/?]+)\?t=([0-9a-f]{64})$`)

func TestCheckoutCreatesOrder(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		form := checkoutForm(b.a, "INV-001", "150000")
		form = append(form, pair{"custom_data", `[{"sku":"A1","qty":2}, "gift"]`})
		r := b.checkout(t, signed(b.a.secret, form))
		if r.status != http.StatusSeeOther {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
		loc := r.header.Get("Location")
		if m := pagePath.FindStringSubmatch(loc); m == nil || m[1] != b.a.id || m[2] != "INV-001" {
			t.Fatalf("Location %q", loc)
		}
		o := b.order(t, b.a, "INV-001")
		if !recon.ValidXID(o.PublicID) {
			t.Errorf("a checkout order's v2 id %q", o.PublicID)
		}
		want := recon.Order{
			ID: o.ID, PublicID: o.PublicID, CompanyID: b.a.company.ID(), InvoiceNumber: "INV-001", CustomerID: "CUST-7",
			Status: recon.OrderAwaitingPayment, Amount: 150000, Currency: "VND", Description: "Thanh toán đơn hàng INV-001",
			PaymentCode: o.PaymentCode, BankAccountID: b.a.account, CustomData: `[{"sku":"A1","qty":2},"gift"]`,
			UserAgent: "Mozilla/5.0 (Test)", IPAddress: "127.0.0.1", SuccessURL: "https://shop.example.vn/ok?x=1&y=2",
			ErrorURL: "https://shop.example.vn/error", CancelURL: "https://shop.example.vn/cancel", PaymentMethod: "BANK_TRANSFER",
			CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
		}
		if !recon.ValidXID(o.PublicID) {
			t.Fatalf("public id %q is no xid: every order is readable through API v2", o.PublicID)
		}
		if *o != want {
			t.Fatalf("stored order\n got %+v\nwant %+v", *o, want)
		}
		// The company's default format is DH + 6..8 digits: 8 digits.
		if !regexp.MustCompile(`^DH[0-9]{8}$`).MatchString(o.PaymentCode) {
			t.Fatalf("payment code %q does not fit DH + 8 digits", o.PaymentCode)
		}
		if !o.CreatedAt.Equal(b.clock.Now()) {
			t.Fatalf("created at %v, want %v", o.CreatedAt, b.clock.Now())
		}

		// The field order of another SDK (merchant first, amount with a zero
		// fraction, no payment_method, plain-text custom_data): also fine.
		// Merchant B has no active format: DH + 8 digits.
		node := []pair{{"merchant", b.b.id}, {"operation", "PURCHASE"}, {"order_invoice_number", "INV-001"},
			{"order_amount", "99000.00"}, {"currency", "VND"}, {"order_description", "Áo thun & quần"},
			{"customer_id", ""}, {"success_url", "https://b.example.vn/ok"}}
		node = append(signed(b.b.secret, node), pair{"custom_data", "ghi chú, tự do"}, pair{"branch_code", "HN01"}, pair{"utm", "x"})
		if r := b.checkout(t, node); r.status != http.StatusSeeOther {
			t.Fatalf("second form: %d %s", r.status, r.body)
		}
		ob := b.order(t, b.b, "INV-001")
		if ob.Amount != 99000 || ob.Description != "Áo thun & quần" || ob.CustomData != `["ghi chú, tự do"]` ||
			ob.BankAccountID != b.b.account || !regexp.MustCompile(`^DH[0-9]{8}$`).MatchString(ob.PaymentCode) {
			t.Fatalf("second order %+v", ob)
		}
	})
}

func TestCheckoutRefusals(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		b.newOrder(t, b.a, "INV-DUP", "50000")
		with := func(name, value string) []pair {
			f := checkoutForm(b.a, "INV-X", "150000")
			for i := range f {
				if f[i].k == name {
					f[i].v = value
					return f
				}
			}
			return append(f, pair{name, value})
		}
		without := func(name string) []pair {
			var out []pair
			for _, f := range checkoutForm(b.a, "INV-X", "150000") {
				if f.k != name {
					out = append(out, f)
				}
			}
			return out
		}
		good := signed(b.a.secret, checkoutForm(b.a, "INV-X", "150000"))
		swapped := append([]pair(nil), good...)
		swapped[1], swapped[2] = swapped[2], swapped[1] // currency and amount change places, same signature
		tampered := append([]pair(nil), good...)
		tampered[2] = pair{"order_amount", "1000"}
		for _, tt := range []struct {
			name    string
			form    []pair
			status  int
			code    string
			message string
		}{
			{"bad signature", append(checkoutForm(b.a, "INV-X", "150000"), pair{"signature", "bm90IGEgc2lnbmF0dXJl"}), 400, "validation_error",
				"the signature does not match the form: sign the fields in the order they are posted with your secret key"},
			{"signed with another key", signed(b.b.secret, checkoutForm(b.a, "INV-X", "150000")), 400, "validation_error",
				"the signature does not match the form: sign the fields in the order they are posted with your secret key"},
			{"swapped order", swapped, 400, "validation_error",
				"the signature does not match the form: sign the fields in the order they are posted with your secret key"},
			{"tampered amount", tampered, 400, "validation_error",
				"the signature does not match the form: sign the fields in the order they are posted with your secret key"},
			{"no signature", checkoutForm(b.a, "INV-X", "150000"), 400, "validation_error", "signature is required"},
			{"unknown merchant", signed(b.a.secret, with("merchant", "SP-NOPE")), 400, "validation_error", `unknown merchant "SP-NOPE"`},
			{"no merchant", signed(b.a.secret, without("merchant")), 400, "validation_error", "merchant is required"},
			{"missing amount", signed(b.a.secret, without("order_amount")), 400, "validation_error", "order_amount is required"},
			{"fraction", signed(b.a.secret, with("order_amount", "150000.50")), 400, "validation_error",
				"order_amount must be a whole number of VND greater than 0: VND has no minor unit"},
			{"zero amount", signed(b.a.secret, with("order_amount", "0")), 400, "validation_error",
				"order_amount must be a whole number of VND greater than 0: it is 0"},
			{"negative amount", signed(b.a.secret, with("order_amount", "-5")), 400, "validation_error",
				`order_amount must be a whole number of VND greater than 0: "-5" is not a number`},
			{"USD", signed(b.a.secret, with("currency", "USD")), 400, "validation_error", `currency "USD" is not supported: only VND is`},
			{"no currency", signed(b.a.secret, without("currency")), 400, "validation_error", "currency is required (VND)"},
			{"VERIFY", signed(b.a.secret, with("operation", "VERIFY")), 400, "validation_error", `operation "VERIFY" is not supported: only PURCHASE is`},
			{"CARD", signed(b.a.secret, with("payment_method", "CARD")), 400, "validation_error", `payment_method "CARD" is not supported: only BANK_TRANSFER is`},
			{"bad invoice", signed(b.a.secret, with("order_invoice_number", "INV 1/2")), 400, "validation_error",
				"order_invoice_number is required: 1 to 100 letters, digits, _ or -"},
			{"javascript URL", signed(b.a.secret, with("success_url", "javascript:alert(1)")), 400, "validation_error",
				"success_url must be an absolute http or https URL of at most 2000 characters"},
			{"agreement", signed(b.a.secret, with("agreement_id", "AG1")), 400, "validation_error", "recurring payments (agreement_id) are not supported"},
			{"repeated field", append(signed(b.a.secret, checkoutForm(b.a, "INV-X", "150000")), pair{"currency", "VND"}), 400, "validation_error",
				"the form field currency is given more than once"},
			{"duplicate invoice", signed(b.a.secret, checkoutForm(b.a, "INV-DUP", "150000")), 409, "conflict",
				`order_invoice_number "INV-DUP" already exists for this merchant`},
			{"no bank account", signed(b.noBank.secret, checkoutForm(b.noBank, "INV-X", "150000")), 400, "validation_error",
				"merchant has no bank account to receive the payment"},
		} {
			checkJSON(t, tt.name, b.checkout(t, tt.form), tt.status, wantError(tt.code, tt.message))
		}
		if r := b.request(t, "POST", "/v1/checkout/init", encode(good), "Content-Type", "application/json"); r.status != 400 {
			t.Errorf("JSON content type: %d %s", r.status, r.body)
		}
		if r := b.request(t, "POST", "/v1/checkout/init", "a=%zz", "Content-Type", "application/x-www-form-urlencoded"); r.status != 400 {
			t.Errorf("bad escape: %d %s", r.status, r.body)
		}
		// Nothing was created by any refusal.
		if n := b.orderCount(t, b.a); n != 1 {
			t.Fatalf("merchant A has %d orders, want only INV-DUP", n)
		}
		if n := b.orderCount(t, b.noBank); n != 0 {
			t.Fatalf("merchant C has %d orders", n)
		}
		// A browser gets the refusal as a page.
		r := b.checkout(t, append(checkoutForm(b.a, "INV-X", "150000"), pair{"signature", "AAAA"}), "Accept", "text/html,application/xhtml+xml")
		if r.status != 400 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
			!bytes.Contains(r.body, []byte("validation_error: the signature does not match the form")) || !bytes.Contains(r.body, []byte("Mã lỗi: 400")) {
			t.Fatalf("HTML refusal: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
		}
	})
}

func TestCheckoutPage(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		page := b.newOrder(t, b.a, "INV-100", "1500000")
		o := b.order(t, b.a, "INV-100")
		r := b.request(t, "GET", page, "", "Accept", "text/html")
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("page: %d %s", r.status, r.body)
		}
		qrPath := strings.Replace(page, "?t=", "/qr.png?t=", 1)
		for _, want := range []string{
			"1.500.000 ₫", "Vietcombank", `<span class="value" id="account">0071000123456</span>`, "CONG TY TNHH SAO MAI",
			`<span class="value code" id="code">` + o.PaymentCode + `</span>`, `data-copy="` + o.PaymentCode + `"`, `data-copy="1500000"`,
			`data-copy="0071000123456"`, `data-label="Sao chép" aria-live="polite" hidden>Sao chép</button>`, `data-status="awaiting"`, `<noscript><meta http-equiv="refresh" content="5"></noscript>`,
			`src="` + qrPath + `"`, `download="VietQR-INV-100.png"`, `href="https://dl.vietqr.io/pay?app=mb&amp;ba=0071000123456@vcb&amp;am=1500000&amp;tn=` + o.PaymentCode + `"`,
			`href="https://shop.example.vn/cancel"`, "Công ty TNHH Sao Mai A", "Nội dung chuyển khoản", `<html lang="vi">`,
		} {
			if !strings.Contains(string(r.body), want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if got := r.header.Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("Referrer-Policy %q", got)
		}
		if strings.Contains(string(r.body), `id="countdown"`) {
			t.Errorf("a v1 order never expires, yet the page counts down")
		}
		q := b.request(t, "GET", qrPath, "")
		if q.status != 200 || q.header.Get("Content-Type") != "image/png" || q.header.Get("Content-Disposition") != "" {
			t.Fatalf("qr: %d %s", q.status, q.header)
		}
		// "Save QR" downloads it under a name that says what it is.
		if d := b.request(t, "GET", qrPath+"&download=1", ""); d.status != 200 || !bytes.Equal(d.body, q.body) ||
			d.header.Get("Content-Disposition") != `attachment; filename="VietQR-INV-100.png"` {
			t.Fatalf("qr download: %d %s", d.status, d.header)
		}
		img, format, err := image.Decode(bytes.NewReader(q.body))
		if err != nil || format != "png" || img.Bounds().Dx() < 100 || img.Bounds().Dx() != img.Bounds().Dy() {
			t.Fatalf("qr image: %v %s %v", err, format, img)
		}

		// A wrong or missing token, another merchant, an unknown invoice: 404.
		m := pagePath.FindStringSubmatch(page)
		token := m[3]
		for _, p := range []string{
			"/v1/checkout/" + b.a.id + "/INV-100",
			"/v1/checkout/" + b.a.id + "/INV-100?t=" + strings.Repeat("0", 64),
			"/v1/checkout/" + b.b.id + "/INV-100?t=" + token,
			"/v1/checkout/SP-NOPE/INV-100?t=" + token,
			"/v1/checkout/" + b.a.id + "/INV-101?t=" + token,
			"/v1/checkout/" + b.a.id + "/INV-100/qr.png?t=" + strings.Repeat("0", 64),
		} {
			checkJSON(t, p, b.request(t, "GET", p, ""), 404, wantError("not_found", "no such checkout page: the link is wrong or has expired"))
		}

		// Partly paid: still awaiting, the QR asks for the rest.
		b.pay(t, b.a, o.PaymentCode, 500000, "FT-1")
		r = b.request(t, "GET", page, "", "Accept", "text/html")
		for _, want := range []string{`data-status="awaiting"`, "500.000 ₫", "1.000.000 ₫"} {
			if !strings.Contains(string(r.body), want) {
				t.Errorf("partly paid page lacks %q", want)
			}
		}
		// Paid: no refresh, no QR, a way back to the shop.
		b.pay(t, b.a, o.PaymentCode, 1000000, "FT-2")
		r = b.request(t, "GET", page, "", "Accept", "text/html")
		body := string(r.body)
		if !strings.Contains(body, `data-status="paid"`) || strings.Contains(body, "http-equiv=\"refresh\"") ||
			strings.Contains(body, "qr.png") || !strings.Contains(body, `href="https://shop.example.vn/ok?x=1&amp;y=2"`) {
			t.Fatalf("paid page:\n%s", body)
		}
		checkJSON(t, "qr of a paid order", b.request(t, "GET", qrPath, ""), 404, wantError("not_found", "this order has no VietQR: pay by transfer with the details shown"))

		// Cancelled.
		b.newOrder(t, b.a, "INV-200", "20000")
		if r := b.api(t, b.a, "POST", "/v1/order/cancel", `{"order_invoice_number":"INV-200"}`); r.status != 200 {
			t.Fatalf("cancel: %d %s", r.status, r.body)
		}
		r = b.request(t, "GET", b.newOrderPage(t, "INV-200"), "")
		if !strings.Contains(string(r.body), `data-status="cancelled"`) || strings.Contains(string(r.body), "refresh") ||
			!strings.Contains(string(r.body), "Đơn hàng này đã bị huỷ") {
			t.Fatalf("cancelled page:\n%s", r.body)
		}
	})
}

// newOrderPage is the hosted page path of an existing order of merchant A,
// as the order detail reports it.
func (b *bundle) newOrderPage(t *testing.T, invoice string) string {
	t.Helper()
	d := b.api(t, b.a, "GET", "/v1/order/detail/"+invoice, "").json(t)
	return d["data"].(map[string]any)["payment"].(map[string]any)["checkout_url"].(string)
}

func TestCheckoutPaymentCodeRetry(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		var mu sync.Mutex
		codes := []string{"DH11111111", "DH11111111", "DH11111111", "DH22222222"}
		b := setup(t, engine, func(h *gateway.Handler) {
			h.Sandbox = true
			h.Checkout.NewCode = func() string {
				mu.Lock()
				defer mu.Unlock()
				if len(codes) == 0 {
					return "DH99999999"
				}
				c := codes[0]
				codes = codes[1:]
				return c
			}
		})
		b.newOrder(t, b.a, "INV-1", "10000")
		page := b.newOrder(t, b.a, "INV-2", "10000") // DH11111111 is taken twice, then DH22222222
		if c1, c2 := b.order(t, b.a, "INV-1").PaymentCode, b.order(t, b.a, "INV-2").PaymentCode; c1 != "DH11111111" || c2 != "DH22222222" {
			t.Fatalf("codes %s %s", c1, c2)
		}
		// Codes are unique per company: merchant B may use DH11111111 too.
		setCodes := func(c ...string) {
			mu.Lock()
			defer mu.Unlock()
			codes = c
		}
		setCodes("DH11111111")
		b.newOrder(t, b.b, "INV-1", "10000")
		if c := b.order(t, b.b, "INV-1").PaymentCode; c != "DH11111111" {
			t.Fatalf("merchant B code %s", c)
		}
		// No free code in 5 draws of a format too large to list: a 409 naming the format.
		setCodes("DH22222222", "DH22222222", "DH22222222", "DH22222222", "DH22222222", "DH22222222")
		r := b.checkout(t, signed(b.a.secret, checkoutForm(b.a, "INV-3", "10000")))
		checkJSON(t, "no free code", r, 409, wantError("conflict",
			"payment-code format DH followed by 8 digits: 2 of 100000000 payment codes are used and 5 random draws were all taken: retry, and make suffix_to longer or put a wider format first"))
		// The sandbox page says so; a browser gets a 404 page for a bad link.
		if r := b.request(t, "GET", page, ""); !strings.Contains(string(r.body), `id="sandbox"`) {
			t.Errorf("sandbox page lacks the banner")
		}
		r = b.request(t, "GET", "/v1/checkout/"+b.a.id+"/INV-2?t=x", "", "Accept", "text/html")
		if r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.body), "Mã lỗi: 404") || strings.Contains(string(r.body), "not_found") ||
			!strings.Contains(string(r.body), "Liên kết thanh toán không đúng hoặc đã hết hạn") || strings.Contains(string(r.body), "no such checkout page") {
			t.Errorf("HTML 404: %d %s", r.status, r.body)
		}
	})
}

// TestCheckoutNeedsMatchableCodes: a merchant whose transfers' codes would
// never be extracted (no active format, or paycode off) cannot take orders.
func TestCheckoutNeedsMatchableCodes(t *testing.T) {
	b := setup(t, "sqlite")
	want := wantError("validation_error", "the merchant cannot take bank-transfer payments yet: payment codes must be on (paycode) with an active payment-code format")
	if _, err := b.db.ReplacePaymentCodeFormats(t.Context(), b.a.company.ID(), []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 6, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: false}}); err != nil {
		t.Fatal(err)
	}
	r := b.checkout(t, signed(b.a.secret, checkoutForm(b.a, "INV-1", "10000")))
	checkJSON(t, "no active format", r, 400, want)
	if _, err := b.db.Order(t.Context(), b.a.company, "INV-1"); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("an order was created: %v", err)
	}
}

// TestCheckoutPaymentCodesRunOut: a narrow format is used up to its last
// code (random draws that collide fall back to a free code), then checkout
// answers 409 naming the format, warns in the log and sets the usage metric.
func TestCheckoutPaymentCodesRunOut(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		logs := &testkit.Buffer{}
		reg := prometheus.NewRegistry()
		b := setup(t, engine, func(h *gateway.Handler) {
			h.Checkout.Logger = slog.New(slog.NewTextHandler(logs, nil))
			h.Checkout.Metrics = checkout.NewMetrics(reg)
		})
		if _, err := b.db.ReplacePaymentCodeFormats(t.Context(), b.a.company.ID(), []recon.PaymentCodeFormat{
			{Prefix: "DH", SuffixFrom: 1, SuffixTo: 1, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i := range 10 {
			inv := fmt.Sprintf("INV-%d", i)
			b.newOrder(t, b.a, inv, "10000")
			seen[b.order(t, b.a, inv).PaymentCode] = true
		}
		if len(seen) != 10 {
			t.Fatalf("10 orders got %d distinct codes: %v", len(seen), seen)
		}
		// Cancelled orders keep their codes: still none free.
		if r := b.api(t, b.a, "POST", "/v1/order/cancel", `{"order_invoice_number":"INV-0"}`); r.status != 200 {
			t.Fatalf("cancel: %d %s", r.status, r.body)
		}
		r := b.checkout(t, signed(b.a.secret, checkoutForm(b.a, "INV-10", "10000")))
		checkJSON(t, "format used up", r, 409, wantError("conflict",
			"payment-code format DH followed by 1 digit: all 10 payment codes are used by this merchant's orders (codes are never reused): make suffix_to longer or put a wider format first"))
		if _, err := b.db.Order(t.Context(), b.a.company, "INV-10"); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Fatalf("the refused checkout stored an order: %v", err)
		}
		if !strings.Contains(logs.String(), "payment-code format nearly used up") || !strings.Contains(logs.String(), "capacity=10") {
			t.Errorf("no warning in the log:\n%s", logs)
		}
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var usage float64 = -1
		for _, f := range families {
			if f.GetName() == "recon_payment_code_usage_ratio" {
				for _, m := range f.GetMetric() {
					usage = m.GetGauge().GetValue()
				}
			}
		}
		if usage != 1 {
			t.Errorf("recon_payment_code_usage_ratio = %v, want 1", usage)
		}
		// Merchant B's own codes are apart: it still checks out.
		b.newOrder(t, b.b, "INV-10", "10000")
	})
}

// TestCheckoutBoundaryShift is the finding "field boundaries can move": the
// signing string joins k=v pairs with unescaped commas, so a signed
// order_description of "note,order_amount=1,customer_id=y" followed by
// order_amount=500000 signs the same string as order_description=note,
// order_amount=1, customer_id="y,order_amount=500000". The re-split form
// must not create an order for 1 VND; the merchant's own form, whose value
// makes the shift possible, is refused too.
func TestCheckoutBoundaryShift(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		head := []pair{{"merchant", b.a.id}, {"operation", "PURCHASE"}, {"payment_method", "BANK_TRANSFER"},
			{"order_invoice_number", "INV-SHIFT"}, {"currency", "VND"}}
		merchantForm := append(append([]pair(nil), head...),
			pair{"order_description", "note,order_amount=1,customer_id=y"}, pair{"order_amount", "500000"})
		signature := sdkSign(b.a.secret, merchantForm)
		attack := append(append([]pair(nil), head...),
			pair{"order_description", "note"}, pair{"order_amount", "1"}, pair{"customer_id", "y,order_amount=500000"})
		if sdkSign(b.a.secret, attack) != signature {
			t.Fatal("the re-split form should sign the same string: the test does not reproduce the attack")
		}
		for _, tt := range []struct {
			name, field string
			form        []pair
		}{
			{"re-split form", "customer_id", append(attack, pair{"signature", signature})},
			{"merchant's form", "order_description", append(merchantForm, pair{"signature", signature})},
		} {
			message := tt.field + ` must not contain ",order_amount=": the signature joins fields with commas, so a comma followed by a signed field's name and = would move the field boundaries`
			checkJSON(t, tt.name, b.checkout(t, tt.form), 400, map[string]any{
				"error": map[string]any{"code": "validation_error", "message": message}, "message": message})
			if _, err := b.db.Order(context.Background(), b.a.company, "INV-SHIFT"); recon.ErrorCode(err) != recon.ENOTFOUND {
				t.Fatalf("%s: an order was created (err %v)", tt.name, err)
			}
		}
		// Commas and = signs are fine where they cannot name a signed field.
		ok := append(append([]pair(nil), head...), pair{"order_description", "a,b=c, order_amount=2,x_order_amount=3"}, pair{"order_amount", "500000"})
		if r := b.checkout(t, signed(b.a.secret, ok)); r.status != http.StatusSeeOther {
			t.Fatalf("harmless commas: %d %s", r.status, r.body)
		}
		if o := b.order(t, b.a, "INV-SHIFT"); o.Amount != 500000 {
			t.Fatalf("order amount %d", o.Amount)
		}
	})
}

// TestCheckoutWithAHostileUserAgent: the User-Agent is stored with the
// order; Go accepts bytes from 0x80 up in a header, which PostgreSQL refused
// to store (500). It is stored cleaned: valid UTF-8, no control characters.
func TestCheckoutWithAHostileUserAgent(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		r := b.checkout(t, signed(b.a.secret, checkoutForm(b.a, "INV-UA", "150000")), "User-Agent", "Mozilla\xff\xfe/5.0")
		if r.status != http.StatusSeeOther {
			t.Fatalf("checkout: %d %s", r.status, r.body)
		}
		o, err := b.db.Order(t.Context(), b.a.company, "INV-UA")
		if err != nil {
			t.Fatal(err)
		}
		if o.UserAgent != "Mozilla\uFFFD/5.0" {
			t.Fatalf("stored User-Agent %q", o.UserAgent)
		}
	})
}

// TestCheckoutFormOverItsLimit: the checkout route has its own body limit
// (64 KiB, applied by the mux before the input check reads the form): a
// larger form is a 400 naming the limit, and no order is made.
func TestCheckoutFormOverItsLimit(t *testing.T) {
	b := setup(t, "sqlite")
	form := append(checkoutForm(b.a, "INV-BIG", "150000"), pair{"custom_data", strings.Repeat("x", 70<<10)})
	r := b.checkout(t, signed(b.a.secret, form))
	checkJSON(t, "form over the limit", r, 400, wantError("validation_error", "the form is larger than the limit of 65536 bytes"))
	if _, err := b.db.Order(t.Context(), b.a.company, "INV-BIG"); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("an order was made: %v", err)
	}
}

// TestCheckoutCustomDataSigned: custom_data is signed when the merchant
// signs it (a changed or dropped value is refused), and marked unsigned in
// the order and its ORDER_PAID IPN when the signature leaves it out, as the
// public SDKs sign (docs/api.md, Payment gateway).
func TestCheckoutCustomDataSigned(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		ctx := context.Background()
		if r := b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn","secret_key":"whsec_abcdefghijkl"}`); r.status != 200 {
			t.Fatalf("PUT /v1/ipn: %d %s", r.status, r.body)
		}
		mismatch := "the signature does not match the form: sign the fields in the order they are posted with your secret key"
		refused := func(name, invoice string, form []pair, message string) {
			t.Helper()
			checkJSON(t, name, b.checkout(t, form), 400, map[string]any{
				"error": map[string]any{"code": "validation_error", "message": message}, "message": message})
			if _, err := b.db.Order(ctx, b.a.company, invoice); recon.ErrorCode(err) != recon.ENOTFOUND {
				t.Fatalf("%s: an order was created (err %v)", name, err)
			}
		}

		// Signed by the merchant: kept as signed.
		form := append(checkoutForm(b.a, "INV-S", "150000"), pair{"custom_data", `["vip"]`})
		sig := reconSign(b.a.secret, form)
		if sig == sdkSign(b.a.secret, form) {
			t.Fatal("custom_data does not change the signature: the test signs it not")
		}
		changed := append(checkoutForm(b.a, "INV-S", "150000"), pair{"custom_data", `["discount:100%"]`}, pair{"signature", sig})
		refused("signed custom_data changed", "INV-S", changed, mismatch)
		refused("signed custom_data dropped", "INV-S", append(checkoutForm(b.a, "INV-S", "150000"), pair{"signature", sig}), mismatch)
		shift := append(checkoutForm(b.a, "INV-S", "150000"), pair{"custom_data", "x,order_amount=1"})
		refused("signed custom_data moving a boundary", "INV-S", append(shift, pair{"signature", reconSign(b.a.secret, shift)}),
			`custom_data must not contain ",order_amount=": the signature joins fields with commas, so a comma followed by a signed field's name and = would move the field boundaries`)
		named := append(checkoutForm(b.a, "INV-S", "150000"), pair{"order_id", `a,custom_data=["vip"]`})
		refused("a signed value naming custom_data", "INV-S", append(named, pair{"signature", reconSign(b.a.secret, named)}),
			`order_id must not contain ",custom_data=": the signature joins fields with commas, so a comma followed by a signed field's name and = would move the field boundaries`)
		if r := b.checkout(t, append(form, pair{"signature", sig})); r.status != http.StatusSeeOther {
			t.Fatalf("signed custom_data: %d %s", r.status, r.body)
		}

		// Signed as the public SDKs sign (custom_data left out), or added by
		// the payer: taken, marked unsigned. Unsigned, it moves no boundary.
		unsigned := append(signed(b.a.secret, checkoutForm(b.a, "INV-U", "200000")), pair{"custom_data", "x,order_amount=1"})
		if r := b.checkout(t, unsigned); r.status != http.StatusSeeOther {
			t.Fatalf("unsigned custom_data: %d %s", r.status, r.body)
		}
		// No custom_data: nothing the payer wrote.
		b.newOrder(t, b.a, "INV-E", "300000")

		for invoice, want := range map[string]struct {
			data   string
			signed bool
		}{"INV-S": {`["vip"]`, true}, "INV-U": {`["x,order_amount=1"]`, false}, "INV-E": {`[]`, true}} {
			o := b.order(t, b.a, invoice)
			if o.CustomData != want.data || o.CustomDataSigned != want.signed {
				t.Fatalf("%s: custom_data %s signed %v, want %s %v", invoice, o.CustomData, o.CustomDataSigned, want.data, want.signed)
			}
			b.pay(t, b.a, o.PaymentCode, o.Amount, "FT-"+invoice)
		}
		ds, err := b.db.Deliveries(ctx, b.a.company, recon.DeliveryFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, d := range ds {
			var body struct {
				Order struct {
					Invoice          string          `json:"order_invoice_number"`
					CustomData       json.RawMessage `json:"custom_data"`
					CustomDataSigned *bool           `json:"custom_data_signed"`
				} `json:"order"`
			}
			if err := json.Unmarshal(d.Payload, &body); err != nil || d.Event != recon.IPNOrderPaid || body.Order.CustomDataSigned == nil {
				t.Fatalf("IPN %s %s: %v", d.Event, d.Payload, err)
			}
			got[body.Order.Invoice] = fmt.Sprintf("%s %v", body.Order.CustomData, *body.Order.CustomDataSigned)
		}
		want := map[string]string{"INV-S": `["vip"] true`, "INV-U": `["x,order_amount=1"] false`, "INV-E": `[] true`}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ORDER_PAID custom_data: %v, want %v", got, want)
		}
	})
}
