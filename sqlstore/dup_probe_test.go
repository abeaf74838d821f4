package sqlstore_test

import (
	"fmt"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestDuplicateLookUpProbesByKey: the look-up of possible duplicates finds
// its rows by key (transactions_dup_key, migration 00052) for an account the
// statistics take for empty: one linked after the table's last analyse,
// which since holds 3,000 rows. With the account's condition one an index
// serves, both engines read such an account whole and filtered on the
// keys: 2.8 ms a push at 1,000,000 rows on PostgreSQL (docs/benchmarks.md,
// "The duplicate look-up keyed by account").
func TestDuplicateLookUpProbesByKey(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		co := &recon.Company{FullName: "Probe", ShortName: "P", Status: recon.CompanyActive}
		if err := db.CreateCompany(ctx, co); err != nil {
			t.Fatal(err)
		}
		var big, fresh recon.BankAccount
		for i, a := range []*recon.BankAccount{&big, &fresh} {
			*a = recon.BankAccount{CompanyID: co.ID, BankName: "VCB", AccountNumber: fmt.Sprint(i + 1)}
			if err := db.CreateBankAccount(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		date := "'2026-01-01 00:00:00'" // SQLite stores times as integers
		if engine == "sqlite" {
			date = "1767225600000000000"
		}
		fill := func(account int64, n int, prefix string) {
			t.Helper()
			// Numbers only, written into the statement.
			_, err := db.SQL().ExecContext(ctx, fmt.Sprintf(`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < %d)
				INSERT INTO transactions (company_id, bank_account_id, transaction_date, amount_in, amount_out, accumulated, content,
					reference_number, created_at, dup_key)
				SELECT %d, %d, %s, n, 0, 0, 'chuyen tien', '%s' || n, %s, 1000000 + n FROM g`,
				n, co.ID, account, date, prefix, date))
			if err != nil {
				t.Fatal(err)
			}
		}
		fill(big.ID, 5000, "B")
		if _, err := db.SQL().ExecContext(ctx, `ANALYZE`); err != nil {
			t.Fatal(err)
		}
		fill(fresh.ID, 3000, "F")

		const n = 16
		var keys []int64
		for k := range n {
			keys = append(keys, int64(1000000+k))
		}
		probe, args := db.DupProbe(fresh.ID, keys)
		plan := planOf(t, db, engine, probe, args)
		text := strings.Join(plan, "\n")
		probed := false
		for _, line := range plan {
			switch {
			case strings.Contains(line, "Filter") && strings.Contains(line, "dup_key"):
				t.Errorf("the keys are a filter, not the index's condition:\n%s", text)
			case strings.Contains(line, "Index Cond") && strings.Contains(line, "dup_key + bank_account_id"),
				strings.Contains(line, "USING INDEX transactions_dup_key (<expr>=?)"):
				probed = true
			}
		}
		if !probed {
			t.Errorf("the look-up does not probe transactions_dup_key by key:\n%s", text)
		}
	})
}

// planOf returns the lines of the plan the engine makes for query with
// args (PostgreSQL's for these values, as the pool's force_custom_plan
// makes it).
func planOf(t *testing.T, db *sqlstore.DB, engine, query string, args []any) []string {
	t.Helper()
	explain := "EXPLAIN "
	if engine == "sqlite" {
		explain = "EXPLAIN QUERY PLAN "
	}
	rows, err := db.SQL().QueryContext(t.Context(), explain+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		dest := make([]any, len(cols))
		for i := range dest {
			dest[i] = new(any)
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, fmt.Sprint(*dest[len(dest)-1].(*any)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestOrdersNamedByABatchFoundByKey: the orders a batch's thousand codes
// name, or a few codes and a virtual account, are found through the
// company's indexes, each value a probe, on a company with 20,000 orders
// beside a hundred others (with an OR of the ways to name an order, SQLite
// then read every order), and read by primary key, before the statistics
// know of the orders and after (with the company's own condition an index
// condition, PostgreSQL intersected the key's probe with every order of
// the company while its statistics were older than the orders); on
// PostgreSQL the codes are one array the planner does not estimate value by
// value (oneOf).
func TestOrdersNamedByABatchFoundByKey(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		co := &recon.Company{FullName: "Orders", ShortName: "O", Status: recon.CompanyActive}
		if err := db.CreateCompany(ctx, co); err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			if err := db.CreateCompany(ctx, &recon.Company{FullName: fmt.Sprint("Other ", i), ShortName: "O", Status: recon.CompanyActive}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.SQL().ExecContext(ctx, `ANALYZE`); err != nil { // statistics of no order
			t.Fatal(err)
		}
		now := "now()"
		if engine == "sqlite" {
			now = "0" // SQLite stores times as integers
		}
		// Numbers only, written into the statement.
		if _, err := db.SQL().ExecContext(ctx, fmt.Sprintf(`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)
			INSERT INTO orders (company_id, invoice_number, payment_code, amount, currency, status, created_at, updated_at, public_id, virtual_account)
			SELECT %d, 'I' || n, 'DH' || n, 1000, 'VND', 'OPEN', %s, %s, 'p' || n, CASE WHEN n %% 2 = 0 THEN '9704' || n END FROM g`, co.ID, now, now)); err != nil {
			t.Fatal(err)
		}
		var codes []string
		for i := range 1000 {
			codes = append(codes, fmt.Sprint("DH", i*7))
		}
		check := func(when string) {
			for _, named := range []struct {
				codes, vas []string
			}{{codes, nil}, {codes[:5], []string{"97040010"}}} {
				query, args := db.LockOrdersQuery(co.ID, named.codes, named.vas)
				plan := planOf(t, db, engine, query, args)
				text := strings.Join(plan, "\n")
				probed := false
				for _, line := range plan {
					switch {
					case strings.Contains(line, "Seq Scan on orders") || strings.HasPrefix(line, "SCAN o"),
						strings.Contains(line, "Filter") && strings.Contains(line, "payment_code"):
						t.Errorf("%s, %d codes, %d accounts: the codes are a filter over the orders read, not the index's condition:\n%s", when, len(named.codes), len(named.vas), text)
					case strings.Contains(line, "Index Cond: (company_id = ") && !strings.Contains(line, " AND "),
						strings.HasPrefix(line, "SEARCH o USING") && strings.Contains(line, "(company_id=?)"):
						t.Errorf("%s, %d codes, %d accounts: the company's orders are read whole:\n%s", when, len(named.codes), len(named.vas), text)
					case strings.Contains(line, "Index Cond") && strings.Contains(line, "payment_code = ANY"),
						strings.Contains(line, "payment_code=?"):
						probed = true
					}
				}
				if !probed {
					t.Errorf("%s, %d codes, %d accounts: the look-up does not probe the orders by payment code:\n%s", when, len(named.codes), len(named.vas), text)
				}
			}
		}
		check("before the statistics")
		if _, err := db.SQL().ExecContext(ctx, `ANALYZE`); err != nil {
			t.Fatal(err)
		}
		check("after ANALYZE")
	})
}
