package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon"
	"recon/api"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
	"recon/web"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var hcm = time.FixedZone("ICT", 7*3600)

// tokens is an Authenticator over a fixed table: the handler tests exercise
// the API's own checks; package oauth and the end-to-end tests cover real tokens.
type tokens map[string]*recon.Caller

func (t tokens) Authenticate(_ context.Context, token string) (*recon.Caller, error) {
	if c, ok := t[token]; ok {
		return c, nil
	}
	return nil, recon.Errorf(recon.EUNAUTHORIZED, "the access token is invalid, expired or revoked")
}

type bundle struct {
	srv     *httptest.Server
	store   recon.Store
	company *recon.Company
	other   *recon.Company
}

func setup(t *testing.T, engine string, opts ...func(*api.Handler)) *bundle {
	t.Helper()
	ctx := context.Background()
	db := dbtest.OpenStore(t, engine)
	b := &bundle{store: db}
	for _, c := range []**recon.Company{&b.company, &b.other} {
		*c = &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
			Subscription: "Business", BeginDate: "2026-01-01", EndDate: "2027-01-01",
			Config: recon.CompanyConfig{Paycode: true, DataStorageDays: 365}}
		if err := db.CreateCompany(ctx, *c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ReplacePaymentCodeFormats(ctx, b.other.ID, []recon.PaymentCodeFormat{
		{Prefix: "XY", SuffixFrom: 2, SuffixTo: 4, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
		t.Fatal(err)
	}
	user := func(company int64, role recon.Role) *recon.User {
		return &recon.User{ID: 1, Company: company, Email: "u@x.vn", Role: role}
	}
	all := []string{recon.ScopeCompany, recon.ScopeTransactionRead}
	viewer := func(company int64) *recon.User {
		return &recon.User{ID: 2, Company: company, Email: "v@x.vn", Role: recon.RoleAccountant, Permissions: []string{recon.PermViewTransactions}}
	}
	auth := tokens{
		"admin":            {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: all, User: user(b.company.ID, recon.RoleAdmin)},
		"superadmin":       {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: all, User: user(b.company.ID, recon.RoleSuperAdmin)},
		"accountant":       {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: all, User: user(b.company.ID, recon.RoleAccountant)},
		"member":           {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: all, User: user(b.company.ID, recon.RoleMember)},
		"noscope":          {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: []string{recon.ScopeTransactionRead}, User: user(b.company.ID, recon.RoleAdmin)},
		"machine":          {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: all},
		"other-admin":      {Tenant: recon.LiveTenant(b.other.ID), ClientID: "d", Scopes: all, User: user(b.other.ID, recon.RoleAdmin)},
		"viewer":           {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: all, User: viewer(b.company.ID)},
		"other-viewer":     {Tenant: recon.LiveTenant(b.other.ID), ClientID: "d", Scopes: all, User: viewer(b.other.ID)},
		"noscope-read":     {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: []string{recon.ScopeTransactionWrite}, User: viewer(b.company.ID)},
		"feeder":           {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: []string{recon.ScopeTransactionWrite}},
		"banker":           {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: []string{recon.ScopeBankAccountRead}, User: user(b.company.ID, recon.RoleAdmin)},
		"member-banker":    {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: []string{recon.ScopeBankAccountRead}, User: user(b.company.ID, recon.RoleMember)},
		"other-banker":     {Tenant: recon.LiveTenant(b.other.ID), ClientID: "d", Scopes: []string{recon.ScopeBankAccountRead}, User: user(b.other.ID, recon.RoleAdmin)},
		"deliveries":       {Tenant: recon.LiveTenant(b.company.ID), ClientID: "c", Scopes: []string{recon.ScopeDeliveryRead, recon.ScopeDeliveryWrite}, User: user(b.company.ID, recon.RoleAdmin)},
		"other-deliveries": {Tenant: recon.LiveTenant(b.other.ID), ClientID: "d", Scopes: []string{recon.ScopeDeliveryRead, recon.ScopeDeliveryWrite}, User: user(b.other.ID, recon.RoleAdmin)},
	}
	mux := web.NewMux()
	// Pages are kept as the server keeps them, so every listing of these
	// tests after a write checks that the write shows.
	h := &api.Handler{Store: db, Auth: auth, Location: hcm, Logger: slog.New(slog.DiscardHandler), PageCacheBytes: 1 << 20}
	for _, o := range opts {
		o(h)
	}
	h.Register(mux)
	b.srv = httptest.NewServer((&web.Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux))
	t.Cleanup(b.srv.Close)
	return b
}

// do calls path with the bearer token and a JSON body (testkit.CallWithHeader).
func (b *bundle) do(t *testing.T, method, path, token, body string) (int, http.Header, map[string]any) {
	t.Helper()
	return testkit.CallWithHeader(t, method, b.srv.URL+path, token, body)
}

// post sends a file body of contentType to path as the feeder and decodes
// the JSON answer: the statement upload tests' request.
func (b *bundle) post(t *testing.T, path, contentType string, body []byte) (int, map[string]any) {
	t.Helper()
	status, _, raw := testkit.Send(t, "POST", b.srv.URL+path, testkit.Bearer("feeder"), contentType, string(body))
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("POST %s: %d, not JSON: %q", path, status, raw)
	}
	return status, v
}

func TestAuthChecks(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		tests := []struct {
			name, method, path, token, header string
			status                            int
			wwwAuth, errCode                  string
		}{
			{"no header", "GET", "/api/v1/company", "", "", 401, `Bearer realm="recon"`, "unauthorized"},
			{"bad token", "GET", "/api/v1/company", "nope", "", 401, `Bearer realm="recon", error="invalid_token", error_description="the access token is invalid, expired or revoked"`, "unauthorized"},
			{"basic scheme", "GET", "/api/v1/company", "", "Basic YTpi", 401, `Bearer realm="recon", error="invalid_token", error_description="the access token is invalid, expired or revoked"`, "unauthorized"},
			{"no scope", "GET", "/api/v1/company", "noscope", "", 403, `Bearer realm="recon", error="insufficient_scope", scope="company"`, "forbidden"},
			{"member", "GET", "/api/v1/company", "member", "", 403, "", "forbidden"},
			{"accountant", "GET", "/api/v1/company", "accountant", "", 403, "", "forbidden"},
			{"client credentials", "GET", "/api/v1/company", "machine", "", 403, "", "forbidden"},
			// Auth comes before input validation: a member's malformed PATCH is a 403, not a 400.
			{"member patch malformed", "PATCH", "/api/v1/company/configurations", "member", "", 403, "", "forbidden"},
			{"no token patch malformed", "PATCH", "/api/v1/company/configurations", "", "", 401, `Bearer realm="recon"`, "unauthorized"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				req, _ := http.NewRequest(tt.method, b.srv.URL+tt.path, strings.NewReader("{not json"))
				if tt.token != "" {
					req.Header.Set("Authorization", "Bearer "+tt.token)
				}
				if tt.header != "" {
					req.Header.Set("Authorization", tt.header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var body map[string]any
				if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != tt.status || body["status"] != "error" || body["error"] != tt.errCode || body["message"] == "" {
					t.Fatalf("got %d %v, want %d %s", resp.StatusCode, body, tt.status, tt.errCode)
				}
				if got := resp.Header.Get("WWW-Authenticate"); got != tt.wwwAuth {
					t.Fatalf("WWW-Authenticate = %q, want %q", got, tt.wwwAuth)
				}
			})
		}
	})
}

func TestGetCompany(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		status, _, body := b.do(t, "GET", "/api/v1/company", "superadmin", "")
		want := map[string]any{"status": "success", "data": map[string]any{
			"id": float64(b.company.ID), "full_name": "Công ty TNHH Sao Mai", "short_name": "SAOMAI",
			"role": "SuperAdmin", "status": "active", "subscription": "Business",
			"begin_date": "2026-01-01", "end_date": "2027-01-01",
			"configurations": map[string]any{"bank_sub_account": false, "paycode": true,
				"data_storage_time": "365", "payment_code_formats": []any{}},
			"seller":    map[string]any{"legal_name": "", "tax_code": "", "address": "", "phone": "", "email": "", "bank_name": "", "bank_account": ""},
			"invoicing": map[string]any{"invoice_template": "1", "invoice_series": "", "auto_invoice": false},
			"livemode":  true, "duplicate_window_days": 0.0,
		}}
		if status != 200 {
			t.Fatalf("status %d: %v", status, body)
		}
		if d := cmp.Diff(want, body); d != "" {
			t.Fatalf("GET /api/v1/company (-want +got):\n%s", d)
		}
	})
}

func TestPatchConfigurations(t *testing.T) {
	const good = `{"prefix":"dh","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":1}`
	fmtWith := func(field, value string) string {
		m := map[string]json.RawMessage{}
		_ = json.Unmarshal([]byte(good), &m)
		if value == "" {
			delete(m, field)
		} else {
			m[field] = json.RawMessage(value)
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	formats := func(items ...string) string { return `{"payment_code_formats":[` + strings.Join(items, ",") + `]}` }
	// rule failures: 400 with the documented body naming the rule and the 1-based format number.
	rules := []struct{ name, body, message string }{
		{"suffix_from > suffix_to", formats(fmtWith("suffix_from", "9")), "Format #1: suffix_from must be less than or equal to suffix_to"},
		{"second format", formats(good, fmtWith("prefix", `"HD"`)+"", fmtWith("prefix", `"D1"`)), "Format #3: prefix must contain letters (A-Z) only"},
		{"prefix too short", formats(fmtWith("prefix", `"D"`)), "Format #1: prefix must be 2 to 3 letters long"},
		{"prefix too long", formats(fmtWith("prefix", `"ABCD"`)), "Format #1: prefix must be 2 to 3 letters long"},
		{"prefix diacritics", formats(fmtWith("prefix", `"ĐH"`)), "Format #1: prefix must contain letters (A-Z) only"},
		{"prefix number", formats(fmtWith("prefix", `12`)), "Format #1: prefix must be a string"},
		{"prefix null", formats(fmtWith("prefix", `null`)), "Format #1: prefix must be a string"},
		{"prefix missing", formats(fmtWith("prefix", ``)), "Format #1: prefix is required"},
		{"suffix_from zero", formats(fmtWith("suffix_from", `0`)), "Format #1: suffix_from must be an integer from 1 to 30"},
		{"suffix_from string", formats(fmtWith("suffix_from", `"4"`)), "Format #1: suffix_from must be an integer from 1 to 30"},
		{"suffix_from fraction", formats(fmtWith("suffix_from", `4.5`)), "Format #1: suffix_from must be an integer from 1 to 30"},
		{"suffix_from huge", formats(fmtWith("suffix_from", `99999999999999999999999`)), "Format #1: suffix_from must be an integer from 1 to 30"},
		{"suffix_to 31", formats(fmtWith("suffix_to", `31`)), "Format #1: suffix_to must be an integer from 1 to 30"},
		{"suffix_to negative", formats(fmtWith("suffix_to", `-1`)), "Format #1: suffix_to must be an integer from 1 to 30"},
		{"character_type", formats(fmtWith("character_type", `"Letters"`)), "Format #1: character_type must be one of NumberOnly, NumberAndLetter"},
		{"character_type case", formats(fmtWith("character_type", `"numberonly"`)), "Format #1: character_type must be one of NumberOnly, NumberAndLetter"},
		{"is_active 2", formats(fmtWith("is_active", `2`)), "Format #1: is_active must be 0 or 1"},
		{"is_active bool", formats(fmtWith("is_active", `true`)), "Format #1: is_active must be 0 or 1"},
		{"is_active missing", formats(fmtWith("is_active", ``)), "Format #1: is_active is required"},
		{"duplicate prefix", formats(good, fmtWith("prefix", `"DH"`)), "Format #2: prefix DH is already used by format #1"},
		{"unknown field", formats(fmtWith("colour", `"red"`)), `Format #1: unknown field "colour"`},
		{"not an object", formats(`"DH"`), "Format #1: each format must be a JSON object"},
	}
	// body problems: 400 validation_error envelope.
	invalid := []struct{ name, body, message string }{
		{"malformed", `{"payment_code_formats":[`, "malformed JSON: the body ends early"},
		{"empty", ``, "request body is empty: a JSON object is required"},
		{"missing field", `{}`, "payment_code_formats is required: an array of payment code formats ([] clears the list)"},
		{"null", `{"payment_code_formats":null}`, "payment_code_formats is required: an array of payment code formats ([] clears the list)"},
		{"not an array", `{"payment_code_formats":{}}`, "payment_code_formats must be an array, not object"},
		{"unknown top-level", `{"payment_code_formats":[],"paycode":false}`, `unknown field "paycode"`},
		{"array body", `[]`, "request body must be an object, not array"},
	}
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		// A first good write, which every failure below must leave alone.
		status, _, body := b.do(t, "PATCH", "/api/v1/company/configurations", "admin", formats(good, `{"prefix":"Hd","suffix_from":6,"suffix_to":6,"character_type":"NumberAndLetter","is_active":0}`))
		wantCfg := map[string]any{"bank_sub_account": false, "paycode": true, "data_storage_time": "365", "payment_code_formats": []any{
			map[string]any{"prefix": "DH", "suffix_from": 4.0, "suffix_to": 8.0, "character_type": "NumberOnly", "is_active": true},
			map[string]any{"prefix": "HD", "suffix_from": 6.0, "suffix_to": 6.0, "character_type": "NumberAndLetter", "is_active": false},
		}}
		if d := cmp.Diff(map[string]any{"status": "success", "data": map[string]any{"status": true, "data": wantCfg}}, body); status != 200 || d != "" {
			t.Fatalf("good PATCH: %d (-want +got):\n%s", status, d)
		}
		for _, tt := range rules {
			status, _, body := b.do(t, "PATCH", "/api/v1/company/configurations", "admin", tt.body)
			want := map[string]any{"status": "success", "data": map[string]any{"status": false, "message": tt.message}}
			if d := cmp.Diff(want, body); status != 400 || d != "" {
				t.Errorf("%s: status %d (-want +got):\n%s", tt.name, status, d)
			}
		}
		for _, tt := range invalid {
			status, _, body := b.do(t, "PATCH", "/api/v1/company/configurations", "admin", tt.body)
			if status != 400 || body["error"] != "validation_error" || body["message"] != tt.message {
				t.Errorf("%s: got %d %v, want 400 validation_error %q", tt.name, status, body, tt.message)
			}
		}
		// Nothing of the failures was written.
		_, _, got := b.do(t, "GET", "/api/v1/company", "admin", "")
		if d := cmp.Diff(wantCfg, got["data"].(map[string]any)["configurations"]); d != "" {
			t.Fatalf("configuration changed by failed requests (-want +got):\n%s", d)
		}
		// The other company's formats are untouched; its admin sees only its own.
		_, _, other := b.do(t, "GET", "/api/v1/company", "other-admin", "")
		od := other["data"].(map[string]any)
		if od["id"] != float64(b.other.ID) || len(od["configurations"].(map[string]any)["payment_code_formats"].([]any)) != 1 {
			t.Fatalf("other company: %v", od)
		}
		// [] clears the list (replace semantics).
		status, _, body = b.do(t, "PATCH", "/api/v1/company/configurations", "superadmin", `{"payment_code_formats":[]}`)
		if status != 200 || len(body["data"].(map[string]any)["data"].(map[string]any)["payment_code_formats"].([]any)) != 0 {
			t.Fatalf("clearing: %d %v", status, body)
		}
	})
}

func TestMaxPrefixLenSetting(t *testing.T) {
	db := dbtest.OpenStore(t, "sqlite")
	ctx := context.Background()
	co := &recon.Company{FullName: "A", ShortName: "A", Status: recon.CompanyActive}
	if err := db.CreateCompany(ctx, co); err != nil {
		t.Fatal(err)
	}
	mux := web.NewMux()
	auth := tokens{"t": {Tenant: recon.LiveTenant(co.ID), Scopes: []string{recon.ScopeCompany}, User: &recon.User{Role: recon.RoleAdmin}}}
	(&api.Handler{Store: db, Auth: auth, MaxPrefixLen: 5, Logger: slog.New(slog.DiscardHandler)}).Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := &bundle{srv: srv}
	for prefix, wantStatus := range map[string]int{"ABCDE": 200, "ABCDEF": 400} {
		status, _, body := b.do(t, "PATCH", "/api/v1/company/configurations", "t",
			`{"payment_code_formats":[{"prefix":"`+prefix+`","suffix_from":1,"suffix_to":2,"character_type":"NumberOnly","is_active":1}]}`)
		if status != wantStatus {
			t.Errorf("prefix %s with max 5: status %d %v", prefix, status, body)
		}
	}
}

// TestTryMemo: the memo tester explains with the company's formats, or with
// formats given and checked as PATCH checks them; bad input is a 400 naming
// the problem, and nothing is stored.
func TestTryMemo(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		b.do(t, "PATCH", "/api/v1/company/configurations", "admin", `{"payment_code_formats":[{"prefix":"DH","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}`)
		status, _, body := b.do(t, "POST", "/api/v1/company/try-memo", "admin", `{"memo":"Thanh toán đơn hàng dh1709 cảm ơn"}`)
		d, _ := body["data"].(map[string]any)
		if status != 200 || d["code"] != "DH1709" || d["normalized"] != "THANH TOAN DON HANG DH1709 CAM ON" ||
			d["summary"] != "Found DH1709: prefix DH at a word start and 4 digits (format #1: 4 to 8)" || len(d["candidates"].([]any)) != 1 {
			t.Fatalf("try-memo: %d %v", status, body)
		}
		// Formats given (not stored): the same memo under a TT format.
		status, _, body = b.do(t, "POST", "/api/v1/company/try-memo", "admin",
			`{"memo":"TT 55 chuyen tien TT12345","payment_code_formats":[{"prefix":"TT","suffix_from":5,"suffix_to":5,"character_type":"NumberOnly","is_active":1}]}`)
		d, _ = body["data"].(map[string]any)
		if status != 200 || d["code"] != "TT12345" {
			t.Fatalf("try-memo with formats: %d %v", status, body)
		}
		_, _, co := b.do(t, "GET", "/api/v1/company", "admin", "")
		if f := co["data"].(map[string]any)["configurations"].(map[string]any)["payment_code_formats"].([]any); len(f) != 1 || f[0].(map[string]any)["prefix"] != "DH" {
			t.Fatalf("trying formats changed the stored ones: %v", f)
		}
		status, _, body = b.do(t, "POST", "/api/v1/company/try-memo", "admin", `{"memo":"khong co ma"}`)
		if d := body["data"].(map[string]any); status != 200 || d["code"] != nil || d["summary"] != "No payment code: no active format's prefix appears in the memo" {
			t.Fatalf("no code: %d %v", status, body)
		}
		for _, c := range []struct {
			token, body string
			status      int
			message     string
		}{
			{"admin", `{}`, 400, "memo is required"},
			{"admin", `{"memo":5}`, 400, "memo"},
			{"admin", `{"memo":"` + strings.Repeat("a", 2001) + `"}`, 400, "at most 2000 bytes"},
			{"admin", `{"memo":"x","extra":1}`, 400, "unknown field"},
			{"admin", `{"memo":"x","payment_code_formats":[{"prefix":"D1","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}`, 400, "Format #1"},
			{"member", `{"memo":"x"}`, 403, ""},
		} {
			status, _, body := b.do(t, "POST", "/api/v1/company/try-memo", c.token, c.body)
			if status != c.status || !strings.Contains(fmt.Sprint(body), c.message) {
				t.Errorf("%s %s: %d %v, want %d %q", c.token, c.body, status, body, c.status, c.message)
			}
		}
	})
}
