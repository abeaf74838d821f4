//go:build driverbench

// Package driverbench compares two SQLite drivers on Recon's transactions
// table (`make bench-drivers`): modernc.org/sqlite, the pure-Go driver the
// server uses, and github.com/mattn/go-sqlite3, the C library through cgo.
// It measures the drivers, not the server: raw inserts and a raw listing,
// like the C SQLite baseline of cmd/recon/baseline_test.go.
package driverbench

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"
	_ "modernc.org/sqlite"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
)

var rowsFlag = flag.Int("rows", 200000, "transactions ingested per run, a multiple of 1000")

const (
	chunk       = 1000 // rows per transaction, as the feed pushes them
	perStmt     = 100  // rows per statement of the multi-row variant
	listConns   = 8    // pool size and goroutines of the listing
	listFor     = 3 * time.Second
	insertCols  = "company_id, bank_account_id, transaction_date, amount_in, amount_out, accumulated, content, reference_number, code, sub_account, created_at, bank_balance"
	nCols       = 12
	listColumns = `id, company_id, bank_account_id, transaction_date, amount_in, amount_out, accumulated, content,
	reference_number, code, sub_account, created_at, COALESCE(dup_state, ''), COALESCE(dup_of, 0)`
)

func init() {
	// mattn's DSN has no temp_store option, and a PRAGMA run through the
	// pool reaches one connection only: the hook runs them on every
	// connection it opens, as modernc's _pragma parameters do.
	sql.Register("sqlite3_driverbench", &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec("PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536", nil)
		return err
	}})
}

// driver is a database/sql driver and the DSN parameters that give a
// file the server's pragmas (sqlstore/dialect_sqlite.go) but foreign keys
// off: the table's key names bank_accounts, which the fresh file does not
// hold. Both drivers run the pragmas on every connection they open.
type driver struct{ name, sqlDriver, params string }

var drivers = []driver{
	// As the server also: BEGIN IMMEDIATE, and TIMESTAMP integers read as
	// time.Time (mattn converts them unasked, see list).
	{"modernc", "sqlite", "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(0)" +
		"&_pragma=temp_store(MEMORY)&_pragma=cache_size(-65536)&_txlock=immediate&_time_integer_format=unix_micro&_inttotime=1"},
	{"mattn", "sqlite3_driverbench", "?_journal_mode=WAL&_synchronous=FULL&_busy_timeout=5000&_foreign_keys=0&_txlock=immediate"},
}

// measures name the figures of a run, in order.
var measures = []string{"ingest single-row (rows/s)", "ingest multi-row x100 (rows/s)", "list page 1 (queries/s)"}

func TestDrivers(t *testing.T) {
	n := *rowsFlag
	if n <= 0 || n%chunk != 0 {
		t.Fatalf("-rows=%d: want a positive multiple of %d", n, chunk)
	}
	dir := t.TempDir()
	ddl := schema(t, filepath.Join(dir, "schema.db"))
	args := feed(n)
	fmt.Printf("rows=%d NumCPU=%d GOMAXPROCS=%d\n", n, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	for _, d := range drivers {
		db := open(t, d, filepath.Join(dir, d.name+"-version.db"), 1)
		var v string
		must(t, db.QueryRow("SELECT sqlite_version()").Scan(&v))
		db.Close()
		fmt.Printf("%s: SQLite %s\n", d.name, v)
	}

	// Each driver twice, alternating, so that drift of a shared machine
	// shows as a difference between rounds rather than between drivers.
	const rounds = 2
	means := map[[2]string]float64{} // {driver, measure}
	for round := 1; round <= rounds; round++ {
		for _, d := range drivers {
			runDir := filepath.Join(dir, fmt.Sprintf("%s-%d", d.name, round))
			must(t, os.Mkdir(runDir, 0o755))
			multi := filepath.Join(runDir, "multi.db")
			for i, measure := range []func() float64{
				func() float64 { return ingest(t, d, filepath.Join(runDir, "single.db"), ddl, args, 1) },
				func() float64 { return ingest(t, d, multi, ddl, args, perStmt) },
				func() float64 { return list(t, d, multi) },
			} {
				load := loadavg()
				v := measure()
				means[[2]string{d.name, measures[i]}] += v / rounds
				fmt.Printf("round %d %-8s %-30s %10.0f   (load1 before: %s)\n", round, d.name, measures[i], v, load)
			}
			os.RemoveAll(runDir) // 200,000 rows make files of tens of MB
		}
	}

	fmt.Printf("\n%-30s %10s %10s %14s\n", "mean of the rounds", "modernc", "mattn", "mattn/modernc")
	for _, m := range measures {
		a, b := means[[2]string{"modernc", m}], means[[2]string{"mattn", m}]
		fmt.Printf("%-30s %10.0f %10.0f %14.2f\n", m, a, b, b/a)
	}
}

// schema migrates a fresh file through the project's own store and returns
// the DDL of the transactions table and its indexes, table first.
func schema(t *testing.T, path string) string {
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, "sqlite:"+path)
	must(t, err)
	must(t, store.Migrate(ctx))
	must(t, store.Close())
	db, err := sql.Open("sqlite", path)
	must(t, err)
	defer db.Close()
	var ddl string
	must(t, db.QueryRow(`SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master
		WHERE tbl_name = 'transactions' AND sql IS NOT NULL ORDER BY type DESC, name)`).Scan(&ddl))
	return ddl
}

// The accounts of feed are mixed as cmd/recon/loadgen_test.go's
// batchAccount mixes them, which a package main test cannot export; the
// rows are testkit.Feed's.

// feed returns the arguments of n rows of company 1, nCols per row in
// insertCols order, generated before any clock starts: two accounts mixed
// 60/40, a payment code extracted as the server does, times as the server
// stores them (integer Unix microseconds).
func feed(n int) []any {
	ext := recon.CompanyExtractor(&recon.CompanyConfig{Paycode: true, PaymentCodeFormats: []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 6, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}}})
	now := time.Now().UnixMicro()
	var balance [3]int64 // of accounts 1 and 2
	out := make([]any, 0, n*nCols)
	for seq := range n {
		account := int64(1 + (seq/chunk+min(1, seq%chunk%5/3))%2)
		r := testkit.Feed(seq)
		balance[account] += r.In - r.Out
		var code any
		if c := ext.Extract(r.Memo); c != "" {
			code = c
		}
		out = append(out, int64(1), account, r.Date.UnixMicro(), r.In, r.Out, balance[account], r.Memo, r.Ref, code, nil, now, nil)
	}
	return out
}

// open opens d's pool of conns connections on path and checks that the
// pragmas took.
func open(t *testing.T, d driver, path string, conns int) *sql.DB {
	db, err := sql.Open(d.sqlDriver, path+d.params)
	must(t, err)
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	var got string
	must(t, db.QueryRow(`SELECT journal_mode || ' ' || synchronous || ' ' || temp_store || ' ' || cache_size || ' ' || timeout || ' ' || foreign_keys
		FROM pragma_journal_mode, pragma_synchronous, pragma_temp_store, pragma_cache_size, pragma_busy_timeout, pragma_foreign_keys`).Scan(&got))
	if want := "wal 2 2 -65536 5000 0"; got != want {
		t.Fatalf("%s pragmas: %q, want %q (journal_mode synchronous temp_store cache_size busy_timeout foreign_keys)", d.name, got, want)
	}
	return db
}

// ingest creates the table in a fresh file and inserts the rows in
// transactions of chunk rows, through one prepared statement of perStmt
// rows, on one connection (the server has one writer); it returns rows/s.
func ingest(t *testing.T, d driver, path, ddl string, args []any, perStmt int) float64 {
	db := open(t, d, path, 1)
	defer db.Close()
	_, err := db.Exec(ddl)
	must(t, err)
	values := strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,?,?,?,?,?),", perStmt), ",")
	stmt, err := db.Prepare("INSERT INTO transactions (" + insertCols + ") VALUES " + values)
	must(t, err)
	defer stmt.Close()
	n := len(args) / nCols
	start := time.Now()
	for i := 0; i < n; i += chunk {
		tx, err := db.Begin()
		must(t, err)
		txStmt := tx.Stmt(stmt) // the same connection: no re-prepare
		for j := i; j < i+chunk; j += perStmt {
			_, err := txStmt.Exec(args[j*nCols : (j+perStmt)*nCols]...)
			must(t, err)
		}
		must(t, tx.Commit())
	}
	rate := float64(n) / time.Since(start).Seconds()
	var got int
	if err := db.QueryRow(`SELECT count(*) FROM transactions`).Scan(&got); err != nil || got != n {
		t.Fatalf("%s stored %d rows of %d (%v)", d.name, got, n, err)
	}
	return rate
}

// list runs page 1 of the company's listing, closed loop, by listConns
// goroutines on a pool of as many connections for listFor; it returns
// queries/s. Not its total: the server sums it from per-day counts
// (sqlstore.sumDays), where a COUNT(*) here would measure an index scan of
// every row. The statement is prepared once: database/sql prepares it again
// on each connection of the pool the first time it uses it.
func list(t *testing.T, d driver, path string) float64 {
	db := open(t, d, path, listConns)
	defer db.Close()
	page, err := db.Prepare(`SELECT ` + listColumns + ` FROM transactions WHERE company_id = ? ORDER BY transaction_date DESC, id DESC LIMIT 20`)
	must(t, err)
	defer page.Close()
	// readPage reads page 1 as the server does (every column scanned, times as
	// time.Time: mattn turns TIMESTAMP integers into time.Time on its own,
	// reading them as milliseconds) and checks it is full.
	readPage := func() error {
		rows, err := page.Query(int64(1))
		if err != nil {
			return err
		}
		defer rows.Close()
		got := 0
		for ; rows.Next(); got++ {
			var id, company, account, in, out, acc, dupOf int64
			var date, created time.Time
			var content, ref, dupState string
			var code, sub sql.NullString
			if err := rows.Scan(&id, &company, &account, &date, &in, &out, &acc, &content, &ref, &code, &sub, &created, &dupState, &dupOf); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if got != 20 {
			return fmt.Errorf("page 1 has %d rows, want 20", got)
		}
		return nil
	}
	var queries atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for range listConns {
		wg.Go(func() {
			for time.Since(start) < listFor {
				if err := readPage(); err != nil {
					failed.Store(&err)
					return
				}
				queries.Add(1)
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatalf("%s listing: %v", d.name, *err)
	}
	return float64(queries.Load()) / time.Since(start).Seconds()
}

// loadavg is the 1-minute load average ("?" if unreadable): another
// process on the machine shows here.
func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Fields(string(b) + " ?")[0]
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
