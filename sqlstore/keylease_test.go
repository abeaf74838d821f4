package sqlstore_test

import (
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestKeyLease (PostgreSQL): a node holding the key lease answers key reads
// from memory, and yet every change committed before a read, by itself,
// by another node or behind the back of a holder whose session was killed,
// is in that read's answer (docs/design.md, "The key lease").
func TestKeyLease(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t, sqlstore.EnginePostgres)
	a := dbtest.OpenURL(t, url) // the node that holds the lease
	b := dbtest.OpenURL(t, url) // another node, or a command
	ctx := t.Context()
	c, account := companyWithAccount(t, a, "111")
	var reads atomic.Int32
	a.AfterKeyRead(func() { reads.Add(1) })
	a.SetKeyLeaseCooldown(50 * time.Millisecond)
	a.HoldKeyLease(slog.New(slog.DiscardHandler))

	read := keysOf(t, a, c.Tenant())
	// fromMemory waits until a answers a read without reading the
	// database, and returns that answer.
	fromMemory := func(what string) answer {
		t.Helper()
		var got answer
		testkit.WaitFor(t, "a answering "+what+" from memory", 30*time.Second, func() bool {
			first := read()
			n := reads.Load()
			got = read()
			return got == first && reads.Load() == n
		})
		return got
	}
	bump := func(db *sqlstore.DB) {
		t.Helper()
		if err := db.Exec(ctx, `UPDATE sync_counters SET seq = seq + 1 WHERE company_id = $1`, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Exec(ctx, `INSERT INTO sync_counters (company_id, seq) VALUES ($1, 1)`, c.ID); err != nil {
		t.Fatal(err)
	}

	// a's own writes, a statement and an ingest's transaction: in a's next
	// answer, and a keeps the lease.
	kept := fromMemory("the first version")
	takes := a.KeyLeaseTakes()
	bump(a)
	if got := read(); got.version != kept.version+1 {
		t.Fatalf("after a's own statement a answered %+v, want version %d", got, kept.version+1)
	}
	kept = fromMemory("its own statement")
	in := recon.TransactionInput{BankAccountID: account.ID, TransactionDate: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
		AmountIn: 100_000, Content: "DH1", ReferenceNumber: "R1"}
	if _, err := a.IngestTransactions(ctx, c.Tenant(), []recon.TransactionInput{in}, []string{"DH1"}); err != nil {
		t.Fatal(err)
	}
	n := reads.Load()
	if got := read(); got.version <= kept.version {
		t.Fatalf("after a's own ingest a answered %+v, want a version above %d", got, kept.version)
	}
	// The version a's committed transaction wrote is kept (migration
	// 00055): no read of the database.
	if reads.Load() != n {
		t.Fatalf("a read the database after its own ingest committed, want the version it wrote kept")
	}
	kept = fromMemory("its own ingest")
	// A transaction of a's that wrote a version and rolled back: a answers
	// what is committed.
	tx, err := a.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sync_counters SET seq = seq + 5 WHERE company_id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != kept {
		t.Fatalf("after a's rolled-back write a answered %+v, want %+v", got, kept)
	}
	// A transaction of a's whose COMMIT fails after its write raised the
	// version's notice (a constraint trigger of the test's own, deferred to
	// the commit, refuses it): a answers what is committed.
	if err := a.Exec(ctx, `CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			RAISE EXCEPTION 'the test refuses this commit';
		END $$`); err != nil {
		t.Fatal(err)
	}
	if err := a.Exec(ctx, `CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER UPDATE ON sync_counters
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.seq - OLD.seq = 7) EXECUTE FUNCTION refuse_at_commit()`); err != nil {
		t.Fatal(err)
	}
	kept = fromMemory("before a's refused commit")
	if tx, err = a.SQL().BeginTx(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sync_counters SET seq = seq + 7 WHERE company_id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("the commit the test's trigger refuses went through")
	}
	if got := read(); got != kept {
		t.Fatalf("after a's refused commit a answered %+v, want %+v", got, kept)
	}
	if n := a.KeyLeaseTakes(); n != takes {
		t.Fatalf("a took the lease %d times in all after its own writes, want %d: its own writes must not wait for it", n, takes)
	}

	// Another node's write waits for a to let go, and is in a's next answer.
	kept = fromMemory("before b's write")
	bump(b)
	if got := read(); got.version != kept.version+1 {
		t.Fatalf("after b's write a answered %+v, want version %d", got, kept.version+1)
	}
	kept = fromMemory("after taking the lease again")
	if err := b.Exec(ctx, `UPDATE auth_epoch SET n = n + 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if got := read(); got.epoch != kept.epoch+1 {
		t.Fatalf("after b moved the epoch a answered %+v, want epoch %d", got, kept.epoch+1)
	}

	// A holder whose session is killed still trusts its memory for a
	// moment: the next writer waits that moment out.
	kept = fromMemory("before its session is killed")
	if err := b.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'recon key lease' AND datname = current_database()`); err != nil {
		t.Fatal(err)
	}
	bump(b)
	if got := read(); got.version != kept.version+1 {
		t.Fatalf("after its session was killed and b wrote, a answered %+v, want version %d", got, kept.version+1)
	}

	// A holder that closes lets go: its name is cleared.
	fromMemory("after its session was killed")
	a.Close()
	var holder *string
	if err := b.SQL().QueryRowContext(ctx, `SELECT holder FROM key_lease`).Scan(&holder); err != nil || holder != nil {
		t.Fatalf("after a closed, key_lease.holder is %v (%v), want NULL", holder, err)
	}
}

// TestKeyLeaseCloseClearsHolder (PostgreSQL): a holder closed at any point
// of its checks, one of which is on the wire about one time in twenty,
// clears its name, so that the next writer does not wait it out. (A check
// cancelled with the store closed its session before it could: CI.)
func TestKeyLeaseCloseClearsHolder(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t, sqlstore.EnginePostgres)
	b := dbtest.OpenURL(t, url)
	ctx := t.Context()
	holder := func() *string {
		t.Helper()
		var h *string
		if err := b.SQL().QueryRowContext(ctx, `SELECT holder FROM key_lease`).Scan(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	for i := range 50 {
		a := dbtest.OpenURL(t, url)
		a.HoldKeyLease(slog.New(slog.DiscardHandler))
		testkit.WaitFor(t, "a named holder", 30*time.Second, func() bool { return holder() != nil })
		// Close at a different moment of the 25 ms between checks each time.
		time.Sleep(time.Duration(i%25) * time.Millisecond)
		a.Close()
		if h := holder(); h != nil {
			t.Fatalf("close %d: key_lease.holder is %q after the holder closed, want NULL", i, *h)
		}
	}
}
