package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"recon"
	"recon/gateway"
	"recon/orders"
	"recon/web/browsertest"
)

// TestCheckoutBrowserPhone walks the hosted checkout page in headless
// Chromium on a phone-sized screen (390×844, touch), as a payer: nothing
// wider than the screen, every button and link at least 44 px, the copy
// buttons put the account, amount and memo on the clipboard and say so,
// the banking-app links carry the transfer, the language switch and its
// cookie, the page reloads itself when the money arrives, an order that
// expires while the page is open (3 s) says so and stops offering the QR, and a
// bad link gets a Vietnamese page. The pages do not depend on the engine:
// SQLite only. Screenshots under make screenshots.
func TestCheckoutBrowserPhone(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", func(h *gateway.Handler) { h.PagePoll = 100 * time.Millisecond })
	ctx := context.Background()
	if err := b.db.SetHubBranding(ctx, b.a.company, &recon.HubBranding{DisplayName: "Cửa hàng Hoa Sen",
		LogoURL: "https://logo.invalid/hoa-sen.png"}); err != nil { // a logo that does not load: no broken image
		t.Fatal(err)
	}
	page := b.srv.URL + b.newOrder(t, b.a, "DH-2026-0815", "1250000")
	o := b.order(t, b.a, "DH-2026-0815")

	tab := browsertest.New(t, browsertest.Options{Mobile: true, Language: "vi"})
	do, click, text := browsertest.Steps(t, tab)
	eval := func(expr string, opts ...chromedp.EvaluateOption) string {
		t.Helper()
		c, cancel := context.WithTimeout(tab, 20*time.Second)
		defer cancel()
		v, err := chromedp.Run(c, chromedp.Evaluate[string](expr, opts...))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	// wait waits until expr holds, across the page's own reloads.
	wait := func(expr string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			c, cancel := context.WithDeadline(tab, deadline)
			_, err := chromedp.Run(c, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Until(deadline)), chromedp.WithPollingInterval(20*time.Millisecond)))
			cancel()
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context with specified id") || time.Now().After(deadline) {
				t.Fatalf("waiting for %s: %v", expr, err)
			}
		}
	}
	// tap taps a control that loads no page.
	tap := func(sel string) {
		t.Helper()
		c, cancel := context.WithTimeout(tab, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(c, chromedp.Click(sel)); err != nil {
			t.Fatalf("tap %s: %v", sel, err)
		}
	}
	// fits checks the page fits the phone's width and its controls are
	// large enough to tap.
	fits := func(what string) {
		t.Helper()
		if v := eval(`String(document.scrollingElement.scrollWidth <= window.innerWidth) + " " + document.scrollingElement.scrollWidth + "/" + window.innerWidth`); !strings.HasPrefix(v, "true") {
			t.Errorf("%s: wider than the screen: %s", what, v)
		}
		small := eval(`Array.from(document.querySelectorAll("button, a, summary")).filter(function (e) {
			var r = e.getBoundingClientRect(); return r.width > 0 && (r.height < 44 || r.width < 44);
		}).map(function (e) { var r = e.getBoundingClientRect(); return (e.id || e.textContent.trim()) + " " + r.width + "x" + r.height; }).join("; ")`)
		if small != "" {
			t.Errorf("%s: controls smaller than 44 px: %s", what, small)
		}
	}
	// The clipboard may be read by the test.
	origin := b.srv.URL
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := cdp.Call(tab, chromedp.FromContext(tab).Browser, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: origin}); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}

	// Without scripts the copy buttons are hidden and the values are
	// selectable text (user-select: all); the page's script shows them.
	// Vietnamese by default: the merchant's name, the amount, the details.
	do("open the page", chromedp.Navigate(page), chromedp.WaitVisible("#copy-memo"))
	if got := eval(`document.documentElement.lang`); got != "vi" {
		t.Errorf("lang %q", got)
	}
	for sel, want := range map[string]string{"#merchant": "Cửa hàng Hoa Sen", "#amount": "1.250.000 ₫", "#status": "Đang chờ thanh toán",
		"#account": "0071000123456", "#code": o.PaymentCode, "#copy-account": "Sao chép", "#save-qr": "Lưu mã QR", "#lang": "English"} {
		if got := strings.TrimSpace(text(sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	wait(`!document.getElementById("logo")`) // the logo that does not load is gone
	if got := eval(`document.querySelector("#save-qr").getAttribute("download") + " " + document.querySelector("#qr").naturalWidth`); !strings.HasPrefix(got, "VietQR-DH-2026-0815.png ") || strings.HasSuffix(got, " 0") {
		t.Errorf("save QR / the QR image: %s", got)
	}
	apps := eval(`Array.from(document.querySelectorAll("#apps a")).map(function (a) { return a.textContent + "=" + a.href; }).join("\n")`)
	if !strings.Contains(apps, "MBBank=https://dl.vietqr.io/pay?app=mb&ba=0071000123456@vcb&am=1250000&tn="+o.PaymentCode) || strings.Count(apps, "\n") != 4 {
		t.Errorf("banking apps:\n%s", apps)
	}
	fits("the page")
	browsertest.Screenshot(t, tab, "checkout-phone-vi.png")

	// Tap to copy: each button copies its value and says so.
	for id, want := range map[string]string{"copy-account": "0071000123456", "copy-amount": "1250000", "copy-memo": o.PaymentCode} {
		tap("#" + id)
		wait(`document.getElementById("` + id + `").getAttribute("data-copied") === "1"`)
		if got := text("#" + id); !strings.Contains(got, "Đã sao chép") {
			t.Errorf("%s says %q after the tap", id, got)
		}
		if got := eval(`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise); got != want {
			t.Errorf("%s copied %q, want %q", id, got, want)
		}
	}
	browsertest.Screenshot(t, tab, "checkout-phone-copied-vi.png")

	// English by the switch, kept by the cookie; back to Vietnamese.
	click("#lang")
	do("English", chromedp.WaitVisible("#copy-memo"))
	if got := eval(`document.documentElement.lang + " " + document.getElementById("status").textContent`); got != "en Awaiting payment" {
		t.Errorf("after the switch: %q", got)
	}
	fits("the English page")
	browsertest.Screenshot(t, tab, "checkout-phone-en.png")
	do("reopen", chromedp.Navigate(page), chromedp.WaitVisible("#copy-memo"))
	if got := strings.TrimSpace(text("#copy-memo")); got != "Copy" {
		t.Errorf("the cookie's English is not kept: %q", got)
	}
	click("#lang")
	do("Vietnamese", chromedp.WaitVisible("#copy-memo"))
	if got := strings.TrimSpace(text("#status")); got != "Đang chờ thanh toán" {
		t.Errorf("back in Vietnamese: %q", got)
	}

	// The money arrives while the page is open: it reloads as paid.
	b.pay(t, b.a, o.PaymentCode, 1250000, "FT-PHONE")
	wait(`document.getElementById("page") && document.getElementById("page").getAttribute("data-status") === "paid"`)
	if got := strings.TrimSpace(text("#status")); got != "Đã thanh toán" {
		t.Errorf("paid: %q", got)
	}
	fits("the paid page")
	browsertest.Screenshot(t, tab, "checkout-phone-paid-vi.png")

	// An order (API v2) that expires 3 seconds after the page opens: the
	// countdown reaches zero, the page says expired and the QR is gone.
	svc := &orders.Service{Store: b.db, Clock: b.clock}
	if _, err := svc.Create(ctx, b.a.company, recon.OrderInput{InvoiceNumber: "V2-SOON", Amount: 99000, BankAccountID: b.a.account, ExpiresIn: ptr(3)}); err != nil {
		t.Fatal(err)
	}
	do("open the expiring page", chromedp.Navigate(b.srv.URL+b.newOrderPage(t, "V2-SOON")))
	// Read at once: on a slow machine the count may already be over.
	if got := eval(`document.getElementById("left") ? document.getElementById("left").textContent : "over"`); got != "00:00:03" && got != "00:00:02" && got != "00:00:01" && got != "over" {
		t.Errorf("countdown %q", got)
	}
	wait(`document.getElementById("page").getAttribute("data-status") === "expired"`)
	if got := eval(`[document.getElementById("status").textContent, String(!document.getElementById("qr")), String(!document.getElementById("pay")),
		String(!document.getElementById("expired-note").hidden)].join(" ")`); got != "Đã hết hạn true true true" {
		t.Errorf("expired: %q", got)
	}
	fits("the expired page")
	browsertest.Screenshot(t, tab, "checkout-phone-expired-vi.png")

	// A bad link: a page that says so, in Vietnamese.
	do("bad link", chromedp.Navigate(b.srv.URL+"/v1/checkout/"+b.a.id+"/DH-2026-0815?t="+strings.Repeat("0", 64)), chromedp.WaitVisible("#title"))
	if got := text("#title"); got != "Liên kết thanh toán không đúng hoặc đã hết hạn" {
		t.Errorf("bad link: %q", got)
	}
	fits("the bad link's page")
	browsertest.Screenshot(t, tab, "checkout-phone-badlink-vi.png")

	// The same page on a desktop: the QR first, nothing wider than the window.
	desktop := b.srv.URL + b.newOrder(t, b.a, "DH-2026-0816", "480000")
	dctx, dcancel := context.WithTimeout(tab, 20*time.Second)
	defer dcancel()
	if err := chromedp.Do(dctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("desktop viewport: %v", err)
	}
	if err := chromedp.Do(dctx, chromedp.Navigate(desktop)); err != nil {
		t.Fatalf("desktop navigate: %v", err)
	}
	wait(`document.getElementById("qr") !== null && document.getElementById("qr").complete && document.getElementById("qr").naturalWidth > 0`)
	if got := eval(`String(document.getElementById("qr-card").getBoundingClientRect().top < document.getElementById("transfer").getBoundingClientRect().top)`); got != "true" {
		t.Errorf("on a desktop the QR is not first")
	}
	fits("the desktop page")
	browsertest.Screenshot(t, tab, "checkout-desktop-vi.png")
}
