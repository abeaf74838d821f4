package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/oauth"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// The failover node's Admin.
const (
	failoverEmail    = "admin@failover.test"
	failoverPassword = "failover-admin-password"
)

// failoverNode is a node serving on loopback on a PostgreSQL database behind
// a dbtest.Outage.
type failoverNode struct {
	base       string
	db         *sqlstore.DB
	outage     *dbtest.Outage
	direct     string // the database's own URL, past the outage
	logs       *testkit.Buffer
	company    int64
	token      string // the Admin's API token
	merchant   string // the gateway's Basic credentials, id:secret
	hubSecret  string // the OAuth2 client's secret
	dashboard  *testkit.Browser
	receiver   *testkit.Receiver
	stopServer func()
}

func startFailoverNode(t *testing.T) *failoverNode {
	t.Helper()
	db, outage, direct := dbtest.OpenOutageStore(t)
	n := &failoverNode{db: db, outage: outage, direct: direct, logs: &testkit.Buffer{}}
	s, err := New(context.Background(), db, Config{BaseURL: "http://127.0.0.1", MetricsAddr: "off", ShutdownTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(n.logs, nil)), Location: time.UTC, AllowPrivate: true,
		Dispatch: true, Heartbeat: 50 * time.Millisecond, SweepInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// A company with an Admin, an OAuth2 client of every scope and
	// merchant credentials: the credentials of every surface.
	ctx := t.Context()
	co := &recon.Company{FullName: "Failover Ltd", ShortName: "FAILOVER", Status: recon.CompanyActive,
		Subscription: "standard", Config: recon.CompanyConfig{DataStorageDays: 30}}
	if err := db.CreateCompany(ctx, co); err != nil {
		t.Fatal(err)
	}
	n.company = co.ID
	hash, err := oauth.HashPassword(failoverPassword)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateUser(ctx, &recon.User{Company: co.ID, Email: failoverEmail, Role: recon.RoleAdmin,
		Permissions: []string{recon.PermViewTransactions}, PasswordHash: hash}); err != nil {
		t.Fatal(err)
	}
	client := &recon.Client{ID: "failover-erp", Company: co.ID, Name: "Failover ERP", Scopes: recon.Scopes,
		RedirectURIs: []string{"http://127.0.0.1:9999/callback"}}
	if n.hubSecret, err = oauth.RegisterClient(ctx, db, client, false); err != nil {
		t.Fatal(err)
	}
	tok, err := s.Auth.IssueToken(ctx, client.ID, failoverEmail, []string{recon.ScopeCompany, recon.ScopeTransactionRead, recon.ScopeOrderRead}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	n.token = tok.Token
	m := &recon.Merchant{Tenant: co.Tenant(), MerchantID: "FAILOVER", SecretKey: recon.NewSecret()}
	if err := db.SetMerchant(ctx, m); err != nil {
		t.Fatal(err)
	}
	n.merchant = m.MerchantID + ":" + m.SecretKey
	n.receiver = testkit.NewReceiver(t)
	if err := db.SetIPN(t.Context(), recon.LiveTenant(n.company), &recon.Target{URL: n.receiver.URL, AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.base = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	n.stopServer = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	t.Cleanup(func() {
		n.outage.Restore()
		if n.stopServer != nil {
			n.stopServer()
		}
	})
	n.dashboard = testkit.NewBrowser(t, n.base).SignedIn(fmt.Sprint(n.company), failoverEmail, failoverPassword)
	return n
}

// call is one request of a surface.
type call struct {
	name   string
	method string
	path   string
	body   string
	auth   func(*http.Request)
	ok     int // its status when the database answers
}

func (n *failoverNode) calls() []call {
	merchantID, merchantSecret, _ := strings.Cut(n.merchant, ":")
	return []call{
		{"API v1 read", "GET", "/api/v1/transactions?limit=5", "", testkit.Bearer(n.token), 200},
		{"API v1 write", "PATCH", "/api/v1/company", `{"address":"1 Lê Lợi, Quận 1"}`, testkit.Bearer(n.token), 200},
		{"API v2 read", "GET", "/v2/orders?per_page=5", "", testkit.Bearer(n.token), 200},
		{"gateway read", "GET", "/v1/order?per_page=5", "", func(r *http.Request) { r.SetBasicAuth(merchantID, merchantSecret) }, 200},
		{"hub token", "POST", "/v1/token", "", func(r *http.Request) { r.SetBasicAuth("failover-erp", n.hubSecret) }, 201},
		{"OAuth2 token", "POST", "/oauth/token", "grant_type=client_credentials&scope=company", func(r *http.Request) {
			r.SetBasicAuth("failover-erp", n.hubSecret)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}, 200},
	}
}

// send makes c and returns its status, Retry-After and body.
func (n *failoverNode) send(t *testing.T, c call) (int, string, string) {
	t.Helper()
	contentType := ""
	if c.body != "" && c.body[0] == '{' {
		contentType = "application/json"
	}
	status, header, body := testkit.Send(t, c.method, n.base+c.path, c.auth, contentType, c.body)
	return status, header.Get("Retry-After"), string(body)
}

// sendPast makes c until want takes its answer, allowing up to 40 answers
// that ended takes (a call meeting a pooled session a failover ended) before
// it; any other answer fails the test.
func (n *failoverNode) sendPast(t *testing.T, what string, c call, want, ended func(status int, retry, body string) bool) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		status, retry, body := n.send(t, c)
		if want(status, retry, body) {
			return
		}
		if !ended(status, retry, body) || attempt == 40 {
			t.Fatalf("%s: %d Retry-After %q %s", what, status, retry, body)
		}
	}
}

// wantOutage checks that every surface answers 503 with Retry-After, never
// a 500 or a hang, while the database is away.
func (n *failoverNode) wantOutage(t *testing.T, why string) {
	t.Helper()
	for _, c := range n.calls() {
		status, retry, body := n.send(t, c)
		if status != http.StatusServiceUnavailable || retry != "5" {
			t.Errorf("%s, %s: %d Retry-After %q %s, want 503 with Retry-After 5", why, c.name, status, retry, body)
		}
	}
	for _, lang := range []string{"en", "vi"} {
		n.dashboard.Lang = lang
		resp, page := n.dashboard.Do("GET", "/dashboard/transactions", nil, nil)
		want := map[string]string{"en": "briefly unavailable", "vi": "tạm thời gián đoạn"}[lang]
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" || !strings.Contains(page, want) {
			t.Errorf("%s, dashboard in %s: %d Retry-After %q, want 503 with Retry-After 5 saying %q:\n%s",
				why, lang, resp.StatusCode, resp.Header.Get("Retry-After"), want, page)
		}
	}
	n.dashboard.Lang = "en"
	if status, _, _ := n.send(t, call{method: "GET", path: "/readyz"}); status != http.StatusServiceUnavailable {
		t.Errorf("%s: /readyz %d, want 503", why, status)
	}
	if status, _, _ := n.send(t, call{method: "GET", path: "/healthz"}); status != http.StatusOK {
		t.Errorf("%s: /healthz %d, want 200: it never asks the database", why, status)
	}
}

// wantBack checks that every surface answers again, each call after at
// most a few 503s (a connection broken in the outage is found out at its
// first use, and dropped), never a 500.
func (n *failoverNode) wantBack(t *testing.T, why string) {
	t.Helper()
	for _, c := range append(n.calls(), call{name: "readiness", method: "GET", path: "/readyz", ok: 200},
		call{name: "dashboard", method: "GET", path: "/dashboard/transactions", ok: 200}) {
		for attempt := 0; ; attempt++ {
			var status int
			var body string
			if c.name == "dashboard" {
				status, body = n.dashboard.Get(c.path)
			} else {
				status, _, body = n.send(t, c)
			}
			if status == c.ok {
				break
			}
			if status != http.StatusServiceUnavailable || attempt == 40 {
				t.Fatalf("%s, %s: %d %s, want %d", why, c.name, status, body, c.ok)
			}
		}
	}
}

// TestNodeSurvivesALostPrimary: a running node whose PostgreSQL primary
// dies answers every surface with 503 and Retry-After (never a 500, never a
// hang) and is not ready; the dispatcher and the housekeeping pause and say
// so once. When the database is back, the same node, not restarted,
// answers again, says once that it resumed, and sends the notification
// enqueued (by another node) meanwhile (docs/design.md, Losing the primary).
func TestNodeSurvivesALostPrimary(t *testing.T) {
	t.Parallel()
	n := startFailoverNode(t)
	n.wantBack(t, "before the outage")

	n.outage.Cut()
	n.wantOutage(t, "with the primary lost")
	testkit.WaitFor(t, "the dispatcher and the housekeeping to pause", 30*time.Second, func() bool {
		l := n.logs.String()
		return strings.Contains(l, "sending paused") && strings.Contains(l, "housekeeping paused")
	})
	// The node keeps trying (heartbeats, claims, housekeeping), quietly.
	testkit.WaitFor(t, "the node to try the database 20 times", 30*time.Second, func() bool { return n.outage.Refused() >= 20 })
	// Another node, on the promoted primary, enqueues a notification.
	other := dbtest.OpenURL(t, n.direct)
	d := &recon.Delivery{CompanyID: n.company, Kind: recon.DeliveryIPN, Event: "ORDER_PAID",
		Payload: []byte(`{"notification_type":"ORDER_PAID","failover":true}`)}
	if err := other.EnqueueDelivery(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	n.wantOutage(t, "still")

	n.outage.Restore()
	n.wantBack(t, "once the primary is back")
	testkit.WaitFor(t, "the notification enqueued in the outage", 30*time.Second, func() bool {
		return n.receiver.Seen(fmt.Sprint(d.ID)) > 0
	})
	testkit.WaitFor(t, "the dispatcher to resume", 30*time.Second, func() bool { return strings.Contains(n.logs.String(), "sending resumed") })
	testkit.WaitFor(t, "the housekeeping to resume", 30*time.Second, func() bool { return strings.Contains(n.logs.String(), "housekeeping resumed") })
	logs := n.logs.String()
	for _, line := range []string{"sending paused", "sending resumed"} {
		if c := strings.Count(logs, line); c != 1 {
			t.Errorf("%q logged %d times, want once", line, c)
		}
	}
	for _, flood := range []string{"delivery: node heartbeat", "delivery: claim", "level=ERROR msg=\"internal error\""} {
		if strings.Contains(logs, flood) {
			t.Errorf("the outage logged %q:\n%s", flood, logs)
		}
	}
}

// TestNodeOnADemotedPrimary: a primary demoted to a read-only standby
// under a running node: writes are 503 with Retry-After (not a 500), reads
// still answer, the node is not ready; once a writable primary answers,
// writes go through without a restart.
func TestNodeOnADemotedPrimary(t *testing.T) {
	t.Parallel()
	n := startFailoverNode(t)
	n.wantBack(t, "before the demotion")
	read, write := n.calls()[0], n.calls()[1]

	dbtest.SetReadOnly(t, n.direct, true)
	// The sessions the demotion ended: one 503 each at most, on whichever
	// call meets them first.
	n.sendPast(t, "a read on the demoted primary", read,
		func(status int, _, _ string) bool { return status == http.StatusOK },
		func(status int, _, _ string) bool { return status == http.StatusServiceUnavailable })
	n.sendPast(t, "a write on the demoted primary (want 503 saying it is read-only)", write,
		func(status int, retry, body string) bool {
			return status == http.StatusServiceUnavailable && retry == "5" && strings.Contains(body, "read-only")
		},
		func(status int, retry, body string) bool {
			return status == http.StatusServiceUnavailable && retry == "5" && strings.Contains(body, "not reachable")
		})
	n.sendPast(t, "/readyz on the demoted primary", call{method: "GET", path: "/readyz"},
		func(status int, _, body string) bool {
			return status == http.StatusServiceUnavailable && strings.Contains(body, `"read_only"`)
		},
		func(status int, _, body string) bool {
			return status == http.StatusServiceUnavailable && strings.Contains(body, `"unreachable"`)
		})

	dbtest.SetReadOnly(t, n.direct, false)
	n.wantBack(t, "once promoted again")
	if strings.Contains(n.logs.String(), "level=ERROR msg=\"internal error\"") {
		t.Errorf("the demotion logged internal errors:\n%s", n.logs.String())
	}
}
