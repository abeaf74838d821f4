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
	f := newLaneFixture(t)
	o := &recon.Order{CompanyID: f.c.ID, InvoiceNumber: "INV1", PaymentCode: "DH10001", Amount: 100_000, BankAccountID: f.a.ID}
	if err := f.db.CreateOrder(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	order := f.hold(`SELECT 1 FROM orders WHERE id = $1 FOR UPDATE`, o.ID)
	counter := f.holdCounter()
	first := f.push("A", 100_000, "thanh toan DH10001", "DH10001")
	testkit.WaitFor(t, "the first group to wait for the order", 10*time.Second, f.waiting(1))
	second := f.push("B", 5, "chuyen tien", "")
	testkit.WaitFor(t, "the second call to queue behind the first group", 10*time.Second, f.queued(1))
	f.release(order)
	testkit.WaitFor(t, "the first group waiting in its commit and the second group's transaction waiting for the account", 10*time.Second, f.waiting(2))
	f.release(counter)
	a, b := <-first, <-second
	if a.err != nil || b.err != nil {
		t.Fatalf("the two calls: %v, %v", a.err, b.err)
	}
	if !a.res[0].PaidOrder {
		t.Fatalf("the first call stored %+v; want it paying the order", a.res[0])
	}
	f.storedInOrder(f.a.ID, "W 1", "A 100001", "B 100006")
}

// TestCallDuringACommitBeginsAtOnce (PostgreSQL): a call that comes while
// its lane's only group commits begins its transaction at once, behind that
// group, and waits for the account, as the next group of a busy lane does.
func TestCallDuringACommitBeginsAtOnce(t *testing.T) {
	t.Parallel()
	f := newLaneFixture(t)
	counter := f.holdCounter()
	first := f.push("A", 10, "chuyen tien", "")
	testkit.WaitFor(t, "the call's group waiting in its commit", 10*time.Second, f.waiting(1))
	second := f.push("B", 100, "chuyen tien", "")
	testkit.WaitFor(t, "the next call's transaction waiting for the account", 10*time.Second, f.waiting(2))
	f.release(counter)
	if a, b := <-first, <-second; a.err != nil || b.err != nil {
		t.Fatalf("the two calls: %v, %v", a.err, b.err)
	}
	f.storedInOrder(f.a.ID, "W 1", "A 11", "B 111")
}

// TestGroupBehindAFailedCommitWaits (PostgreSQL): when a group's COMMIT
// fails after the lane's next group began, the next group, which then
// holds the accounts' locks, does not commit before the failed group's
// calls are stored again one by one: it rolls back and is stored after
// them, so the rows keep arrival order and their balances. The group of
// two calls fails at its commit (refuseMoves).
func TestGroupBehindAFailedCommitWaits(t *testing.T) {
	t.Parallel()
	f := newLaneFixture(t)
	f.refuseMoves(2)
	account := f.holdAccount(f.a.ID)
	counter := f.holdCounter()
	var calls []<-chan ingested
	calls = append(calls, f.push("X", 10, "chuyen tien", ""))
	testkit.WaitFor(t, "the first group to wait for the account", 10*time.Second, f.waiting(1))
	calls = append(calls, f.push("A1", 100, "chuyen tien", ""))
	testkit.WaitFor(t, "a call queued behind the first group", 10*time.Second, f.queued(1))
	calls = append(calls, f.push("A2", 1000, "chuyen tien", ""))
	testkit.WaitFor(t, "two calls queued behind the first group", 10*time.Second, f.queued(2))
	f.release(account)
	testkit.WaitFor(t, "the first group waiting in its commit and the group of two waiting for the account", 10*time.Second, f.waiting(2))
	calls = append(calls, f.push("B", 10_000, "chuyen tien", ""))
	testkit.WaitFor(t, "the last call queued behind the group of two", 10*time.Second, f.queued(1))
	f.release(counter)
	for i, call := range calls {
		if got := <-call; got.err != nil {
			t.Fatalf("call %d: %v", i, got.err)
		}
	}
	f.storedInOrder(f.a.ID, "W 1", "X 11", "A1 111", "A2 1111", "B 11111")
}

// TestMergedLaneGroupFollowed (PostgreSQL): a call whose accounts overlap
// two lanes merges the second into the first, and the first lane's next
// group follows the group the second lane is storing as it follows its
// own: when that group fails at its commit, the merging call is stored
// after its calls, stored again one by one. Lane 1 stores a call on
// account B, lane 2 a group of three calls on account A (which
// refuseMoves makes fail at its commit); the merging call has a row on
// each.
func TestMergedLaneGroupFollowed(t *testing.T) {
	t.Parallel()
	f := newLaneFixture(t)
	b := &recon.BankAccount{CompanyID: f.c.ID, BankName: "Vietcombank", AccountNumber: "222"}
	if err := f.db.CreateBankAccount(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	f.refuseMoves(3)
	lockA := f.holdAccount(f.a.ID)
	lockB := f.holdAccount(b.ID)
	var calls []<-chan ingested
	calls = append(calls, f.pushBatch([]recon.TransactionInput{transfer(b.ID, "B1", 5, "chuyen tien")}, []string{""}))
	testkit.WaitFor(t, "lane 1's group to wait for account B", 10*time.Second, f.waiting(1))
	calls = append(calls, f.push("X", 10, "chuyen tien", ""))
	testkit.WaitFor(t, "lane 2's first group to wait for account A", 10*time.Second, f.waiting(2))
	for i, amount := range []int64{100, 1000, 10_000} {
		calls = append(calls, f.push(fmt.Sprint("A", i+1), amount, "chuyen tien", ""))
		testkit.WaitFor(t, "a call queued in lane 2", 10*time.Second, f.queued(i+1))
	}
	counter := f.holdCounter()
	f.release(lockA)
	testkit.WaitFor(t, "lane 2's first group waiting in its commit and its group of three waiting for account A", 10*time.Second, f.waiting(3))
	calls = append(calls, f.pushBatch([]recon.TransactionInput{transfer(f.a.ID, "CA", 100_000, "chuyen tien"), transfer(b.ID, "CB", 50, "chuyen tien")}, []string{"", ""}))
	testkit.WaitFor(t, "the merging call queued", 10*time.Second, f.queued(1))
	f.release(lockB)
	f.release(counter)
	for i, call := range calls {
		if got := <-call; got.err != nil {
			t.Fatalf("call %d: %v", i, got.err)
		}
	}
	f.storedInOrder(f.a.ID, "W 1", "X 11", "A1 111", "A2 1111", "A3 11111", "CA 111111")
	f.storedInOrder(b.ID, "B1 5", "CB 55")
}

// laneFixture is a PostgreSQL store holding a company with one bank account
// and one transaction ("W", 1 đ, which makes the tenant's change counter),
// for the tests of a lane's groups: the test's own transactions hold rows
// the groups need, and it counts the store's statements waiting for a lock.
type laneFixture struct {
	t  *testing.T
	db *sqlstore.DB
	c  *recon.Company
	a  *recon.BankAccount
}

type ingested struct {
	res []recon.IngestResult
	err error
}

func newLaneFixture(t *testing.T) *laneFixture {
	f := &laneFixture{t: t, db: dbtest.OpenStore(t, sqlstore.EnginePostgres)}
	f.c, f.a = companyWithAccount(t, f.db, "111")
	if _, err := f.db.IngestTransactions(t.Context(), f.c.Tenant(), f.row("W", 1, "chuyen tien"), []string{""}); err != nil {
		t.Fatal(err)
	}
	return f
}

// row is a batch of one transfer into the account, every one of the same
// time, so that their balances follow their ids.
func (f *laneFixture) row(ref string, amount int64, memo string) []recon.TransactionInput {
	return []recon.TransactionInput{transfer(f.a.ID, ref, amount, memo)}
}

func transfer(account int64, ref string, amount int64, memo string) recon.TransactionInput {
	return recon.TransactionInput{BankAccountID: account, TransactionDate: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
		AmountIn: amount, Content: memo, ReferenceNumber: ref}
}

// push ingests row(ref, amount, memo) with the payment code, from a
// goroutine of its own.
func (f *laneFixture) push(ref string, amount int64, memo, code string) <-chan ingested {
	return f.pushBatch(f.row(ref, amount, memo), []string{code})
}

func (f *laneFixture) pushBatch(in []recon.TransactionInput, codes []string) <-chan ingested {
	done := make(chan ingested, 1)
	go func() {
		res, err := f.db.IngestTransactions(f.t.Context(), f.c.Tenant(), in, codes)
		done <- ingested{res, err}
	}()
	return done
}

// refuseMoves makes the tenant's change counter refuse a move by n (the
// number of rows a group of calls adds), so that a group adding n rows
// fails at its commit, its change log going with the COMMIT, and each of
// its calls alone, stored again, passes.
func (f *laneFixture) refuseMoves(n int) {
	f.t.Helper()
	ctx := f.t.Context()
	if err := f.db.Exec(ctx, fmt.Sprintf(`CREATE FUNCTION refuse_move() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.seq - OLD.seq = %d THEN
				RAISE EXCEPTION 'the test refuses a move by %%', NEW.seq - OLD.seq;
			END IF;
			RETURN NEW;
		END $$`, n)); err != nil {
		f.t.Fatal(err)
	}
	if err := f.db.Exec(ctx, `CREATE TRIGGER refuse_move BEFORE UPDATE ON sync_counters FOR EACH ROW EXECUTE FUNCTION refuse_move()`); err != nil {
		f.t.Fatal(err)
	}
}

// hold runs query in a transaction of the test's own, left open until the
// caller commits it (or the test ends).
func (f *laneFixture) hold(query string, arg int64) *sql.Tx {
	f.t.Helper()
	tx, err := f.db.Pool().BeginTx(f.t.Context(), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.ExecContext(f.t.Context(), query, arg); err != nil {
		f.t.Fatal(err)
	}
	return tx
}

// holdAccount holds a bank account's row, which a group locks first.
func (f *laneFixture) holdAccount(id int64) *sql.Tx {
	return f.hold(`SELECT 1 FROM bank_accounts WHERE id = $1 FOR UPDATE`, id)
}

// holdCounter holds the tenant's change counter, which a group's commit
// moves last.
func (f *laneFixture) holdCounter() *sql.Tx {
	return f.hold(`SELECT 1 FROM sync_counters WHERE company_id = $1 FOR UPDATE`, f.c.ID)
}

// release commits a transaction of hold's, letting go of what it held.
func (f *laneFixture) release(tx *sql.Tx) {
	f.t.Helper()
	if err := tx.Commit(); err != nil {
		f.t.Fatal(err)
	}
}

// waiting reports whether n statements of the database wait for a row's
// lock (the key lease's advisory locks left out).
func (f *laneFixture) waiting(n int) func() bool {
	return func() bool {
		var got int
		err := f.db.Pool().QueryRowContext(f.t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event <> 'advisory'`).Scan(&got)
		return err == nil && got == n
	}
}

// queued reports whether n calls of the company wait in its lanes.
func (f *laneFixture) queued(n int) func() bool {
	return func() bool { return f.db.LaneQueued(f.c.ID) == n }
}

// storedInOrder checks the account's transactions, by id, as "reference
// balance".
func (f *laneFixture) storedInOrder(account int64, want ...string) {
	f.t.Helper()
	rows, err := f.db.Pool().QueryContext(f.t.Context(), `SELECT reference_number, accumulated FROM transactions WHERE bank_account_id = $1 ORDER BY id`, account)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var ref string
		var balance int64
		if err := rows.Scan(&ref, &balance); err != nil {
			f.t.Fatal(err)
		}
		got = append(got, fmt.Sprint(ref, " ", balance))
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		f.t.Fatalf("stored in the order %v, want %v", got, want)
	}
}
