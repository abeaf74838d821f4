package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"recon"
)

// insertChunk bounds the rows of one multi-row INSERT (13 parameters a row,
// under SQLite's 32766 and PostgreSQL's 65535 parameter limits).
const insertChunk = 500

type accountKey struct {
	account int64
	ref     string
}

type accountState struct {
	// balance is the balance after the account's latest row in bank order
	// (transaction_date, then id: docs/api.md, Balances); known says whether
	// it is known: it follows from a bank's balance (or a known opening).
	balance int64
	known   bool
	changed bool
	// lastDate is the latest transaction_date of the account (zero without
	// rows): a batch dated on or after it is appended. opening is the
	// balance before the account's earliest stored row (retention keeps it).
	lastDate     time.Time
	opening      int64
	openingKnown bool
	// knownFrom is the first row in bank order that carried the bank's
	// balance: the balances from it on are known (sqlstore/balance.go).
	knownFrom position
	// linked is the hub's link of the account, read with its lock: nil
	// unless the account is linked (balance changes are then notified).
	linked *linkedAccount
	// ordersInto says that an order names the account (its checkout asks
	// payers to pay into it) and companyOrders that the company has an
	// order at all, read with the lock for recordExceptions.
	ordersInto, companyOrders bool
}

// linkedAccount is what a balance-change notification names of its account.
type linkedAccount struct{ brand, number, xid string }

// IngestTransactions implements recon.TransactionStore. Within one database
// transaction it locks the batch's bank accounts (in id order, so batches
// never deadlock), computes each new row's balance in batch order, inserts
// the rows, updates the accounts' balances, the day counts and the
// discontinuities, and matches incoming rows to orders (see match), so that
// a transaction, its order's new state and the IPN commit together.
//
// A batch whose duplicate probe finds it repeats stored rows has its stored
// references read first; otherwise the insert is optimistic: it assumes no
// reference is stored yet, and a stored reference fails it. Should any row
// be missing from what the insert returns, the transaction is rolled back
// (ingestOnce; IngestAtomically's batches roll back to a savepoint taken
// before the insert), the stored references are looked up and the batch is
// planned and inserted again, duplicates left out so that they move no
// balance. Because every writer of an account holds its lock, the second
// insert meets no conflict, and no reference is ever stored twice.
func (db *DB) IngestTransactions(ctx context.Context, tenant recon.TenantID, in []recon.TransactionInput, codes []string) ([]recon.IngestResult, error) {
	companyID := tenant.ID()
	if len(codes) != len(in) {
		return nil, fmt.Errorf("sqlstore: %d codes for %d transactions", len(codes), len(in))
	}
	if len(in) == 0 {
		return []recon.IngestResult{}, nil
	}
	return db.group.ingest(ctx, db, companyID, in, codes)
}

// ingestOnce stores one batch in one database transaction (see
// IngestTransactions). The batch is the transaction's only work, so its
// insert needs no savepoint: an insert that meets a stored reference fails
// the transaction (errReplan), and the batch is stored again in a new one
// that reads its stored references before the insert.
func (db *DB) ingestOnce(ctx context.Context, companyID int64, in []recon.TransactionInput, codes []string, dups *batchDups) ([]recon.IngestResult, error) {
	var results []recon.IngestResult
	enqueued := 0
	store := func(how ingestHow) error {
		return db.inTx(ctx, func(tx *sql.Tx) error {
			var err error
			if results, enqueued, err = db.ingestTx(ctx, tx, companyID, in, codes, dups, how); err != nil {
				return err
			}
			var added changeSet
			addedOf(&added, results)
			return db.stampChanges(ctx, tx, companyID, added, db.now()) // last: see sqlstore/sync.go
		})
	}
	err := store(ingestAlone)
	if errors.Is(err, errReplan) {
		err = store(ingestAloneStoredFirst)
	}
	if err != nil {
		return nil, err
	}
	db.enqueued(enqueued)
	db.analyzeIfDue()
	return results, nil
}

// IngestAtomically implements recon.AtomicIngestStore: every batch fill
// stores goes into one database transaction, which commits when fill returns
// nil and rolls back otherwise, whatever failed and wherever. Each batch is
// stored as IngestTransactions stores one (locks, duplicates, balances,
// matching), so later batches see the earlier ones. The calls bypass the
// group commit; concurrent writers of the same bank accounts wait for the
// commit (on SQLite, every writer does: keep fill free of slow input).
func (db *DB) IngestAtomically(ctx context.Context, tenant recon.TenantID, fill func(ingest func(in []recon.TransactionInput, codes []string) ([]recon.IngestResult, error)) error) error {
	companyID := tenant.ID()
	enqueued := 0
	// A statement's import record (recon.RecordingStatement) commits with
	// its rows: its entries are written as they come, a batch behind.
	rec := recon.StatementRecordOf(ctx)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var added changeSet
		var st *statementWriter
		if rec != nil {
			var err error
			if st, err = db.startStatement(ctx, tx, companyID, rec); err != nil {
				return err
			}
		}
		err := fill(func(in []recon.TransactionInput, codes []string) ([]recon.IngestResult, error) {
			if len(codes) != len(in) {
				return nil, fmt.Errorf("sqlstore: %d codes for %d transactions", len(codes), len(in))
			}
			if err := st.flush(ctx, tx); err != nil {
				return nil, err
			}
			if len(in) == 0 {
				return []recon.IngestResult{}, nil
			}
			res, n, err := db.ingestTx(ctx, tx, companyID, in, codes, newBatchDups(in), ingestShared)
			enqueued += n
			if err == nil {
				addedOf(&added, res)
			}
			return res, err
		})
		if err != nil {
			return err
		}
		if err := st.finish(ctx, tx); err != nil {
			return err
		}
		return db.stampChanges(ctx, tx, companyID, added, db.now()) // last: see sqlstore/sync.go
	})
	if err != nil {
		return err
	}
	db.enqueued(enqueued)
	db.analyzeIfDue()
	return nil
}

// addedOf adds the transactions results stored (not the duplicates) to set,
// in the batch's order.
func addedOf(set *changeSet, results []recon.IngestResult) {
	for _, r := range results {
		if !r.Duplicate {
			set.add(recon.ChangeAdded, r.ID)
		}
	}
}

// ingestHow says what else a batch's database transaction holds, and so
// how ingestTx recovers from an insert that meets a stored reference.
type ingestHow int

const (
	// ingestAlone: the batch is the transaction's only work: the insert
	// takes no savepoint, and one that meets a stored reference fails the
	// transaction with errReplan (ingestOnce).
	ingestAlone ingestHow = iota
	// ingestAloneStoredFirst: as ingestAlone, after errReplan: the stored
	// references are read before the insert.
	ingestAloneStoredFirst
	// ingestShared: one batch of several (IngestAtomically): the insert
	// takes a savepoint, rolled back to when it meets a stored reference.
	ingestShared
)

// errReplan fails a transaction whose insert met a stored reference the
// duplicate probe did not show (a bank reusing a reference with other
// content): ingestOnce stores the batch again, its stored references read
// first.
var errReplan = errors.New("sqlstore: a reference of the batch is stored; plan it again")

// ingestTx stores one batch within tx and returns the results and the number
// of deliveries it enqueued. dups holds the batch's keys and memos
// (newBatchDups); ingestTx finds its possible duplicates.
func (db *DB) ingestTx(ctx context.Context, tx *sql.Tx, companyID int64, in []recon.TransactionInput, codes []string, dups *batchDups, how ingestHow) ([]recon.IngestResult, int, error) {
	// The accounts, locked, the stored rows the batch may duplicate and
	// the orders it names, locked, in one round trip (readTogether): what
	// matching reads is read before any write, none of it depending on
	// them, so that the writes wait for the commit, on PostgreSQL one round
	// trip with it (sqlstore/pipeline.go). The duplicates' look-up asks
	// the days of the tenant's duplicate window, which the accounts' read
	// reads: it asks those of the window the tenant had at its last batch
	// (dupWindows), and findDuplicates looks again in the rare batch whose
	// window changed meanwhile. The orders are those of every incoming
	// row, the duplicates' too.
	var names orderNames
	for i := range in {
		names.add(in[i].AmountIn, codes[i], in[i].SubAccount)
	}
	var locked lockedAccounts
	reads := []batchRead{db.accountsRead(companyID, in, &locked)}
	var found *dupLookup
	last, known := db.dupWindows.Load(companyID)
	if known {
		found = &dupLookup{}
		reads = append(reads, db.dupReads(in, dups.keys, last.(int64), found)...)
	}
	named := &namedOrders{}
	if r, ok := db.namedRead(companyID, names, named); ok {
		reads = append(reads, r)
	}
	if err := db.d.readTogether(ctx, db, tx, reads); err != nil {
		return nil, 0, err
	}
	accounts, window, err := locked.checked(companyID)
	if err != nil {
		return nil, 0, err
	}
	if !known || last.(int64) != window {
		db.dupWindows.Store(companyID, window)
	}
	if err := db.finishNamed(ctx, tx, companyID, named); err != nil {
		return nil, 0, err
	}
	now := db.now()
	hist, err := db.loadHistories(ctx, tx, in, accounts)
	if err != nil {
		return nil, 0, err
	}
	var repeats bool
	if dups.hits, repeats, err = db.findDuplicates(ctx, tx, companyID, in, dups, window, found); err != nil {
		return nil, 0, err
	}
	// A batch known to repeat stored rows has its stored references read
	// now; otherwise the insert finds them, failing, and the batch is
	// planned again (how). A feed pushing again what it pushed thus costs
	// no failed insert (on PostgreSQL, no error in its log).
	var stored map[accountKey]storedRef
	storedFirst := repeats || how == ingestAloneStoredFirst
	if storedFirst {
		if stored, err = db.storedRefs(ctx, tx, in); err != nil {
			return nil, 0, err
		}
	}
	if how == ingestShared {
		if _, err := tx.ExecContext(ctx, `SAVEPOINT ingest`); err != nil {
			return nil, 0, internal(err, "savepoint")
		}
	}
	p, err := planIngest(in, codes, dups, accounts, hist, stored)
	if err != nil {
		return nil, 0, err
	}
	ids, err := db.insertTransactions(ctx, tx, companyID, p.rows, now)
	if err != nil {
		return nil, 0, err
	}
	if len(ids) < len(p.rows) {
		// Every writer of the accounts holds their locks: references read
		// under them are all there are.
		const concurrently = "a transaction of this batch was stored concurrently; retry the batch"
		switch {
		case storedFirst:
			return nil, 0, conflict(nil, concurrently)
		case how == ingestAlone:
			return nil, 0, errReplan
		}
		if _, err := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT ingest`); err != nil {
			return nil, 0, internal(err, "rollback to savepoint")
		}
		if stored, err = db.storedRefs(ctx, tx, in); err != nil {
			return nil, 0, err
		}
		if p, err = planIngest(in, codes, dups, accounts, hist, stored); err != nil {
			return nil, 0, err
		}
		if ids, err = db.insertTransactions(ctx, tx, companyID, p.rows, now); err != nil {
			return nil, 0, err
		}
		if len(ids) < len(p.rows) {
			return nil, 0, conflict(nil, concurrently)
		}
	}
	if how == ingestShared {
		// Released, so that a long import's batches do not pile up savepoints.
		if _, err := tx.ExecContext(deferrable(ctx), `RELEASE SAVEPOINT ingest`); err != nil {
			return nil, 0, internal(err, "release savepoint")
		}
	}
	results := p.results(ids)
	if err := db.storeOtherRefs(ctx, tx, companyID, p.rows, ids); err != nil {
		return nil, 0, err
	}
	marked, err := db.markDuplicates(ctx, tx, companyID, p, ids)
	if err != nil {
		return nil, 0, err
	}
	for _, i := range marked {
		results[p.rows[i].index].Exception = true
	}
	db.noteIngested(len(p.rows))
	p.noteKnownFrom(ids)
	if err := db.rederive(ctx, tx, companyID, p, now); err != nil {
		return nil, 0, err
	}
	live := p.rows
	if len(marked) > 0 { // possible duplicates are neither matched nor notified
		live = slices.DeleteFunc(slices.Clone(p.rows), func(r insertRow) bool { return r.dup != nil })
	}
	if err := updateBalances(ctx, tx, p.accounts); err != nil {
		return nil, 0, err
	}
	if err := db.addDayCounts(ctx, tx, companyID, p.rows); err != nil {
		return nil, 0, err
	}
	if err := db.addAmountCounts(ctx, tx, companyID, countAmounts(p.rows)); err != nil {
		return nil, 0, err
	}
	enqueued, err := db.enter(ctx, tx, companyID, live, ids, accounts, now, results, named)
	if err != nil {
		return nil, 0, err
	}
	for _, r := range p.rows {
		if r.reported == nil {
			continue
		}
		if _, err := tx.ExecContext(deferrable(ctx), `
			INSERT INTO balance_discontinuities (company_id, bank_account_id, transaction_id, expected, reported, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`,
			companyID, r.BankAccountID, ids[r.key()], r.expected, *r.reported, now); err != nil {
			return nil, 0, internal(err, "record balance discontinuity")
		}
	}
	return results, enqueued, nil
}

// enter matches the rows that count (not possible duplicates), queues
// their exceptions, settles the refunds they carry out and notifies the
// balances of linked accounts; results, when not nil, learn which paid an
// order and which opened an exception. It returns the deliveries enqueued.
// A possible duplicate resolved distinct enters this way too
// (enterDistinct). reads is what match reads, when read already (nil:
// match reads it).
func (db *DB) enter(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow, ids map[accountKey]int64, accounts map[int64]*accountState, now time.Time, results []recon.IngestResult, reads *namedOrders) (int, error) {
	enqueued, decided, err := db.match(ctx, tx, companyID, rows, ids, now, reads)
	if err != nil {
		return 0, err
	}
	opened, err := db.recordExceptions(ctx, tx, companyID, rows, ids, accounts, decided)
	if err != nil {
		return 0, err
	}
	for i, d := range decided {
		if d != nil && (d.Outcome == recon.MatchCaptured || d.Outcome == recon.MatchOverpaid) && results != nil {
			results[rows[i].index].PaidOrder = true
		}
	}
	for _, i := range opened {
		if results != nil {
			results[rows[i].index].Exception = true
		}
	}
	settled, err := db.settleRefunds(ctx, tx, companyID, rows, ids, now)
	if err != nil {
		return 0, err
	}
	enqueued += settled
	notified, err := db.notifyLinkedBalances(ctx, tx, companyID, rows, ids, accounts, now)
	if err != nil {
		return 0, err
	}
	return enqueued + notified, nil
}

// batchDups are a batch's duplicate keys (recon.DupKey) and memos
// (recon.DupMemo), by input, and its possible duplicates (findDuplicates).
type batchDups struct {
	keys  []int64
	memos []string
	hits  map[int]dupHit
}

// newBatchDups computes the keys and memos of in. The calls of a lane do so
// before their turn (ingestGroup.ingest), outside the one writer.
func newBatchDups(in []recon.TransactionInput) *batchDups {
	d := &batchDups{keys: make([]int64, len(in)), memos: make([]string, len(in))}
	for i := range in {
		d.keys[i] = recon.DupKey(dayNumber(in[i].TransactionDate), in[i].AmountIn, in[i].AmountOut, in[i].Content)
		d.memos[i] = recon.DupMemo(in[i].Content)
	}
	return d
}

// ingestPlan is what a batch will store: the new rows with their balances,
// and for every input either its new row or the stored row it duplicates;
// and, when the batch is dated before stored rows of an account, what
// changes of those rows (see rederive).
type ingestPlan struct {
	in       []recon.TransactionInput
	codes    []string
	rows     []insertRow
	accounts map[int64]*accountState
	// dupOf[i] is the stored row input i duplicates, or nil.
	dupOf map[int]storedRef
	// restated are stored rows whose balance or discontinuity changes;
	// tails are the accounts whose rows dated after the batch move.
	restated []restatedRow
	tails    []tailShift
}

// planIngest computes the rows to insert: a reference in stored, or earlier
// in the batch, is a duplicate; every other row takes its place in its
// account's bank order (transaction_date, then batch order, after every
// stored row of the same date: docs/api.md, Balances) and gets its running
// balance there: the bank's balance when the input carries one, else the
// previous row's plus its amounts. An account without a history (hist) is
// appended to: the batch is dated on or after its last row. An account with
// one also re-derives the stored rows the history holds and plans the shift
// of its later rows (tails). accounts is not changed: the plan works on a
// copy. A running balance that would leave ±recon.MaxAmount (or overflow,
// were a stored balance out of range) is EINVALID naming the row: nothing
// is stored.
func planIngest(in []recon.TransactionInput, codes []string, dups *batchDups, accounts map[int64]*accountState, hist map[int64]*accountHistory, stored map[accountKey]storedRef) (*ingestPlan, error) {
	p := &ingestPlan{in: in, codes: codes, accounts: make(map[int64]*accountState, len(accounts)), dupOf: map[int]storedRef{}}
	for id, a := range accounts {
		c := *a
		p.accounts[id] = &c
	}
	seen := make(map[accountKey]bool, len(in))
	for i := range in {
		t := &in[i]
		k := accountKey{t.BankAccountID, t.ReferenceNumber}
		if r, ok := stored[k]; ok {
			p.dupOf[i] = r
			continue
		}
		if seen[k] {
			continue // a duplicate of an earlier row of the batch
		}
		seen[k] = true
		row := insertRow{TransactionInput: t, code: codes[i], index: i, date: recon.WallClock(t.TransactionDate), dupKey: dups.keys[i]}
		if h, ok := dups.hits[i]; ok {
			row.dup = &h
		}
		p.rows = append(p.rows, row)
	}
	// The rows in bank order, account by account; p.rows stays in batch
	// order, which the ids follow.
	order := make([]*insertRow, len(p.rows))
	for i := range p.rows {
		order[i] = &p.rows[i]
	}
	slices.SortStableFunc(order, func(a, b *insertRow) int {
		return cmp.Or(cmp.Compare(a.BankAccountID, b.BankAccountID), a.date.Compare(b.date))
	})
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && order[end].BankAccountID == order[start].BankAccountID {
			end++
		}
		var err error
		if h := hist[order[start].BankAccountID]; h != nil {
			err = p.merge(order[start:end], h)
		} else {
			err = p.appendRows(order[start:end])
		}
		if err != nil {
			return nil, err
		}
		start = end
	}
	return p, nil
}

// running is a running balance: the balance after the previous row, and
// whether it is known: it follows from a bank's balance, or from a known
// opening balance. Only a known balance can disagree with the bank's.
type running struct {
	balance int64
	known   bool
}

// next sets r's balance after a row of delta carrying the bank's balance
// bank (nil when none) and returns what the row gets: its balance, the
// expected one (the previous plus delta), and whether the bank's disagrees
// (a discontinuity). ok is false when the balance leaves the range.
func (r *running) next(delta int64, bank *int64) (acc, expected int64, gap, ok bool) {
	expected, ok = recon.AddAmounts(r.balance, delta)
	if !ok || (bank == nil && (expected > recon.MaxAmount || expected < -recon.MaxAmount)) {
		return 0, 0, false, false
	}
	acc = expected
	if bank != nil {
		acc = *bank
		gap = r.known && *bank != expected
	}
	r.balance, r.known = acc, r.known || bank != nil
	return acc, expected, gap, true
}

func (r *insertRow) rangeError(balance int64) error {
	field := fmt.Sprintf("transactions[%d]", r.index)
	return recon.FieldError(field, "%s: the running balance of bank account %d would leave the range of ±%d VND (balance %d, amount_in %d, amount_out %d): nothing was stored",
		field, r.BankAccountID, int64(recon.MaxAmount), balance, r.AmountIn, r.AmountOut)
}

// set gives the new row its balance from run. A possible duplicate moves
// no balance and its bank's balance is not compared: it keeps the
// previous row's (docs/statements.md, Possible duplicates).
func (r *insertRow) set(run *running) error {
	prev := run.balance
	delta, bank := r.AmountIn-r.AmountOut, r.Accumulated
	if r.dup != nil {
		delta, bank = 0, nil
	}
	acc, expected, gap, ok := run.next(delta, bank)
	if !ok {
		return r.rangeError(prev)
	}
	r.accumulated, r.expected = acc, expected
	if gap {
		r.reported = r.Accumulated
	}
	return nil
}

// appendRows gives an account's rows, in bank order and dated on or after
// its last row, their balances after the account's.
func (p *ingestPlan) appendRows(rows []*insertRow) error {
	a := p.accounts[rows[0].BankAccountID]
	run := running{a.balance, a.known}
	for _, r := range rows {
		if err := r.set(&run); err != nil {
			return err
		}
	}
	a.balance, a.known, a.changed = run.balance, run.known, true
	a.lastDate = maxTime(a.lastDate, rows[len(rows)-1].date)
	return nil
}

// merge places an account's new rows, in bank order, among the stored rows
// of its history and re-derives every balance from the history's base on:
// the new rows', and the stored rows' that change (restated). Stored rows
// dated after the history (after the batch's last row) are shifted by the
// difference the batch made, up to the first that carries the bank's
// balance (tails; rederive does it).
func (p *ingestPlan) merge(rows []*insertRow, h *accountHistory) error {
	a := p.accounts[rows[0].BankAccountID]
	run := running{h.base, h.baseKnown}
	old := h.base // the previous stored row's balance as stored
	j := 0
	for _, s := range h.rows {
		// A stored row comes before the new rows of its date (its id is smaller).
		for ; j < len(rows) && rows[j].date.Before(s.date); j++ {
			if err := rows[j].set(&run); err != nil {
				return err
			}
		}
		prev := run.balance
		acc, expected, gap, ok := run.next(s.delta, s.bank)
		if !ok {
			return recon.FieldError("transactions", "re-deriving the balance of transaction %d of bank account %d after this batch would leave the range of ±%d VND (balance %d): nothing was stored",
				s.id, rows[0].BankAccountID, int64(recon.MaxAmount), prev)
		}
		old = s.acc
		if acc != s.acc || gap != (s.disc != nil) || (gap && s.disc.expected != expected) {
			p.restated = append(p.restated, restatedRow{storedRow: *s, account: rows[0].BankAccountID, newAcc: acc, expected: expected, gap: gap})
		}
	}
	for ; j < len(rows); j++ {
		if err := rows[j].set(&run); err != nil {
			return err
		}
	}
	a.changed = true
	if h.tail {
		// The tail's balances are known when the batch's last is (a bank's
		// balance came before them), and were when they were.
		a.known = a.known || run.known
		p.tails = append(p.tails, tailShift{account: rows[0].BankAccountID, after: h.to, shift: run.balance - old,
			prev: run.balance, prevKnown: run.known, limit: h.limit - len(h.rows)})
	} else {
		a.balance, a.known = run.balance, run.known
		a.lastDate = maxTime(a.lastDate, rows[len(rows)-1].date)
	}
	return nil
}

// noteKnownFrom moves each account's knownFrom to the batch's first row
// carrying the bank's balance when that comes first in bank order (a new
// row comes after the stored rows of its date: its id is larger).
func (p *ingestPlan) noteKnownFrom(ids map[accountKey]int64) {
	for i := range p.rows {
		r := &p.rows[i]
		if r.Accumulated == nil || r.dup != nil {
			continue
		}
		a := p.accounts[r.BankAccountID]
		if pos := (position{r.date, ids[r.key()]}); a.knownFrom.id == 0 || pos.before(a.knownFrom) {
			a.knownFrom, a.changed = pos, true
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// results reports each input: a new row, a stored duplicate, or a duplicate
// of an earlier row of the batch (the first with its reference).
func (p *ingestPlan) results(ids map[accountKey]int64) []recon.IngestResult {
	out := make([]recon.IngestResult, len(p.in))
	first := make(map[accountKey]int, len(p.in))
	for i := range p.in {
		k := accountKey{p.in[i].BankAccountID, p.in[i].ReferenceNumber}
		if r, ok := p.dupOf[i]; ok {
			out[i] = recon.IngestResult{ID: r.ID, Code: r.Code, Duplicate: true}
		} else if j, ok := first[k]; ok {
			out[i] = recon.IngestResult{ID: out[j].ID, Code: out[j].Code, Duplicate: true}
		} else {
			first[k] = i
			out[i] = recon.IngestResult{ID: ids[k], Code: p.codes[i]}
		}
	}
	return out
}

// insertRow is a transaction to insert, with its code and balance.
type insertRow struct {
	*recon.TransactionInput
	code string
	// index is the row's place in the batch; date its wall-clock date.
	index       int
	date        time.Time
	accumulated int64
	// expected is the previous balance plus the amounts; reported is the
	// feed's balance when it differs from expected (a discontinuity).
	expected int64
	reported *int64
	// dupKey is its recon.DupKey; dup, when not nil, says it is a possible
	// duplicate (findDuplicates).
	dupKey int64
	dup    *dupHit
}

func (r *insertRow) key() accountKey { return accountKey{r.BankAccountID, r.ReferenceNumber} }

// insertColumns follows INSERT INTO (PostgreSQL) or INSERT OR FAIL INTO
// (SQLite, see sqliteInsertTransactions).
const insertColumns = `transactions (company_id, bank_account_id, transaction_date, amount_in, amount_out, accumulated, content, reference_number, code, sub_account, created_at, bank_balance, dup_key) `

// insertTransactions inserts the rows and returns their ids. A reference
// that its account already holds fails the statement: the ids returned are
// then fewer than the rows (none on PostgreSQL, those of the chunks before
// it on SQLite), and the caller plans the batch again (ingestTx).
// Each engine has its fastest way (dialect.insertTransactions): on
// PostgreSQL one INSERT ... SELECT FROM unnest(arrays) takes the whole
// batch in thirteen parameters; SQLite takes multi-row VALUES.
func (db *DB) insertTransactions(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow, now time.Time) (map[accountKey]int64, error) {
	return db.d.insertTransactions(ctx, db, tx, companyID, rows, now)
}

// lockAccounts locks the batch's bank accounts and reads their state, and
// the tenant's duplicate window in days (the live company's setting, shared
// by its test mode; findDuplicates), in one statement.
func (db *DB) lockAccounts(ctx context.Context, tx *sql.Tx, companyID int64, in []recon.TransactionInput) (map[int64]*accountState, int64, error) {
	var l lockedAccounts
	if err := db.d.readTogether(ctx, db, tx, []batchRead{db.accountsRead(companyID, in, &l)}); err != nil {
		return nil, 0, err
	}
	return l.checked(companyID)
}

// lockedAccounts is what accountsRead reads.
type lockedAccounts struct {
	ids      []int64 // asked
	accounts map[int64]*accountState
	window   int64
}

// checked returns what l read, or ENOTFOUND naming an account asked that
// is not the company's.
func (l *lockedAccounts) checked(companyID int64) (map[int64]*accountState, int64, error) {
	for _, id := range l.ids {
		if l.accounts[id] == nil {
			return nil, 0, notFound(nil, "bank account %d not found in company %d", id, companyID)
		}
	}
	return l.accounts, l.window, nil
}

// accountsRead is lockAccounts' statement, read into l (readTogether).
// Each account's row also says whether an order names it and whether the
// company has any order, which recordExceptions asks.
func (db *DB) accountsRead(companyID int64, in []recon.TransactionInput, l *lockedAccounts) batchRead {
	for i := range in {
		l.ids = append(l.ids, in[i].BankAccountID)
	}
	slices.Sort(l.ids)
	l.ids = slices.Compact(l.ids)
	args := []any{companyID, recon.AccountLinked}
	q := `SELECT id, balance, balance_known, last_date, opening_balance, opening_known, known_from_date, known_from_id,
		bank_name, account_number, CASE WHEN link_state = $2 THEN xid END,
		(SELECT p.duplicate_window_days FROM ` + tenantCompany + ` WHERE c.id = $1),
		EXISTS (SELECT 1 FROM orders o WHERE o.company_id = $1 AND o.bank_account_id = bank_accounts.id),
		EXISTS (SELECT 1 FROM orders WHERE company_id = $1)
		FROM bank_accounts WHERE company_id = $1 AND id IN (` + db.params(3, len(l.ids)) + `) ORDER BY id` + db.d.forUpdate()
	for _, id := range l.ids {
		args = append(args, id)
	}
	l.accounts = make(map[int64]*accountState, len(l.ids))
	return batchRead{what: "lock bank accounts", query: q, args: args, scan: func(rows rowScanner) error {
		for rows.Next() {
			var id int64
			var la linkedAccount
			var xid sql.NullString
			a := &accountState{}
			var last, knownDate anyTime
			var knownID sql.NullInt64
			if err := rows.Scan(&id, &a.balance, &a.known, &last, &a.opening, &a.openingKnown, &knownDate, &knownID, &la.brand, &la.number, &xid, &l.window,
				&a.ordersInto, &a.companyOrders); err != nil {
				return err
			}
			a.lastDate = last.t
			if knownID.Valid {
				a.knownFrom = position{knownDate.t, knownID.Int64}
			}
			if xid.Valid {
				la.xid = xid.String
				a.linked = &la
			}
			l.accounts[id] = a
		}
		return nil
	}}
}

type storedRef struct {
	ID   int64
	Code string
}

// storedRefs returns the batch's (account, reference) pairs already stored.
func (db *DB) storedRefs(ctx context.Context, tx *sql.Tx, in []recon.TransactionInput) (map[accountKey]storedRef, error) {
	byAccount := map[int64][]string{}
	for i := range in {
		byAccount[in[i].BankAccountID] = append(byAccount[in[i].BankAccountID], in[i].ReferenceNumber)
	}
	out := map[accountKey]storedRef{}
	for account, refs := range byAccount {
		slices.Sort(refs)
		refs = slices.Compact(refs)
		for start := 0; start < len(refs); start += insertChunk {
			chunk := refs[start:min(start+insertChunk, len(refs))]
			args := []any{account}
			for _, r := range chunk {
				args = append(args, r)
			}
			rows, err := tx.QueryContext(ctx, `SELECT id, reference_number, code FROM transactions
				WHERE bank_account_id = `+db.d.param(1)+` AND reference_number IN (`+db.params(2, len(chunk))+`)`, args...)
			if err != nil {
				return nil, internal(err, "find duplicate references")
			}
			for rows.Next() {
				var r storedRef
				var ref string
				var code sql.NullString
				if err := rows.Scan(&r.ID, &ref, &code); err != nil {
					rows.Close()
					return nil, internal(err, "find duplicate references")
				}
				r.Code = code.String
				out[accountKey{account, ref}] = r
			}
			if err := rows.Close(); err != nil {
				return nil, internal(err, "find duplicate references")
			}
		}
	}
	return out, nil
}

func updateBalances(ctx context.Context, tx *sql.Tx, accounts map[int64]*accountState) error {
	for id, a := range accounts {
		if !a.changed {
			continue
		}
		var last, knownDate, knownID any // NULL while there is none
		if !a.lastDate.IsZero() {
			last = a.lastDate
		}
		if a.knownFrom.id != 0 {
			knownDate, knownID = a.knownFrom.date, a.knownFrom.id
		}
		if _, err := tx.ExecContext(deferrable(ctx), `UPDATE bank_accounts SET balance = $1, balance_known = $2, last_date = $3, known_from_date = $4, known_from_id = $5
			WHERE id = $6`, a.balance, a.known, last, knownDate, knownID, id); err != nil {
			return internal(err, "update balance")
		}
	}
	return nil
}

// dayNumber is the day of a wall-clock time, as counted in transaction_day_counts.
func dayNumber(t time.Time) int64 { return recon.WallClock(t).Unix() / 86400 }

// dayStart is the wall-clock time at which day number day begins
// (dayNumber's inverse).
func dayStart(day int64) time.Time { return time.Unix(day*86400, 0).UTC() }

// dayDate is the date (YYYY-MM-DD) of a day number.
func dayDate(day int64) string { return dayStart(day).Format(recon.DateLayout) }

// daySums are what transaction_day_counts keeps per account and day beside
// the count: the money in and out and how many transfers each, and the money
// in that paid an order and how many (matched later in the same transaction,
// or by hand: addMatchedDays).
type daySums struct{ n, in, out, inN, outN int64 }

type dayKey struct{ account, day int64 }

// sortedDays returns the keys in a stable order, so that concurrent
// writers lock the day rows alike.
func sortedDays[V any](m map[dayKey]V) []dayKey {
	keys := make([]dayKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b dayKey) int {
		if a.account != b.account {
			return cmp.Compare(a.account, b.account)
		}
		return cmp.Compare(a.day, b.day)
	})
	return keys
}

func (db *DB) addDayCounts(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow) error {
	sums := map[dayKey]daySums{}
	for _, r := range rows {
		k := dayKey{r.BankAccountID, dayNumber(r.TransactionDate)}
		s := sums[k]
		s.n++
		if r.dup != nil {
			sums[k] = s // a possible duplicate is a row, and no money
			continue
		}
		s.in = recon.SaturatingAdd(s.in, r.AmountIn)
		s.out = recon.SaturatingAdd(s.out, r.AmountOut)
		if r.AmountIn > 0 {
			s.inN++
		}
		if r.AmountOut > 0 {
			s.outN++
		}
		sums[k] = s
	}
	keys := sortedDays(sums)
	for start := 0; start < len(keys); start += insertChunk {
		chunk := keys[start:min(start+insertChunk, len(keys))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO transaction_day_counts (company_id, bank_account_id, day, n, in_sum, out_sum, in_n, out_n) VALUES `)
		args := make([]any, 0, 8*len(chunk))
		for n, k := range chunk {
			if n > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(" + db.params(len(args)+1, 8) + ")")
			s := sums[k]
			args = append(args, companyID, k.account, k.day, s.n, s.in, s.out, s.inN, s.outN)
		}
		sb.WriteString(` ON CONFLICT (company_id, bank_account_id, day) DO UPDATE SET n = transaction_day_counts.n + excluded.n,
			in_sum = ` + saturatingAdd("transaction_day_counts.in_sum", "excluded.in_sum") + `,
			out_sum = ` + saturatingAdd("transaction_day_counts.out_sum", "excluded.out_sum") + `,
			in_n = transaction_day_counts.in_n + excluded.in_n, out_n = transaction_day_counts.out_n + excluded.out_n`)
		if _, err := tx.ExecContext(deferrable(ctx), sb.String(), args...); err != nil {
			return internal(err, "count transactions per day")
		}
	}
	return nil
}

// amountKey is a row of transaction_amount_counts: an account and a pair of
// amounts (migration 00017).
type amountKey struct{ account, in, out int64 }

// sortedAmounts returns the keys in the order of the table's primary key,
// so that an upsert walks its B-tree's pages in order.
func sortedAmounts(m map[amountKey]int64) []amountKey {
	keys := make([]amountKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b amountKey) int {
		return cmp.Or(cmp.Compare(a.in, b.in), cmp.Compare(a.out, b.out), cmp.Compare(a.account, b.account))
	})
	return keys
}

// countAmounts counts the rows per account and pair of amounts.
func countAmounts(rows []insertRow) map[amountKey]int64 {
	counts := make(map[amountKey]int64, len(rows))
	for _, r := range rows {
		counts[amountKey{r.BankAccountID, r.AmountIn, r.AmountOut}]++
	}
	return counts
}

// addAmountCounts adds counts (negative when rows were deleted) to
// transaction_amount_counts in one statement per engine's bulk form
// (dialect.upsertAmountCounts), not one per key: a feed's incoming amounts
// are many. Every caller holds the locks of the accounts it counts, so no
// other writer waits on these rows. A count that reaches zero stays until
// retention's dropZeroAmountCounts.
func (db *DB) addAmountCounts(ctx context.Context, tx *sql.Tx, companyID int64, counts map[amountKey]int64) error {
	if len(counts) == 0 {
		return nil
	}
	if err := db.d.upsertAmountCounts(ctx, db, tx, companyID, sortedAmounts(counts), counts); err != nil {
		return internal(err, "count transactions per amount")
	}
	return nil
}

// saturatingAdd is SQL for recon.SaturatingAdd of two non-negative
// amounts: the day sums stop at the largest int64, meaning "at least that
// much", instead of failing the ingestion (PostgreSQL) or turning into a
// float (SQLite). A sum that reached it stays there (saturatingSub).
func saturatingAdd(col, add string) string {
	return `CASE WHEN ` + add + ` > 9223372036854775807 - ` + col + ` THEN 9223372036854775807 ELSE ` + col + ` + ` + add + ` END`
}

// saturatingSub lowers a day sum, unless it saturated: what it held is
// then unknown, and it stays "at least the largest int64".
func saturatingSub(col, sub string) string {
	return `CASE WHEN ` + col + ` = 9223372036854775807 THEN ` + col + ` ELSE ` + col + ` - ` + sub + ` END`
}

// paidTransfer is a transfer whose first paying decision was just made.
type paidTransfer struct {
	account int64
	date    time.Time
	amount  int64
}

// addMatchedDays adds transfers that now pay an order to their days'
// matched sums (the day rows exist: ingestion made them).
func addMatchedDays(ctx context.Context, tx *sql.Tx, companyID int64, paid []paidTransfer) error {
	sums := map[dayKey][2]int64{}
	for _, p := range paid {
		k := dayKey{p.account, dayNumber(p.date)}
		s := sums[k]
		sums[k] = [2]int64{recon.SaturatingAdd(s[0], p.amount), s[1] + 1}
	}
	for _, k := range sortedDays(sums) {
		if _, err := tx.ExecContext(deferrable(ctx), `UPDATE transaction_day_counts SET matched_sum = `+saturatingAdd("matched_sum", "$1")+`, matched_n = matched_n + $2
			WHERE company_id = $3 AND bank_account_id = $4 AND day = $5`, sums[k][0], sums[k][1], companyID, k.account, k.day); err != nil {
			return internal(err, "sum matched transfers per day")
		}
	}
	return nil
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
