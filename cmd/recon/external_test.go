//go:build external

package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"recon/sqlstore/dbtest"
)

// `make bench-external` (docs/benchmarks.md, "Measured from outside"):
// the recon binary runs as its own process (`recon serve`, built with `go
// build`), and this test process is the load generator (loadgen_test.go),
// reaching it only over HTTP with real OAuth2 tokens. Flags go after -args.
var (
	extRows     = flag.Int("rows", 200_000, "transactions to ingest before the listing (a multiple of 1000)")
	extAccounts = flag.Int("accounts", 2, "bank accounts the batches mix, two at a time (batch n: accounts n and n+1)")
	extTargets  = flag.String("targets", "sqlite,postgres,postgres-durable", "servers to measure: sqlite, postgres (the test harness's cluster: fsync=off), postgres-durable (a cluster on the disk: fsync=on, synchronous_commit=on)")
	extQuiet    = flag.Duration("quiet", time.Minute, "pause between the listing right after the load and the listing later")
	extListFor  = flag.Duration("list-for", 3*time.Second, "how long each listing query runs")
	extIPNFor   = flag.Duration("ipn-for", 6*time.Second, "how long the single-transfer pushes last")
	extPhases   = flag.String("phases", "ingest,list,ipn", "phases to run (list needs ingest)")
	extQueries  = flag.String("queries", "", "listing queries to run, by the names the table prints (page1,amount_out,...); empty: all")
)

// TestExternal measures each target in turn: ingestion of mixed-account
// batches, the listing right after the load and again after a quiet pause,
// then single-transfer pushes at 500/s and their IPN latency. It prints one
// table at the end.
func TestExternal(t *testing.T) {
	bin, err := buildRecon()
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig{rows: *extRows, accounts: *extAccounts, inFlight: 4, listFor: *extListFor, clients: 8, ipnRate: 500, ipnFor: *extIPNFor}
	if *extQueries != "" {
		cfg.queries = strings.Split(*extQueries, ",")
	}
	var table strings.Builder
	fmt.Fprintf(&table, "rows=%d, 1000-row batches mixing 2 of %d accounts 60/40, %d in flight; listing: %d closed-loop clients, %s per query; IPN: %d single-transfer pushes/s for %s; %d CPUs\n",
		cfg.rows, cfg.accounts, cfg.inFlight, cfg.clients, cfg.listFor, cfg.ipnRate, cfg.ipnFor, runtime.NumCPU())
	fmt.Fprintf(&table, "%-17s %-30s %12s %10s %10s %s\n", "target", "measure", "rate", "p50 ms", "p99 ms", "load average (before)")
	row := func(target, measure, rate string, p50, p99 time.Duration, load string) {
		p := func(d time.Duration) string {
			if d == 0 {
				return ""
			}
			return ms(d)
		}
		line := fmt.Sprintf("%-17s %-30s %12s %10s %10s %s\n", target, measure, rate, p(p50), p(p99), load)
		fmt.Print(line) // as it comes, and again in the table at the end
		table.WriteString(line)
	}
	phase := func(name string) bool { return strings.Contains(*extPhases, name) }
	for _, target := range strings.Split(*extTargets, ",") {
		t.Run(target, func(t *testing.T) {
			var dbURL string
			switch target {
			case "sqlite":
				dbURL = dbtest.NewURL(t, "sqlite")
			case "postgres":
				dbURL = dbtest.NewURL(t, "postgres")
			case "postgres-durable":
				dbURL = dbtest.NewDurableURL(t)
			default:
				t.Fatalf("unknown target %q", target)
			}
			addr := freeAddr(t)
			startProcess(t, bin, addr, dbURL, append([]string{"--sandbox", "--allow-private-targets"}, benchRateLimit...)...)
			base := "http://" + addr
			if phase("ingest") {
				tg := setupLoad(t, base, dbURL, cfg.accounts)
				load := loadAverage()
				rate := ingest(t, tg, cfg)
				row(target, "ingest", fmt.Sprintf("%.0f tx/s", rate), 0, 0, load)
				t.Logf("%s: ingested %d rows at %.0f tx/s", target, cfg.rows, rate)
				if phase("list") {
					for _, when := range []string{"right after the load", "later"} {
						if when == "later" {
							time.Sleep(*extQuiet)
						}
						load := loadAverage()
						for _, r := range list(t, tg, cfg) {
							row(target, r.name+" ("+strings.Fields(when)[0]+")", fmt.Sprintf("%.0f req/s", r.rps), r.p50, r.p99, load)
						}
					}
				}
			}
			if phase("ipn") {
				it := setupIPN(t, base, dbURL, int(float64(cfg.ipnRate)*cfg.ipnFor.Seconds()))
				load := loadAverage()
				lat := it.latency(t, cfg)
				row(target, "ingest-to-IPN, 1 per request", fmt.Sprintf("%d/s", cfg.ipnRate), percentile(lat, 0.50), percentile(lat, 0.99), load)
			}
		})
	}
	fmt.Fprint(os.Stdout, "\n"+table.String())
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// loadAverage is the machine's 1-minute load average, the load conditions
// beside each figure.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
