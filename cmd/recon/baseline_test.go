//go:build external

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"recon"
)

// The engines' own limits of `make bench-external` (docs/benchmarks.md,
// "Ratios to the engine's own limit"): the feed's rows inserted by the
// engine's fastest client, in 1000-row transactions from one stream, into
// a table of the transactions table's shape and indexes, measured in the
// same run as the server so that the ratio holds on whatever machine.

// rawRow is a row of the feed as a raw insert stores it: its payment code
// extracted as the server does, its running balance per account.
type rawRow struct {
	feedRow
	code string
	acc  int64
}

// rawRows returns the rows of the feed's next batches (after tg.offset), in
// push order.
func rawRows(tg *loadTarget, rows int) []rawRow {
	ext := recon.CompanyExtractor(&recon.CompanyConfig{Paycode: true, PaymentCodeFormats: []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 6, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}}})
	balance := map[int64]int64{}
	out := make([]rawRow, 0, rows)
	for n := tg.offset / 1000; n < (tg.offset+rows)/1000; n++ {
		for i := range 1000 {
			r := loadFeedRow(batchAccount(tg.accounts, n, i), n*1000+i)
			balance[r.account] += r.in - r.out
			out = append(out, rawRow{feedRow: r, code: ext.Extract(r.memo), acc: balance[r.account]})
		}
	}
	return out
}

// sqliteLimitScript is C SQLite through Python's sqlite3 module: the DDL
// of Recon's transactions table and its indexes read from the server's
// database file (argv[1]), created in a fresh file (argv[2]) with the
// server's pragmas, then the rows (argv[3], JSON lines, read before the
// clock starts) inserted by executemany, 1000 per transaction. Foreign
// keys are off: the table's key to bank_accounts names a table the fresh
// file does not hold (the server checks it, one lookup a row).
const sqliteLimitScript = `
import json, sqlite3, sys, time
src, dst, data = sys.argv[1:4]
ro = sqlite3.connect('file:' + src + '?mode=ro', uri=True)
ddl = [r[0] for r in ro.execute("SELECT sql FROM sqlite_master WHERE tbl_name = 'transactions' AND sql IS NOT NULL ORDER BY type DESC, name")]
ro.close()
con = sqlite3.connect(dst, isolation_level=None)
for p in ('journal_mode=WAL', 'synchronous=FULL', 'temp_store=MEMORY', 'cache_size=-65536', 'wal_autocheckpoint=10000'):
    con.execute('PRAGMA ' + p)
for d in ddl:
    con.execute(d)
rows = [tuple(json.loads(l)) for l in open(data)]
insert = 'INSERT INTO transactions (company_id, bank_account_id, transaction_date, amount_in, amount_out, accumulated, content, reference_number, code, sub_account, created_at, bank_balance) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)'
t0 = time.perf_counter()
for i in range(0, len(rows), 1000):
    con.execute('BEGIN')
    con.executemany(insert, rows[i:i + 1000])
    con.execute('COMMIT')
elapsed = time.perf_counter() - t0
n = con.execute('SELECT count(*) FROM transactions').fetchone()[0]
assert n == len(rows), (n, len(rows))
print(len(rows) / elapsed)
`

// sqliteLimit returns C SQLite's rows/s for rows, next to the server's
// database at dbURL ("sqlite:PATH").
func sqliteLimit(t testing.TB, dbURL string, company int64, rows []rawRow) float64 {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "rows.jsonl")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	now := time.Now().UnixMicro()
	for _, r := range rows {
		var code any
		if r.code != "" {
			code = r.code
		}
		// Times as the server stores them: integer Unix microseconds.
		if err := enc.Encode([]any{company, r.account, r.date.UnixMicro(), r.in, r.out, r.acc, r.memo, r.ref, code, nil, now, nil}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", "-c", sqliteLimitScript, strings.TrimPrefix(dbURL, "sqlite:"), filepath.Join(dir, "raw.db"), data).CombinedOutput()
	if err != nil {
		t.Fatalf("C SQLite baseline: %v\n%s", err, out)
	}
	rate, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		t.Fatalf("C SQLite baseline: %v\n%s", err, out)
	}
	return rate
}

// postgresLimit returns COPY's rows/s for rows into a table LIKE
// transactions INCLUDING ALL (its columns, defaults, identity, constraints
// and indexes; not its foreign key, which LIKE never copies: the server
// checks it, one lookup a row), on the server's database at dbURL, from
// pgx's CopyFrom in 1000-row transactions. The table is dropped after.
func postgresLimit(t testing.TB, dbURL string, company int64, rows []rawRow) float64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS raw_limit; CREATE TABLE raw_limit (LIKE transactions INCLUDING ALL)`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `DROP TABLE raw_limit`)
	cols := []string{"company_id", "bank_account_id", "transaction_date", "amount_in", "amount_out", "accumulated", "content", "reference_number", "code", "sub_account", "created_at", "bank_balance"}
	now := time.Now()
	vals := make([][]any, len(rows))
	for i, r := range rows {
		var code any
		if r.code != "" {
			code = r.code
		}
		vals[i] = []any{company, r.account, r.date, r.in, r.out, r.acc, r.memo, r.ref, code, nil, now, nil}
	}
	start := time.Now()
	for i := 0; i < len(vals); i += 1000 {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"raw_limit"}, cols, pgx.CopyFromRows(vals[i:min(i+1000, len(vals))])); err != nil {
			t.Fatalf("COPY baseline: %v", err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM raw_limit`).Scan(&n); err != nil || n != len(rows) {
		t.Fatalf("COPY baseline stored %d rows of %d (%v)", n, len(rows), err)
	}
	return float64(len(rows)) / elapsed.Seconds()
}

// engineLimit measures the raw limit of the target's engine.
func engineLimit(t testing.TB, target, dbURL string, company int64, rows []rawRow) float64 {
	if target == "sqlite" {
		return sqliteLimit(t, dbURL, company, rows)
	}
	return postgresLimit(t, dbURL, company, rows)
}

// limitName is what the engine's limit is, for the table.
func limitName(target string) string {
	switch target {
	case "sqlite":
		return "C SQLite executemany"
	case "postgres":
		return "COPY (fsync=off)"
	}
	return "COPY (durable)"
}

// statStatements resets pg_stat_statements on the database at dbURL and
// returns a function writing its top statements by total time to file.
func statStatements(t testing.TB, dbURL, file string) func() {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		t.Fatalf("pg_stat_statements (set -pgstat before the cluster starts): %v", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		t.Fatal(err)
	}
	return func() {
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT calls, total_exec_time, total_plan_time, rows, regexp_replace(left(query, 160), '\s+', ' ', 'g')
			FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT 25`)
		if err != nil {
			t.Error(err)
			return
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "%8s %10s %10s %10s %10s  %s\n", "calls", "total ms", "ms/call", "plan ms", "rows", "query")
		for rows.Next() {
			var calls, n int64
			var total, plan float64
			var q string
			if err := rows.Scan(&calls, &total, &plan, &n, &q); err != nil {
				t.Error(err)
				return
			}
			fmt.Fprintf(&sb, "%8d %10.0f %10.3f %10.0f %10d  %s\n", calls, total, total/float64(max(calls, 1)), plan, n, q)
		}
		if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
			t.Error(err)
		}
		t.Logf("pg_stat_statements during the ingestion → %s:\n%s", file, sb.String())
	}
}

// cpuProfile takes a CPU profile of seconds from the server's pprof
// listener (benchpprof.go) into file, in the background; wait blocks until
// it is written.
func cpuProfile(t testing.TB, pprofAddr, file string, seconds int) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, seconds))
		if err != nil {
			t.Errorf("cpu profile: %v", err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(file)
		if err != nil {
			t.Errorf("cpu profile: %v", err)
			return
		}
		defer f.Close()
		if _, err := io.Copy(f, resp.Body); err != nil {
			t.Errorf("cpu profile: %v", err)
		}
	}()
	return func() { <-done }
}
