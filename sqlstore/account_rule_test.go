package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// insertRaw writes a transaction row past the store, as a writer that
// forgot the rule would.
const insertRaw = `INSERT INTO transactions (company_id, bank_account_id, transaction_date, amount_in, amount_out, accumulated, content, reference_number, created_at)
	VALUES ($1, $2, $3, 1000, 0, 0, 'chuyen tien', $4, $5)`

// TestTransactionsStayInTheirAccountsCompany: the database itself keeps a
// transaction in an account of its own company, as a foreign key would: a
// foreign key on SQLite, a check once per statement on PostgreSQL
// (migration 00051). A row naming another company's account, or none, is
// refused with the whole statement; a row never moves; deleting an account,
// or its company, deletes its transactions and no others.
func TestTransactionsStayInTheirAccountsCompany(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		_, a := companyWithAccount(t, db, "111")
		companyB, b := companyWithAccount(t, db, "222")
		raw, now := db.SQL(), time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
		for _, acct := range []*recon.BankAccount{a, b} {
			if _, err := raw.ExecContext(ctx, insertRaw, acct.CompanyID, acct.ID, now, acct.AccountNumber, now); err != nil {
				t.Fatalf("a transaction of account %d in its own company: %v", acct.ID, err)
			}
		}
		wantKeyRefused(t, engine, "another company's account", raw, insertRaw, a.CompanyID, b.ID, now, "X1", now)
		wantKeyRefused(t, engine, "no account", raw, insertRaw, a.CompanyID, b.ID+1000, now, "X2", now)
		wantKeyRefused(t, engine, "one bad row of three", raw, insertRaw+
			`, ($1, $2, $3, 1000, 0, 0, 'x', 'X4', $5), ($1, $6, $3, 1000, 0, 0, 'x', 'X5', $5)`, a.CompanyID, a.ID, now, "X3", now, b.ID)
		wantKeyRefused(t, engine, "a row moved to another company's account", raw,
			`UPDATE transactions SET bank_account_id = $1 WHERE bank_account_id = $2`, b.ID, a.ID)
		if n := countRows(t, raw, a.ID); n != 1 {
			t.Fatalf("account %d holds %d transactions after the refused writes, want 1", a.ID, n)
		}
		if _, err := raw.ExecContext(ctx, `DELETE FROM bank_accounts WHERE id = $1`, a.ID); err != nil {
			t.Fatal(err)
		}
		if n, other := countRows(t, raw, a.ID), countRows(t, raw, b.ID); n != 0 || other != 1 {
			t.Fatalf("after deleting account %d: %d of its transactions left (want 0), %d of the other company's (want 1)", a.ID, n, other)
		}
		// A company's deletion cascades to its accounts, and on to their
		// transactions.
		if _, err := raw.ExecContext(ctx, `DELETE FROM companies WHERE id = $1`, companyB.ID); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, raw, b.ID); n != 0 {
			t.Fatalf("after deleting company %d: %d transactions of its account left, want 0", companyB.ID, n)
		}
	})
}

// TestDeletingAnAccountWhileItsTransactionsAreInserted (PostgreSQL, where
// transactions run side by side): an account deleted while another
// transaction inserts into it leaves no transaction without its account,
// whichever comes first.
func TestDeletingAnAccountWhileItsTransactionsAreInserted(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, sqlstore.EnginePostgres)
	raw, ctx, now := db.SQL(), t.Context(), time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)

	deleteAccount := func(q execer, acct *recon.BankAccount) error {
		_, err := q.ExecContext(ctx, `DELETE FROM bank_accounts WHERE id = $1`, acct.ID)
		return err
	}
	insert := func(q execer, acct *recon.BankAccount) error {
		_, err := q.ExecContext(ctx, insertRaw, acct.CompanyID, acct.ID, now, "R", now)
		return err
	}

	t.Run("insert first", func(t *testing.T) {
		_, acct := companyWithAccount(t, db, "333")
		err := race(t, raw, func(tx *sql.Tx) error { return insert(tx, acct) }, func() error { return deleteAccount(raw, acct) })
		if err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, raw, acct.ID); n != 0 {
			t.Fatalf("%d transactions left without their deleted account", n)
		}
	})

	t.Run("delete first", func(t *testing.T) {
		_, acct := companyWithAccount(t, db, "444")
		err := race(t, raw, func(tx *sql.Tx) error { return deleteAccount(tx, acct) }, func() error { return insert(raw, acct) })
		wantForeignKeyError(t, sqlstore.EnginePostgres, "an insert into an account deleted meanwhile", err)
		if n := countRows(t, raw, acct.ID); n != 0 {
			t.Fatalf("%d transactions stored for a deleted account", n)
		}
	})
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// race runs first in a transaction, then second beside it, waits until
// second waits for the transaction's lock, commits, and returns second's
// error.
func race(t *testing.T, raw *sql.DB, first func(*sql.Tx) error, second func() error) error {
	t.Helper()
	tx, err := raw.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := first(tx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- second() }()
	testkit.WaitFor(t, "a statement waiting for the open transaction's lock", 30*time.Second, func() bool {
		var n int
		err := raw.QueryRowContext(context.WithoutCancel(t.Context()),
			`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		return err == nil && n > 0
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return <-done
}

func wantKeyRefused(t *testing.T, engine, what string, raw *sql.DB, query string, args ...any) {
	t.Helper()
	_, err := raw.ExecContext(t.Context(), query, args...)
	wantForeignKeyError(t, engine, what, err)
}

// wantForeignKeyError fails t unless err is the engine's foreign key
// violation: SQLSTATE 23503 on PostgreSQL, SQLite's FOREIGN KEY constraint.
func wantForeignKeyError(t *testing.T, engine, what string, err error) {
	t.Helper()
	var pg *pgconn.PgError
	switch {
	case err == nil:
		t.Errorf("%s: accepted, want a foreign key violation", what)
	case engine == sqlstore.EnginePostgres && errors.As(err, &pg) && pg.Code == "23503":
	case engine == sqlstore.EngineSQLite && strings.Contains(err.Error(), "FOREIGN KEY constraint failed"):
	default:
		t.Errorf("%s: %v, want a foreign key violation", what, err)
	}
}

func countRows(t *testing.T, raw *sql.DB, account int64) (n int64) {
	t.Helper()
	if err := raw.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM transactions WHERE bank_account_id = $1`, account).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTransactionsRunReadCommitted: the store's connections run their
// transactions at READ COMMITTED even where the database's default is
// higher, as the account rule's triggers require (migration 00051).
func TestTransactionsRunReadCommitted(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t, sqlstore.EnginePostgres)
	admin := dbtest.OpenURL(t, url)
	if _, err := admin.SQL().ExecContext(t.Context(), `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_isolation = %L', current_database(), 'serializable'); END $$`); err != nil {
		t.Fatal(err)
	}
	db := dbtest.OpenURL(t, url) // new connections, which read the database's new default
	tx, err := db.SQL().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var level string
	if err := tx.QueryRowContext(t.Context(), `SHOW transaction_isolation`).Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "read committed" {
		t.Fatalf("a transaction of the store runs at %q, want read committed", level)
	}
}
