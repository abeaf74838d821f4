package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestHubNeedsTheHubScope replays issue 18's first finding through a real
// server and real tokens, on both engines: an Admin's token that was granted
// only profile (through a client allowed hub, and through one that is not)
// reads no hub transaction, creates no hub webhook and rebrands nothing;
// the client without hub gets no hub token by any grant; the Admin's token
// granted hub may (docs/hub.md, Access).
func TestHubNeedsTheHubScope(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox")
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Sao Mai", "--short-name", "SM")["id"])
		cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "boss@saomai.vn", "--role", "Admin")
		withHub := cliJSON(t, dbURL, "client", "create", "--company", co, "--name", "hub app", "--scopes", "hub profile")
		noHub := cliJSON(t, dbURL, "client", "create", "--company", co, "--name", "erp", "--scopes", "profile company transaction:read")
		issue := func(client, scopes string) string {
			return cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "boss@saomai.vn", "--scopes", scopes)["access_token"].(string)
		}
		hubRoutes := []struct{ method, path, body string }{
			{"GET", "/v1/transaction", ""},
			{"GET", "/v1/webhook", ""},
			{"POST", "/v1/webhook", `{"webhook_url":"https://hooks.example.vn/hub"}`},
			{"POST", "/v1/merchant-config", `{"display_name":"Not yours"}`},
			{"GET", "/v1/company", ""},
		}
		for name, token := range map[string]string{
			"profile token of a client allowed hub": issue(withHub["client_id"].(string), "profile"),
			"profile token of a client without hub": issue(noHub["client_id"].(string), "profile"),
			"every scope of a client without hub":   issue(noHub["client_id"].(string), "profile company transaction:read"),
		} {
			for _, r := range hubRoutes {
				if status, body := testkit.Call(t, r.method, base+r.path, token, r.body); status != 403 {
					t.Errorf("%s: %s %s: %d %v, want 403", name, r.method, r.path, status, body)
				}
			}
		}
		if status, body := testkit.Call(t, "GET", base+"/v1/webhook", "", ""); status != 401 {
			t.Errorf("no token: %d %v", status, body)
		}
		// The Admin's token granted hub may use the hub.
		granted := issue(withHub["client_id"].(string), "hub")
		if status, body := testkit.Call(t, "GET", base+"/v1/transaction", granted, ""); status != 200 {
			t.Errorf("Admin's hub token: GET /v1/transaction: %d %v", status, body)
		}
		// The refused requests wrote nothing.
		if status, body := testkit.Call(t, "GET", base+"/v1/webhook", granted, ""); status != 200 || body["data"] != nil {
			t.Errorf("a refused request made a webhook: %d %v", status, body)
		}
		if status, body := testkit.Call(t, "GET", base+"/v1/merchant-config", granted, ""); status != 200 || fmt.Sprint(body["data"]) == "" ||
			fmt.Sprint(body["data"].(map[string]any)["display_name"]) == "Not yours" {
			t.Errorf("a refused request rebranded the link page: %d %v", status, body)
		}

		// The client without hub obtains no hub token: not from
		// /oauth/token, not from /v1/token, not from the operator.
		form := url.Values{"grant_type": {"client_credentials"}, "scope": {"hub"}}
		status, raw := testkit.Do(t, "POST", base+"/oauth/token", func(r *http.Request) {
			r.SetBasicAuth(noHub["client_id"].(string), noHub["client_secret"].(string))
		}, "application/x-www-form-urlencoded", form.Encode())
		var tr map[string]any
		if _ = json.Unmarshal(raw, &tr); status != 400 || tr["error"] != "invalid_scope" {
			t.Errorf("client credentials for hub without hub: %d %s", status, raw)
		}
		if status, raw := hubToken(t, base, noHub["client_id"].(string), noHub["client_secret"].(string)); status != 401 {
			t.Errorf("POST /v1/token without hub: %d %s", status, raw)
		}
		if out, err := cli(t, dbURL, "token", "issue", "--client", noHub["client_id"].(string), "--user", "boss@saomai.vn", "--scopes", "hub"); err == nil {
			t.Errorf("token issue of hub for a client without hub: %s", out)
		}
	})
}
