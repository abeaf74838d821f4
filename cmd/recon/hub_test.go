package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// hubToken calls POST /v1/token with Basic credentials.
func hubToken(t *testing.T, base, id, secret string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/token", nil)
	req.SetBasicAuth(id, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestHubAccess drives POST /v1/token and the hub's bearer routes through a
// real server and the real OAuth2 client registry and token store, on both
// engines: a client with the hub scope gets a token that works on /v1 and
// nowhere it should not; wrong secrets, clients without the scope, revoked
// tokens and another merchant's xids are refused.
func TestHubAccess(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox")
		newMerchant := func(name string) (id, clientID, secret string) {
			co := cliJSON(t, dbURL, "company", "create", "--full-name", name, "--short-name", strings.ToUpper(name[:3]))
			id = fmt.Sprint(co["id"])
			cl := cliJSON(t, dbURL, "client", "create", "--company", id, "--name", "hub", "--scopes", "hub")
			return id, cl["client_id"].(string), cl["client_secret"].(string)
		}
		aID, aClient, aSecret := newMerchant("Hoa Sen")
		_, bClient, bSecret := newMerchant("Sao Mai")
		feed := cliJSON(t, dbURL, "client", "create", "--company", aID, "--name", "feed", "--scopes", "transaction:write")

		status, raw := hubToken(t, base, aClient, aSecret)
		var tok struct {
			Code        int    `json:"code"`
			AccessToken string `json:"access_token"`
			TTL         int    `json:"ttl"`
		}
		if status != 201 || unmarshal(raw, &tok) != nil || tok.Code != 201 || tok.AccessToken == "" || tok.TTL != 3600 {
			t.Fatalf("POST /v1/token: %d %s", status, raw)
		}
		const unauth = `{"code":401,"message":"Unauthenticated"}` + "\n"
		for _, c := range [][2]string{{aClient, "wrong"}, {"nobody", aSecret}, {feed["client_id"].(string), feed["client_secret"].(string)}} {
			if status, raw := hubToken(t, base, c[0], c[1]); status != 401 || raw != unauth {
				t.Errorf("POST /v1/token as %s: %d %s", c[0], status, raw)
			}
		}
		_, rawB := hubToken(t, base, bClient, bSecret)
		var tokB struct {
			AccessToken string `json:"access_token"`
		}
		_ = unmarshal(rawB, &tokB)

		status, body := testkit.Call(t, "POST", base+"/v1/company/create", tok.AccessToken, `{"full_name":"Khách hàng Một"}`)
		if status != 201 {
			t.Fatalf("create company: %d %v", status, body)
		}
		xid := body["data"].(map[string]any)["xid"].(string)
		if status, body = testkit.Call(t, "GET", base+"/v1/company/"+xid, tokB.AccessToken, ""); status != 404 {
			t.Errorf("another merchant's xid: %d %v", status, body)
		}
		if status, body = testkit.Call(t, "GET", base+"/v1/company/"+xid, tok.AccessToken, ""); status != 200 {
			t.Errorf("own xid: %d %v", status, body)
		}
		// The hub token carries only the hub scope: the company API refuses it.
		if status, body = testkit.Call(t, "GET", base+"/api/v1/company", tok.AccessToken, ""); status != 403 {
			t.Errorf("hub token on /api/v1/company: %d %v", status, body)
		}
		// Revoked (RFC 7009): 401 at once.
		req, _ := http.NewRequest("POST", base+"/oauth/revoke", strings.NewReader("token="+tok.AccessToken))
		req.SetBasicAuth(aClient, aSecret)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if status, body = testkit.Call(t, "GET", base+"/v1/company", tok.AccessToken, ""); status != 401 || body["message"] != "Unauthenticated" {
			t.Errorf("revoked token: %d %v", status, body)
		}
		// An inactive merchant gets no token.
		if _, err := cli(t, dbURL, "company", "update", aID, "--status", "inactive"); err != nil {
			t.Fatal(err)
		}
		if status, raw := hubToken(t, base, aClient, aSecret); status != 401 {
			t.Errorf("inactive merchant: %d %s", status, raw)
		}
	})
}

func unmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// hubMerchant is a merchant with a hub client and a token, on a running server.
type hubMerchant struct {
	base, dbURL, id, token string
}

func newHubMerchant(t *testing.T, base, dbURL, name string) *hubMerchant {
	t.Helper()
	co := cliJSON(t, dbURL, "company", "create", "--full-name", name, "--short-name", "HUB")
	id := fmt.Sprint(co["id"])
	cl := cliJSON(t, dbURL, "client", "create", "--company", id, "--name", "hub", "--scopes", "hub")
	status, raw := hubToken(t, base, cl["client_id"].(string), cl["client_secret"].(string))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if status != 201 || unmarshal(raw, &tok) != nil {
		t.Fatalf("hub token: %d %s", status, raw)
	}
	return &hubMerchant{base: base, dbURL: dbURL, id: id, token: tok.AccessToken}
}

func (m *hubMerchant) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	return testkit.Call(t, method, m.base+path, m.token, body)
}

// hubEvents returns the hub events the receiver got (2xx answered), in order.
func hubEvents(rc *testkit.Receiver) []map[string]any {
	var out []map[string]any
	for _, g := range rc.Got() {
		var m map[string]any
		if json.Unmarshal(g.Body, &m) == nil && m["version"] == "1.0" {
			out = append(out, m)
		}
	}
	return out
}

// TestHubEventsDelivered: hub events go out through the dispatcher to the
// webhook, with X-Secret-Key and the signature of docs/design.md, D7 under the webhook's own
// signing secret (shown in the answer that made it), not under secret_key,
// which every request carries.
func TestHubEventsDelivered(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		rc := testkit.NewReceiver(t)
		m := newHubMerchant(t, base, dbURL, "Hoa Sen")
		status, body := m.call(t, "POST", "/v1/webhook", `{"webhook_url":"`+rc.URL+`/hub","secret_key":"receiver-secret-0001","allow_events":["LINK_TOKEN_CREATED","LINK_TOKEN_REVOKED"]}`)
		signing, _ := body["data"].(map[string]any)["signing_secret"].(string)
		if status != 200 || len(signing) != recon.SecretLen {
			t.Fatalf("webhook: %d %v", status, body)
		}
		_, body = m.call(t, "POST", "/v1/company/create", `{"full_name":"Khách A"}`)
		cxid := body["data"].(map[string]any)["xid"].(string)
		status, body = m.call(t, "POST", "/v1/link-token/create", `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT"}`)
		if status != 201 {
			t.Fatalf("link token: %d %v", status, body)
		}
		xid := body["xid"].(string)
		m.call(t, "POST", "/v1/link-token/revoke", `{"link_token_xid":"`+xid+`"}`)
		testkit.WaitFor(t, "two hub events", 20*time.Second, func() bool { return len(hubEvents(rc)) == 2 })
		// A tenant's hub events arrive in the order they happened.
		events := hubEvents(rc)
		created, revoked := events[0], events[1]
		if created["event"] != "LINK_TOKEN_CREATED" || revoked["event"] != "LINK_TOKEN_REVOKED" {
			t.Fatalf("events: %v", events)
		}
		md := created["metadata"].(map[string]any)
		if md["link_token_xid"] != xid || md["purpose"] != "LINK_BANK_ACCOUNT" || md["link_session_xid"] != nil || created["xid"] == revoked["xid"] {
			t.Fatalf("created: %v", created)
		}
		for _, g := range rc.Got() {
			if g.Header.Get("X-Secret-Key") != "receiver-secret-0001" {
				t.Errorf("X-Secret-Key = %q", g.Header.Get("X-Secret-Key"))
			}
			if err := delivery.Verify(signing, g.Header.Get("X-Recon-Timestamp"), g.Header.Get("X-Recon-Signature"), g.Body, time.Now(), time.Minute); err != nil {
				t.Errorf("signature: %v", err)
			}
			if err := delivery.Verify("receiver-secret-0001", g.Header.Get("X-Recon-Timestamp"), g.Header.Get("X-Recon-Signature"), g.Body, time.Now(), time.Minute); err == nil {
				t.Error("the signature verifies with secret_key, which every request carries")
			}
		}
		// The deliveries CLI lists them like IPNs.
		out, err := cli(t, dbURL, "deliveries", "list", "--kind", "webhook", "--company", m.id)
		if err != nil || !strings.Contains(out, "LINK_TOKEN_REVOKED") {
			t.Fatalf("deliveries list: %v %s", err, out)
		}
	})
}

func TestHubSandboxBanksCLI(t *testing.T) {
	t.Parallel()
	out := cliJSON(t, "", "hub", "sandbox-banks")
	banks := out["banks"].([]any)
	ids := out["identities"].([]any)
	if len(banks) < 5 || len(ids) < 10 {
		t.Fatalf("%d banks, %d identities", len(banks), len(ids))
	}
	mb := ids[0].(map[string]any)
	if mb["bank"] != "MB" || mb["account_number"] != "0123456789" || mb["otp"] != "12345678" {
		t.Fatalf("first identity: %v", mb)
	}
	text, err := cli(t, "", "hub", "sandbox-banks")
	if err != nil || !strings.Contains(text, "BANK_UNAVAILABLE") || !strings.Contains(text, "MBBank (MB)") {
		t.Fatalf("table: %v\n%s", err, text)
	}
}

var (
	reSessionField = regexp.MustCompile(`name="session" value="([^"]*)"`)
	reCSRFField    = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
)

// pageStep GETs (form nil) or POSTs one step of the hosted page and returns
// its status and HTML; session and csrf carry the last page's form values.
func pageStep(t *testing.T, u string, session, csrf *string, form url.Values) (int, string) {
	t.Helper()
	var resp *http.Response
	var err error
	if form == nil {
		resp, err = http.Get(u)
	} else {
		form.Set("session", *session)
		form.Set("csrf", *csrf)
		resp, err = http.PostForm(u, form)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if m := reSessionField.FindStringSubmatch(string(raw)); m != nil {
		*session = m[1]
	}
	if m := reCSRFField.FindStringSubmatch(string(raw)); m != nil {
		*csrf = m[1]
	}
	return resp.StatusCode, string(raw)
}

// TestHubLinkEndToEnd: a real server, a real receiver; a customer links an
// MBBank account on the hosted page (one wrong OTP first); the webhook,
// subscribed to two events only, gets exactly those; a transfer to the
// linked account (recon simulate transfer: the one pipeline) sends the
// balance-change notification to the hub IPN URL, signed.
func TestHubLinkEndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		rc := testkit.NewReceiver(t)
		m := newHubMerchant(t, base, dbURL, "Hoa Sen")
		if status, body := m.call(t, "POST", "/v1/webhook", `{"webhook_url":"`+rc.URL+`/hub","secret_key":"receiver-secret-0001",
			"allow_events":["BANK_ACCOUNT_LINKED","LINK_SESSION_COMPLETED"]}`); status != 200 {
			t.Fatalf("webhook: %d %v", status, body)
		}
		ipn := cliJSON(t, dbURL, "hub", "ipn", "set", "--company", m.id, "--url", rc.URL+"/hub-ipn", "--sandbox", "--allow-private-targets")
		signing := ipn["signing_secret"].(string)
		_, body := m.call(t, "POST", "/v1/company/create", `{"full_name":"Khách A"}`)
		cxid := body["data"].(map[string]any)["xid"].(string)
		status, body := m.call(t, "POST", "/v1/link-token/create", `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT","language":"en"}`)
		if status != 201 {
			t.Fatalf("link token: %d %v", status, body)
		}
		page := body["hosted_link_url"].(string)
		var session, csrf string
		for _, step := range []struct {
			form url.Values
			want string
		}{
			{nil, "Choose your bank"},
			{url.Values{"action": {"pick_bank"}, "bank": {"MB"}, "account_type": {"individual"}}, "Account details"},
			{url.Values{"action": {"details"}, "account_number": {"0123456789"}, "national_id": {"001099012345"}, "phone": {"0901234567"}}, "NGUYEN VAN AN"},
			{url.Values{"action": {"link_otp"}, "otp": {"00000000"}}, "The OTP is wrong"},
			{url.Values{"action": {"link_otp"}, "otp": {"12345678"}}, "FINISHED_BANK_ACCOUNT_LINK"},
		} {
			if status, html := pageStep(t, page, &session, &csrf, step.form); status != 200 || !strings.Contains(html, step.want) {
				t.Fatalf("step %v: %d\n%s", step.form, status, html)
			}
		}
		testkit.WaitFor(t, "two hub events", 20*time.Second, func() bool { return len(hubEvents(rc)) == 2 })
		var names []string
		var accountXID string
		for _, e := range hubEvents(rc) {
			names = append(names, e["event"].(string))
			accountXID = e["metadata"].(map[string]any)["bank_account_xid"].(string)
		}
		if !slices.Equal(names, []string{"BANK_ACCOUNT_LINKED", "LINK_SESSION_COMPLETED"}) {
			t.Fatalf("events: %v", names)
		}
		accounts := cliJSONList(t, dbURL, "bank-account", "list", "--company", m.id)
		if len(accounts) != 1 || accounts[0]["number"] != "0123456789" {
			t.Fatalf("accounts: %v", accounts)
		}
		cliJSON(t, dbURL, "simulate", "transfer", "--bank-account", fmt.Sprint(accounts[0]["id"]), "--amount", "150000", "--content", "chuyen tien")
		var change map[string]any
		testkit.WaitFor(t, "the balance change", 20*time.Second, func() bool {
			for _, g := range rc.Got() {
				var v map[string]any
				if json.Unmarshal(g.Body, &v) == nil && v["transfer_type"] != nil {
					if err := delivery.Verify(signing, g.Header.Get("X-Recon-Timestamp"), g.Header.Get("X-Recon-Signature"), g.Body, time.Now(), time.Minute); err != nil {
						t.Errorf("signature: %v", err)
					}
					change = v
					return true
				}
			}
			return false
		})
		if change["bank_account_xid"] != accountXID || change["amount"] != float64(150000) || change["gateway"] != "MBBank" ||
			change["transfer_type"] != "credit" || change["account_number"] != "0123456789" {
			t.Fatalf("balance change: %v", change)
		}
		// The hub API shows the transfer.
		if status, body = m.call(t, "GET", "/v1/transaction?bank_account_xid="+accountXID, ""); status != 200 || len(body["data"].([]any)) != 1 {
			t.Fatalf("hub transactions: %d %v", status, body)
		}
	})
}

// TestLinkTokenTTLFlag: the link token lifetime is a server setting.
func TestLinkTokenTTLFlag(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	if _, err := cli(t, dbURL, "serve", "--link-token-ttl", "10s"); err == nil || !strings.Contains(err.Error(), "--link-token-ttl") {
		t.Fatalf("serve --link-token-ttl 10s: %v", err)
	}
	base, _, _ := startServer(t, dbURL, "--sandbox", "--link-token-ttl", "5m")
	m := newHubMerchant(t, base, dbURL, "Hoa Sen")
	_, body := m.call(t, "POST", "/v1/company/create", `{"full_name":"Khách A"}`)
	cxid := body["data"].(map[string]any)["xid"].(string)
	_, body = m.call(t, "POST", "/v1/link-token/create", `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT"}`)
	_, got := m.call(t, "POST", "/v1/link-token/get", `{"link_token_xid":"`+body["xid"].(string)+`"}`)
	d := got["data"].(map[string]any)
	created, _ := time.Parse(time.DateTime, d["created_at"].(string))
	expires, _ := time.Parse(time.DateTime, d["expires_at"].(string))
	if expires.Sub(created) != 5*time.Minute {
		t.Fatalf("lifetime %s (%v → %v)", expires.Sub(created), d["created_at"], d["expires_at"])
	}
}

// TestHubEventSequencesAtTheReceiver: the receiver gets the events of every
// path of the hosted page in the exact order they happened (docs/design.md,
// D8; the dispatcher sends a tenant's hub events one at a time), only those
// its allow_events names at that moment, and none while it is inactive.
func TestHubEventSequencesAtTheReceiver(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		rc := testkit.NewReceiver(t)
		m := newHubMerchant(t, base, dbURL, "Hoa Sen")
		webhook := func(body string) {
			t.Helper()
			if status, resp := m.call(t, "POST", "/v1/webhook", body); status != 200 {
				t.Fatalf("webhook %s: %d %v", body, status, resp)
			}
		}
		webhook(`{"webhook_url":"` + rc.URL + `/hub","allow_events":["*"]}`)
		_, body := m.call(t, "POST", "/v1/company/create", `{"full_name":"Khách A"}`)
		cxid := body["data"].(map[string]any)["xid"].(string)
		open := func(purpose, extra string) (xid, page string) {
			t.Helper()
			status, body := m.call(t, "POST", "/v1/link-token/create", `{"company_xid":"`+cxid+`","purpose":"`+purpose+`","language":"en"`+extra+`}`)
			if status != 201 {
				t.Fatalf("link token: %d %v", status, body)
			}
			return body["xid"].(string), body["hosted_link_url"].(string)
		}
		type step struct {
			form url.Values
			want string
		}
		drive := func(page string, steps ...step) {
			t.Helper()
			var session, csrf string
			for _, s := range steps {
				if _, html := pageStep(t, page, &session, &csrf, s.form); !strings.Contains(html, s.want) {
					t.Fatalf("step %v: page lacks %q:\n%s", s.form, s.want, html)
				}
			}
		}
		var (
			opened  = step{nil, "Choose your bank"}
			pickMB  = step{url.Values{"action": {"pick_bank"}, "bank": {"MB"}, "account_type": {"individual"}}, "Account details"}
			details = func(n, id, phone, want string) step {
				return step{url.Values{"action": {"details"}, "account_number": {n}, "national_id": {id}, "phone": {phone}}, want}
			}
			mb  = details("0123456789", "001099012345", "0901234567", "NGUYEN VAN AN")
			otp = func(code, want string) step { return step{url.Values{"action": {"link_otp"}, "otp": {code}}, want} }
		)
		const (
			created, initialized, reinitialized = "LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED", "LINK_SESSION_REINITIALIZED"
			revoked, failed, abandoned          = "LINK_TOKEN_REVOKED", "LINK_SESSION_FAILED", "LINK_SESSION_ABANDONED"
			completed, linked                   = "LINK_SESSION_COMPLETED", "BANK_ACCOUNT_LINKED"
			request, confirm, finished          = "STATE:REQUEST_BANK_ACCOUNT_LINK", "STATE:CONFIRM_BANK_ACCOUNT_LINK", "STATE:FINISHED_BANK_ACCOUNT_LINK"
			requestUnlink                       = "STATE:REQUEST_BANK_ACCOUNT_UNLINK"
		)
		var want []string
		// seen names the receiver's events, a state change by its state.
		seen := func() []string {
			var out []string
			for _, e := range hubEvents(rc) {
				name := e["event"].(string)
				if name == "LINK_SESSION_STATE_CHANGED" {
					name = "STATE:" + e["metadata"].(map[string]any)["state"].(string)
				}
				out = append(out, name)
			}
			return out
		}
		expect := func(events ...string) {
			t.Helper()
			want = append(want, events...)
			testkit.WaitFor(t, fmt.Sprint(len(want), " hub events"), 20*time.Second, func() bool { return len(hubEvents(rc)) >= len(want) })
			if got := seen(); !slices.Equal(got, want) {
				t.Fatalf("the receiver got\n%v\nwant\n%v", got, want)
			}
		}

		// A link with a wrong OTP first.
		_, page := open("LINK_BANK_ACCOUNT", "")
		drive(page, opened, pickMB, mb, otp("00000000", "The OTP is wrong"), otp("12345678", "FINISHED_BANK_ACCOUNT_LINK"))
		expect(created, initialized, request, confirm, finished, linked, completed)
		accountXID := hubEvents(rc)[5]["metadata"].(map[string]any)["bank_account_xid"].(string)
		// Three wrong OTPs.
		_, page = open("LINK_BANK_ACCOUNT", "")
		drive(page, opened, pickMB, details("0000000003", "001099000003", "0900000003", "NGUYEN VAN SAI"),
			otp("12345678", "Attempts left"), otp("12345678", "Attempts left: 1"), otp("12345678", "three times"))
		expect(created, initialized, request, confirm, failed)
		// The bank does not answer.
		_, page = open("LINK_BANK_ACCOUNT", "")
		drive(page, opened, pickMB, details("0000000503", "001099000503", "0900000503", "not answering"))
		expect(created, initialized, request, failed)
		// Reopened, then closed.
		_, page = open("LINK_BANK_ACCOUNT", "")
		drive(page, opened, opened, step{url.Values{"action": {"close"}}, "BANKHUB_CLOSE_LINK"})
		expect(created, initialized, reinitialized, abandoned)
		// Revoked mid-session.
		xid, page := open("LINK_BANK_ACCOUNT", "")
		drive(page, opened, pickMB)
		if status, body := m.call(t, "POST", "/v1/link-token/revoke", `{"link_token_xid":"`+xid+`"}`); status != 200 {
			t.Fatalf("revoke: %d %v", status, body)
		}
		expect(created, initialized, request, revoked)
		// The same account again: the page says so, no event but the steps.
		_, page = open("LINK_BANK_ACCOUNT", "")
		drive(page, opened, pickMB, details("0123456789", "001099012345", "0901234567", "already linked"))
		expect(created, initialized, request)
		// Unlink: inactivate here, then unlink at the bank.
		for _, choice := range []string{"here", "bank"} {
			_, page = open("UNLINK_BANK_ACCOUNT", `,"bank_account_xid":"`+accountXID+`"`)
			drive(page, step{nil, "Unlink this account"}, step{url.Values{"action": {"request_unlink"}}, `maxlength="8"`},
				step{url.Values{"action": {"unlink_otp"}, "otp": {"12345678"}}, "Unlink at the bank"},
				step{url.Values{"action": {"unlink_choice"}, "choice": {choice}}, "FINISHED_BANK_ACCOUNT_UNLINK"})
			expect(created, initialized, requestUnlink, map[string]string{"here": "BANK_ACCOUNT_INACTIVATED", "bank": "BANK_ACCOUNT_UNLINKED"}[choice], completed)
		}
		// The receiver saw what the outbox holds, in its order.
		tenant, _ := strconv.ParseInt(m.id, 10, 64)
		ds, err := dbtest.OpenURL(t, dbURL).Deliveries(t.Context(), recon.LiveTenant(tenant), recon.DeliveryFilter{Kind: recon.DeliveryWebhook, Limit: 500})
		if err != nil || len(ds) != len(want) {
			t.Fatalf("outbox: %d deliveries, %v; the receiver got %d", len(ds), err, len(want))
		}
		for i, e := range hubEvents(rc) {
			var stored struct{ XID string }
			if d := ds[len(ds)-1-i]; json.Unmarshal(d.Payload, &stored) != nil || e["xid"] != stored.XID {
				t.Fatalf("event %d: xid %v, the outbox's %d-th %s", i, e["xid"], i, d.Payload)
			}
		}

		// A subscription to three events: the receiver gets those only.
		webhook(`{"allow_events":["BANK_ACCOUNT_LINKED","LINK_SESSION_FAILED","BANK_ACCOUNT_INACTIVED"]}`)
		_, page = open("LINK_BANK_ACCOUNT", "")
		drive(page, opened, pickMB, details("0000000503", "001099000503", "0900000503", "not answering"))
		_, page = open("LINK_BANK_ACCOUNT", "")
		drive(page, opened, pickMB, mb, otp("12345678", "FINISHED_BANK_ACCOUNT_LINK"))
		expect(failed, linked)
		// Inactive: nothing is sent, nor kept to send later.
		webhook(`{"active":0}`)
		_, page = open("UNLINK_BANK_ACCOUNT", `,"bank_account_xid":"`+accountXID+`"`)
		drive(page, step{nil, "Unlink this account"}, step{url.Values{"action": {"request_unlink"}}, `maxlength="8"`},
			step{url.Values{"action": {"unlink_otp"}, "otp": {"12345678"}}, "Unlink at the bank"},
			step{url.Values{"action": {"unlink_choice"}, "choice": {"here"}}, "FINISHED_BANK_ACCOUNT_UNLINK"})
		// Active again, every event: the next event is the first the receiver gets.
		webhook(`{"active":1,"allow_events":["*"]}`)
		_, page = open("LINK_BANK_ACCOUNT", "")
		drive(page, opened, step{url.Values{"action": {"close"}}, "BANKHUB_CLOSE_LINK"})
		expect(created, initialized, abandoned)
	})
}

// TestHubCLI: the operator commands over the hub's data, on a production
// server: a test hub client gets a token; companies and link tokens made
// with --test are the test tenant's; the printed page URL opens the page;
// the timeline lists every event, also those no webhook wanted.
func TestHubCLI(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL) // production: no sandbox banks for live tokens
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Hoa Sen", "--short-name", "HOASEN")["id"])

		cl := cliJSON(t, dbURL, "hub", "client", "create", "--company", co, "--name", "hub test", "--test")
		if !strings.HasPrefix(cl["client_id"].(string), "test_") || cl["livemode"] != false {
			t.Fatalf("hub client: %v", cl)
		}
		status, raw := hubToken(t, base, cl["client_id"].(string), cl["client_secret"].(string))
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if status != 201 || unmarshal(raw, &tok) != nil {
			t.Fatalf("POST /v1/token: %d %s", status, raw)
		}

		cu := cliJSON(t, dbURL, "hub", "company", "create", "--company", co, "--test", "--full-name", "Khách <b>Một</b>")
		cxid := cu["xid"].(string)
		if cu["full_name"] != "Khách <b>Một</b>" || cu["status"] != "Active" {
			t.Fatalf("hub company: %v", cu)
		}
		if list := cliJSONList(t, dbURL, "hub", "company", "list", "--company", co, "--test"); len(list) != 1 || list[0]["xid"] != cxid {
			t.Fatalf("test list: %v", list)
		}
		if list := cliJSONList(t, dbURL, "hub", "company", "list", "--company", co); len(list) != 0 {
			t.Fatalf("live list shows test companies: %v", list)
		}
		// The API with the test token sees it.
		if status, body := testkit.Call(t, "GET", base+"/v1/company/"+cxid, tok.AccessToken, ""); status != 200 {
			t.Fatalf("GET company: %d %v", status, body)
		}

		// A live token on a production server: no bank connector, said plainly.
		if _, err := cli(t, dbURL, "hub", "link-token", "create", "--company", co, "--sandbox", "--customer", cxid); err == nil ||
			!strings.Contains(err.Error(), "not found") {
			t.Fatalf("live link token for a test company: %v", err)
		}
		lc := cliJSON(t, dbURL, "hub", "company", "create", "--company", co, "--full-name", "Khách Live")
		if _, err := cli(t, dbURL, "hub", "link-token", "create", "--company", co, "--customer", lc["xid"].(string)); err == nil ||
			!strings.Contains(err.Error(), "bank") {
			t.Fatalf("live link token on production without a connector: %v", err)
		}
		lt := cliJSON(t, dbURL, "hub", "link-token", "create", "--company", co, "--test", "--customer", cxid, "--language", "en", "--base-url", base)
		page := lt["hosted_link_url"].(string)
		if !strings.HasPrefix(page, base+"/link/lt_") {
			t.Fatalf("link token: %v", lt)
		}
		var session, csrf string
		if status, html := pageStep(t, page, &session, &csrf, nil); status != 200 || !strings.Contains(html, "Choose your bank") || !strings.Contains(html, "MBBank") {
			t.Fatalf("page: %d\n%s", status, html)
		}
		xid := lt["xid"].(string)
		out, err := cli(t, dbURL, "hub", "link-token", "revoke", xid, "--company", co, "--test")
		if err != nil || !strings.Contains(out, "revoked") {
			t.Fatalf("revoke: %v %s", err, out)
		}
		if _, err := cli(t, dbURL, "hub", "link-token", "revoke", xid, "--company", co, "--test"); err == nil || !strings.Contains(err.Error(), "nothing to revoke") {
			t.Fatalf("revoke again: %v", err)
		}
		if _, err := cli(t, dbURL, "hub", "events", xid, "--company", co); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Fatalf("the live tenant reads a test token's timeline: %v", err)
		}
		tl := cliJSON(t, dbURL, "hub", "events", xid, "--company", co, "--test")
		var names []string
		for _, e := range tl["events"].([]any) {
			names = append(names, e.(map[string]any)["event"].(string))
		}
		if want := []string{"LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED", "LINK_TOKEN_REVOKED"}; !slices.Equal(names, want) {
			t.Fatalf("timeline: %v, want %v", names, want)
		}
		if text, err := cli(t, dbURL, "hub", "events", xid, "--company", co, "--test"); err != nil ||
			!strings.Contains(text, "REVOKED") || !strings.Contains(text, "LINK_SESSION_INITIALIZED") {
			t.Fatalf("timeline text: %v\n%s", err, text)
		}
	})
}
