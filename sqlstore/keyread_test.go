package sqlstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestConcurrentKeyReadsShareARoundTrip (PostgreSQL): requests that come
// while a key read is on its way wait for the next one, never join it, so
// that each sees what was committed before it came; the next read answers
// all of them, each with its own tenant's version, in one statement; a
// request whose context ends stops waiting without failing the others.
func TestConcurrentKeyReadsShareARoundTrip(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, sqlstore.EnginePostgres)
	ctx := t.Context()
	a, _ := companyWithAccount(t, db, "111")
	b, _ := companyWithAccount(t, db, "222")
	bump := func(company int64) {
		t.Helper()
		if err := db.Exec(ctx, `INSERT INTO sync_counters (company_id, seq) VALUES ($1, 1)
			ON CONFLICT (company_id) DO UPDATE SET seq = sync_counters.seq + 1`, company); err != nil {
			t.Fatal(err)
		}
	}
	bump(b.ID)
	bump(b.ID) // b's version is 2, a's 0

	before, _, err := db.AuthEpochAndVersion(ctx, a.Tenant())
	if err != nil {
		t.Fatal(err)
	}
	reads, held, release := holdFirstKeyRead(db)
	first := ask(db, ctx, a.Tenant(), true)
	<-held // the first read has been made and is not answered yet
	bump(a.ID)
	if err := db.Exec(ctx, `UPDATE auth_epoch SET n = n + 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	late := []chan answer{ask(db, ctx, a.Tenant(), true), ask(db, ctx, b.Tenant(), true), ask(db, ctx, a.Tenant(), false), ask(db, cancelled, b.Tenant(), true)}
	testkit.WaitFor(t, "four requests waiting for the next read", 30*time.Second, func() bool { return db.KeyReadWaiters() == 4 })
	cancel()
	if got := <-late[3]; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("a request whose context ended got %+v, want context.Canceled", got)
	}
	close(release)

	if got := <-first; got.err != nil || got.epoch != before || got.version != 0 {
		t.Fatalf("the first request got %+v, want epoch %d and a's version 0 as read before the commits", got, before)
	}
	want := []answer{{before + 1, 1, nil}, {before + 1, 2, nil}, {before + 1, 0, nil}}
	for i, w := range want {
		if got := <-late[i]; got != w {
			t.Fatalf("late request %d got %+v, want %+v: what was committed before it came", i, got, w)
		}
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("%d reads answered the five requests, want 2: the first's and one for the four that came while it was on its way", n)
	}
}

// TestAKeyReadThatFailsAnswersEachOfItsRequests (PostgreSQL): when the
// shared read fails, every request waiting for it gets the error, none
// waits on, and the next read is made anew and answers.
func TestAKeyReadThatFailsAnswersEachOfItsRequests(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, sqlstore.EnginePostgres)
	// A request left waiting ends with this deadline, and fails the test.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	a, _ := companyWithAccount(t, db, "111")
	_, held, release := holdFirstKeyRead(db)
	first := ask(db, ctx, a.Tenant(), true)
	<-held
	late := []chan answer{ask(db, ctx, a.Tenant(), true), ask(db, ctx, a.Tenant(), false)}
	testkit.WaitFor(t, "two requests waiting for the next read", 30*time.Second, func() bool { return db.KeyReadWaiters() == 2 })
	// The next read fails: the table it reads is gone.
	if err := db.Exec(ctx, `ALTER TABLE sync_counters RENAME TO sync_counters_away`); err != nil {
		t.Fatal(err)
	}
	close(release)
	if got := <-first; got.err != nil {
		t.Fatalf("the first request: %v", got.err)
	}
	for i, c := range late {
		if got := <-c; got.err == nil || errors.Is(got.err, context.DeadlineExceeded) {
			t.Fatalf("late request %d got %+v, want the failed read's error", i, got)
		}
	}
	if err := db.Exec(ctx, `ALTER TABLE sync_counters_away RENAME TO sync_counters`); err != nil {
		t.Fatal(err)
	}
	if got := <-ask(db, ctx, a.Tenant(), true); got.err != nil {
		t.Fatalf("after the table is back: %v", got.err)
	}
}

// TestAKeyReadThatHangsEndsAtItsBound (PostgreSQL): a shared read that
// does not come back (here it waits for a lock another connection holds on
// the epoch's table, as a read on a dead connection would wait) ends at its
// own bound, not at its requests' deadlines: each of two requests, whether
// it waited for that read or the next, gets an error, none waits on, and
// once the table is free the next read answers.
func TestAKeyReadThatHangsEndsAtItsBound(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, sqlstore.EnginePostgres)
	db.SetKeyReadTimeout(200 * time.Millisecond)
	// The requests' own contexts end only if the bound did not: with
	// context.Canceled, which the bound's error is not.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stop := time.AfterFunc(60*time.Second, cancel)
	defer stop.Stop()
	a, _ := companyWithAccount(t, db, "111")
	lock, err := db.SQL().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.ExecContext(t.Context(), `LOCK TABLE auth_epoch IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	first := ask(db, ctx, a.Tenant(), true)
	second := ask(db, ctx, a.Tenant(), false)
	for name, c := range map[string]chan answer{"the first request": first, "the second": second} {
		if got := <-c; got.err == nil || errors.Is(got.err, context.Canceled) {
			t.Fatalf("%s got %+v, want the bounded read's error", name, got)
		}
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := <-ask(db, ctx, a.Tenant(), true); got.err != nil {
		t.Fatalf("after the lock is gone: %v", got.err)
	}
}

// answer is what AuthEpochAndVersion or AuthEpoch returned.
type answer struct {
	epoch, version int64
	err            error
}

// ask calls AuthEpochAndVersion (withVersion) or AuthEpoch in a goroutine
// of its own.
func ask(db *sqlstore.DB, ctx context.Context, tenant recon.TenantID, withVersion bool) chan answer {
	c := make(chan answer, 1)
	go func() {
		var a answer
		if withVersion {
			a.epoch, a.version, a.err = db.AuthEpochAndVersion(ctx, tenant)
		} else {
			a.epoch, a.err = db.AuthEpoch(ctx)
		}
		c <- a
	}()
	return c
}

// holdFirstKeyRead holds db's next shared key read after its statement:
// held is closed once the read is made, and closing release lets it answer.
// reads counts the reads made from then on.
func holdFirstKeyRead(db *sqlstore.DB) (reads *atomic.Int32, held, release chan struct{}) {
	reads, held, release = new(atomic.Int32), make(chan struct{}), make(chan struct{})
	db.AfterKeyRead(func() {
		if reads.Add(1) == 1 {
			close(held)
			<-release
		}
	})
	return reads, held, release
}

// keysOf returns a function that reads tenant's epoch and version from db,
// failing the test on an error.
func keysOf(t *testing.T, db *sqlstore.DB, tenant recon.TenantID) func() answer {
	return func() answer {
		t.Helper()
		got := <-ask(db, t.Context(), tenant, true)
		if got.err != nil {
			t.Fatal(got.err)
		}
		return got
	}
}
