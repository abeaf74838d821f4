package oauth

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"recon"
)

// TestConsentPageSpeaksBothLanguages: every scope a client may be allowed
// (recon.Scopes: hub, delivery:*, exception:write and any scope to come) has
// its words in Vietnamese and English, and so has every message of the
// pages; the login and consent page speaks Vietnamese by default, the
// language of ui_locales or Accept-Language otherwise, and links to itself
// in the other language; a failed sign-in and the error page speak the
// page's language.
func TestConsentPageSpeaksBothLanguages(t *testing.T) {
	for _, scope := range recon.Scopes {
		vi, en := scopeText[scope]["vi"], scopeText[scope]["en"]
		if vi == "" || en == "" || vi == en || vi == scope || en == scope {
			t.Errorf("scope %q: Vietnamese %q, English %q; want words in both", scope, vi, en)
		}
	}
	for scope := range scopeText {
		if !strings.Contains(" "+strings.Join(recon.Scopes, " ")+" ", " "+scope+" ") {
			t.Errorf("scopeText describes %q, which is not a scope", scope)
		}
	}
	for _, table := range []map[lang]map[string]string{messages, errorText} {
		for key := range table["en"] {
			if table["vi"][key] == "" {
				t.Errorf("message %q has no Vietnamese", key)
			}
		}
		for key := range table["vi"] {
			if table["en"][key] == "" {
				t.Errorf("message %q has no English", key)
			}
		}
	}

	b := setup(t, "sqlite")
	b.all, b.allSecret = b.createClient(t, "all", b.company.ID, true, recon.Scopes)
	_, challenge := newPKCE()
	params := authorizeParams(b.all.ID, challenge, strings.Join(recon.Scopes, " "))
	get := func(params url.Values, acceptLanguage string) page {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/oauth/authorize?"+params.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Language", acceptLanguage)
		return b.do(t, req)
	}
	wantLang := func(name string, p page, l lang) {
		t.Helper()
		if p.status != http.StatusOK || !strings.Contains(p.body, `<html lang="`+string(l)+`">`) {
			t.Fatalf("%s: %d, want a page in %s: %s", name, p.status, l, p.body)
		}
		other := lang("en")
		if l == "en" {
			other = "vi"
		}
		for _, scope := range recon.Scopes {
			if !strings.Contains(p.body, html.EscapeString(scopeText[scope][l])) {
				t.Errorf("%s: the page lacks the %s words of %q", name, l, scope)
			}
			if strings.Contains(p.body, html.EscapeString(scopeText[scope][other])) {
				t.Errorf("%s: the page shows the %s words of %q", name, other, scope)
			}
		}
		for _, key := range []string{"heading", "email", "password", "allow", "deny"} {
			if !strings.Contains(p.body, html.EscapeString(messages[l][key])) {
				t.Errorf("%s: the page lacks %q in %s", name, key, l)
			}
		}
	}

	vi := get(params, "fr-FR, vi;q=0.5")
	wantLang("Accept-Language vi", vi, "vi")
	wantLang("no language the page speaks", get(params, "fr-FR"), "vi")
	wantLang("Accept-Language en", get(params, "en-GB,en;q=0.9"), "en")
	withLocales := url.Values{}
	for k, v := range params {
		withLocales[k] = v
	}
	withLocales.Set("ui_locales", "de en")
	wantLang("ui_locales en over Accept-Language vi", get(withLocales, "vi"), "en")

	// The language link reaches the same request in English.
	m := regexp.MustCompile(`<a href="(authorize\?[^"]*)" hreflang="en"`).FindStringSubmatch(vi.body)
	if m == nil {
		t.Fatalf("the Vietnamese page has no link to English: %s", vi.body)
	}
	link, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	en := get(link.Query(), "vi")
	wantLang("the language link", en, "en")
	if en.hidden.Get("ui_locales") != "en" || en.hidden.Get("state") != params.Get("state") {
		t.Errorf("the language link's request: %v", en.hidden)
	}

	// A failed sign-in answers in the page's language, which the hidden
	// ui_locales keeps.
	p := b.submit(t, en.hidden, testEmail, "wrong", "allow")
	if !strings.Contains(p.body, messages["en"]["wrong_login"]) || !strings.Contains(p.body, `<html lang="en">`) {
		t.Errorf("failed sign-in in English: %d %s", p.status, p.body)
	}
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/oauth/authorize", strings.NewReader(url.Values(vi.hidden).Encode()+"&email=ana%40example.com&password=wrong&consent=allow"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept-Language", "vi")
	p = b.do(t, req)
	if !strings.Contains(p.body, messages["vi"]["wrong_login"]) || !strings.Contains(p.body, `<html lang="vi">`) {
		t.Errorf("failed sign-in in Vietnamese: %d %s", p.status, p.body)
	}

	// The error page (an unknown client: no redirect).
	bad := url.Values{}
	for k, v := range params {
		bad[k] = v
	}
	bad.Set("client_id", "nobody")
	for l, al := range map[lang]string{"vi": "vi-VN", "en": "en"} {
		p := get(bad, al)
		if p.status < 400 || p.location != nil || !strings.Contains(p.body, `<html lang="`+string(l)+`">`) ||
			!strings.Contains(p.body, html.EscapeString(messages[l]["error_heading"])) ||
			!strings.Contains(p.body, html.EscapeString(errorText[l]["invalid_client"])) {
			t.Errorf("error page in %s: %d %s", l, p.status, p.body)
		}
	}
}
