package sqlstore_test

import (
	"os/exec"
	"sync/atomic"
	"testing"

	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestKeyReadFromTheWALIndex (SQLite): while nothing is committed, a key
// read is answered from memory; every commit, by the store itself, by
// another store on the same file, by one opened after the other closed, or
// by another process, is in the next read's answer (docs/design.md,
// "SQLite: the key read answered from the WAL index").
func TestKeyReadFromTheWALIndex(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t, sqlstore.EngineSQLite)
	a := dbtest.OpenURL(t, url)
	if !a.WALIndexMapped() {
		t.Fatal("the WAL index of a SQLite file is not mapped")
	}
	ctx := t.Context()
	c, _ := companyWithAccount(t, a, "111")
	var reads atomic.Int32
	a.AfterKeyRead(func() { reads.Add(1) })
	read := keysOf(t, a, c.Tenant())
	// kept reads twice and checks that the second made no statement.
	kept := func(what string) answer {
		t.Helper()
		first := read()
		n := reads.Load()
		if got := read(); got != first || reads.Load() != n {
			t.Fatalf("%s: the second read answered %+v after %+v with %d statements, want the same from memory",
				what, got, first, reads.Load()-n)
		}
		return first
	}
	bump := func(db *sqlstore.DB) {
		t.Helper()
		if err := db.Exec(ctx, `INSERT INTO sync_counters (company_id, seq) VALUES (?, 1)
			ON CONFLICT (company_id) DO UPDATE SET seq = seq + 1`, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	want := func(what string, before answer, epoch, version int64) {
		t.Helper()
		if got := read(); got.epoch != before.epoch+epoch || got.version != before.version+version {
			t.Fatalf("after %s a answered %+v, want epoch %d and version %d", what, got, before.epoch+epoch, before.version+version)
		}
	}

	before := kept("before any write")
	bump(a)
	want("its own write", before, 0, 1)

	b := dbtest.OpenURL(t, url)
	before = kept("with another store open")
	bump(b)
	want("another store's write", before, 0, 1)
	before = kept("after another store's write")
	if err := b.Exec(ctx, `UPDATE auth_epoch SET n = n + 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	want("another store's epoch change", before, 1, 0)

	// The other store closes and a third opens: the -shm file a maps is
	// still the one they write in, even when a's pool keeps no connection
	// (SQLite deletes the file when its last connection closes).
	a.SQL().SetMaxIdleConns(0)
	before = kept("before the other store closes")
	b.Close()
	third := dbtest.OpenURL(t, url)
	bump(third)
	third.Close()
	want("a store opened after the other closed", before, 0, 1)

	// Another process: the sqlite3 shell.
	shell, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("SKIPPED: no sqlite3 shell on this machine; the write of another process is not checked")
	}
	before = kept("before another process writes")
	path := sqlitePath(url)
	if out, err := exec.Command(shell, path, "UPDATE sync_counters SET seq = seq + 1 WHERE company_id = "+itoa(c.ID)).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	want("another process's write", before, 0, 1)
}
