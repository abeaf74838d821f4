package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"recon"
	"recon/internal/testkit"
	"recon/oauth"
	"recon/sqlstore/dbtest"
)

// The settings' OAuth clients and hub webhook (docs/dashboard.md) on a real
// server, both engines: what the dashboard makes works on the hub's API (a
// client's token, the webhook the API saves), so they need the whole
// server; the other settings are tested in package dashboard.
func TestDashboardClientsWebhook(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		for _, c := range []struct {
			name string
			fn   func(*testing.T, *dashEnv)
		}{{"Clients", dashClients}, {"Webhook", dashWebhook}} {
			if !t.Run(c.name, func(t *testing.T) { c.fn(t, e) }) {
				return
			}
		}
	})
}

var (
	newClientIDField = regexp.MustCompile(`<code id="new-client-id">([^<]+)</code>`)
	newSecretField   = regexp.MustCompile(`<code id="new-secret">([^<]+)</code>`)
	newSigningField  = regexp.MustCompile(`<code id="new-signing-secret">([^<]+)</code>`)
)

func dashClients(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")
	db := dbtest.OpenURL(t, e.dbURL)
	ctx := context.Background()
	company, _ := parseID(e.live.company)
	clients := func(test bool) []*recon.Client {
		t.Helper()
		cs, _, err := db.Clients(ctx, company, test, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	before := clients(false)
	status, body := b.Get("/dashboard/settings")
	if status != 200 || !strings.Contains(body, `id="clients"`) || !strings.Contains(body, `id="revoke-`+before[0].ID+`"`) || strings.Contains(body, before[0].SecretHash) {
		t.Fatalf("clients listed: %d %s", status, body)
	}

	// Refused: no name, an unknown scope, no scope, a bad redirect URI; 400 naming the field, nothing stored, the form kept (escaped).
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"name": {"  "}, "scope": {"company"}}, "name is required"},
		{url.Values{"name": {"<b>ERP</b>"}, "scope": {"root"}}, "unknown scope &#34;root&#34;"},
		{url.Values{"name": {"<b>ERP</b>"}}, "at least one scope is required"},
		{url.Values{"name": {"x"}, "scope": {"company"}, "redirect_uris": {"https://ok.example/cb\njavascript:alert(1)"}}, "redirect_uri &#34;javascript:alert(1)&#34; must be"},
	} {
		status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/clients", c.form)
		if status != 400 || !strings.Contains(body, `id="client-error"`) || !strings.Contains(body, c.want) || strings.Contains(body, "<b>ERP") {
			t.Errorf("client %v: %d %s", c.form, status, body)
		}
	}
	if n := len(clients(false)); n != len(before) {
		t.Fatalf("refused forms stored %d clients", n-len(before))
	}

	// Created: the id and secret shown once; the secret is stored as its hash only and gets a hub token.
	status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/clients", url.Values{"name": {"<b>ERP</b> sync"}, "scope": {"hub", "company"}})
	id, secret := newClientIDField.FindStringSubmatch(body), newSecretField.FindStringSubmatch(body)
	if status != 200 || id == nil || secret == nil || strings.Contains(body, "<b>ERP") || !strings.Contains(body, "&lt;b&gt;ERP&lt;/b&gt; sync") {
		t.Fatalf("create client: %d %s", status, body)
	}
	stored, err := db.Client(ctx, id[1])
	if err != nil || stored.SecretHash != oauth.HashClientSecret(secret[1]) || stored.Test || !slices.Equal(stored.Scopes, []string{"hub", "company"}) ||
		strings.HasPrefix(id[1], recon.TestClientPrefix) {
		t.Fatalf("stored client %+v %v", stored, err)
	}
	if _, body = b.Get("/dashboard/settings"); strings.Contains(body, secret[1]) || !strings.Contains(body, id[1]) {
		t.Fatal("the client's secret is shown again, or the client is not listed")
	}
	status, raw := hubToken(t, e.base, id[1], secret[1])
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if status != 201 || unmarshal(raw, &tok) != nil {
		t.Fatalf("token of the new client: %d %s", status, raw)
	}
	if status, got := testkit.Call(t, "GET", e.base+"/v1/webhook", tok.AccessToken, ""); status != 200 {
		t.Fatalf("the new client's token: %d %v", status, got)
	}

	// Test mode: its own clients, made as test clients; a live client cannot be revoked from it.
	b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/settings"}})
	testBefore := clients(true)
	if _, body = b.Get("/dashboard/settings"); strings.Contains(body, id[1]) || strings.Contains(body, before[0].ID) || !strings.Contains(body, testBefore[0].ID) {
		t.Fatalf("test mode lists live clients, or not its own: %s", body)
	}
	if status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/clients/revoke", url.Values{"client": {id[1]}}); status != 404 {
		t.Fatalf("live client revoked from test mode: %d %s", status, body)
	}
	_, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/clients", url.Values{"name": {"test sync"}, "scope": {"transaction:read"},
		"public": {"1"}, "redirect_uris": {"http://127.0.0.1:9/cb"}})
	testID := newClientIDField.FindStringSubmatch(body)
	if testID == nil || !strings.HasPrefix(testID[1], recon.TestClientPrefix) || newSecretField.MatchString(body) {
		t.Fatalf("test-mode public client: %s", body)
	}
	if tc := clients(true); len(tc) != len(testBefore)+1 || tc[len(tc)-1].ID != testID[1] || !tc[len(tc)-1].Test || tc[len(tc)-1].SecretHash != "" {
		t.Fatalf("test clients %+v", tc)
	}
	b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"live"}, "back": {"/dashboard/settings"}})

	// Another company's client: 404, and it stays. An Accountant and a missing CSRF token: 403.
	otherCompany, _ := parseID(e.other.company)
	other, _, err := db.Clients(ctx, otherCompany, false, 0, 1)
	if err != nil || len(other) != 1 {
		t.Fatalf("other company's clients: %v %v", other, err)
	}
	if status, _, _ = b.PostFrom("/dashboard/settings", "/dashboard/settings/clients/revoke", url.Values{"client": {other[0].ID}}); status != 404 {
		t.Errorf("another company's client revoked: %d", status)
	}
	if _, err := db.Client(ctx, other[0].ID); err != nil {
		t.Errorf("another company's client: %v", err)
	}
	acc := e.signedIn(t, "ketoan@saomai.vn")
	for _, path := range []string{"/dashboard/settings/clients", "/dashboard/settings/clients/revoke"} {
		if status, _, _ := acc.PostFrom("/dashboard/", path, url.Values{"client": {id[1]}, "name": {"x"}, "scope": {"company"}}); status != 403 {
			t.Errorf("Accountant %s: %d", path, status)
		}
		resp, _ := b.Do("POST", path, url.Values{"client": {id[1]}, "name": {"x"}, "scope": {"company"}}, map[string]string{"Origin": e.base})
		if resp.StatusCode != 403 {
			t.Errorf("%s without CSRF token: %d", path, resp.StatusCode)
		}
	}

	// Revoked: the client and its token stop working at once.
	status, loc, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/clients/revoke", url.Values{"client": {id[1]}})
	if status != http.StatusSeeOther || loc != "/dashboard/settings?revoked=1#clients" {
		t.Fatalf("revoke: %d %s", status, loc)
	}
	if status, got := testkit.Call(t, "GET", e.base+"/v1/webhook", tok.AccessToken, ""); status != 401 {
		t.Errorf("a revoked client's token: %d %v", status, got)
	}
	if status, raw := hubToken(t, e.base, id[1], secret[1]); status != 401 {
		t.Errorf("a revoked client's secret: %d %s", status, raw)
	}
	if _, body = b.Get("/dashboard/settings?revoked=1"); strings.Contains(body, id[1]) || !strings.Contains(body, `id="client-revoked"`) {
		t.Errorf("revoked client still listed: %s", body)
	}
}

// hubAdmin is a hub token of the company: a client with the hub scope.
func hubAdmin(t *testing.T, e *dashEnv, company string) string {
	t.Helper()
	cl := cliJSON(t, e.dbURL, "client", "create", "--company", company, "--name", "hub", "--scopes", "hub")
	status, raw := hubToken(t, e.base, cl["client_id"].(string), cl["client_secret"].(string))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if status != 201 || unmarshal(raw, &tok) != nil {
		t.Fatalf("hub token: %d %s", status, raw)
	}
	return tok.AccessToken
}

func dashWebhook(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")
	db := dbtest.OpenURL(t, e.dbURL)
	ctx := context.Background()
	company, _ := parseID(e.live.company)
	token := hubAdmin(t, e, e.live.company)
	stored := func() *recon.HubWebhook {
		t.Helper()
		wh, err := db.HubWebhook(ctx, recon.LiveTenant(company))
		if err != nil {
			t.Fatal(err)
		}
		return wh
	}
	status, body := b.Get("/dashboard/settings")
	if status != 200 || !strings.Contains(body, `id="no-webhook"`) || !strings.Contains(body, `id="wh-BANK_ACCOUNT_INACTIVATED"`) {
		t.Fatalf("settings without a webhook: %d %s", status, body)
	}
	// Made by the form: its secret and its own signing secret shown once.
	_, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/hub-webhook", url.Values{"webhook_url": {e.rc.URL + "/hook"}, "active": {"1"}, "event": {"*"}})
	secret, signing := newSecretField.FindStringSubmatch(body), newSigningField.FindStringSubmatch(body)
	if secret == nil || signing == nil || stored().Secret != secret[1] || stored().SigningSecret != signing[1] || signing[1] == secret[1] {
		t.Fatalf("webhook made: %s", body)
	}
	if _, body = b.Get("/dashboard/settings"); strings.Contains(body, secret[1]) || strings.Contains(body, signing[1]) ||
		!strings.Contains(body, `id="webhook-masked">`+recon.MaskSecret(secret[1])) || !strings.Contains(body, `id="webhook-signing-masked">`+recon.MaskSecret(signing[1])) {
		t.Fatalf("webhook secrets shown again, or not masked: %s", body)
	}

	// The same input gives the same result through POST /v1/webhook and the form.
	type input struct {
		url    string
		active bool
		events []string
	}
	apply := func(in input, viaAPI bool) (int, string) {
		t.Helper()
		if viaAPI {
			body := fmt.Sprintf(`{"webhook_url":%q,"active":%d,"allow_events":%s}`, in.url, map[bool]int{true: 1}[in.active], mustJSON(t, in.events))
			status, got := testkit.Call(t, "POST", e.base+"/v1/webhook", token, body)
			msg := ""
			if errs, _ := got["messages"].(map[string]any)["error"].([]any); len(errs) > 0 {
				msg = fmt.Sprint(errs[0])
			}
			return status, msg
		}
		form := url.Values{"webhook_url": {in.url}, "event": in.events}
		if in.active {
			form.Set("active", "1")
		}
		status, loc, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/hub-webhook", form)
		if status == http.StatusSeeOther {
			return 200, loc
		}
		m := regexp.MustCompile(`id="webhook-error">([^<]*)<`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("form %v: %d with no error: %s", in, status, body)
		}
		return status, strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&amp;", "&").Replace(m[1])
	}
	same := func(a, b *recon.HubWebhook) bool {
		return a.URL == b.URL && a.Active == b.Active && slices.Equal(a.AllowEvents, b.AllowEvents) && a.AuthType == b.AuthType && a.ContentType == b.ContentType
	}
	reset := input{e.rc.URL + "/reset", true, []string{"LINK_TOKEN_REVOKED"}}
	for _, in := range []input{
		{e.rc.URL + "/hook1", true, []string{"LINK_TOKEN_CREATED", "BANK_ACCOUNT_INACTIVED"}},
		{e.rc.URL + "/hook2?a=<b>&c=d", false, nil},
		{e.rc.URL + "/hook3", true, []string{"*", "LINK_TOKEN_CREATED"}},
	} {
		if status, msg := apply(in, true); status != 200 {
			t.Fatalf("API %v: %d %s", in, status, msg)
		}
		viaAPI := stored()
		apply(reset, false)
		if status, msg := apply(in, false); status != 200 {
			t.Fatalf("form %v: %d %s", in, status, msg)
		}
		if viaForm := stored(); !same(viaAPI, viaForm) || viaForm.Secret != secret[1] {
			t.Errorf("input %v: API stored %+v, the form %+v", in, viaAPI, viaForm)
		}
	}
	if _, body = b.Get("/dashboard/settings?saved=webhook"); !strings.Contains(body, `id="webhook-saved"`) || strings.Contains(body, "<b>&c") {
		t.Fatalf("saved webhook page: %s", body)
	}
	// Refused inputs: the same status and message both ways, nothing changed.
	before := stored()
	for _, in := range []input{
		{"ftp://hooks.example/x", true, []string{"*"}},
		{"", true, []string{"*"}},
		{e.rc.URL + "/x", true, []string{"LINK_TOKEN_CREATED", "NOPE"}},
		{"https://" + strings.Repeat("a", 2001) + ".example/", true, nil},
	} {
		apiStatus, apiMsg := apply(in, true)
		formStatus, formMsg := apply(in, false)
		if apiStatus != 400 || formStatus != 400 || apiMsg != formMsg || apiMsg == "" {
			t.Errorf("input %v: API %d %q, form %d %q", in, apiStatus, apiMsg, formStatus, formMsg)
		}
		if !same(stored(), before) {
			t.Fatalf("refused input %v changed the webhook", in)
		}
	}

	// Rotation: a new secret shown once and stored; another mode's webhook is its own.
	_, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/hub-webhook-secret", url.Values{})
	rotated := newSecretField.FindStringSubmatch(body)
	if rotated == nil || rotated[1] == secret[1] || stored().Secret != rotated[1] || !same(stored(), before) || stored().SigningSecret != signing[1] {
		t.Fatalf("rotation: %s", body)
	}
	// The signing secret's rotation goes through a confirmation page.
	if status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/hub-webhook-signing-secret", url.Values{}); status != 200 ||
		!strings.Contains(body, `id="confirm-button"`) || stored().SigningSecret != signing[1] {
		t.Fatalf("signing rotation without the confirmation: %d %s", status, body)
	}
	_, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/hub-webhook-signing-secret", url.Values{"confirm": {"yes"}})
	newSigning := newSigningField.FindStringSubmatch(body)
	if newSigning == nil || newSigning[1] == signing[1] || stored().SigningSecret != newSigning[1] || stored().Secret != rotated[1] {
		t.Fatalf("signing rotation: %s", body)
	}
	// Shown with its whsec_ form; the replaced one signs a day more, which
	// the page says, in the new secret's notice and in the webhook's card
	// (docs/design.md, D7, "Standard Webhooks.").
	if w := stored(); w.PreviousSigningSecret != signing[1] || !strings.Contains(body, `id="new-signing-whsec">`+recon.WhsecSecret(newSigning[1])+`<`) ||
		!strings.Contains(body, `id="new-signing-previous">`) {
		t.Fatalf("signing rotation: previous %q, page %s", w.PreviousSigningSecret, body)
	}
	if _, body = b.Get("/dashboard/settings"); !strings.Contains(body, `id="webhook-whsec-masked">`+recon.MaskSecret(recon.WhsecSecret(newSigning[1]))) ||
		!strings.Contains(body, `id="webhook-previous">`) || !strings.Contains(body, `id="previous-webhook">`) || strings.Contains(body, recon.WhsecSecret(newSigning[1])) {
		t.Fatalf("after the signing rotation: %s", body)
	}
	b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/settings"}})
	if _, body = b.Get("/dashboard/settings"); !strings.Contains(body, `id="no-webhook"`) || strings.Contains(body, "/hook3") {
		t.Fatalf("test mode shows the live webhook: %s", body)
	}
	if status, _, _ = b.PostFrom("/dashboard/settings", "/dashboard/settings/hub-webhook-secret", url.Values{}); status != 404 {
		t.Errorf("rotating a webhook the test mode does not have: %d", status)
	}
	b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"live"}, "back": {"/dashboard/settings"}})
	// Another company's webhook is untouched by all of this; an Accountant is refused.
	otherCompany, _ := parseID(e.other.company)
	if _, err := db.HubWebhook(ctx, recon.LiveTenant(otherCompany)); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Errorf("another company's webhook: %v", err)
	}
	acc := e.signedIn(t, "ketoan@saomai.vn")
	for _, path := range []string{"/dashboard/settings/hub-webhook", "/dashboard/settings/hub-webhook-secret", "/dashboard/settings/hub-webhook-signing-secret"} {
		if status, _, _ := acc.PostFrom("/dashboard/", path, url.Values{"webhook_url": {"https://x.example/"}}); status != 403 {
			t.Errorf("Accountant %s: %d", path, status)
		}
	}
	if stored().Secret != rotated[1] {
		t.Error("refused forms changed the webhook")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
