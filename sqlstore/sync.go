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
	ids, kinds := make([]int64, len(set)), make([]string, len(set))
	for i, c := range set {
		ids[i], kinds[i] = c.id, c.kind
	}
	return internalOrNil(db.d.stampChanges(ctx, db, tx, companyID, ids, kinds, storedTime(now)), "log changes")
}

// moveCounter is the upsert of stampChanges that moves the tenant's ($1)
// counter by the number of changes ($2).
const moveCounter = `INSERT INTO sync_counters (company_id, seq) VALUES ($1, $2)
	ON CONFLICT (company_id) DO UPDATE SET seq = sync_counters.seq + excluded.seq
	RETURNING seq`

// TransactionChanges implements recon.SyncStore: the page, each added or
// modified transaction read as it is now with its match state, then the
// counter's floor: a purge that ran meanwhile shows there, so a page read
// across a purge is refused rather than short.
func (db *DB) TransactionChanges(ctx context.Context, tenant recon.TenantID, after int64, limit int) (*recon.TransactionChanges, error) {
	companyID := tenant.ID()
	rows, err := db.db.QueryContext(ctx, `
		SELECT c.seq, c.kind, c.transaction_id, t.id IS NOT NULL, `+nullableTransactionColumns+`,
			(SELECT d.outcome FROM match_decisions d WHERE d.transaction_id = t.id ORDER BY d.id DESC LIMIT 1),
			(SELECT d.order_id FROM match_decisions d WHERE d.transaction_id = t.id ORDER BY d.id DESC LIMIT 1),
			(SELECT e.resolved FROM exceptions e WHERE e.transaction_id = t.id AND e.company_id = t.company_id)
		FROM transaction_changes c
		LEFT JOIN transactions t ON t.id = c.transaction_id AND t.company_id = c.company_id AND c.kind <> 'removed'
		LEFT JOIN bank_accounts b ON b.id = t.bank_account_id
		WHERE c.company_id = $1 AND c.seq > $2
		ORDER BY c.seq LIMIT $3`, companyID, after, limit+1)
	if err != nil {
		return nil, internal(err, "read changes")
	}
	page := &recon.TransactionChanges{Next: after}
	for rows.Next() {
		var ch recon.TransactionChange
		var found bool
		var t nullableTransaction
		var outcome sql.NullString
		var order sql.NullInt64
		var resolved sql.NullBool
		dest := append([]any{&ch.Seq, &ch.Kind, &ch.TransactionID, &found}, t.dest()...)
		if err := rows.Scan(append(dest, &outcome, &order, &resolved)...); err != nil {
			rows.Close()
			return nil, internal(err, "read changes")
		}
		if len(page.Changes) == limit {
			page.HasMore = true
			break
		}
		if found {
			st := &recon.SyncedTransaction{Transaction: *t.transaction(), MatchOutcome: outcome.String, OrderID: order.Int64}
			st.ID = ch.TransactionID
			if resolved.Valid {
				st.Exception = map[bool]string{false: "open", true: "resolved"}[resolved.Bool]
			}
			ch.Transaction = st
		}
		page.Changes = append(page.Changes, ch)
		page.Next = ch.Seq
	}
	if err := rows.Close(); err != nil {
		return nil, internal(err, "read changes")
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "read changes")
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

// nullableTransactionColumns are transactionColumns read through a LEFT
// JOIN, every column possibly NULL (see nullableTransaction).
const nullableTransactionColumns = `t.company_id, t.bank_account_id, b.bank_name, b.account_number, t.transaction_date,
	t.amount_in, t.amount_out, t.accumulated, t.content, t.reference_number, t.code, t.sub_account, t.created_at`

type nullableTransaction struct {
	company, account, in, out, acc sql.NullInt64
	bank, number, content, ref     sql.NullString
	code, sub                      sql.NullString
	date, created                  sql.NullTime
}

func (n *nullableTransaction) dest() []any {
	return []any{&n.company, &n.account, &n.bank, &n.number, &n.date, &n.in, &n.out, &n.acc, &n.content, &n.ref, &n.code, &n.sub, &n.created}
}

func (n *nullableTransaction) transaction() *recon.Transaction {
	return &recon.Transaction{CompanyID: n.company.Int64, BankAccountID: n.account.Int64, BankName: n.bank.String, AccountNumber: n.number.String,
		TransactionDate: recon.WallClock(n.date.Time.UTC()), AmountIn: n.in.Int64, AmountOut: n.out.Int64, Accumulated: n.acc.Int64,
		Content: n.content.String, ReferenceNumber: n.ref.String, Code: n.code.String, SubAccount: n.sub.String, CreatedAt: n.created.Time.UTC()}
}

// purgeChanges deletes the tenant's changes logged before before, oldest
// first and a chunk per database transaction, and raises the counter's
// floor to the last one purged: a cursor below it is expired.
func (db *DB) purgeChanges(ctx context.Context, companyID int64, before time.Time) (int64, error) {
	before = storedTime(before)
	var total int64
	for {
		var n int64
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT seq, created_at FROM transaction_changes WHERE company_id = $1 ORDER BY seq LIMIT $2`,
				companyID, retentionChunk)
			if err != nil {
				return internal(err, "purge changes")
			}
			upto := int64(-1)
			for rows.Next() {
				var seq int64
				var at time.Time
				if err := rows.Scan(&seq, &at); err != nil {
					rows.Close()
					return internal(err, "purge changes")
				}
				if !at.Before(before) {
					break
				}
				upto = seq
				n++
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
		if err != nil || n < retentionChunk {
			return total, err
		}
	}
}
