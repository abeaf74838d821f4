package sqlstore

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"

	"recon"
)

// TestListingIsNotReprepared: with ANALYZE's samples of the transactions
// table in place (STAT4), the listing's statements run again for another
// company, page, account or amount without SQLite compiling them again
// (dialect.opaque): a statement kept by the connection's cache costs no
// parser allocations when it runs. Compiling again at each binding was 30% of
// the listing's CPU (docs/design.md, "Opaque parameters").
func TestListingIsNotReprepared(t *testing.T) {
	db := openSQLite(t)
	var tenants []recon.TenantID
	var accounts []*recon.BankAccount
	for n, size := range []int{3000, 30} { // a big company beside a small one
		c := &recon.Company{FullName: fmt.Sprintf("Company %d", n), ShortName: fmt.Sprintf("c%d", n), Status: recon.CompanyActive}
		if err := db.CreateCompany(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		tenant := recon.LiveTenant(c.ID)
		tenants = append(tenants, tenant)
		for k := range 2 {
			b := &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: fmt.Sprintf("%d%d", n, k)}
			if err := db.CreateBankAccount(t.Context(), b); err != nil {
				t.Fatal(err)
			}
			accounts = append(accounts, b)
		}
		var in []recon.TransactionInput
		day := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
		for i := range size {
			in = append(in, recon.TransactionInput{BankAccountID: accounts[2*n+i%2].ID, TransactionDate: day.Add(time.Duration(i) * time.Hour),
				AmountIn: int64(1000 * (1 + i%7)), Content: "CT DEN", ReferenceNumber: fmt.Sprintf("R%d-%d", n, i)})
		}
		if _, err := db.IngestTransactions(t.Context(), tenant, in, make([]string, len(in))); err != nil {
			t.Fatal(err)
		}
	}
	db.db.SetMaxOpenConns(1) // one connection, whose counters are read below
	if _, err := db.db.ExecContext(t.Context(), `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	var samples int
	if err := db.db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM sqlite_stat4 WHERE tbl = 'transactions'`).Scan(&samples); err != nil || samples == 0 {
		t.Fatalf("sqlite_stat4 holds %d samples of transactions (%v), want some", samples, err)
	}
	amount := int64(3000)
	filters := func(n int) []recon.TransactionFilter {
		a := accounts[2*n]
		return []recon.TransactionFilter{
			{Page: 1 + n, Limit: 20},
			{Page: 1, Limit: 10 + n, FromDate: "2026-01-02", ToDate: "2026-02-01"},
			{Page: 1, Limit: 20, BankAccountID: a.ID},
			{Page: 1, Limit: 20, AccountNumber: a.AccountNumber},
			{Page: 1, Limit: 20, AmountIn: &amount},
			{Page: 1, Limit: 20, AmountIn: &amount, FromDate: "2026-01-02"},
			{Page: 1, Limit: 20, ReferenceNumber: fmt.Sprintf("R%d-7", n)},
			{Page: 60, Limit: 20}, // a deep page (of the big company): pageStart
			{Page: 60, Limit: 20, FromDate: "2026-01-01"},
		}
	}
	// SQLite's parser allocates from the connection's lookaside memory; a
	// kept statement that runs without being compiled again does not.
	allocations := func() int {
		conn, err := db.db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		sum := 0
		if err := conn.Raw(func(dc any) error {
			c := dc.(*cachingConn).sqliteConn.(interface {
				Status(sqlite.DBStatusOp, bool) (int, int, error)
			})
			for _, op := range []sqlite.DBStatusOp{sqlite.DBStatusLookasideHit, sqlite.DBStatusLookasideMissSize, sqlite.DBStatusLookasideMissFull} {
				_, high, err := c.Status(op, false)
				if err != nil {
					return err
				}
				sum += high
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	// perRun is the allocations of one run of the statement q, after a
	// first run that compiled it, for the company other than the last run's.
	perRun := func(q string) int {
		n := 0
		run := func() {
			n++
			var c int
			if err := db.db.QueryRowContext(t.Context(), q, tenants[n%2].ID()).Scan(&c); err != nil {
				t.Fatal(err)
			}
		}
		run()
		before := allocations()
		run()
		return allocations() - before
	}
	count := `SELECT COUNT(*) FROM transactions INDEXED BY transactions_company_date WHERE company_id = `
	bare, opaque := perRun(count+"$1"), perRun(count+sqliteDialect{}.opaque("$1"))
	t.Logf("allocations of a run: %d with a bare parameter, %d with an opaque one", bare, opaque)
	if opaque*4 >= bare {
		t.Fatalf("a run of a statement allocated %d times with an opaque parameter, %d with a bare one: it is compiled again either way", opaque, bare)
	}

	// Every parameter of the listing's statements is opaque: the texts the
	// connection kept after listing every filter for both companies.
	for n, tenant := range tenants {
		for _, f := range filters(n) {
			if _, total, err := db.Transactions(t.Context(), tenant, f); err != nil || total == 0 {
				t.Fatalf("Transactions(%+v): total %d, %v", f, total, err)
			}
		}
	}
	conn, err := db.db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	bareParam := regexp.MustCompile(`(^|[^+])(\$[0-9]+|\?)`)
	listed := 0
	if err := conn.Raw(func(dc any) error {
		for q := range dc.(*cachingConn).stmts {
			if q == count+"$1" || !strings.Contains(q, "transactions t") && !strings.Contains(q, "_counts") && !strings.Contains(q, "bank_accounts WHERE") {
				continue
			}
			listed++
			if m := bareParam.FindString(q); m != "" {
				t.Errorf("a listing statement has a bare parameter (%q), which SQLite's planner reads:\n%s", m, q)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if listed < 5 {
		t.Errorf("found %d of the listing's statements among those the connection kept, want at least 5", listed)
	}
}
