package apiv2

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
	"recon/web"
)

// testRoutes is an area of routes that answer what the envelope tests need.
func testRoutes(r *routes) {
	r.add("GET /v2/test/ok", func(*http.Request, *recon.Caller) (*Answer, error) {
		return ok(map[string]int64{"amount": 150000}), nil
	}, recon.ScopeOrderRead, recon.ActionReadOrders, NoKey)
	r.add("GET /v2/test/page", func(r *http.Request, _ *recon.Caller) (*Answer, error) {
		p, err := pageOf(r)
		if err != nil {
			return nil, err
		}
		return paged([]int{p.Offset()}, p, 1234), nil
	}, recon.ScopeOrderRead, recon.ActionReadOrders, NoKey)
	r.add("POST /v2/test/decode", func(r *http.Request, _ *recon.Caller) (*Answer, error) {
		var in struct {
			Amount int64 `json:"amount"`
			Buyer  struct {
				Name string `json:"name"`
			} `json:"buyer"`
		}
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		return created(in), nil
	}, recon.ScopeOrderWrite, recon.ActionWriteOrders, KeyOptional)
	r.add("GET /v2/test/error/{code}", func(r *http.Request, _ *recon.Caller) (*Answer, error) {
		switch r.PathValue("code") {
		case "rule":
			return nil, recon.RuleError("amount_exceeds_refundable", "the amount 200000 exceeds the refundable 150000")
		case "fields":
			return nil, &recon.Error{Code: recon.EUNPROCESSABLE, Reason: "receiver_required", Message: "the payer's account is not known",
				Fields: map[string][]string{"receiver": {"required"}}}
		case "conflict":
			return nil, recon.Errorf(recon.ECONFLICT, "taken")
		case "conflict-reason":
			return nil, recon.Errorf(recon.ECONFLICT, "the order changed").WithReason("invalid_state")
		case "not-found":
			return nil, recon.Errorf(recon.ENOTFOUND, "order x not found")
		case "internal":
			return nil, errors.New("disk on fire")
		case "internal-reason":
			return nil, (&recon.Error{Code: recon.EINTERNAL, Message: "secret detail"}).WithReason("leaky")
		}
		return nil, recon.FieldError("code", "no such code")
	}, recon.ScopeOrderRead, recon.ActionReadOrders, NoKey)
}

// TestEnvelopeAndErrors checks the v2 envelope of successes and of every
// error (docs/api-v2.md, Envelope and errors): the status each recon.Error
// code maps to, error_code (the Reason when there is one), errors per field,
// strict decoding, paging, and the refusals before a handler (no route,
// wrong method, bad token, missing scope, role).
func TestEnvelopeAndErrors(t *testing.T) {
	t.Parallel()
	member := &recon.User{ID: 2, Role: recon.RoleMember}
	auth := tokens{
		"admin":    {Tenant: recon.LiveTenant(1), ClientID: "c", Scopes: recon.Scopes, User: &recon.User{ID: 1, Role: recon.RoleAdmin}},
		"no-scope": {Tenant: recon.LiveTenant(1), ClientID: "c", Scopes: []string{recon.ScopeOrderRead}, User: &recon.User{ID: 1, Role: recon.RoleAdmin}},
		"member":   {Tenant: recon.LiveTenant(1), ClientID: "c", Scopes: recon.Scopes, User: member},
	}
	db := dbtest.OpenStore(t, "sqlite")
	_, srv := server(t, Config{Store: db, Auth: auth}, testRoutes)
	big := `{"amount":1,"buyer":{"name":"` + strings.Repeat("a", web.DefaultMaxBody) + `"}}`
	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		want                            string
		header                          string // "Name: value" the answer must carry
	}{
		{"ok", "GET", "/v2/test/ok", "admin", "", 200, `{"status":"success","data":{"amount":150000},"meta":{}}`, ""},
		{"page default", "GET", "/v2/test/page", "admin", "", 200, `{"status":"success","data":[0],"meta":{"page":1,"per_page":20,"total":1234}}`, ""},
		{"page 3 of 100", "GET", "/v2/test/page?page=3&per_page=100", "admin", "", 200, `{"status":"success","data":[200],"meta":{"page":3,"per_page":100,"total":1234}}`, ""},
		{"per_page too big", "GET", "/v2/test/page?per_page=101", "admin", "", 400,
			`{"status":"error","error_code":"validation_error","message":"per_page must be an integer from 1 to 100, not \"101\"","errors":{"per_page":["per_page must be an integer from 1 to 100, not \"101\""]}}`, ""},
		{"page zero", "GET", "/v2/test/page?page=0", "admin", "", 400,
			`{"status":"error","error_code":"validation_error","message":"page must be an integer from 1 to 1000000, not \"0\"","errors":{"page":["page must be an integer from 1 to 1000000, not \"0\""]}}`, ""},
		{"page not a number", "GET", "/v2/test/page?page=x", "admin", "", 400,
			`{"status":"error","error_code":"validation_error","message":"page must be an integer from 1 to 1000000, not \"x\"","errors":{"page":["page must be an integer from 1 to 1000000, not \"x\""]}}`, ""},
		{"created", "POST", "/v2/test/decode", "admin", `{"amount":150000,"buyer":{"name":"An"}}`, 201,
			`{"status":"success","data":{"amount":150000,"buyer":{"name":"An"}},"meta":{}}`, ""},
		{"unknown field", "POST", "/v2/test/decode", "admin", `{"amount":1,"currency":"VND"}`, 400,
			`{"status":"error","error_code":"validation_error","message":"unknown field \"currency\"","errors":{"currency":["unknown field \"currency\""]}}`, ""},
		{"wrong type", "POST", "/v2/test/decode", "admin", `{"amount":"150000"}`, 400,
			`{"status":"error","error_code":"validation_error","message":"amount must be an integer, not string","errors":{"amount":["amount must be an integer, not string"]}}`, ""},
		{"wrong nested type", "POST", "/v2/test/decode", "admin", `{"buyer":{"name":7}}`, 400,
			`{"status":"error","error_code":"validation_error","message":"buyer.name must be a string, not number","errors":{"buyer.name":["buyer.name must be a string, not number"]}}`, ""},
		{"fraction", "POST", "/v2/test/decode", "admin", `{"amount":1.5}`, 400,
			`{"status":"error","error_code":"validation_error","message":"amount must be an integer, not number 1.5","errors":{"amount":["amount must be an integer, not number 1.5"]}}`, ""},
		{"malformed", "POST", "/v2/test/decode", "admin", `{"amount":`, 400,
			`{"status":"error","error_code":"validation_error","message":"malformed JSON: the body ends early"}`, ""},
		{"empty", "POST", "/v2/test/decode", "admin", ``, 400,
			`{"status":"error","error_code":"validation_error","message":"request body is empty: a JSON object is required"}`, ""},
		{"oversized", "POST", "/v2/test/decode", "admin", big, 400,
			fmt.Sprintf(`{"status":"error","error_code":"validation_error","message":"request body is larger than the limit of %d bytes"}`, web.DefaultMaxBody), ""},
		{"rule", "GET", "/v2/test/error/rule", "admin", "", 422,
			`{"status":"error","error_code":"amount_exceeds_refundable","message":"the amount 200000 exceeds the refundable 150000"}`, ""},
		{"rule with fields", "GET", "/v2/test/error/fields", "admin", "", 422,
			`{"status":"error","error_code":"receiver_required","message":"the payer's account is not known","errors":{"receiver":["required"]}}`, ""},
		{"conflict", "GET", "/v2/test/error/conflict", "admin", "", 409, `{"status":"error","error_code":"conflict","message":"taken"}`, ""},
		{"conflict with a reason", "GET", "/v2/test/error/conflict-reason", "admin", "", 409,
			`{"status":"error","error_code":"invalid_state","message":"the order changed"}`, ""},
		{"not found", "GET", "/v2/test/error/not-found", "admin", "", 404, `{"status":"error","error_code":"not_found","message":"order x not found"}`, ""},
		{"internal", "GET", "/v2/test/error/internal", "admin", "", 500,
			`{"status":"error","error_code":"internal_error","message":"An internal error occurred."}`, ""},
		{"internal hides its reason", "GET", "/v2/test/error/internal-reason", "admin", "", 500,
			`{"status":"error","error_code":"internal_error","message":"An internal error occurred."}`, ""},
		{"no token", "GET", "/v2/test/ok", "", "", 401,
			`{"status":"error","error_code":"unauthorized","message":"the Authorization header is missing: send Authorization: Bearer <access token>"}`,
			`WWW-Authenticate: Bearer realm="recon"`},
		{"bad token", "GET", "/v2/test/ok", "nope", "", 401,
			`{"status":"error","error_code":"unauthorized","message":"the access token is invalid, expired or revoked"}`, ""},
		{"missing scope", "POST", "/v2/test/decode", "no-scope", `{}`, 403,
			`{"status":"error","error_code":"forbidden","message":"the access token lacks the scope \"order:write\""}`,
			`WWW-Authenticate: Bearer realm="recon", error="insufficient_scope", scope="order:write"`},
		{"role", "POST", "/v2/test/decode", "member", `{}`, 403,
			`{"status":"error","error_code":"forbidden","message":"to write orders you need role Admin or SuperAdmin; your role is Member"}`, ""},
		{"no route", "GET", "/v2/nothing", "admin", "", 404,
			`{"status":"error","error_code":"not_found","message":"no endpoint GET /v2/nothing; see /openapi.json"}`, ""},
		{"wrong method", "DELETE", "/v2/test/ok", "admin", "", 405,
			`{"status":"error","error_code":"method_not_allowed","message":"method DELETE is not allowed on /v2/test/ok; allowed: GET, HEAD"}`, ""},
		{"control character", "GET", "/v2/test/ok?q=%00", "admin", "", 400,
			"", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := send(t, tc.method, srv.URL+tc.path, tc.token, tc.body)
			if status != tc.status || (tc.want != "" && body != tc.want) {
				t.Errorf("%d %s\nwant %d %s", status, body, tc.status, tc.want)
			}
			if tc.status >= 400 && !strings.Contains(body, `"status":"error","error_code":"`) {
				t.Errorf("not the v2 error envelope: %s", body)
			}
			if name, value, found := strings.Cut(tc.header, ": "); found && h.Get(name) != value {
				t.Errorf("%s: %q, want %q", name, h.Get(name), value)
			}
		})
	}
}

// TestRateLimit checks the bucket per OAuth2 client: every authenticated
// answer carries X-RateLimit-Limit, -Remaining and -Reset; past the burst,
// 429 rate_limited with Retry-After, and another client is not slowed.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	auth := tokens{
		"a": {Tenant: recon.LiveTenant(1), ClientID: "a", Scopes: recon.Scopes},
		"b": {Tenant: recon.LiveTenant(1), ClientID: "b", Scopes: recon.Scopes},
		// the same client through another token shares the bucket
		"a2": {Tenant: recon.LiveTenant(1), ClientID: "a", Scopes: recon.Scopes, User: &recon.User{ID: 1, Role: recon.RoleMember}},
	}
	db := dbtest.OpenStore(t, "sqlite")
	_, srv := server(t, Config{Store: db, Auth: auth, Limiter: web.NewRateLimiter(1, 2).WithClock(clock)}, testRoutes)
	check := func(token string, wantStatus int, remaining string) {
		t.Helper()
		status, h, body := send(t, "GET", srv.URL+"/v2/test/ok", token, "")
		if status != wantStatus || h.Get("X-RateLimit-Limit") != "2" || h.Get("X-RateLimit-Remaining") != remaining || h.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("%s: %d %s (limit %q remaining %q reset %q), want %d with %s remaining", token, status, body,
				h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), wantStatus, remaining)
		}
		if status == 429 && (h.Get("Retry-After") != "1" || !strings.HasPrefix(body, `{"status":"error","error_code":"rate_limited","message":"too many requests from OAuth2 client a`)) {
			t.Fatalf("429: Retry-After %q, %s", h.Get("Retry-After"), body)
		}
	}
	check("a", 200, "1")
	check("a2", 403, "0") // a Member's answer is counted and carries the headers too
	check("a", 429, "0")
	check("b", 200, "1")
	clock.Advance(time.Second)
	check("a", 200, "0")
}
