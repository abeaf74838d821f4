package sqlstore_test

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestNextGroupBeginsWhileOneCommits (PostgreSQL): the lane's next group
// begins its transaction once the group before it starts to commit, and
// waits at the accounts' lock for that commit, so the rows keep arrival
// order. The test's own transactions hold the order the first call pays,
// then the tenant's change counter, so that the first group waits in its
// reads (the second call queues behind it) and then in its commit, where
// the second group is seen waiting for the account too.
func TestNextGroupBeginsWhileOneCommits(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, sqlstore.EnginePostgres)
	ctx := t.Context()
	c, a := companyWithAccount(t, db, "111")
	o := &recon.Order{CompanyID: c.ID, InvoiceNumber: "INV1", PaymentCode: "DH10001", Amount: 100_000, BankAccountID: a.ID}
	if err := db.CreateOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	row := func(ref string, amount int64, memo string) []recon.TransactionInput {
		return []recon.TransactionInput{{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
			AmountIn: amount, Content: memo, ReferenceNumber: ref}}
	}
	// The first batch makes the tenant's change counter.
	if _, err := db.IngestTransactions(ctx, c.Tenant(), row("W", 1, "chuyen tien"), []string{""}); err != nil {
		t.Fatal(err)
	}
	pool := db.Pool()
	hold := func(query string, arg int64) *sql.Tx {
		t.Helper()
		tx, err := pool.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback() })
		if _, err := tx.ExecContext(ctx, query, arg); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	order := hold(`SELECT 1 FROM orders WHERE id = $1 FOR UPDATE`, o.ID)
	counter := hold(`SELECT 1 FROM sync_counters WHERE company_id = $1 FOR UPDATE`, c.ID)
	waiting := func(n int) func() bool {
		return func() bool {
			var got int
			err := pool.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event <> 'advisory'`).Scan(&got)
			return err == nil && got == n
		}
	}
	type result struct {
		res []recon.IngestResult
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		res, err := db.IngestTransactions(ctx, c.Tenant(), row("A", 100_000, "thanh toan DH10001"), []string{"DH10001"})
		first <- result{res, err}
	}()
	testkit.WaitFor(t, "the first group to wait for the order", 10*time.Second, waiting(1))
	go func() {
		res, err := db.IngestTransactions(ctx, c.Tenant(), row("B", 5, "chuyen tien"), []string{""})
		second <- result{res, err}
	}()
	testkit.WaitFor(t, "the second call to queue behind the first group", 10*time.Second, func() bool { return db.LaneQueued(c.ID) == 1 })
	if err := order.Commit(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the first group waiting in its commit and the second group's transaction waiting for the account", 10*time.Second, waiting(2))
	if err := counter.Commit(); err != nil {
		t.Fatal(err)
	}
	a1, b1 := <-first, <-second
	if a1.err != nil || b1.err != nil {
		t.Fatalf("the two calls: %v, %v", a1.err, b1.err)
	}
	if !a1.res[0].PaidOrder || b1.res[0].ID <= a1.res[0].ID {
		t.Fatalf("the calls stored %+v and %+v; want the first paying the order, the second after it", a1.res[0], b1.res[0])
	}
	for id, want := range map[int64]int64{a1.res[0].ID: 100_001, b1.res[0].ID: 100_006} {
		got, err := db.Transaction(ctx, c.Tenant(), id)
		if err != nil || got.Accumulated != want {
			t.Fatalf("transaction %d: %+v (%v), want its balance %d", id, got, err, want)
		}
	}
}

// TestGroupBehindAFailedCommitWaits (PostgreSQL): when a group's COMMIT
// fails after the lane's next group began, the next group, which then
// holds the accounts' locks, does not commit before the failed group's
// calls are stored again one by one: it rolls back and is stored after
// them, so the rows keep arrival order and their balances. A trigger of
// the test's own refuses the change counter's move by two, so the group
// of two calls fails at its commit (its change log goes with the COMMIT)
// and each call alone, retried, passes.
func TestGroupBehindAFailedCommitWaits(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, sqlstore.EnginePostgres)
	ctx := t.Context()
	c, a := companyWithAccount(t, db, "111")
	row := func(ref string, amount int64) []recon.TransactionInput {
		return []recon.TransactionInput{{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
			AmountIn: amount, Content: "chuyen tien", ReferenceNumber: ref}}
	}
	// The first batch makes the tenant's change counter.
	if _, err := db.IngestTransactions(ctx, c.Tenant(), row("W", 1), []string{""}); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, `CREATE FUNCTION refuse_two() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.seq - OLD.seq >= 2 THEN
				RAISE EXCEPTION 'the test refuses a move by %', NEW.seq - OLD.seq;
			END IF;
			RETURN NEW;
		END $$`); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, `CREATE TRIGGER refuse_two BEFORE UPDATE ON sync_counters FOR EACH ROW EXECUTE FUNCTION refuse_two()`); err != nil {
		t.Fatal(err)
	}
	pool := db.Pool()
	hold := func(query string, arg int64) *sql.Tx {
		t.Helper()
		tx, err := pool.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback() })
		if _, err := tx.ExecContext(ctx, query, arg); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	account := hold(`SELECT 1 FROM bank_accounts WHERE id = $1 FOR UPDATE`, a.ID)
	counter := hold(`SELECT 1 FROM sync_counters WHERE company_id = $1 FOR UPDATE`, c.ID)
	waiting := func(n int) func() bool {
		return func() bool {
			var got int
			err := pool.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event <> 'advisory'`).Scan(&got)
			return err == nil && got == n
		}
	}
	results := make(map[string]chan error)
	push := func(ref string, amount int64) {
		done := make(chan error, 1)
		results[ref] = done
		go func() {
			_, err := db.IngestTransactions(ctx, c.Tenant(), row(ref, amount), []string{""})
			done <- err
		}()
	}
	push("X", 10)
	testkit.WaitFor(t, "the first group to wait for the account", 10*time.Second, waiting(1))
	queued := func(n int) func() bool { return func() bool { return db.LaneQueued(c.ID) == n } }
	push("A1", 100)
	testkit.WaitFor(t, "a call queued behind the first group", 10*time.Second, queued(1))
	push("A2", 1000)
	testkit.WaitFor(t, "two calls queued behind the first group", 10*time.Second, queued(2))
	if err := account.Commit(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the first group waiting in its commit and the group of two waiting for the account", 10*time.Second, waiting(2))
	push("B", 10_000)
	testkit.WaitFor(t, "the last call queued behind the group of two", 10*time.Second, queued(1))
	if err := counter.Commit(); err != nil {
		t.Fatal(err)
	}
	for ref, done := range results {
		if err := <-done; err != nil {
			t.Fatalf("the call of %s: %v", ref, err)
		}
	}
	rows, err := pool.QueryContext(ctx, `SELECT reference_number, accumulated FROM transactions WHERE company_id = $1 ORDER BY id`, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var ref string
		var balance int64
		if err := rows.Scan(&ref, &balance); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(ref, " ", balance))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"W 1", "X 11", "A1 111", "A2 1111", "B 11111"}; !slices.Equal(got, want) {
		t.Fatalf("stored in the order %v, want %v", got, want)
	}
}
