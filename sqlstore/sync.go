package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"recon"
)

// The change log of GET /v2/transactions/sync (migration 00025;
// docs/api-v2.md, Transactions sync).
//
// Every database transaction that adds, modifies or removes a tenant's
// transactions collects its changes (a changeSet) and stamps them with
// stampChanges as its LAST statement: an upsert of the tenant's
// sync_counters row moves the counter by the number of changes, which
// row-locks it until the commit, and the changes are inserted with the
// numbers it freed. The next writer of the tenant waits at the upsert for
// that commit and reads the counter after it, so per tenant the stamps
// follow the commit order and no reader can see seq n before every change
// up to n is committed (a sequence or identity would be drawn at INSERT,
// and a writer committing late would leave a lower number behind a reader
// that passed it). A writer that rolls back also rolls back its counter
// move, so the numbers have no holes. Being last, the lock waits for
// nothing: writers of one tenant hold it only while committing, and lock
// order (bank accounts, orders, exceptions, then the counter) stays
// acyclic. The cost is that writers of the same tenant commit one at a
// time; docs/api-v2.md, Transactions sync, has the ingestion figures.
//
// A new writer that inserts or deletes transactions, or changes their code
// or match state (match decisions, exceptions), must do the same: collect
// a changeSet and end its database transaction with stampChanges, or sync
// clients never hear of the change and the API's kept listing pages keep
// showing the row as it was (docs/design.md, "Listing pages kept encoded").

var _ recon.SyncStore = (*DB)(nil)

// change is one change of a changeSet.
type change struct {
	id   int64
	kind string
}

// changeSet collects a database transaction's changes for stampChanges.
type changeSet []change

func (s *changeSet) add(kind string, ids ...int64) {
	for _, id := range ids {
		*s = append(*s, change{id, kind})
	}
}

// stampChanges logs set in tx under the tenant's next numbers. It must be
// the last statement of tx (see above).
func (db *DB) stampChanges(ctx context.Context, tx *sql.Tx, companyID int64, set changeSet, now time.Time) error {
	if len(set) == 0 {
		return nil
	}
	return internalOrNil(db.d.stampChanges(ctx, db, tx, companyID, set.runs(), int64(len(set)), storedTime(now)), "log changes")
}

// changeRuns are a changeSet as the log keeps it (migration 00056): each
// run is consecutive ids of one kind, one row however long. A batch's
// added rows, whose ids the insert drew in order, are one run (or a few,
// when another tenant's insert drew ids between them on PostgreSQL).
type changeRuns struct {
	ends  []int64 // the place in the set of each run's last change, from 1
	ids   []int64 // each run's first transaction
	ns    []int64 // each run's length
	kinds []string
}

func (s changeSet) runs() changeRuns {
	var r changeRuns
	for i := 0; i < len(s); {
		n := 1
		for i+n < len(s) && s[i+n].id == s[i].id+int64(n) && s[i+n].kind == s[i].kind {
			n++
		}
		i += n
		r.ends, r.ids, r.ns, r.kinds = append(r.ends, int64(i)), append(r.ids, s[i-n].id), append(r.ns, int64(n)), append(r.kinds, s[i-n].kind)
	}
	return r
}

// moveCounter is the upsert of stampChanges that moves the tenant's ($1)
// counter by the number of changes ($2).
const moveCounter = `INSERT INTO sync_counters (company_id, seq) VALUES ($1, $2)
	ON CONFLICT (company_id) DO UPDATE SET seq = sync_counters.seq + excluded.seq
	RETURNING seq`

// TransactionChanges implements recon.SyncStore: the page's changes from
// the runs holding them, then each added or modified transaction read as
// it is now with its match state, then the counter's floor: a purge that
// ran meanwhile shows there, so a page read across a purge is refused
// rather than short.
func (db *DB) TransactionChanges(ctx context.Context, tenant recon.TenantID, after int64, limit int) (*recon.TransactionChanges, error) {
	companyID := tenant.ID()
	type run struct {
		last, n, id int64 // its last seq, its length, its first transaction
		kind        string
	}
	// Every run read ends above after, and limit+1 of them hold at least
	// limit+1 changes; the first may begin at or below after.
	rows, err := db.db.QueryContext(ctx, `SELECT seq, n, transaction_id, kind FROM transaction_changes
		WHERE company_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, companyID, after, limit+1)
	runs, err := collect(rows, err, "read changes", func(s scanner) (*run, error) {
		var r run
		return &r, s.Scan(&r.last, &r.n, &r.id, &r.kind)
	})
	if err != nil {
		return nil, err
	}
	page := &recon.TransactionChanges{Next: after}
	var read []int64
changes:
	for _, r := range runs {
		for seq := max(r.last-r.n+1, after+1); seq <= r.last; seq++ {
			if len(page.Changes) == limit {
				page.HasMore = true
				break changes
			}
			ch := recon.TransactionChange{Seq: seq, Kind: r.kind, TransactionID: r.id + seq - (r.last - r.n + 1)}
			if ch.Kind != recon.ChangeRemoved {
				read = append(read, ch.TransactionID)
			}
			page.Changes = append(page.Changes, ch)
			page.Next = seq
		}
	}
	if len(read) > 0 {
		synced, err := db.syncedTransactions(ctx, companyID, read)
		if err != nil {
			return nil, err
		}
		for i := range page.Changes {
			if ch := &page.Changes[i]; ch.Kind != recon.ChangeRemoved {
				ch.Transaction = synced[ch.TransactionID] // nil: removed since
			}
		}
	}
	var floor int64
	err = db.db.QueryRowContext(ctx, `SELECT floor FROM sync_counters WHERE company_id = $1`, companyID).Scan(&floor)
	if err != nil && err != sql.ErrNoRows {
		return nil, internal(err, "read the change counter")
	}
	if after >= 0 && after < floor { // after < 0: from the start of what is kept
		return nil, recon.CursorExpired()
	}
	if page.Next < floor {
		page.Next = floor // an empty page from the start: on from what was purged
	}
	return page, nil
}

// syncedTransactions reads the tenant's transactions of ids that still
// exist, each with its match state, by id.
func (db *DB) syncedTransactions(ctx context.Context, companyID int64, ids []int64) (map[int64]*recon.SyncedTransaction, error) {
	args := []any{companyID}
	cond := oneOf(db, &args, ids)
	rows, err := db.db.QueryContext(ctx, `SELECT `+transactionColumns+`,
			(SELECT d.outcome FROM match_decisions d WHERE d.transaction_id = t.id ORDER BY d.id DESC LIMIT 1),
			(SELECT d.order_id FROM match_decisions d WHERE d.transaction_id = t.id ORDER BY d.id DESC LIMIT 1),
			(SELECT e.resolved FROM exceptions e WHERE e.transaction_id = t.id AND e.company_id = t.company_id)
		FROM transactions t JOIN bank_accounts b ON b.id = t.bank_account_id
		WHERE t.company_id = $1 AND t.id `+cond, args...)
	list, err := collect(rows, err, "read changes", func(s scanner) (*recon.SyncedTransaction, error) {
		var outcome sql.NullString
		var order sql.NullInt64
		var resolved sql.NullBool
		t, err := scanTransaction(scanAlso{s, []any{&outcome, &order, &resolved}})
		if err != nil {
			return nil, err
		}
		st := &recon.SyncedTransaction{Transaction: *t, MatchOutcome: outcome.String, OrderID: order.Int64}
		if resolved.Valid {
			st.Exception = map[bool]string{false: "open", true: "resolved"}[resolved.Bool]
		}
		return st, nil
	})
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*recon.SyncedTransaction, len(list))
	for _, st := range list {
		byID[st.ID] = st
	}
	return byID, nil
}

// purgeChanges deletes the tenant's changes logged before before, oldest
// first and a chunk of runs per database transaction, and raises the
// counter's floor to the last one purged: a cursor below it is expired. It
// returns the number of changes purged.
func (db *DB) purgeChanges(ctx context.Context, companyID int64, before time.Time) (int64, error) {
	before = storedTime(before)
	var total int64
	for {
		var n int64 // changes purged
		var runs int
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			n, runs = 0, 0
			rows, err := tx.QueryContext(ctx, `SELECT seq, n, created_at FROM transaction_changes WHERE company_id = $1 ORDER BY seq LIMIT $2`,
				companyID, retentionChunk)
			if err != nil {
				return internal(err, "purge changes")
			}
			upto := int64(-1)
			for rows.Next() {
				var seq, changes int64
				var at time.Time
				if err := rows.Scan(&seq, &changes, &at); err != nil {
					rows.Close()
					return internal(err, "purge changes")
				}
				if !at.Before(before) {
					break
				}
				upto = seq
				n += changes
				runs++
			}
			if err := rows.Close(); err != nil {
				return internal(err, "purge changes")
			}
			if upto < 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM transaction_changes WHERE company_id = $1 AND seq <= $2`, companyID, upto); err != nil {
				return internal(err, "purge changes")
			}
			// Last, as the counter's every lock (see stampChanges).
			if _, err := tx.ExecContext(ctx, `UPDATE sync_counters SET floor = $1 WHERE company_id = $2 AND floor < $1`, upto, companyID); err != nil {
				return internal(err, "purge changes")
			}
			return nil
		})
		total += n
		if err != nil || runs < retentionChunk {
			return total, err
		}
	}
}
