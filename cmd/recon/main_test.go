package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"recon"
	"recon/demo"
	"recon/internal/testkit"
	"recon/server"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testEnv is the environment of recon in tests: the database, and on
// PostgreSQL (which has no default key file) the test secret key.
func testEnv(databaseURL, k string) string {
	switch {
	case k == "RECON_DATABASE_URL":
		return databaseURL
	case k == envSecretKey && strings.HasPrefix(databaseURL, "postgres"):
		return dbtest.TestSecretKey
	}
	return ""
}

// cli runs the recon command line in-process and returns its standard output.
func cli(t testing.TB, databaseURL string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string { return testEnv(databaseURL, k) }
	err := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errOut)
	return out.String(), err
}

func cliJSON(t testing.TB, databaseURL string, args ...string) map[string]any {
	t.Helper()
	out, err := cli(t, databaseURL, append(args, "--json")...)
	if err != nil {
		t.Fatalf("recon %s: %v", strings.Join(args, " "), err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("recon %s --json printed %q: %v", strings.Join(args, " "), out, err)
	}
	return v
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer runs `recon serve` in-process on a free loopback port, waits
// for /healthz and stops it gracefully at cleanup, or when stop is called;
// stop returns what run returned. Tests run in parallel, so the port
// freeAddr found may be taken by another test before the server binds it:
// then it tries another port (the server exits at once with EADDRINUSE).
func startServer(t testing.TB, databaseURL string, extra ...string) (base string, stdout *bytes.Buffer, stop func() error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		base, stdout, stop, err := tryServer(t, databaseURL, extra...)
		if err == nil {
			return base, stdout, stop
		}
		if !errors.Is(err, syscall.EADDRINUSE) || attempt == 5 {
			t.Fatalf("server exited early: %v", err)
		}
	}
}

// tryServer is one attempt of startServer: an error when run exited before
// the server became healthy.
func tryServer(t testing.TB, databaseURL string, extra ...string) (base string, stdout *bytes.Buffer, stop func() error, exited error) {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	stdout = &bytes.Buffer{}
	done := make(chan error, 1)
	getenv := func(k string) string { return testEnv(databaseURL, k) }
	// No metrics listener unless the test asks for one (--metrics-addr in
	// extra, which comes later and wins): servers run in parallel.
	args := append([]string{"serve", "--addr", addr, "--metrics-addr", "off", "--log-format", "json", "--log-level", "warn"}, extra...)
	logs := &testkit.Buffer{}
	go func() { done <- run(ctx, args, getenv, strings.NewReader(""), stdout, logs) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log (warnings and errors):\n%s", logs.String())
		}
	})
	base = "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-done:
			cancel()
			if err == nil {
				err = errors.New("run returned nil")
			}
			return "", nil, nil, err
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("server did not become healthy")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("server stopped with: %v", err)
		}
	})
	return base, stdout, stop, nil
}

// TestEndToEnd drives the admin CLI and a real server on both engines, as
// the README's tour does: create a company, users and a client, issue
// tokens, use the Company API, and use the OAuth2 endpoints.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewURL(t, engine)
		metricsAddr := freeAddr(t)
		base, _, _ := startServer(t, dbURL, "--metrics-addr", metricsAddr)

		// The CLI writes while the server runs on the same database.
		co := cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Cổ phần Hoa Sen", "--short-name", "HOASEN")
		id := fmt.Sprint(co["id"])
		cliJSON(t, dbURL, "user", "create", "--company", id, "--email", "Admin@HoaSen.vn", "--role", "Admin", "--password", "correct horse")
		cliJSON(t, dbURL, "user", "create", "--company", id, "--email", "member@hoasen.vn", "--role", "Member", "--permission", "view_transactions")
		cl := cliJSON(t, dbURL, "client", "create", "--company", id, "--name", "ERP", "--scopes", "company transaction:read")
		clientID, secret := cl["client_id"].(string), cl["client_secret"].(string)
		tok := cliJSON(t, dbURL, "token", "issue", "--client", clientID, "--user", "admin@hoasen.vn", "--scopes", "company")
		admin := tok["access_token"].(string)
		if tok["expires_in"] != float64(3600) {
			t.Fatalf("expires_in = %v", tok["expires_in"])
		}
		// A Member's role refuses the company scope: asked for it alone, no
		// token; asked with transaction:read (view_transactions), only that.
		if out, err := cli(t, dbURL, "token", "issue", "--client", clientID, "--user", "member@hoasen.vn", "--scopes", "company"); err == nil {
			t.Fatalf("token issue for a Member with scope company: %s", out)
		}
		mt := cliJSON(t, dbURL, "token", "issue", "--client", clientID, "--user", "member@hoasen.vn", "--scopes", "company transaction:read")
		if mt["scope"] != "transaction:read" || fmt.Sprint(mt["refused_scopes"]) != "[company]" {
			t.Fatalf("member token: %v", mt)
		}
		member := mt["access_token"].(string)

		// Another process's write is in the same token's very next listing:
		// the second listing is answered from the kept caller and page, the
		// third reads the page anew (docs/design.md, "Listing pages kept
		// encoded").
		acct := cliJSON(t, dbURL, "bank-account", "create", "--company", id, "--bank", "Vietcombank", "--number", "0071000123456", "--json")
		transfer := func(ref string) {
			t.Helper()
			cliJSON(t, dbURL, "simulate", "transfer", "--bank-account", fmt.Sprint(acct["id"]), "--amount", "150000", "--content", "chuyen tien", "--reference", ref, "--json")
		}
		list := func(want ...string) {
			t.Helper()
			status, body := testkit.Call(t, "GET", base+"/api/v1/transactions?limit=10", member, "")
			var got []string
			for _, tx := range body["data"].([]any) {
				got = append(got, tx.(map[string]any)["reference_number"].(string))
			}
			if status != 200 || !slices.Equal(got, want) {
				t.Fatalf("transactions: %d %v, want %v", status, got, want)
			}
		}
		transfer("FT1")
		list("FT1")
		list("FT1")
		transfer("FT2")
		list("FT2", "FT1")

		status, body := testkit.Call(t, "GET", base+"/api/v1/company", admin, "")
		if status != 200 || body["data"].(map[string]any)["short_name"] != "HOASEN" || body["data"].(map[string]any)["role"] != "Admin" {
			t.Fatalf("GET company: %d %v", status, body)
		}
		status, body = testkit.Call(t, "PATCH", base+"/api/v1/company/configurations", admin,
			`{"payment_code_formats":[{"prefix":"hs","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}`)
		if status != 200 || !strings.Contains(fmt.Sprint(body), "prefix:HS") {
			t.Fatalf("PATCH: %d %v", status, body)
		}
		if status, body = testkit.Call(t, "GET", base+"/api/v1/company", member, ""); status != 403 {
			t.Fatalf("member: %d %v", status, body)
		}

		// Client credentials through the token endpoint; the token is refused
		// by the company API (no user) but introspects as active.
		form := url.Values{"grant_type": {"client_credentials"}, "scope": {"transaction:read"}}
		req, _ := http.NewRequest("POST", base+"/oauth/token", strings.NewReader(form.Encode()))
		req.SetBasicAuth(clientID, secret)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var tr map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&tr)
		resp.Body.Close()
		if resp.StatusCode != 200 || tr["access_token"] == nil {
			t.Fatalf("client_credentials: %d %v", resp.StatusCode, tr)
		}

		// Revoking the admin token makes the API refuse it at once.
		form = url.Values{"token": {admin}}
		req, _ = http.NewRequest("POST", base+"/oauth/revoke", strings.NewReader(form.Encode()))
		req.SetBasicAuth(clientID, secret)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
			t.Fatalf("revoke: %v %v", resp, err)
		}
		resp.Body.Close()
		if status, _ = testkit.Call(t, "GET", base+"/api/v1/company", admin, ""); status != 401 {
			t.Fatalf("revoked token: %d", status)
		}

		// Operational endpoints.
		if status, body = testkit.Call(t, "GET", base+"/readyz", "", ""); status != 200 || body["database"] != "ok" {
			t.Fatalf("readyz: %d %v", status, body)
		}
		// /metrics is served on its own listener only (--metrics-addr), not
		// to whoever reaches the API.
		if status, body = testkit.Call(t, "GET", base+"/metrics", "", ""); status != 404 {
			t.Fatalf("public /metrics: %d %v, want 404", status, body)
		}
		m := metricsText(t, "http://"+metricsAddr)
		if !strings.Contains(m, `recon_http_requests_total{code="200",method="GET",route="GET /api/v1/company"}`) {
			t.Fatalf("metrics lack the company route:\n%.2000s", m)
		}
		if !strings.Contains(m, `recon_login_lockouts_total{key="pair"} 0`) {
			t.Fatalf("metrics lack the login lockouts:\n%.2000s", m)
		}
	})
}

func TestCLIErrors(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"company", "create", "--short-name", "X"}, `required flag(s) "full-name" not set`},
		{[]string{"company", "create", "--full-name", "X", "--short-name", "X", "--begin-date", "2026-13-01"}, "begin_date must be a date in the form YYYY-MM-DD"},
		{[]string{"user", "create", "--company", "999", "--email", "a@b.vn", "--role", "Admin"}, "company 999 not found"},
		{[]string{"user", "create", "--company", "1", "--email", "not-an-email", "--role", "Admin"}, "email must be a plain e-mail address"},
		{[]string{"user", "create", "--company", "1", "--email", "a@b.vn", "--role", "Boss"}, "role must be one of SuperAdmin, Admin, Accountant, Member"},
		{[]string{"client", "create", "--company", "1", "--name", "x", "--scopes", "company everything"}, `unknown scope "everything"`},
		{[]string{"token", "issue", "--client", "nope", "--user", "a@b.vn", "--scopes", "company"}, `no OAuth2 client "nope"`},
		{[]string{"serve", "--max-prefix-length", "9"}, "--max-prefix-length must be from 3 to 5"},
		{[]string{"serve", "--rate-limit", "-1"}, "--rate-limit must not be negative"},
		{[]string{"serve", "--rate-burst", "0"}, "--rate-burst must be at least 1"},
		{[]string{"serve", "--statement-imports", "0"}, "--statement-imports must be at least 1"},
		{[]string{"serve", "--dashboard-rate-limit", "-1"}, "--dashboard-rate-limit must not be negative"},
		{[]string{"serve", "--dashboard-rate-burst", "4"}, "--dashboard-rate-burst must be at least 5 (a search's cost)"},
		{[]string{"serve", "--sqlite-synchronous", "off"}, "--sqlite-synchronous must be full or normal"},
		{[]string{"serve", "--heartbeat", "2s", "--node-timeout", "5s"}, "--heartbeat, --node-timeout: delivery: the node timeout (5s) must be at least three heartbeats (2s)"},
		{[]string{"serve", "--heartbeat", "0s"}, "--heartbeat, --node-timeout"},
		{[]string{"serve", "--metrics-addr", "9464"}, `--metrics-addr "9464" must be HOST:PORT, or off`},
		{[]string{"serve", "--smtp-url", "http://mail.example.vn?from=a@b.vn"}, `--smtp-url: scheme must be smtp or smtps, not "http"`},
		{[]string{"serve", "--smtp-url", "smtp://mail.example.vn"}, `--smtp-url: from="" must be an e-mail address`},
	} {
		_, err := cli(t, dbURL, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("recon %s: error %v, want it to contain %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
	// RECON_* variables configure flags; a bad one is named.
	err := run(context.Background(), []string{"migrate"}, func(k string) string {
		if k == "RECON_LOG_LEVEL" {
			return "loud"
		}
		return map[string]string{"RECON_DATABASE_URL": "mysql://x"}[k]
	}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "sqlite:") {
		t.Errorf("bad RECON_DATABASE_URL: %v", err)
	}
	out, err := cli(t, dbURL, "--help")
	if err != nil || !strings.Contains(out, "RECON_DATABASE_URL") || !strings.Contains(out, "serve") {
		t.Errorf("--help: %v\n%s", err, out)
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t, "sqlite")
	base, out, _ := startServer(t, dbURL, "--demo")
	text := out.String()
	i := strings.Index(text, "export TOKEN=")
	if i < 0 {
		t.Fatalf("demo banner lacks a token:\n%s", text)
	}
	token := strings.Fields(text[i+len("export TOKEN="):])[0]
	// Every demo user signs in to the dashboard with what the banner prints.
	for _, u := range [][2]string{{demo.AdminEmail, demo.AdminPassword}, {demo.AccountantEmail, demo.AccountantPassword}, {demo.MemberEmail, demo.MemberPassword}} {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(u[0]) + ` +/ ` + regexp.QuoteMeta(u[1]) + ` `).MatchString(text) {
			t.Fatalf("demo banner lacks %s's password:\n%s", u[0], text)
		}
		if status, body := testkit.NewBrowser(t, base).SignIn("1", u[0], u[1]); status != http.StatusSeeOther {
			t.Errorf("demo user %s signs in: %d %s", u[0], status, body)
		}
	}
	if !strings.Contains(text, "Dashboard: "+base+"/dashboard/  sign in with an e-mail and its password:") {
		t.Fatalf("demo banner lacks the dashboard's sign-in:\n%s", text)
	}
	status, body := testkit.Call(t, "GET", base+"/api/v1/company", token, "")
	if status != 200 || body["data"].(map[string]any)["short_name"] != "SAOMAI" {
		t.Fatalf("demo token: %d %v", status, body)
	}
	if len(body["data"].(map[string]any)["configurations"].(map[string]any)["payment_code_formats"].([]any)) != 2 {
		t.Fatalf("demo formats: %v", body)
	}
	status, body = testkit.Call(t, "GET", base+"/api/v1/transactions?limit=100", token, "")
	if status != 200 || body["meta"].(map[string]any)["pagination"].(map[string]any)["total"] != 300.0 {
		t.Fatalf("demo transactions: %d %v", status, body["meta"])
	}
	codes := 0
	for _, tx := range body["data"].([]any) {
		if code, ok := tx.(map[string]any)["code"].(string); ok && strings.HasPrefix(code, "DH") {
			codes++
		}
	}
	if codes < 40 || codes > 90 { // about two thirds of 100 carry a code
		t.Fatalf("%d of 100 demo transactions carry a code", codes)
	}
	// Matching ran on the demo's transactions: orders were paid.
	db := dbtest.OpenURL(t, dbURL)
	paid, _, err := db.Orders(t.Context(), recon.LiveTenant(1), recon.OrderFilter{Status: recon.OrderCaptured, Page: 1, PerPage: 100})
	if err != nil || len(paid) < 20 {
		t.Fatalf("%d demo orders paid (%v), want most of 80", len(paid), err)
	}
	// The demo's sandbox transfer command works as printed.
	i = strings.Index(text, `-H "Authorization: Bearer ory_at_`)
	j := strings.Index(text, "/api/v1/sandbox/transfers")
	if i < 0 || j < 0 {
		t.Fatalf("demo banner lacks the sandbox transfer:\n%s", text)
	}
	k := strings.Index(text[j:], "Bearer ")
	feed := strings.TrimSuffix(strings.Fields(text[j+k+len("Bearer "):])[0], `"`)
	status, body = testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", feed, `{"bank_account_id":1,"amount":150000,"transaction_content":"NGUYEN VAN A chuyen tien DH1709"}`)
	if status != 200 || body["data"].(map[string]any)["code"] != "DH1709" {
		t.Fatalf("sandbox transfer: %d %v", status, body)
	}
}

// TestGracefulShutdown checks that cancelling run's context (what main does on
// SIGINT and SIGTERM) lets a request in flight finish: a PATCH whose body is
// still arriving when the stop begins is answered in full.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	metricsAddr := freeAddr(t)
	base, _, stop := startServer(t, dbURL, "--metrics-addr", metricsAddr)
	id := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "A", "--short-name", "A")["id"])
	cliJSON(t, dbURL, "user", "create", "--company", id, "--email", "a@a.vn", "--role", "Admin")
	client := cliJSON(t, dbURL, "client", "create", "--company", id, "--name", "c", "--scopes", "company")["client_id"].(string)
	token := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "a@a.vn", "--scopes", "company")["access_token"].(string)

	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"payment_code_formats":[]}`
	fmt.Fprintf(conn, "PATCH /api/v1/company/configurations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", token, len(body), body[:10])
	// Wait until the server serves the request (it waits for the rest of
	// the body): one request in flight, the PATCH (the scrape is on the metrics listener).
	testkit.WaitFor(t, "the PATCH in flight", 20*time.Second, func() bool {
		return strings.Contains(metricsText(t, "http://"+metricsAddr), "\nrecon_http_requests_in_flight 1\n")
	})
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// Wait until the stop has begun: the listener refuses new connections.
	testkit.WaitFor(t, "the listener to close", 20*time.Second, func() bool {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	fmt.Fprint(conn, body[10:])
	reply, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(reply), "HTTP/1.1 200") || !strings.Contains(string(reply), `"status":true`) {
		t.Fatalf("in-flight request during shutdown got %q", reply)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("server still answers after a graceful stop")
	}
}

// metricsText returns what /metrics serves at base (the metrics listener).
func metricsText(t testing.TB, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRateLimit: each OAuth2 client and each gateway merchant has its own
// token bucket; past the burst, 429 in the family's envelope with
// Retry-After and the X-RateLimit-* headers.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets", "--rate-limit", "0.01", "--rate-burst", "3")
	m := setupMerchant(t, base, dbURL, "http://127.0.0.1:9/ipn") // its PATCH is the shop client's first request
	other := cliJSON(t, dbURL, "client", "create", "--company", m.company, "--name", "erp", "--scopes", "company")["client_id"].(string)
	otherToken := cliJSON(t, dbURL, "token", "issue", "--client", other, "--user", "admin@saomai.vn", "--scopes", "company")["access_token"].(string)

	do := func(req *http.Request) (*http.Response, string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, strings.TrimSpace(string(body))
	}
	bearer := func(token string) *http.Request {
		req, _ := http.NewRequest("POST", base+"/api/v1/transactions", strings.NewReader(`{"transactions":[]}`))
		req.Header.Set("Authorization", "Bearer "+token)
		return req
	}
	for i, remaining := range []string{"1", "0"} {
		resp, body := do(bearer(m.feedToken))
		if resp.StatusCode != 400 || resp.Header.Get("X-RateLimit-Remaining") != remaining || resp.Header.Get("X-RateLimit-Limit") != "3" {
			t.Fatalf("request %d: %d %s, headers %v", i, resp.StatusCode, body, resp.Header)
		}
	}
	resp, body := do(bearer(m.feedToken))
	// One token per 100 s: Retry-After is at most 100, less by the seconds
	// the requests above took on a busy machine (the server's clock is real).
	retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != 429 || retry < 1 || retry > 100 || resp.Header.Get("X-RateLimit-Remaining") != "0" ||
		!strings.HasPrefix(body, `{"status":"error","error":"rate_limited","message":"too many requests from OAuth2 client`) {
		t.Fatalf("past the burst: %d %s, headers %v", resp.StatusCode, body, resp.Header)
	}
	// A bad token is refused as such, whatever its client's bucket.
	if resp, _ := do(bearer("not-a-token")); resp.StatusCode != 401 {
		t.Fatalf("bad token: %d", resp.StatusCode)
	}
	if status, body := testkit.Call(t, "GET", base+"/api/v1/company", otherToken, ""); status != 200 {
		t.Fatalf("another client: %d %v", status, body)
	}

	basic := func() *http.Request {
		req, _ := http.NewRequest("GET", base+"/v1/order", nil)
		req.SetBasicAuth(m.merchantID, m.secret)
		return req
	}
	for i := range 3 {
		if resp, body := do(basic()); resp.StatusCode != 200 {
			t.Fatalf("gateway request %d: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body = do(basic())
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "100" ||
		!strings.HasPrefix(body, `{"error":{"code":"rate_limited","message":"too many requests from merchant `+m.merchantID) {
		t.Fatalf("gateway past the burst: %d %s", resp.StatusCode, body)
	}
}

// routePatterns are the routes recon serve registers (server.New's Mux), in
// sandbox mode or production.
func routePatterns(t testing.TB, db *sqlstore.DB, sandbox bool) []string {
	t.Helper()
	s, err := server.New(context.Background(), db, server.Config{BaseURL: "http://127.0.0.1", Sandbox: sandbox})
	if err != nil {
		t.Fatal(err)
	}
	return s.Mux.Patterns()
}
