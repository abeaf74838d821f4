package sqlstore

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"recon"
)

// TestTransactionsInsertCannotAbort: the program SQLite compiles for the
// multi-row insert of ingestion holds nothing that may abort the statement
// midway, so SQLite keeps no statement journal for it (docs/design.md, "An
// insert that cannot abort"; migration 00049). SQLite keeps that journal for
// a statement writing several rows inside a transaction when its program
// may halt with ABORT: a constraint resolved by ABORT (Halt or HaltIfNull
// with P2 = 2), a foreign key of the row checked by the statement itself
// (FkCounter with P1 = 0, immediate, and P2 > 0, a row missing its parent),
// or a call of an SQL function, which may raise an error (Function,
// PureFunc). The journal's copies of the pages were 21% of the insert's CPU
// (docs/benchmarks.md, "SQLite: the writer's journal and change log").
func TestTransactionsInsertCannotAbort(t *testing.T) {
	db := openSQLite(t)
	const oeAbort = 2
	for _, q := range []string{sqliteInsertFullChunk, sqliteInsertTransactions(3)} {
		rows, err := db.db.QueryContext(t.Context(), `EXPLAIN `+q, make([]any, strings.Count(q, "?"))...)
		if err != nil {
			t.Fatal(err)
		}
		var halts, fks int
		for rows.Next() {
			var addr, p1, p2, p3 int64
			var op string
			var p4, p5, comment any
			if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
				t.Fatal(err)
			}
			switch {
			case op == "Function" || op == "PureFunc":
				t.Errorf("%d %s %v: an SQL function in the insert's program", addr, op, p4)
			case (op == "Halt" || op == "HaltIfNull") && p1 != 0:
				halts++
				if p2 == oeAbort {
					t.Errorf("%d %s %v: a constraint resolved by ABORT", addr, op, p4)
				}
			case op == "FkCounter" && p2 > 0:
				fks++
				if p1 == 0 {
					t.Errorf("%d FkCounter %d %d: a foreign key checked by the statement, not at commit", addr, p1, p2)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		// The checks are still there, resolved otherwise: NOT NULL and
		// CHECK by FAIL, the key to bank_accounts at commit.
		if halts < 11 || fks < 1 {
			t.Errorf("the insert's program checks %d constraints and %d foreign keys, want NOT NULL and CHECKs (11) and the key to bank_accounts", halts, fks)
		}
		rows.Close()
	}
}

// TestTransactionsConstraintsStillHold: migration 00049 restated the
// transactions table's CHECKs and foreign key; they refuse what they refused
// before. A time that is not an integer is refused at once; a row whose
// account is not its company's is refused at COMMIT, which stores nothing
// and leaves the connection usable.
func TestTransactionsConstraintsStillHold(t *testing.T) {
	db := openSQLite(t)
	ctx := t.Context()
	var accounts []*recon.BankAccount
	for n := range 2 {
		c := &recon.Company{FullName: fmt.Sprintf("Company %d", n), ShortName: fmt.Sprintf("c%d", n), Status: recon.CompanyActive}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		b := &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: fmt.Sprint(n)}
		if err := db.CreateBankAccount(ctx, b); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, b)
	}
	db.db.SetMaxOpenConns(1) // the connection a failed commit leaves is the next one used
	a := accounts[0]
	insert := func(tx *sql.Tx, company int64, date any, ref string) error {
		_, err := tx.ExecContext(ctx, `INSERT OR FAIL INTO `+insertColumns+`VALUES (?, ?, ?, 1000, 0, 1000, 'CT DEN', ?, NULL, NULL, 1, NULL, 0)`, company, a.ID, date, ref)
		return err
	}
	for _, date := range []any{"2026-01-01 09:00:00", 1.5, []byte{0}, nil} {
		tx, err := db.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := insert(tx, a.CompanyID, date, "R-bad-date"); err == nil || !strings.Contains(err.Error(), "constraint failed") {
			t.Errorf("transaction_date %#v: %v, want a constraint failed", date, err)
		}
		tx.Rollback()
	}

	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := insert(tx, accounts[1].CompanyID, int64(1_700_000_000_000_000), "R-other-company"); err != nil {
		t.Fatalf("the row of another company's account is refused at the insert (%v), want at COMMIT: the key is deferred", err)
	}
	if err := tx.Commit(); db.d.violation(err) != foreignKeyViolation {
		t.Fatalf("commit of a row of another company's account: %v, want a foreign key violation", err)
	}
	var n int
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM transactions`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d transactions stored after the failed commit (%v), want 0", n, err)
	}
	tx, err = db.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("begin after a failed commit: %v", err)
	}
	if err := insert(tx, a.CompanyID, int64(1_700_000_000_000_000), "R-good"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
