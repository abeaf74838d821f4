//go:build external

package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
	extRows       = flag.Int("rows", 200_000, "transactions to ingest before the listing (a multiple of 1000)")
	extAccounts   = flag.Int("accounts", 2, "bank accounts the batches mix, two at a time (batch n: accounts n and n+1)")
	extTargets    = flag.String("targets", "sqlite,postgres,postgres-durable", "servers to measure: sqlite, postgres (the test harness's cluster: fsync=off), postgres-durable (a cluster on the disk: fsync=on, synchronous_commit=on)")
	extQuiet      = flag.Duration("quiet", time.Minute, "pause between the listing right after the load and the listing later")
	extListFor    = flag.Duration("list-for", 3*time.Second, "how long each listing query runs")
	extIPNFor     = flag.Duration("ipn-for", 20*time.Second, "how long the single-transfer pushes last (long enough for the tables they grow to outgrow the plans made when they were small)")
	extPhases     = flag.String("phases", "ingest,list,ipn", "phases to run (list needs ingest)")
	extQueries    = flag.String("queries", "", "listing queries to run, by the names the table prints (page1,amount_out,...); empty: all")
	extProfile    = flag.String("cpuprofile", "", "directory: build the server with its pprof listener (benchpprof.go) and write a CPU profile of it during each target's ingestion, its first listing query and its single-transfer pushes there")
	extProfileFor = flag.Int("cpuprofile-seconds", 10, "length of the CPU profile, from the start of the ingestion")
	extPGStat     = flag.Bool("pgstat", false, "load pg_stat_statements and auto_explain into the clusters and write the top statements (execution and planning times) of each ingestion, listing and the single-transfer pushes, and the clusters' logs with the plans of statements over 3 ms, into the -cpuprofile directory (or the current one)")
	extSeed       = flag.Int("seed", 0, "rows of the same feed put into the big company through the store before the pushes (a multiple of 1000, seed_test.go): the listing then reads seed+rows")
	extCompanies  = flag.Int("companies", 0, "small companies seeded beside the big one, each with one bank account and 1,000 rows; page 1 and three filters are measured on 20 of them too")
)

// TestExternal measures each target in turn: the engine's raw limit,
// ingestion of mixed-account batches, the raw limit again (interleaved, so
// that drift of a shared machine shows), the listing right after the load
// and again after a quiet pause, each time between two measures of the
// server's own GET /healthz rate, then single-transfer pushes at 500/s and
// their IPN latency. It prints the ratios to the limits first, then one
// table with every figure and its limit.
func TestExternal(t *testing.T) {
	if *extPGStat {
		// Before the first cluster starts; the clusters' logs, with
		// auto_explain's plans, go beside the statements' tables.
		dir, err := filepath.Abs(cmp.Or(*extProfile, "."))
		if err != nil {
			t.Fatal(err)
		}
		os.Setenv(dbtest.EnvStatStatements, dir)
	}
	bin, err := buildRecon()
	if *extProfile != "" {
		bin, err = buildReconTags("benchpprof")
		if err == nil {
			err = os.MkdirAll(*extProfile, 0o755)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig{rows: *extRows, accounts: *extAccounts, inFlight: 4, listFor: *extListFor, clients: 8, ipnRate: 500, ipnFor: *extIPNFor}
	if *extQueries != "" {
		cfg.queries = strings.Split(*extQueries, ",")
	}
	var table, ratios strings.Builder
	fmt.Fprintf(&table, "rows=%d, 1000-row batches mixing 2 of %d accounts 60/40, %d in flight; listing: %d closed-loop clients, %s per query; IPN: %d single-transfer pushes/s for %s; %d CPUs\n",
		cfg.rows, cfg.accounts, cfg.inFlight, cfg.clients, cfg.listFor, cfg.ipnRate, cfg.ipnFor, runtime.NumCPU())
	fmt.Fprintf(&table, "%-17s %-30s %12s %10s %10s %-34s %7s %s\n", "target", "measure", "rate", "p50 ms", "p99 ms", "limit (same run)", "ratio", "load average (before)")
	row := func(target, measure, rate string, p50, p99 time.Duration, limit, ratio, load string) {
		p := func(d time.Duration) string {
			if d == 0 {
				return ""
			}
			return ms(d)
		}
		line := fmt.Sprintf("%-17s %-30s %12s %10s %10s %-34s %7s %s\n", target, measure, rate, p(p50), p(p99), limit, ratio, load)
		fmt.Print(line) // as it comes, and again in the table at the end
		table.WriteString(line)
	}
	ratio := func(line string) {
		fmt.Print("RATIO " + line)
		ratios.WriteString(line)
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
			var pprofAddr string
			if *extProfile != "" {
				pprofAddr = freeAddr(t)
				os.Setenv("RECON_BENCH_PPROF_ADDR", pprofAddr)
			}
			server := startProcess(t, bin, addr, dbURL, append([]string{"--sandbox", "--allow-private-targets"}, benchRateLimit...)...)
			base := "http://" + addr
			cfg.cpu = startCPUSampler(server.Process.Pid)
			defer cfg.cpu.close()
			memory := func(when string) {
				rss, peak, err := processMemory(server.Process.Pid)
				if err != nil {
					t.Fatal(err)
				}
				row(target, "server RSS ("+when+")", fmt.Sprintf("%.0f MiB", rss), 0, 0, fmt.Sprintf("peak so far %.0f MiB", peak), "", loadAverage())
				if when == "end" {
					ratio(fmt.Sprintf("%-17s server memory: peak RSS %.0f MiB over the run, %.0f MiB at its end\n", target, peak, rss))
				}
			}
			// profile and statements start the server's CPU profile and the
			// statements' count (-cpuprofile, -pgstat) of a phase, and return
			// the function that writes them when it ends (nothing when off).
			profile := func(name string, seconds int) func() {
				if pprofAddr == "" {
					return func() {}
				}
				return cpuProfile(t, pprofAddr, filepath.Join(*extProfile, target+"-"+name+".pprof"), seconds)
			}
			statements := func(name string) func() {
				if !*extPGStat || target == "sqlite" {
					return func() {}
				}
				return statStatements(t, dbURL, filepath.Join(*extProfile, target+"-"+name+"-statements.txt"))
			}
			if phase("ingest") {
				tg := setupLoad(t, base, dbURL, cfg.accounts)
				if *extSeed > 0 {
					seedFeed(t, dbURL, tg, *extSeed)
				}
				var small []*loadTarget
				if *extCompanies > 0 {
					small = smallTargets(t, base, dbURL, seedCompanies(t, dbURL, *extCompanies, 1000), 20)
				}
				raw := rawRows(tg, cfg.rows)
				load := loadAverage()
				before := engineLimit(t, target, dbURL, tg.company, raw)
				row(target, "limit: "+limitName(target), fmt.Sprintf("%.0f rows/s", before), 0, 0, "", "", load)
				report := statements("ingest")
				profiled := profile("ingest", *extProfileFor)
				load, mark := loadAverage(), cfg.cpu.mark()
				rate := ingest(t, tg, cfg)
				used := cfg.cpu.since(mark)
				profiled()
				report()
				load2 := loadAverage()
				after := engineLimit(t, target, dbURL, tg.company, raw)
				row(target, "limit: "+limitName(target), fmt.Sprintf("%.0f rows/s", after), 0, 0, "", "", load2)
				limit := (before + after) / 2
				row(target, "ingest", fmt.Sprintf("%.0f tx/s", rate), 0, 0, fmt.Sprintf("%.0f rows/s %s", limit, limitName(target)), fmt.Sprintf("%.2f", rate/limit), load+" "+used)
				ratio(fmt.Sprintf("%-17s ingestion %.2f of %s (%.0f tx/s; limit %.0f rows/s, the mean of %.0f before and %.0f after)\n",
					target, rate/limit, limitName(target), rate, limit, before, after))
				t.Logf("%s: ingested %d rows at %.0f tx/s", target, cfg.rows, rate)
				memory("after the ingestion")
				if phase("list") {
					for _, when := range []string{"right after the load", "later"} {
						if when == "later" {
							time.Sleep(*extQuiet)
						}
						w := strings.Fields(when)[0]
						load := loadAverage()
						var around func() func()
						if w == "right" { // the first listing query (page 1 unless -queries says otherwise)
							around = func() func() { return profile("list", int(cfg.listFor.Seconds())) }
						}
						report := statements("list-" + w)
						results, health := listPass(t, tg, small, cfg, around)
						report()
						var hzSum float64
						for _, h := range health {
							hzSum += h.rps
						}
						hz := hzSum / float64(len(health))
						row(target, "GET /healthz ("+w+")", fmt.Sprintf("%.0f req/s", hz), health[0].p50, health[0].p99,
							fmt.Sprintf("mean of %d, %.0f-%.0f", len(health), slices.MinFunc(health, byRate).rps, slices.MaxFunc(health, byRate).rps), "", load+" "+health[0].cpu)
						var page1 float64
						slowest, slowestName := 0.0, ""
						for i, r := range results {
							around := (health[i].rps + health[i+1].rps) / 2 // the /healthz measures just before and after
							row(target, r.name+" ("+w+")", fmt.Sprintf("%.0f req/s", r.rps), r.p50, r.p99, fmt.Sprintf("%.0f req/s /healthz around", around), fmt.Sprintf("%.2f", r.rps/around), r.cpu)
							switch {
							case r.name == "page1" || r.name == smallPage1:
								page1 = r.rps
								ratio(fmt.Sprintf("%-17s %s (%s) %.2f of /healthz (%.0f of %.0f req/s; %.2f of the pass's mean %.0f), p99 %s ms\n", target, r.name, when, r.rps/around, r.rps, around, r.rps/hz, hz, ms(r.p99)))
							case page1 > 0 && page1/r.rps > slowest:
								slowest, slowestName = page1/r.rps, r.name
							}
						}
						if slowestName != "" {
							ratio(fmt.Sprintf("%-17s slowest filter (%s): %s at %.1f× page 1's time\n", target, when, slowestName, slowest))
						}
						memory("after the listing " + when)
					}
				}
			}
			if phase("ipn") {
				it := setupIPN(t, base, dbURL, int(float64(cfg.ipnRate)*cfg.ipnFor.Seconds()))
				load := loadAverage()
				profiled, report := profile("ipn", int(cfg.ipnFor.Seconds())), statements("ipn")
				lat, answered := it.latency(t, cfg)
				profiled()
				report()
				row(target, "push answered, 1 per request", fmt.Sprintf("%d/s", cfg.ipnRate), percentile(answered, 0.50), percentile(answered, 0.99), "", "", load)
				row(target, "ingest-to-IPN, 1 per request", fmt.Sprintf("%d/s", cfg.ipnRate), percentile(lat, 0.50), percentile(lat, 0.99), "", "", load)
				ratio(fmt.Sprintf("%-17s ingest-to-IPN p99 %s ms at %d pushes/s (target ≤ 100 ms)\n", target, ms(percentile(lat, 0.99)), cfg.ipnRate))
			}
			memory("end")
		})
	}
	fmt.Fprint(os.Stdout, "\nRatios to the engine's own limit, measured in the same run:\n"+ratios.String()+"\n"+table.String())
}

// buildReconTags builds the recon binary with build tags, apart from buildRecon's.
func buildReconTags(tags string) (string, error) {
	dir, err := os.MkdirTemp("", "recon-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "recon")
	out, err := exec.Command("go", "build", "-tags", tags, "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

func byRate(a, b listResult) int { return cmp.Compare(a.rps, b.rps) }

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
