package hub_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"recon"
	"recon/web/browsertest"
)

// TestLinkBrowserPhoneTestMode links a sandbox account on a phone-sized
// screen (390×844, touch) as a tester would, from the merchant's page: the
// consent before the bank details, the sandbox identities listed with a
// button that fills the form, the OTP that works, and at the end (no
// completion_redirect_uri) a way back to the merchant's page. Nothing is
// wider than the screen and every control is at least 44 px. The page
// does not depend on the engine: SQLite only. Screenshots under make
// screenshots.
func TestLinkBrowserPhoneTestMode(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite")
	if err := b.store.SetHubBranding(t.Context(), b.company.Tenant(), &recon.HubBranding{DisplayName: "Cửa hàng Hoa Sen", PrimaryColor: "#0b3d2e"}); err != nil {
		t.Fatal(err)
	}
	cxid := linkSetup(t, b, "phone")
	_, p := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT"}`)
	// The merchant's page, on another origin (localhost; the hub answers on 127.0.0.1).
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="vi"><meta charset="utf-8"><title>Hoa Sen</title><a id="go" href="` + p.url + `">Liên kết ngân hàng</a></html>`))
	}))
	t.Cleanup(shop.Close)
	shopURL := strings.Replace(shop.URL, "127.0.0.1", "localhost", 1)

	tab := browsertest.New(t, browsertest.Options{Mobile: true, Language: "vi"})
	do, click, text := browsertest.Steps(t, tab)
	eval := func(expr string) string {
		t.Helper()
		c, cancel := context.WithTimeout(tab, 20*time.Second)
		defer cancel()
		v, err := chromedp.Run(c, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	tap := func(sel string) {
		t.Helper()
		c, cancel := context.WithTimeout(tab, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(c, chromedp.Click(sel)); err != nil {
			t.Fatalf("tap %s: %v", sel, err)
		}
	}
	fits := func(what string) {
		t.Helper()
		if v := eval(`String(document.scrollingElement.scrollWidth <= window.innerWidth) + " " + document.scrollingElement.scrollWidth + "/" + window.innerWidth`); !strings.HasPrefix(v, "true") {
			t.Errorf("%s: wider than the screen: %s", what, v)
		}
		small := eval(`Array.from(document.querySelectorAll("button, a, summary, .banks label")).filter(function (e) {
			var r = e.getBoundingClientRect(); return r.width > 0 && (r.height < 44 || r.width < 44);
		}).map(function (e) { var r = e.getBoundingClientRect(); return (e.id || e.textContent.trim()) + " " + r.width + "x" + r.height; }).join("; ")`)
		if small != "" {
			t.Errorf("%s: controls smaller than 44 px: %s", what, small)
		}
	}

	do("the shop", chromedp.Navigate(shopURL))
	click("#go")
	do("the first step", chromedp.WaitVisible("#consent"))
	if got := text("#consent-title"); got != "Trước khi bạn liên kết" {
		t.Errorf("consent title %q", got)
	}
	if got := eval(`String(document.getElementById("consent").getBoundingClientRect().top < document.getElementById("next").getBoundingClientRect().top)`); got != "true" {
		t.Errorf("the consent is not above Continue")
	}
	fits("the first step")
	browsertest.Screenshot(t, tab, "hub-phone-consent-vi.png")
	tap(`input[name="bank"][value="MB"]`)
	click("#next")
	do("the details step", chromedp.WaitVisible("#test-ids button.fill"))
	fits("the details step")
	tap("#test-ids button.fill") // NGUYEN VAN AN, the first MBBank individual
	if got := eval(`[document.getElementById("account_number").value, document.getElementById("national_id").value, document.getElementById("phone").value].join(" ")`); got != mbIndividual+" "+mbNationalID+" "+mbPhone {
		t.Errorf("filled %q", got)
	}
	browsertest.Screenshot(t, tab, "hub-phone-test-accounts-vi.png")
	click("#next")
	do("the OTP step", chromedp.WaitVisible("#test-otp button.fill"))
	if got := text("#holder"); got != "NGUYEN VAN AN" {
		t.Errorf("holder %q", got)
	}
	tap("#test-otp button.fill")
	fits("the OTP step")
	browsertest.Screenshot(t, tab, "hub-phone-test-otp-vi.png")
	click("#next")
	do("done", chromedp.WaitVisible("#back-to-merchant"))
	if got := eval(`document.getElementById("back-to-merchant").href`); !strings.HasPrefix(got, shopURL) {
		t.Errorf("the way back goes to %q, want the shop %s", got, shopURL)
	}
	fits("the end")
	browsertest.Screenshot(t, tab, "hub-phone-done-way-back-vi.png")
	click("#back-to-merchant")
	do("back at the shop", chromedp.WaitVisible("#go"))
}
