package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestServeReadsFromStandby runs recon serve on a primary with
// --database-read-url naming its streaming standby (docs/design.md, "Reads
// from a standby"), the bound an hour. With the standby's replay paused, a
// transfer and a paid order made then are missing from every list that may
// read the standby (GET /api/v1/transactions, the gateway's GET /v1/order,
// GET /v2/orders, the dashboard's transactions, orders and notifications,
// and its report's counts) and found by their details, which read the
// primary; the metrics say the standby
// serves. Once the standby is stopped the lists read the primary without an
// error, and /readyz never asks the standby.
func TestServeReadsFromStandby(t *testing.T) {
	t.Parallel()
	r := dbtest.NewReplica(t)
	dbURL := r.PrimaryURL
	metricsAddr := freeAddr(t)
	rc := testkit.NewReceiver(t)
	base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets", "--metrics-addr", metricsAddr,
		"--database-read-url", r.StandbyURL, "--read-max-lag", "1h")
	m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
	client := cliJSON(t, dbURL, "client", "create", "--company", m.company, "--name", "erp", "--scopes", "transaction:read order:read")["client_id"].(string)
	token := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "admin@saomai.vn", "--scopes", "transaction:read order:read")["access_token"].(string)
	dashUser(t, dbURL, m.company, "boss@saomai.vn", recon.RoleAdmin)
	dash := testkit.NewBrowser(t, base).SignedIn(m.company, "boss@saomai.vn", dashPassword)
	metrics := func() string { return metricsText(t, "http://"+metricsAddr) }
	push := func(ref string) string {
		t.Helper()
		status, body := testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", m.feedToken,
			fmt.Sprintf(`{"bank_account_id":%s,"amount":150000,"transaction_content":"chuyen tien %s","reference_number":%q}`, m.account, ref, ref))
		if status != 200 {
			t.Fatalf("sandbox transfer %s: %d %v", ref, status, body)
		}
		return fmt.Sprint(body["data"].(map[string]any)["id"])
	}
	get := func(path string) string {
		t.Helper()
		status, body := testkit.Call(t, "GET", base+path, token, "")
		if status != 200 {
			t.Fatalf("GET %s: %d %v", path, status, body)
		}
		return fmt.Sprint(body)
	}
	page := func(path string) string {
		t.Helper()
		status, body := dash.Get(path)
		if status != 200 {
			t.Fatalf("GET %s: %d", path, status)
		}
		return body
	}
	// lists are what each list that may read the standby shows.
	lists := func() map[string]string {
		return map[string]string{
			"GET /api/v1/transactions":     get("/api/v1/transactions"),
			"GET /v1/order":                fmt.Sprint(m.gateway(t, "GET", "/v1/order", "")),
			"GET /v2/orders":               get("/v2/orders"),
			"GET /dashboard/transactions":  page("/dashboard/transactions"),
			"GET /dashboard/orders":        page("/dashboard/orders"),
			"GET /dashboard/notifications": page("/dashboard/notifications"),
		}
	}
	// report is the dashboard's report: its lines' counts.
	report := func() string {
		t.Helper()
		return fmt.Sprint(reportCounts.FindAllStringSubmatch(page("/dashboard/report"), -1))
	}
	ready := func() {
		t.Helper()
		if status, body := testkit.Call(t, "GET", base+"/readyz", "", ""); status != 200 || body["database"] != "ok" {
			t.Fatalf("readyz: %d %v", status, body)
		}
	}

	// The pushes' references are not of the SIM… form the sandbox gives
	// the payments, so that a list showing FEED-TWO is about this push.
	push("FEED-ONE")
	m.pay(t, m.checkout(t, "INV-1", 90000), 90000)
	r.WaitReplayed(t)
	testkit.WaitFor(t, "the lists to read the standby with FEED-ONE and INV-1", 30*time.Second, func() bool {
		if !strings.Contains(metrics(), "recon_db_standby_serving 1") {
			return false
		}
		for _, l := range lists() {
			if !strings.Contains(l, "FEED-ONE") && !strings.Contains(l, "INV-1") {
				return false
			}
		}
		return true
	})

	before := report()
	if !strings.Contains(before, "rp-matched") {
		t.Fatalf("the report shows no lines: %s", before)
	}
	r.PauseReplay(t)
	id := push("FEED-TWO")
	m.pay(t, m.checkout(t, "INV-2", 90000), 90000)
	if after := report(); after != before {
		t.Errorf("the report with the standby paused: %s, want it as before the writes: %s", after, before)
	}
	for name, l := range lists() {
		if strings.Contains(l, "FEED-TWO") || strings.Contains(l, "INV-2") {
			t.Errorf("%s with the standby paused shows what was written since: %.2000s", name, l)
		}
	}
	if l := get("/api/v1/transactions/" + id); !strings.Contains(l, "FEED-TWO") {
		t.Errorf("the detail of a transfer just pushed: %s", l)
	}
	if l := fmt.Sprint(m.gateway(t, "GET", "/v1/order/detail/INV-2", "")); !strings.Contains(l, "INV-2") {
		t.Errorf("the detail of an order just made: %s", l)
	}
	mt := metrics()
	for _, want := range []string{"recon_db_standby_serving 1", "recon_db_standby_staleness_seconds ", "recon_db_standby_reads_total "} {
		if !strings.Contains(mt, want) {
			t.Fatalf("metrics lack %q:\n%.3000s", want, mt)
		}
	}
	ready()

	r.StopStandby(t)
	if after := report(); after == before {
		t.Errorf("the report with the standby stopped: %s, want the writes counted", after)
	}
	for name, l := range lists() {
		if !strings.Contains(l, "FEED-TWO") && !strings.Contains(l, "INV-2") {
			t.Errorf("%s with the standby stopped lacks what was written: %.2000s", name, l)
		}
	}
	ready()
	testkit.WaitFor(t, "the metrics to say the standby does not serve", 30*time.Second, func() bool {
		mt := metrics()
		return strings.Contains(mt, "recon_db_standby_serving 0") && strings.Contains(mt, "recon_db_standby_staleness_seconds +Inf")
	})
}

// reportCounts finds the counts of the report's lines.
var reportCounts = regexp.MustCompile(`<tr id="(rp-[^"]+)"><td>[^<]*</td><td class="num">([^<]*)</td>`)

// TestServeReadURLRefused: --database-read-url is refused on SQLite, and
// with a URL that is not a PostgreSQL one, before the server starts.
func TestServeReadURLRefused(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		dbURL := dbtest.NewMigratedURL(t, engine)
		type refusal struct {
			args []string
			want string
		}
		cases := []refusal{
			{[]string{"--database-read-url", "postgres://recon@standby/recon", "--read-max-lag", "10ms"}, "--read-max-lag must be from 100ms to 1h"},
			map[string]refusal{
				"sqlite": {[]string{"--database-read-url", "postgres://recon@standby/recon"},
					"--database-read-url: a read URL (a standby) needs PostgreSQL: the database is sqlite"},
				"postgres": {[]string{"--database-read-url", "mysql://recon:secret@standby/recon"},
					`--database-read-url: the read URL "mysql://recon:xxxxx@standby/recon" must be a PostgreSQL URL`},
			}[engine],
		}
		for _, tt := range cases {
			_, err := cli(t, dbURL, append([]string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "off"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("recon serve %s: %v, want %q", strings.Join(tt.args, " "), err, tt.want)
			}
		}
		// RECON_DATABASE_READ_URL sets the flag.
		bad := cases[1].args[1]
		err := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "off"}, func(k string) string {
			if k == "RECON_DATABASE_READ_URL" {
				return bad
			}
			return testEnv(dbURL, k)
		}, strings.NewReader(""), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), cases[1].want) {
			t.Errorf("RECON_DATABASE_READ_URL=%s: %v, want %q", bad, err, cases[1].want)
		}
	})
}
