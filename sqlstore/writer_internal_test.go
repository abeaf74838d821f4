package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"recon"
)

// TestWriterQueueHonoursTheContext: a SQLite write waiting behind another
// writer of the process gives up when its context ends, and the queue is
// free again once the first writer is done.
func TestWriterQueueHonoursTheContext(t *testing.T) {
	db, err := Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.inTx(t.Context(), func(*sql.Tx) error { close(holding); <-release; return nil })
	}()
	<-holding
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	ran := false
	err = db.inTx(ctx, func(*sql.Tx) error { ran = true; return nil })
	if !errors.Is(err, context.DeadlineExceeded) || ran {
		t.Fatalf("queued writer: err %v, ran %v; want the deadline and no run", err, ran)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := db.inTx(t.Context(), func(*sql.Tx) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("after the first writer: err %v, ran %v", err, ran)
	}
}

// TestSingleStatementWritesQueue: the writes that are one statement rather
// than a transaction (the claim of deliveries, execWrite's) take their turn
// in the process's queue too, instead of meeting the writer at SQLite's lock,
// where the wait polls with sleeps (asWriter). Here the turn is held
// without SQLite's lock, so a write that skipped the queue would run at once.
func TestSingleStatementWritesQueue(t *testing.T) {
	db := openSQLite(t)
	co := &recon.Company{FullName: "Cửa hàng Lan", ShortName: "LAN", Status: recon.CompanyActive}
	if err := db.CreateCompany(t.Context(), co); err != nil {
		t.Fatal(err)
	}
	writes := map[string]func(ctx context.Context) error{
		"CreateBankAccount": func(ctx context.Context) error { // scanWrite's
			return db.CreateBankAccount(ctx, &recon.BankAccount{CompanyID: co.ID, BankName: "Vietcombank", AccountNumber: "0451000123456"})
		},
		"ClaimDeliveries": func(ctx context.Context) error {
			_, err := db.ClaimDeliveries(ctx, "node-1", time.Now(), 10, time.Minute)
			return err
		},
		"ServerKey": func(ctx context.Context) error { _, err := db.ServerKey(ctx, "test-key", 32); return err }, // execWrite's
	}
	for name, write := range writes {
		db.writer <- struct{}{} // another writer's turn
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		err := write(ctx)
		cancel()
		<-db.writer
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s while another writer has its turn: %v, want it to wait for the turn until its deadline", name, err)
		}
		if err := write(t.Context()); err != nil {
			t.Errorf("%s after the turn: %v", name, err)
		}
	}
}

// openSQLite opens a migrated SQLite store in the test's directory, closed
// when the test ends.
func openSQLite(t *testing.T) *DB {
	t.Helper()
	db, err := Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "recon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db
}
