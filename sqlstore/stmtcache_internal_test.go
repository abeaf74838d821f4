package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"modernc.org/sqlite"
)

// cacheConn opens a one-connection SQLite pool through the statement cache
// and returns it with a function giving the texts its connection keeps.
func cacheConn(t *testing.T) (*sql.Conn, func() int) {
	t.Helper()
	db := sql.OpenDB(stmtCacheConnector{dsn: sqliteDSN(filepath.Join(t.TempDir(), "c.db"), SQLiteSyncNormal), driver: &sqlite.Driver{}})
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(context.Background(), `CREATE TABLE t (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := conn.ExecContext(context.Background(), `INSERT INTO t VALUES (?)`, i); err != nil {
			t.Fatal(err)
		}
	}
	kept := func() int {
		var n int
		if err := conn.Raw(func(dc any) error { n = len(dc.(*cachingConn).stmts); return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return conn, kept
}

func sumOf(t *testing.T, rows *sql.Rows) int {
	t.Helper()
	sum := 0
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestStatementCache: a text is compiled once per connection and run again
// with other arguments; a text run again while its first run's rows are
// open gets a statement of its own and both read their rows; the kept
// texts are bounded, and a statement evicted while its rows are open is
// read to the end and closed after.
func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	conn, kept := cacheConn(t)
	const q = `SELECT n FROM t WHERE n >= ? ORDER BY n`
	before := kept()
	for _, from := range []int{0, 3, 1} {
		rows, err := conn.QueryContext(ctx, q, from)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sumOf(t, rows), (10 - from*(from-1)/2); got != want {
			t.Fatalf("sum of n >= %d: %d, want %d", from, got, want)
		}
	}
	if got := kept(); got != before+1 {
		t.Fatalf("three runs of one text keep %d statements more, want 1", got-before)
	}

	outer, err := conn.QueryContext(ctx, q, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !outer.Next() {
		t.Fatal("no first row")
	}
	inner, err := conn.QueryContext(ctx, q, 4) // the same text, its statement busy
	if err != nil {
		t.Fatal(err)
	}
	if got := sumOf(t, inner); got != 4 {
		t.Fatalf("the inner run sums %d, want 4", got)
	}
	var first int
	if err := outer.Scan(&first); err != nil || first != 2 {
		t.Fatalf("the outer run's first row %d (%v), want 2", first, err)
	}
	if rest := sumOf(t, outer); rest != 3+4 {
		t.Fatalf("the outer run's other rows sum %d, want 7", rest)
	}

	// Evict q while its rows are open: it is read to the end, closed after,
	// and compiled again on its next use.
	open, err := conn.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range stmtCacheSize + 10 {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(`UPDATE t SET n = n WHERE n = %d`, -1-i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := kept(); got != stmtCacheSize {
		t.Fatalf("%d statements kept, want the bound %d", got, stmtCacheSize)
	}
	if got := sumOf(t, open); got != 10 {
		t.Fatalf("the evicted statement's rows sum %d, want 10", got)
	}
	if err := open.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := sumOf(t, rows); got != 10 {
		t.Fatalf("after eviction: sum %d, want 10", got)
	}
}

// TestStatementCacheRefusesBadSQL: a text SQLite cannot compile is an error
// on both paths, keeps nothing, and the connection goes on answering.
func TestStatementCacheRefusesBadSQL(t *testing.T) {
	ctx := context.Background()
	conn, kept := cacheConn(t)
	before := kept()
	if _, err := conn.QueryContext(ctx, `SELEKT n FROM t`); err == nil {
		t.Fatal("a query that does not compile ran")
	}
	if _, err := conn.ExecContext(ctx, `UPDATE nowhere SET n = 1`); err == nil {
		t.Fatal("an exec on a missing table ran")
	}
	if got := kept(); got != before {
		t.Fatalf("%d statements kept after two refused texts, want %d", got, before)
	}
	rows, err := conn.QueryContext(ctx, `SELECT n FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	if got := sumOf(t, rows); got != 10 {
		t.Fatalf("sum %d after the refused texts, want 10", got)
	}
}
