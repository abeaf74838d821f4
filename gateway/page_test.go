package gateway_test

import (
	"context"
	"html"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/gateway"
	"recon/orders"
	"recon/sqlstore/dbtest"
)

// visibleText is the text a page shows: its tags, scripts and styles
// removed, entities decoded.
func visibleText(page string) string {
	page = regexp.MustCompile(`(?s)<(script|style)[^>]*>.*?</(script|style)>`).ReplaceAllString(page, " ")
	page = regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(page, " ")
	return html.UnescapeString(page)
}

// foreignWords returns the entries of the other language's catalogue that
// a page in lang shows (whole words; the entries both languages share,
// such as a bank's name, do not count).
func foreignWords(lang, page string) []string {
	other := "en"
	if lang == "en" {
		other = "vi"
	}
	own := map[string]bool{}
	for _, v := range gateway.PageText[lang] {
		own[v] = true
	}
	// The order line carries the merchant's own words (its description).
	page = regexp.MustCompile(`<div class="note" id="order">[^<]*</div>`).ReplaceAllString(page, "")
	text := visibleText(page)
	var bad []string
	for k, v := range gateway.PageText[other] {
		if own[v] || k == "other_lang" {
			continue
		}
		if regexp.MustCompile(`(^|[^\p{L}\p{N}])` + regexp.QuoteMeta(v) + `($|[^\p{L}\p{N}])`).MatchString(text) {
			bad = append(bad, v)
		}
	}
	sort.Strings(bad)
	return bad
}

// TestCheckoutPageLanguage: the checkout page speaks Vietnamese unless the
// payer picks English (?lang=en, then remembered in a cookie), and a page
// in one language shows no word of the other's catalogue: every state
// (awaiting, partly paid, paid, cancelled, expired) and the error pages.
func TestCheckoutPageLanguage(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		ctx := context.Background()
		if err := b.db.SetHubBranding(ctx, b.a.company, &recon.HubBranding{DisplayName: "Cửa hàng Hoa Sen", LogoURL: "https://shop.example.vn/logo.png"}); err != nil {
			t.Fatal(err)
		}
		awaiting := b.newOrder(t, b.a, "INV-1", "150000")
		partly := b.newOrder(t, b.a, "INV-2", "150000")
		b.pay(t, b.a, b.order(t, b.a, "INV-2").PaymentCode, 50000, "FT-2")
		paid := b.newOrder(t, b.a, "INV-3", "150000")
		b.pay(t, b.a, b.order(t, b.a, "INV-3").PaymentCode, 150000, "FT-3")
		cancelled := b.newOrder(t, b.a, "INV-4", "150000")
		if r := b.api(t, b.a, "POST", "/v1/order/cancel", `{"order_invoice_number":"INV-4"}`); r.status != 200 {
			t.Fatalf("cancel: %d %s", r.status, r.body)
		}
		svc := &orders.Service{Store: b.db, Clock: b.clock}
		if _, err := svc.Create(ctx, b.a.company, recon.OrderInput{InvoiceNumber: "V2-EXP", Amount: 1000, BankAccountID: b.a.account, ExpiresIn: ptr(60)}); err != nil {
			t.Fatal(err)
		}
		expired := b.newOrderPage(t, "V2-EXP")
		if _, err := b.db.ExpireOrders(ctx, b.clock.Now().Add(time.Minute), nil); err != nil {
			t.Fatal(err)
		}
		bad := "/v1/checkout/" + b.a.id + "/INV-1?t=" + strings.Repeat("0", 64)
		refused := func(lang string) response {
			h := []string{"Accept", "text/html"}
			if lang == "en" {
				h = append(h, "Cookie", "recon_checkout_lang=en")
			}
			return b.checkout(t, append(checkoutForm(b.a, "INV-X", "150000"), pair{"signature", "AAAA"}), h...)
		}
		pages := []struct{ name, path, status, vi, en string }{
			{"awaiting", awaiting, "awaiting", "Đang chờ thanh toán", "Awaiting payment"},
			{"partly paid", partly, "awaiting", "Đã nhận 50.000 ₫ · Còn lại", "Received 50.000 ₫ · Still due"},
			{"paid", paid, "paid", "Cửa hàng đã nhận đủ tiền", "The shop has received the full amount"},
			{"cancelled", cancelled, "cancelled", "Đơn hàng này đã bị huỷ", "This order was cancelled"},
			{"expired", expired, "expired", "Đơn hàng này đã hết hạn thanh toán", "This order can no longer be paid"},
			{"bad link", bad, "", "Liên kết thanh toán không đúng hoặc đã hết hạn", "This payment link is wrong or has expired"},
		}
		for _, p := range pages {
			for _, lang := range []string{"vi", "en"} {
				path := p.path
				if lang == "en" {
					path += "&lang=en"
				}
				r := b.request(t, "GET", path, "", "Accept", "text/html")
				body := string(r.body)
				want := map[string]string{"vi": p.vi, "en": p.en}[lang]
				if !strings.Contains(visibleText(body), want) || !strings.Contains(body, `<html lang="`+lang+`">`) {
					t.Errorf("%s page in %s lacks %q:\n%s", p.name, lang, want, body)
				}
				if p.status != "" && !strings.Contains(body, `id="page" data-status="`+p.status+`"`) {
					t.Errorf("%s page in %s: not %s", p.name, lang, p.status)
				}
				if words := foreignWords(lang, body); len(words) > 0 {
					t.Errorf("%s page in %s shows the other language's %q", p.name, lang, words)
				}
				if p.status != "" && !strings.Contains(body, "Cửa hàng Hoa Sen") || p.status != "" && !strings.Contains(body, `src="https://shop.example.vn/logo.png"`) {
					t.Errorf("%s page in %s lacks the merchant's branding", p.name, lang)
				}
			}
		}
		for _, lang := range []string{"vi", "en"} {
			r := refused(lang)
			if words := foreignWords(lang, string(r.body)); r.status != 400 || len(words) > 0 ||
				!strings.Contains(string(r.body), map[string]string{"vi": "Không thể bắt đầu thanh toán", "en": "The payment could not start"}[lang]) {
				t.Errorf("refused checkout in %s: %d, foreign %q\n%s", lang, r.status, words, r.body)
			}
			if strings.Contains(string(r.body), `id="lang"`) {
				t.Errorf("the refused form's page links to the form's URL in another language (a GET of a POST route)")
			}
		}

		// ?lang=en sets the cookie; the switch links to the other language.
		r := b.request(t, "GET", awaiting+"&lang=en", "", "Accept", "text/html")
		c := r.header.Get("Set-Cookie")
		if !strings.HasPrefix(c, "recon_checkout_lang=en;") || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Lax") {
			t.Errorf("Set-Cookie %q", c)
		}
		if !strings.Contains(string(r.body), `lang="vi" hreflang="vi">Tiếng Việt</a>`) || !strings.Contains(string(r.body), "lang=vi") {
			t.Errorf("the English page offers no way back to Vietnamese")
		}
		r = b.request(t, "GET", awaiting, "", "Accept", "text/html", "Cookie", "recon_checkout_lang=en")
		if !strings.Contains(string(r.body), `<html lang="en">`) || r.header.Get("Set-Cookie") != "" {
			t.Errorf("the cookie's language is not kept: %s", r.header.Get("Set-Cookie"))
		}
		r = b.request(t, "GET", awaiting+"&lang=xx", "", "Accept", "text/html", "Cookie", "recon_checkout_lang=fr")
		if !strings.Contains(string(r.body), `<html lang="vi">`) || r.header.Get("Set-Cookie") != "" {
			t.Errorf("an unknown language is not Vietnamese")
		}
	})
}

// TestCheckoutPageExpiry: an order with an expiry (API v2) shows the time
// left, counted from the server's clock, and the deadline in the business
// time zone; once the deadline passed, before and after the maintenance
// loop expired it, the page says expired and offers neither the QR nor the
// transfer details. A partly paid order does not expire: no countdown.
func TestCheckoutPageExpiry(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		ctx := context.Background()
		svc := &orders.Service{Store: b.db, Clock: b.clock}
		o, err := svc.Create(ctx, b.a.company, recon.OrderInput{InvoiceNumber: "V2-90", Amount: 20000, BankAccountID: b.a.account, ExpiresIn: ptr(90)})
		if err != nil {
			t.Fatal(err)
		}
		page := b.newOrderPage(t, "V2-90")
		qr := strings.Replace(page, "?t=", "/qr.png?t=", 1)
		body := string(b.request(t, "GET", page, "").body)
		for _, want := range []string{`id="countdown" data-remaining="90"`, `<strong id="left">00:01:30</strong>`, "Hạn thanh toán 09:01 01/03/2026", `id="qr"`, `id="expired-note" hidden`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		b.clock.Advance(89*time.Second + 500*time.Millisecond)
		if body := string(b.request(t, "GET", page, "").body); !strings.Contains(body, `data-remaining="1"`) {
			t.Errorf("half a second left is shown as 1 second:\n%s", body)
		}
		b.clock.Advance(time.Second)
		for _, when := range []string{"past its deadline", "expired by the maintenance loop"} {
			body := string(b.request(t, "GET", page, "").body)
			if !strings.Contains(body, `id="page" data-status="expired"`) || strings.Contains(body, `id="qr"`) || strings.Contains(body, o.VAs[0].Number) ||
				strings.Contains(body, `id="countdown"`) || strings.Contains(body, "dl.vietqr.io") || !strings.Contains(body, "Đã hết hạn") {
				t.Errorf("%s:\n%s", when, body)
			}
			checkJSON(t, "qr "+when, b.request(t, "GET", qr, ""), 404, wantError("not_found", "this order has no VietQR: pay by transfer with the details shown"))
			if n, err := b.db.ExpireOrders(ctx, b.clock.Now(), nil); err != nil || n > 1 {
				t.Fatalf("expire: %d %v", n, err)
			}
		}

		// Partly paid: it no longer expires, so no countdown.
		o2, err := svc.Create(ctx, b.a.company, recon.OrderInput{InvoiceNumber: "V2-PART", Amount: 20000, BankAccountID: b.a.account, ExpiresIn: ptr(60),
			VA: recon.VAInput{AmountMode: recon.VAPartial}})
		if err != nil {
			t.Fatal(err)
		}
		b.pay(t, b.a, o2.VAs[0].Number, 5000, "FT-P")
		b.clock.Advance(2 * time.Minute)
		body = string(b.request(t, "GET", b.newOrderPage(t, "V2-PART"), "").body)
		if strings.Contains(body, `id="countdown"`) || !strings.Contains(body, `id="page" data-status="awaiting"`) {
			t.Errorf("partly paid page:\n%s", body)
		}
	})
}
