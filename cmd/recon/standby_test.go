package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestServeReadsFromStandby runs recon serve on a primary with
// --database-read-url naming its streaming standby (docs/design.md, "Reads
// from a standby"), the bound an hour: with the standby's replay paused, a
// transfer just pushed is missing from GET /api/v1/transactions (read from
// the standby) and found by its detail (read from the primary); the
// metrics say the standby serves; once the standby is stopped the list
// reads the primary without an error, and /readyz never asks the standby.
func TestServeReadsFromStandby(t *testing.T) {
	t.Parallel()
	r := dbtest.NewReplica(t)
	dbURL := r.PrimaryURL
	metricsAddr := freeAddr(t)
	base, _, _ := startServer(t, dbURL, "--sandbox", "--metrics-addr", metricsAddr,
		"--database-read-url", r.StandbyURL, "--read-max-lag", "1h")
	co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Sao Mai", "--short-name", "SM")["id"])
	cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "boss@saomai.vn", "--role", "Admin")
	client := cliJSON(t, dbURL, "client", "create", "--company", co, "--name", "erp", "--scopes", "transaction:write transaction:read")["client_id"].(string)
	token := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "boss@saomai.vn", "--scopes", "transaction:write transaction:read")["access_token"].(string)
	account := fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", co, "--bank", "Vietcombank", "--number", "0071000123456")["id"])
	push := func(ref string) string {
		t.Helper()
		status, body := testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", token,
			fmt.Sprintf(`{"bank_account_id":%s,"amount":150000,"transaction_content":"chuyen tien","reference_number":%q}`, account, ref))
		if status != 200 {
			t.Fatalf("sandbox transfer %s: %d %v", ref, status, body)
		}
		return fmt.Sprint(body["data"].(map[string]any)["id"])
	}
	list := func() string {
		t.Helper()
		status, body := testkit.Call(t, "GET", base+"/api/v1/transactions", token, "")
		if status != 200 {
			t.Fatalf("GET transactions: %d %v", status, body)
		}
		return fmt.Sprint(body)
	}
	ready := func() {
		t.Helper()
		if status, body := testkit.Call(t, "GET", base+"/readyz", "", ""); status != 200 || body["database"] != "ok" {
			t.Fatalf("readyz: %d %v", status, body)
		}
	}
	push("SIM1")
	r.WaitReplayed(t)
	testkit.WaitFor(t, "the list read from the standby with SIM1", 30*time.Second, func() bool {
		return strings.Contains(list(), "SIM1") && strings.Contains(metricsText(t, "http://"+metricsAddr), "recon_db_standby_serving 1")
	})

	r.PauseReplay(t)
	id := push("SIM2")
	if l := list(); !strings.Contains(l, "SIM1") || strings.Contains(l, "SIM2") {
		t.Fatalf("the list with the standby paused: %s, want SIM1 and not SIM2", l)
	}
	if status, body := testkit.Call(t, "GET", base+"/api/v1/transactions/"+id, token, ""); status != 200 || !strings.Contains(fmt.Sprint(body), "SIM2") {
		t.Fatalf("the detail of a transfer just pushed: %d %v", status, body)
	}
	m := metricsText(t, "http://"+metricsAddr)
	for _, want := range []string{"recon_db_standby_serving 1", "recon_db_standby_staleness_seconds ", "recon_db_standby_reads_total "} {
		if !strings.Contains(m, want) {
			t.Fatalf("metrics lack %q:\n%.3000s", want, m)
		}
	}
	ready()

	r.StopStandby(t)
	if l := list(); !strings.Contains(l, "SIM2") {
		t.Fatalf("the list with the standby stopped: %s, want SIM2", l)
	}
	ready()
	testkit.WaitFor(t, "the metrics to say the standby does not serve", 30*time.Second, func() bool {
		m := metricsText(t, "http://"+metricsAddr)
		return strings.Contains(m, "recon_db_standby_serving 0") && strings.Contains(m, "recon_db_standby_staleness_seconds +Inf")
	})
}

// TestServeReadURLRefused: --database-read-url is refused on SQLite, and
// with a URL that is not a PostgreSQL one, before the server starts.
func TestServeReadURLRefused(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		dbURL := dbtest.NewURL(t, engine)
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
