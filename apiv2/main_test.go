package apiv2

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
	"recon/web"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// tokens authenticates a test's bearer tokens: each names its caller.
type tokens map[string]*recon.Caller

func (t tokens) Authenticate(_ context.Context, token string) (*recon.Caller, error) {
	if c, ok := t[token]; ok {
		return c, nil
	}
	return nil, recon.Errorf(recon.EUNAUTHORIZED, "the access token is invalid, expired or revoked")
}

// server is a Handler of cfg with the routes of areas (the real ones when
// none) behind web.Middleware, on a loopback port.
func server(t testing.TB, cfg Config, areas ...func(*routes)) (*Handler, *httptest.Server) {
	t.Helper()
	h := New(cfg)
	mux := web.NewMux()
	if len(areas) == 0 {
		areas = h.areas()
	}
	h.register(mux, areas...)
	srv := httptest.NewServer((&web.Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux))
	t.Cleanup(srv.Close)
	return h, srv
}

// company makes an active company in db and returns it with a token map
// holding an admin's token "admin" (every scope) of its live tenant and
// "test" of its test tenant.
func company(t testing.TB, db *sqlstore.DB, name string) (*recon.Company, tokens) {
	t.Helper()
	ctx := context.Background()
	co := &recon.Company{FullName: name, ShortName: name, Status: recon.CompanyActive}
	if err := db.CreateCompany(ctx, co); err != nil {
		t.Fatal(err)
	}
	test, err := db.TestTenant(ctx, co.ID)
	if err != nil {
		t.Fatal(err)
	}
	admin := &recon.User{ID: 1, Company: co.ID, Role: recon.RoleAdmin}
	return co, tokens{
		"admin": {Tenant: co.Tenant(), ClientID: "client-" + name, Scopes: recon.Scopes, User: admin},
		"test":  {Tenant: test.ID, ClientID: "client-" + name, Scopes: recon.Scopes, User: admin},
	}
}

// send makes a request with the bearer token and headers (name, value
// pairs) and returns the status, the answer's headers and its body.
func send(t testing.TB, method, url, token, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, strings.TrimSpace(string(b))
}
