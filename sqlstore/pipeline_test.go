package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// probeTable opens a PostgreSQL store with a table of its own for the
// deferred-write tests, and returns its pool and a reader of the notes it
// holds, in id order, as another connection sees them (committed).
func probeTable(t *testing.T) (*sql.DB, func() []string) {
	t.Helper()
	_, pool, committed := probeStore(t)
	return pool, committed
}

// probeStore is probeTable with its store.
func probeStore(t *testing.T) (*sqlstore.DB, *sql.DB, func() []string) {
	t.Helper()
	db := dbtest.OpenStore(t, sqlstore.EnginePostgres)
	pool := db.Pool()
	if _, err := pool.ExecContext(t.Context(), `CREATE TABLE probe (id int PRIMARY KEY, note text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db, pool, func() []string {
		t.Helper()
		rows, err := pool.QueryContext(t.Context(), `SELECT note FROM probe ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var notes []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			notes = append(notes, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return notes
	}
}

// TestDeferredWritesGoBeforeTheNextStatement (PostgreSQL): a deferrable
// write in a transaction is kept until the transaction's next statement,
// which sends it first: a read, a prepared statement and a write that is
// not deferred each see the writes made before them, in their order; the
// commit sends what is still kept; a deferred write has no rows affected
// to give (an error, not a zero).
func TestDeferredWritesGoBeforeTheNextStatement(t *testing.T) {
	t.Parallel()
	pool, committed := probeTable(t)
	ctx := t.Context()
	later := sqlstore.Deferrable(ctx)
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	exec := func(ctx context.Context, q string, args ...any) sql.Result {
		t.Helper()
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := tx.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	res := exec(later, `INSERT INTO probe VALUES (1, 'one')`)
	if _, err := res.RowsAffected(); err == nil {
		t.Fatal("a deferred write gave its rows affected")
	}
	exec(later, `UPDATE probe SET note = 'one, updated' WHERE id = 1`)
	if n := count(`SELECT count(*) FROM probe WHERE note = 'one, updated'`); n != 1 {
		t.Fatalf("the read after two deferred writes found %d rows as they left them, want 1", n)
	}

	exec(later, `INSERT INTO probe VALUES (2, 'two')`)
	stmt, err := tx.PrepareContext(ctx, `SELECT count(*) FROM probe WHERE id <= $1`)
	if err != nil {
		t.Fatal(err)
	}
	exec(later, `INSERT INTO probe VALUES (3, 'three')`)
	var n int
	if err := stmt.QueryRowContext(ctx, 3).Scan(&n); err != nil || n != 3 {
		t.Fatalf("the prepared statement after deferred writes counted %d rows (%v), want 3", n, err)
	}

	exec(later, `INSERT INTO probe VALUES (4, 'four')`)
	res = exec(ctx, `UPDATE probe SET note = note || '!' WHERE id >= 3`) // not deferred: sent with the kept one
	if got, err := res.RowsAffected(); err != nil || got != 2 {
		t.Fatalf("the write after a deferred one affected %d rows (%v), want 2 (ids 3 and 4)", got, err)
	}

	exec(later, `INSERT INTO probe VALUES (5, 'five')`)
	if got := committed(); len(got) != 0 {
		t.Fatalf("another connection sees %q before the commit", got)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := []string{"one, updated", "two", "three!", "four!", "five"}
	if got := committed(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("after the commit the table holds %q, want %q", got, want)
	}
}

// TestADeferredWriteThatFailsFailsItsTransaction (PostgreSQL): a deferred
// write's error comes with the statement that sends it, naming the write
// and keeping PostgreSQL's error, or with the commit, which then stores
// nothing; outside a transaction a deferrable write runs at once; a
// rollback drops the writes kept; the connection serves the next
// transaction after each.
func TestADeferredWriteThatFailsFailsItsTransaction(t *testing.T) {
	t.Parallel()
	pool, committed := probeTable(t)
	ctx := t.Context()
	later := sqlstore.Deferrable(ctx)
	pool.SetMaxOpenConns(1) // every case on the one connection
	if _, err := pool.ExecContext(ctx, `INSERT INTO probe VALUES (1, 'stored')`); err != nil {
		t.Fatal(err)
	}
	unique := func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && pe.Code == "23505"
	}
	deferIn := func(t *testing.T, writes ...string) *sql.Tx { return deferredIn(t, pool, later, writes...) }
	const again = `INSERT INTO probe VALUES (1, 'again')` // fails: id 1 is stored

	t.Run("next statement", func(t *testing.T) {
		tx := deferIn(t, `INSERT INTO probe VALUES (2, 'kept')`, again)
		defer tx.Rollback()
		var n int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM probe`).Scan(&n)
		if !unique(err) || !strings.Contains(err.Error(), "deferred "+again) {
			t.Fatalf("the read after a failing deferred write: %v, want the unique violation naming the write", err)
		}
	})
	t.Run("commit", func(t *testing.T) {
		tx := deferIn(t, `INSERT INTO probe VALUES (3, 'kept')`, again)
		if err := tx.Commit(); !unique(err) {
			t.Fatalf("the commit after a failing deferred write: %v, want the unique violation", err)
		}
	})
	t.Run("outside a transaction", func(t *testing.T) {
		if _, err := pool.ExecContext(later, again); !unique(err) {
			t.Fatalf("a deferrable write outside a transaction: %v, want its unique violation at once", err)
		}
	})
	t.Run("rollback", func(t *testing.T) {
		if err := deferIn(t, `INSERT INTO probe VALUES (4, 'kept')`).Rollback(); err != nil {
			t.Fatal(err)
		}
	})
	if got := committed(); strings.Join(got, "|") != "stored" {
		t.Fatalf("the table holds %q, want only the row stored first", got)
	}
	tx := deferIn(t, `INSERT INTO probe VALUES (5, 'after')`)
	if err := tx.Commit(); err != nil {
		t.Fatalf("the connection after the failures: %v", err)
	}
	if got := committed(); strings.Join(got, "|") != "stored|after" {
		t.Fatalf("the table holds %q, want the first row and the one committed last", got)
	}
}

// TestReadsSentTogether (PostgreSQL): reads sent together go after the
// writes the connection keeps, in their order, each seeing what the
// statements before it wrote; a failing read fails the call naming the
// read, keeping PostgreSQL's error, and the reads after it are not made; a
// failing kept write fails it naming the write; a rollback after either
// stores nothing and the connection serves the next transaction.
func TestReadsSentTogether(t *testing.T) {
	t.Parallel()
	db, pool, committed := probeStore(t)
	ctx := t.Context()
	later := sqlstore.Deferrable(ctx)
	pool.SetMaxOpenConns(1) // every case on the one connection
	begin := func(t *testing.T, writes ...string) *sql.Tx { return deferredIn(t, pool, later, writes...) }

	tx := begin(t, `INSERT INTO probe VALUES (1, 'one')`, `INSERT INTO probe VALUES (2, 'two')`)
	got, err := db.ReadTogether(ctx, tx,
		`SELECT note FROM probe ORDER BY id`,
		`SELECT count(*)::text FROM probe WHERE id <= 2`,
		`SELECT note FROM probe WHERE id > 2`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[[one two] [2] []]"; fmt.Sprint(got) != want {
		t.Fatalf("the reads after two kept writes read %v, want %s", got, want)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	tx = begin(t, `INSERT INTO probe VALUES (3, 'kept')`)
	got, err = db.ReadTogether(ctx, tx, `SELECT note FROM probe WHERE id = 3`, `SELECT (1/0)::text`, `SELECT 'after'`)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "22012" || !strings.Contains(err.Error(), "read 1") {
		t.Fatalf("a read dividing by zero: %v, want PostgreSQL's division_by_zero naming read 1", err)
	}
	if fmt.Sprint(got) != "[[kept] [] []]" {
		t.Fatalf("the reads around the failing one read %v, want the first only", got)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	tx = begin(t, `INSERT INTO probe VALUES (1, 'again')`)
	if _, err := db.ReadTogether(ctx, tx, `SELECT note FROM probe`); !errors.As(err, &pe) || pe.Code != "23505" ||
		!strings.Contains(err.Error(), "deferred INSERT INTO probe VALUES (1, 'again')") {
		t.Fatalf("reads after a failing kept write: %v, want the unique violation naming the write", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := committed(); strings.Join(got, "|") != "one|two" {
		t.Fatalf("the table holds %q, want the two rows committed first", got)
	}
}

// deferredIn begins a transaction on pool and makes the writes in it with
// later, a deferrable context: none may fail before it is sent.
func deferredIn(t *testing.T, pool *sql.DB, later context.Context, writes ...string) *sql.Tx {
	t.Helper()
	tx, err := pool.BeginTx(later, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		if _, err := tx.ExecContext(later, w); err != nil {
			t.Fatalf("%s failed before it was sent: %v", w, err)
		}
	}
	return tx
}
