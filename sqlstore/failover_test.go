package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// newCompanyRow is a company to store (the sqlstore tests' own).
func newCompanyRow(n int) *recon.Company {
	return &recon.Company{FullName: fmt.Sprintf("Failover %d Ltd", n), ShortName: fmt.Sprintf("f%d", n), Status: recon.CompanyActive,
		Subscription: "standard", Config: recon.CompanyConfig{DataStorageDays: 30}}
}

// wantUnavailable fails t unless err is the EUNAVAILABLE of a lost
// database (docs/design.md, Losing the primary).
func wantUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	if recon.ErrorCode(err) != recon.EUNAVAILABLE || !errors.Is(err, sqlstore.ErrUnavailable) {
		t.Fatalf("%s: %v (code %q), want EUNAVAILABLE of an unavailable database", what, err, recon.ErrorCode(err))
	}
}

// within retries op a bounded number of times, each failure being
// EUNAVAILABLE: a connection that broke in the outage and is found out on
// its first use is one 503, and the pool drops it. No sleep: the database
// answers at once.
func within(t *testing.T, what string, op func() error) {
	t.Helper()
	var err error
	for range 40 {
		if err = op(); err == nil {
			return
		}
		wantUnavailable(t, what+" after the outage", err)
	}
	t.Fatalf("%s never succeeded after the outage: %v", what, err)
}

// TestLostPrimary: with the database cut off (its server gone), reads,
// writes and Ready are EUNAVAILABLE at once; once it is back, the same store
// reads and writes again, without being reopened.
func TestLostPrimary(t *testing.T) {
	t.Parallel()
	db, outage, _ := dbtest.OpenOutageStore(t)
	ctx := t.Context()
	c := newCompanyRow(1)
	if err := db.CreateCompany(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready: %v", err)
	}

	outage.Cut()
	_, err := db.Company(ctx, c.ID)
	wantUnavailable(t, "a read", err)
	wantUnavailable(t, "a write", db.CreateCompany(ctx, newCompanyRow(2)))
	wantUnavailable(t, "Ready", db.Ready(ctx))
	if recon.ErrorMessage(db.CreateCompany(ctx, newCompanyRow(2))) == "" {
		t.Error("no message")
	}

	outage.Restore()
	within(t, "a read", func() error { _, err := db.Company(ctx, c.ID); return err })
	within(t, "a write", func() error { return db.CreateCompany(ctx, newCompanyRow(3)) })
	within(t, "Ready", func() error { return db.Ready(ctx) })
}

// TestIngestionWithTheDatabaseLost: batches pushed while the database is
// cut off, several at once on one account (one lane, its groups begun while
// the one before commits), are each EUNAVAILABLE, none waits for ever, and
// none leaves a row, and the sync's read of the change log is EUNAVAILABLE
// too; once the database is back the next batch is stored after the rows
// from before, with its balance following theirs, and the log holds the
// two in that order.
func TestIngestionWithTheDatabaseLost(t *testing.T) {
	t.Parallel()
	db, outage, _ := dbtest.OpenOutageStore(t)
	ctx := t.Context()
	c, a := companyWithAccount(t, db, "111")
	push := func(ref string) ([]recon.IngestResult, error) {
		in := []recon.TransactionInput{transfer(a.ID, ref, 1000, "chuyen tien "+ref)}
		return db.IngestTransactions(ctx, c.Tenant(), in, []string{""})
	}
	if _, err := push("BEFORE"); err != nil { // the tenant's duplicate window is now known: the reads go together
		t.Fatal(err)
	}

	outage.Cut()
	errs := make(chan error, 4)
	for i := range cap(errs) {
		go func() {
			_, err := push(fmt.Sprintf("CUT%d", i))
			errs <- err
		}()
	}
	for range cap(errs) {
		wantUnavailable(t, "a push with the database cut off", <-errs)
	}
	_, err := db.TransactionChanges(ctx, c.Tenant(), -1, 10)
	wantUnavailable(t, "the change log's read", err)

	outage.Restore()
	var res []recon.IngestResult
	within(t, "a push", func() error {
		var err error
		res, err = push("AFTER")
		return err
	})
	list, total, err := db.Transactions(ctx, c.Tenant(), recon.TransactionFilter{Page: 1, Limit: 20})
	if err != nil || total != 2 || len(list) != 2 {
		t.Fatalf("stored after the outage: %d rows (%v), want the ones from before and after", total, err)
	}
	after, err := db.Transaction(ctx, c.Tenant(), res[0].ID)
	if err != nil || after.Accumulated != 2000 {
		t.Fatalf("the push after the outage: %+v (%v), want its balance 2000", after, err)
	}
	page, err := db.TransactionChanges(ctx, c.Tenant(), -1, 10)
	if err != nil || len(page.Changes) != 2 || page.Changes[1].TransactionID != res[0].ID || page.Changes[1].Transaction == nil {
		t.Fatalf("the change log after the outage: %+v (%v), want the rows from before and after", page, err)
	}
}

// TestStalledPrimaryEndsAtTheDeadline: a database host that vanished
// without a reset (nothing comes back) does not hang a request: it ends at
// its context's deadline, EUNAVAILABLE, whether it waited on a query or
// for a connection of the pool.
func TestStalledPrimaryEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	db, outage, _ := dbtest.OpenOutageStore(t)
	c := newCompanyRow(1)
	if err := db.CreateCompany(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	db.SQL().SetMaxOpenConns(2) // so that later requests wait for the pool
	outage.Stall()
	errs := make(chan error, 5)
	for range cap(errs) {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := db.Company(ctx, c.ID)
			errs <- err
		}()
	}
	for range cap(errs) {
		wantUnavailable(t, "a read on a stalled database", <-errs)
	}
	outage.Cut() // ends the stalled connections, as TCP_USER_TIMEOUT would
	outage.Restore()
	within(t, "a read", func() error { _, err := db.Company(t.Context(), c.ID); return err })
}

// TestDemotedPrimary: a database that refuses writes (a primary demoted to
// a standby) is EUNAVAILABLE on writes and for Ready, reads still answer;
// once it takes writes again, the connections made while it refused them
// are dropped by the store (each at its first refusal) and writes go
// through without reopening the store.
func TestDemotedPrimary(t *testing.T) {
	t.Parallel()
	db, _, direct := dbtest.OpenOutageStore(t)
	ctx := t.Context()
	c := newCompanyRow(1)
	if err := db.CreateCompany(ctx, c); err != nil {
		t.Fatal(err)
	}
	dbtest.SetReadOnly(t, direct, true)
	// The sessions the store had were ended: reads answer on new ones.
	within(t, "a read on the demoted database", func() error { _, err := db.Company(ctx, c.ID); return err })
	err := db.CreateCompany(ctx, newCompanyRow(2))
	wantUnavailable(t, "a write to the demoted database", err)
	if recon.ErrorSay(err) == nil || recon.ErrorSay(err).Key != "db_read_only" {
		t.Errorf("a write to the demoted database: %v, want the read-only message", err)
	}
	wantUnavailable(t, "Ready on the demoted database", db.Ready(ctx))

	// Several read-only sessions in the pool, each used once more below.
	hold := make([]func(), 0, 4)
	for range 4 {
		conn, err := db.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hold = append(hold, func() { conn.Close() })
	}
	for _, release := range hold {
		release()
	}
	dbtest.SetReadOnly(t, direct, false)
	within(t, "a write once promoted again", func() error { return db.CreateCompany(ctx, newCompanyRow(3)) })
	within(t, "Ready once promoted again", func() error { return db.Ready(ctx) })
}
