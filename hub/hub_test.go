package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/hub"
	"recon/internal/testkit"
	"recon/linking"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
	"recon/web"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var hcm = time.FixedZone("ICT", 7*3600)

// tokens is an Authenticator over a fixed table: these tests exercise the
// hub's own checks; package oauth and cmd/recon's end-to-end tests cover
// real tokens.
type tokens map[string]*recon.Caller

func (t tokens) Authenticate(_ context.Context, token string) (*recon.Caller, error) {
	if c, ok := t[token]; ok {
		return c, nil
	}
	return nil, recon.Errorf(recon.EUNAUTHORIZED, "the access token is invalid, expired or revoked")
}

// issuer accepts one client, for POST /v1/token's own handling.
type issuer struct{}

func (issuer) IssueHubToken(_ context.Context, id, secret string) (string, time.Duration, error) {
	if id == "hubclient" && secret == "s3cret" {
		return "hub-token", time.Hour, nil
	}
	return "", 0, recon.Errorf(recon.EUNAUTHORIZED, "Unauthenticated")
}

type bundle struct {
	srv         *httptest.Server
	store       *sqlstore.DB
	company     *recon.Company
	other       *recon.Company
	checkedURLs []string
}

func setup(t *testing.T, engine string) *bundle { return setupMode(t, engine, true) }

// setupMode serves the hub in sandbox mode (sandbox) or production mode.
func setupMode(t *testing.T, engine string, sandbox bool) *bundle {
	t.Helper()
	ctx := context.Background()
	db := dbtest.OpenStore(t, engine)
	b := &bundle{store: db}
	for _, c := range []**recon.Company{&b.company, &b.other} {
		*c = &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive}
		if err := db.CreateCompany(ctx, *c); err != nil {
			t.Fatal(err)
		}
	}
	hubScope := []string{recon.ScopeHub}
	auth := tokens{
		"merchant":   {Tenant: recon.LiveTenant(b.company.ID), ClientID: "a", Scopes: hubScope},
		"other":      {Tenant: recon.LiveTenant(b.other.ID), ClientID: "b", Scopes: hubScope},
		"feed":       {Tenant: recon.LiveTenant(b.company.ID), ClientID: "f", Scopes: []string{recon.ScopeTransactionWrite}},
		"test":       {Tenant: recon.TenantFromRow(b.company.ID, false), ClientID: "test_a", Scopes: hubScope},
		"admin":      {Tenant: recon.LiveTenant(b.company.ID), ClientID: "u", Scopes: hubScope, User: &recon.User{ID: 1, Company: b.company.ID, Role: recon.RoleAdmin}},
		"accountant": {Tenant: recon.LiveTenant(b.company.ID), ClientID: "u", Scopes: hubScope, User: &recon.User{ID: 2, Company: b.company.ID, Role: recon.RoleAccountant, Permissions: []string{recon.PermViewTransactions}}},
	}
	mux := web.NewMux()
	(&hub.Handler{Store: db, Auth: auth, Tokens: issuer{}, Location: hcm, Sandbox: sandbox, Logger: slog.New(slog.DiscardHandler),
		Links: &linking.Service{Store: db, BaseURL: "http://hub.test", CheckURL: func(raw string) error {
			b.checkedURLs = append(b.checkedURLs, raw)
			switch {
			case strings.Contains(raw, "127.0.0.1"), strings.Contains(raw, "2130706433"), strings.Contains(raw, "[::1]"):
				return errBlocked
			case strings.HasPrefix(raw, "http://"):
				return recon.Errorf(recon.EINVALID, "the URL must use https")
			}
			return nil
		},
			Blocked: func(err error) bool { return err == errBlocked }},
	}).Register(mux)
	b.srv = httptest.NewServer((&web.Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux))
	t.Cleanup(b.srv.Close)
	return b
}

// errBlocked stands for delivery.ErrBlockedAddress: the URL rules
// themselves are delivery.CheckURL's, tested there and end to end.
var errBlocked = recon.Errorf(recon.EINVALID, "the address 127.0.0.1 is internal")

// do calls path with the bearer token and a JSON body (testkit.CallWithHeader).
func (b *bundle) do(t *testing.T, method, path, token, body string) (int, http.Header, map[string]any) {
	t.Helper()
	return testkit.CallWithHeader(t, method, b.srv.URL+path, token, body)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestToken(t *testing.T) {
	b := setup(t, "sqlite")
	for _, tc := range []struct {
		name, user, pass string
		basic            bool
		status           int
		want             string
	}{
		{"good", "hubclient", "s3cret", true, 201, `{"access_token":"hub-token","code":201,"ttl":3600}`},
		{"wrong secret", "hubclient", "nope", true, 401, `{"code":401,"message":"Unauthenticated"}`},
		{"unknown", "who", "s3cret", true, 401, `{"code":401,"message":"Unauthenticated"}`},
		{"no credentials", "", "", false, 401, `{"code":401,"message":"Unauthenticated"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", b.srv.URL+"/v1/token", nil)
			if tc.basic {
				req.SetBasicAuth(tc.user, tc.pass)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var v any
			_ = json.Unmarshal(raw, &v)
			if resp.StatusCode != tc.status || jsonText(v) != tc.want {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, raw, tc.status, tc.want)
			}
		})
	}
}

// TestEveryRouteChecksScopeAndRole walks every hub route × role ×
// permission set and a token with no user, each with tokens that hold every
// scope, every scope but the route's, and profile alone: a route answers
// only a token holding its scope (docs/hub.md, Access), whoever it
// was issued to, and then only an Admin's or SuperAdmin's token or one with
// no user; no token or a bad one gets 401 "Unauthenticated". The expected
// table is written here independently of Register, and a served route
// missing from it fails the test, so a new route cannot go unclassified.
func TestEveryRouteChecksScopeAndRole(t *testing.T) {
	// The scope each route needs; "" for the routes that take no bearer
	// token (POST /v1/token: Basic client credentials, checked by
	// recon.HubTokenIssuer; the hosted link page: its link token).
	table := map[string]string{
		"POST /v1/token":                "",
		"GET /link/{token}":             "",
		"POST /link/{token}":            "",
		"POST /v1/company/create":       recon.ScopeHub,
		"GET /v1/company":               recon.ScopeHub,
		"GET /v1/company/{xid}":         recon.ScopeHub,
		"POST /v1/company/edit/{xid}":   recon.ScopeHub,
		"GET /v1/company/counter/{xid}": recon.ScopeHub,
		"POST /v1/link-token/create":    recon.ScopeHub,
		"POST /v1/link-token/get":       recon.ScopeHub,
		"POST /v1/link-token/revoke":    recon.ScopeHub,
		"GET /v1/bank-account":          recon.ScopeHub,
		"GET /v1/bank-account/{xid}":    recon.ScopeHub,
		"GET /v1/transaction":           recon.ScopeHub,
		"GET /v1/transaction/{id}":      recon.ScopeHub,
		"GET /v1/merchant-config":       recon.ScopeHub,
		"POST /v1/merchant-config":      recon.ScopeHub,
		"GET /v1/webhook":               recon.ScopeHub,
		"POST /v1/webhook":              recon.ScopeHub,
	}
	allBut := func(scope string) []string {
		return slices.DeleteFunc(slices.Clone(recon.Scopes), func(s string) bool { return s == scope })
	}
	type caller struct {
		user   *recon.User // nil: a token with no user
		scopes func(route string) []string
	}
	scopeSets := map[string]func(string) []string{
		"every scope":         func(string) []string { return recon.Scopes },
		"every scope but its": allBut,
		"profile alone":       func(string) []string { return []string{recon.ScopeProfile} },
		"profile and offline": func(string) []string { return []string{recon.ScopeProfile, recon.ScopeOfflineAccess} },
	}
	callers := map[string]caller{}
	for setName, set := range scopeSets {
		for _, role := range recon.Roles {
			for _, perms := range [][]string{nil, {recon.PermViewTransactions, recon.PermCreateTransactions}} {
				name := fmt.Sprintf("%s[%s] with %s", role, strings.Join(perms, ","), setName)
				callers[name] = caller{&recon.User{ID: 1, Role: role, Permissions: perms}, set}
			}
		}
		callers["no user with "+setName] = caller{nil, set}
	}
	allowed := func(c caller, scope string) bool {
		if !slices.Contains(c.scopes(scope), scope) {
			return false
		}
		return c.user == nil || c.user.Role == recon.RoleAdmin || c.user.Role == recon.RoleSuperAdmin
	}

	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		co := &recon.Company{FullName: "Sao Mai", ShortName: "SM", Status: recon.CompanyActive}
		if err := db.CreateCompany(ctx, co); err != nil {
			t.Fatal(err)
		}
		mux := web.NewMux()
		h := &hub.Handler{Store: db, Tokens: issuer{}, Location: hcm, Links: &linking.Service{Store: db, BaseURL: "http://hub.test"}, Sandbox: true, Logger: slog.New(slog.DiscardHandler)}
		h.Register(mux)
		srv := httptest.NewServer((&web.Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux))
		defer srv.Close()
		b := &bundle{srv: srv}

		patterns := mux.Patterns()
		for pattern := range table {
			if !slices.Contains(patterns, pattern) {
				t.Errorf("the table names %q, which is not served", pattern)
			}
		}
		var bearer []string
		for _, pattern := range patterns {
			if scope, ok := table[pattern]; !ok {
				t.Errorf("route %q is not in the table", pattern)
			} else if scope != "" {
				bearer = append(bearer, pattern)
			}
		}
		if routes := hub.Routes(); !sameSet(routes, bearer) {
			t.Errorf("hub.Routes() = %q, want the bearer routes %q", routes, bearer)
		}

		xid := recon.NewXID()
		for _, pattern := range bearer {
			scope := table[pattern]
			auth := tokens{}
			for name, c := range callers {
				if c.user != nil {
					c.user.Company = co.ID
				}
				auth[name] = &recon.Caller{Tenant: recon.LiveTenant(co.ID), ClientID: "c", Scopes: c.scopes(scope), User: c.user}
			}
			h.Auth = auth
			method, path, _ := strings.Cut(pattern, " ")
			path = strings.ReplaceAll(strings.ReplaceAll(path, "{xid}", xid), "{id}", "1")
			webhook := strings.HasPrefix(path, "/v1/webhook")
			for name, c := range callers {
				// The body is malformed: an allowed caller gets past the
				// checks to validation (or a 404), and nothing is written.
				status, _, body := b.do(t, method, path, name, "{not json")
				switch {
				case allowed(c, scope):
					if status == 401 || status == 403 || status >= 500 {
						t.Errorf("%s as %s: %d %v, want it allowed", pattern, name, status, body)
					}
				case status != 403:
					t.Errorf("%s as %s: %d %v, want 403", pattern, name, status, body)
				case webhook && body["error"] != "FORBIDDEN":
					t.Errorf("%s as %s: %v, want the envelope's FORBIDDEN", pattern, name, body)
				case !webhook && body["code"] != float64(403):
					t.Errorf("%s as %s: %v, want {\"code\":403,...}", pattern, name, body)
				}
				if msg := fmt.Sprint(body["message"], body["messages"]); status == 403 && !slices.Contains(c.scopes(scope), scope) &&
					!strings.Contains(msg, `scope "`+scope+`"`) {
					t.Errorf("%s as %s: %v, want the missing scope named", pattern, name, body)
				}
			}
			for _, token := range []string{"", "bogus"} {
				status, _, body := b.do(t, method, path, token, "{not json")
				if status != 401 || (!webhook && jsonText(body) != `{"code":401,"message":"Unauthenticated"}`) {
					t.Errorf("%s with token %q: %d %v, want 401 Unauthenticated", pattern, token, status, body)
				}
			}
		}
	})
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}

func TestCompanies(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		status, _, body := b.do(t, "POST", "/v1/company/create", "merchant", `{"full_name":"Công ty TNHH ABC","short_name":"ABC"}`)
		if status != 201 || body["code"] != float64(201) {
			t.Fatalf("create: %d %v", status, body)
		}
		data := body["data"].(map[string]any)
		xid := data["xid"].(string)
		if !recon.ValidXID(xid) || data["full_name"] != "Công ty TNHH ABC" || data["status"] != "Active" || data["active"] != "1" {
			t.Fatalf("created: %v", data)
		}
		// Input errors name the problem and write nothing.
		for _, tc := range []struct{ body, field string }{
			{`{}`, "full_name"},
			{`{"full_name":""}`, "full_name"},
			{`{"full_name":"X","status":"Closed"}`, "status"},
			{`{"full_name":"X","colour":"red"}`, "colour"},
			{`{"full_name":7}`, "full_name"},
			{`{"full_name":"` + strings.Repeat("a", 201) + `"}`, "full_name"},
		} {
			status, _, body := b.do(t, "POST", "/v1/company/create", "merchant", tc.body)
			errs, _ := body["errors"].(map[string]any)
			if status != 400 || body["code"] != float64(400) || errs[tc.field] == nil {
				t.Errorf("create %s: %d %v, want 400 naming %s", tc.body, status, body, tc.field)
			}
		}
		status, _, body = b.do(t, "POST", "/v1/company/create", "merchant", `not json`)
		if status != 400 || !strings.Contains(body["message"].(string), "malformed JSON") {
			t.Errorf("malformed: %d %v", status, body)
		}
		status, _, body = b.do(t, "POST", "/v1/company/create", "merchant", `{"full_name":"Công ty TNHH ABC"}`)
		if status != 409 {
			t.Errorf("duplicate name: %d %v", status, body)
		}
		if _, total, _ := b.store.HubCustomers(t.Context(), b.company.Tenant(), recon.HubCustomerFilter{Page: 1, PerPage: 10}); total != 1 {
			t.Fatalf("refused creates wrote rows: total %d", total)
		}

		status, _, body = b.do(t, "GET", "/v1/company/"+xid, "merchant", "")
		if status != 200 || body["data"].(map[string]any)["xid"] != xid {
			t.Fatalf("get: %d %v", status, body)
		}
		// Another merchant, a malformed xid and an unknown one: the same 404.
		for _, tc := range []struct{ token, path string }{
			{"other", "/v1/company/" + xid}, {"merchant", "/v1/company/nope"}, {"merchant", "/v1/company/" + recon.NewXID()},
			{"other", "/v1/company/counter/" + xid},
		} {
			status, _, body := b.do(t, "GET", tc.path, tc.token, "")
			if status != 404 || body["code"] != float64(404) {
				t.Errorf("GET %s as %s: %d %v", tc.path, tc.token, status, body)
			}
		}
		status, _, body = b.do(t, "POST", "/v1/company/edit/"+xid, "other", `{"status":"Suspended"}`)
		if status != 404 {
			t.Errorf("edit as other: %d %v", status, body)
		}
		status, _, body = b.do(t, "POST", "/v1/company/edit/"+xid, "merchant", `{"status":"Suspended"}`)
		d := body["data"].(map[string]any)
		if status != 200 || d["status"] != "Suspended" || d["active"] != "0" || d["full_name"] != "Công ty TNHH ABC" || d["short_name"] != "ABC" {
			t.Fatalf("edit: %d %v", status, body)
		}
		status, _, body = b.do(t, "POST", "/v1/company/edit/"+xid, "merchant", `{"status":"Gone"}`)
		if status != 400 {
			t.Errorf("bad edit: %d %v", status, body)
		}

		for i := range 3 {
			b.do(t, "POST", "/v1/company/create", "merchant", `{"full_name":"Shop `+string(rune('A'+i))+`","status":"Pending"}`)
		}
		status, _, body = b.do(t, "GET", "/v1/company?per_page=2&page=1", "merchant", "")
		meta := body["meta"].(map[string]any)
		if status != 200 || len(body["data"].([]any)) != 2 || jsonText(meta) != `{"current_page":1,"has_more":true,"page_count":2,"per_page":2,"total":4}` {
			t.Fatalf("list: %d %v", status, body)
		}
		status, _, body = b.do(t, "GET", "/v1/company?status=Pending&q=shop%20b", "merchant", "")
		if status != 200 || len(body["data"].([]any)) != 1 || body["data"].([]any)[0].(map[string]any)["full_name"] != "Shop B" {
			t.Fatalf("filtered list: %d %v", status, body)
		}
		status, _, body = b.do(t, "GET", "/v1/company", "other", "")
		if status != 200 || len(body["data"].([]any)) != 0 {
			t.Fatalf("other's list: %d %v", status, body)
		}
		for _, q := range []string{"per_page=0", "per_page=101", "page=x", "status=Open", "sort[created_at]=up", "colour=red"} {
			status, _, body := b.do(t, "GET", "/v1/company?"+q, "merchant", "")
			if status != 400 || body["errors"] == nil {
				t.Errorf("list ?%s: %d %v", q, status, body)
			}
		}
		status, _, body = b.do(t, "GET", "/v1/company/counter/"+xid, "merchant", "")
		if status != 200 || jsonText(body) != `{"data":{"bank_account":0,"dates":[],"total":{"transaction":0,"transaction_in":0,"transaction_out":0}}}` {
			t.Fatalf("counter: %d %v", status, body)
		}
		status, _, body = b.do(t, "GET", "/v1/company/counter/"+xid+"?date=yesterday", "merchant", "")
		if status != 400 {
			t.Errorf("counter bad date: %d %v", status, body)
		}
		// Unknown routes and methods under the hub's paths get its shape.
		status, _, body = b.do(t, "DELETE", "/v1/company/"+xid, "merchant", "")
		if status != 405 || body["code"] != float64(405) {
			t.Errorf("DELETE: %d %v", status, body)
		}
	})
}
