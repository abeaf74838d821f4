package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"recon"
)

// Retention: each company's data_storage_time (recon.RetentionStore).

var _ recon.RetentionStore = (*DB)(nil)

// retentionChunk is how many rows one retention transaction deletes: small
// enough that the bank account's lock (transactions) or the write lock
// (SQLite) is held for milliseconds, so ingestion waits at most that long.
const retentionChunk = 1000

// ApplyRetention implements recon.RetentionStore. Companies without a
// retention (0 days) and inactive companies (whose data is kept as it is
// until they are active again) are skipped.
//
// Transactions are deleted one bank account and one chunk at a time. Each
// chunk is one database transaction that first locks the bank account's row,
// as every ingestion of the account does, so the chunk and an ingestion of
// the same account run one after the other and the per-day and per-amount
// counts stay exact: the chunk lowers the counts of the days and amounts of
// exactly the rows its DELETE returned (a row another node deleted first is
// not returned twice), and logs them removed for GET /v2/transactions/sync
// (sqlstore/sync.go), whose log it purges after the same time. Match
// decisions and balance discontinuities go with
// their transaction (ON DELETE CASCADE). The account's balance lives on
// the bank account and every kept row keeps its own, so deleting rows moves
// no balance and new discontinuities are still found; the balance before
// the kept rows is kept as the account's opening balance, from which a row
// dated before all of them starts (sqlstore/balance.go).
// Orders keep their paid_transaction_id (no foreign key): an order outlives
// the transfer that paid it.
func (db *DB) ApplyRetention(ctx context.Context, now time.Time) (recon.RetentionResult, error) {
	var res recon.RetentionResult
	type policy struct {
		company int64
		days    int
	}
	rows, err := db.db.QueryContext(ctx,
		`SELECT c.id, p.data_storage_days FROM `+tenantCompany+` WHERE p.data_storage_days > 0 AND p.status = $1 ORDER BY c.id`, recon.CompanyActive)
	policies, err := collect(rows, err, "read retention policies", func(s scanner) (*policy, error) {
		var p policy
		return &p, s.Scan(&p.company, &p.days)
	})
	if err != nil {
		return res, err
	}
	for _, p := range policies {
		txBefore, deliveriesBefore := recon.RetentionCutoffs(now, p.days)
		n, err := db.deleteOldTransactions(ctx, p.company, txBefore)
		res.Transactions += n
		if err != nil {
			return res, err
		}
		if n > 0 {
			if err := db.dropZeroAmountCounts(ctx, p.company); err != nil {
				return res, err
			}
		}
		// The sync change log keeps as long (docs/api-v2.md, Transactions sync).
		if _, err := db.purgeChanges(ctx, p.company, deliveriesBefore); err != nil {
			return res, err
		}
		n, err = db.deleteOldDeliveries(ctx, p.company, deliveriesBefore)
		res.Deliveries += n
		if err != nil {
			return res, err
		}
		n, err = db.deleteOldHubEvents(ctx, p.company, deliveriesBefore)
		res.HubEvents += n
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// deleteOldTransactions deletes the company's transactions dated before
// before (a wall-clock time), account by account, a chunk at a time.
func (db *DB) deleteOldTransactions(ctx context.Context, companyID int64, before time.Time) (int64, error) {
	accounts, err := db.bankAccounts(ctx, companyID)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, account := range accounts {
		for {
			n, err := db.deleteTransactionChunk(ctx, companyID, account.ID, before)
			total += n
			if err != nil {
				return total, err
			}
			if n < retentionChunk {
				break
			}
		}
	}
	return total, nil
}

// deleteTransactionChunk deletes up to retentionChunk of the account's
// transactions dated before before, and lowers the day and amount counts by
// what it deleted, in one database transaction holding the account's lock.
func (db *DB) deleteTransactionChunk(ctx context.Context, companyID, account int64, before time.Time) (int64, error) {
	var deleted int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM bank_accounts WHERE id = $1 AND company_id = $2`+db.d.forUpdate(),
			account, companyID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // deleted meanwhile, with its transactions
		}
		if err != nil {
			return internal(err, "lock bank account for retention")
		}
		// The chunk, with what the day rows keep of each; then deleted.
		args := []any{companyID, account, recon.WallClock(before), retentionChunk}
		for _, o := range recon.PayingOutcomes { // $5 on
			args = append(args, o)
		}
		rows, err := tx.QueryContext(ctx, `
			SELECT t.id, t.transaction_date, t.amount_in, t.amount_out, `+dupOut+`,
				EXISTS (SELECT 1 FROM match_decisions m WHERE m.transaction_id = t.id AND m.outcome IN (`+db.params(5, len(recon.PayingOutcomes))+`))
			FROM transactions t
			WHERE t.company_id = $1 AND t.bank_account_id = $2 AND t.transaction_date < $3
			LIMIT $4`, args...)
		if err != nil {
			return internal(err, "delete old transactions")
		}
		type lost struct {
			daySums
			matched, matchedN int64
		}
		perDay := map[dayKey]lost{}
		perAmount := map[amountKey]int64{}
		var ids []any
		for rows.Next() {
			var id, in, out int64
			var date anyTime
			var paid, dup bool
			if err := rows.Scan(&id, &date, &in, &out, &dup, &paid); err != nil {
				rows.Close()
				return internal(err, "delete old transactions")
			}
			k := dayKey{account, dayNumber(date.t)}
			l := perDay[k]
			l.n++
			perAmount[amountKey{account, in, out}]--
			ids = append(ids, id)
			if dup { // counted as a row only (addDayCounts)
				perDay[k] = l
				continue
			}
			l.in = recon.SaturatingAdd(l.in, in)
			l.out = recon.SaturatingAdd(l.out, out)
			if in > 0 {
				l.inN++
			}
			if out > 0 {
				l.outN++
			}
			if paid {
				l.matched = recon.SaturatingAdd(l.matched, in)
				l.matchedN++
			}
			perDay[k] = l
		}
		if err := rows.Close(); err != nil {
			return internal(err, "delete old transactions")
		}
		if len(ids) == 0 {
			return nil
		}
		// The balance before the rows kept is the last deleted row's: a row
		// that arrives dated before every row kept starts from it
		// (docs/api.md, Balances).
		// It is known when the first bank balance came before it.
		if _, err := tx.ExecContext(ctx, `UPDATE bank_accounts SET
				opening_known = (opening_known OR (known_from_date IS NOT NULL AND known_from_date < $2)),
				opening_balance = (SELECT accumulated FROM transactions WHERE bank_account_id = $1 AND transaction_date < $2
					ORDER BY transaction_date DESC, id DESC LIMIT 1)
			WHERE id = $1`, account, recon.WallClock(before)); err != nil {
			return internal(err, "keep the opening balance")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM transactions WHERE id IN (`+db.params(1, len(ids))+`)`, ids...); err != nil {
			return internal(err, "delete old transactions")
		}
		deleted = int64(len(ids))
		if err := db.addAmountCounts(ctx, tx, companyID, perAmount); err != nil {
			return err
		}
		days := sortedDays(perDay) // the order ingestion locks them in
		for _, k := range days {
			l := perDay[k]
			if _, err := tx.ExecContext(ctx, `
				UPDATE transaction_day_counts SET n = n - $1, in_sum = `+saturatingSub("in_sum", "$2")+`,
					out_sum = `+saturatingSub("out_sum", "$3")+`, in_n = in_n - $4, out_n = out_n - $5,
					matched_sum = `+saturatingSub("matched_sum", "$6")+`, matched_n = matched_n - $7
				WHERE company_id = $8 AND bank_account_id = $9 AND day = $10`,
				l.n, l.in, l.out, l.inN, l.outN, l.matched, l.matchedN, companyID, account, k.day); err != nil {
				return internal(err, "count transactions per day")
			}
		}
		if _, err := tx.ExecContext(ctx, `
			DELETE FROM transaction_day_counts
			WHERE company_id = $1 AND bank_account_id = $2 AND day >= $3 AND day <= $4 AND n <= 0`,
			companyID, account, days[0].day, days[len(days)-1].day); err != nil {
			return internal(err, "count transactions per day")
		}
		var removed changeSet
		for _, id := range ids {
			removed.add(recon.ChangeRemoved, id.(int64))
		}
		return db.stampChanges(ctx, tx, companyID, removed, db.now()) // last: see sqlstore/sync.go
	})
	if err != nil {
		return 0, err
	}
	return deleted, nil
}

// dropZeroAmountCounts deletes the company's amount counts that retention
// brought to zero, once a pass rather than per chunk: a row at zero counts
// nothing meanwhile. It needs no account lock: on PostgreSQL the DELETE
// rechecks n on a row an ingestion raised meanwhile and keeps it.
func (db *DB) dropZeroAmountCounts(ctx context.Context, companyID int64) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM transaction_amount_counts WHERE company_id = $1 AND n <= 0`, companyID); err != nil {
			return internal(err, "count transactions per amount")
		}
		return nil
	})
}

// deleteOldDeliveries deletes the company's finished (delivered or dead)
// deliveries created, and delivered, before before, with their attempts
// (ON DELETE CASCADE), a chunk a transaction. The status is checked again on
// the row being deleted, not only in the subquery: PostgreSQL rechecks only
// the outer condition on a row changed meanwhile, and a delivery replayed
// meanwhile is pending and must be kept.
func (db *DB) deleteOldDeliveries(ctx context.Context, companyID int64, before time.Time) (int64, error) {
	return db.deleteInChunks(ctx, "delete old deliveries", `
		DELETE FROM deliveries WHERE id IN (
			SELECT id FROM deliveries
			WHERE company_id = $1 AND created_at < $2 AND status <> $3
				AND (delivered_at IS NULL OR delivered_at < $2)
			LIMIT $4)
		AND status <> $3`,
		companyID, storedTime(before), recon.DeliveryPending, retentionChunk)
}

// deleteOldHubEvents deletes the lines of the company's link-token timelines
// (hub_events) written before before, a chunk a transaction: the timeline
// is a log like the deliveries', kept as long.
func (db *DB) deleteOldHubEvents(ctx context.Context, companyID int64, before time.Time) (int64, error) {
	return db.deleteInChunks(ctx, "delete old hub events", `
		DELETE FROM hub_events WHERE id IN (
			SELECT id FROM hub_events WHERE company_id = $1 AND at < $2 LIMIT $3)`,
		companyID, storedTime(before), retentionChunk)
}

// deleteInChunks runs a DELETE of at most retentionChunk rows, each in its
// own transaction (on SQLite it queues behind this process's other
// writers), until one deletes fewer, and returns how many went.
func (db *DB) deleteInChunks(ctx context.Context, what, stmt string, args ...any) (int64, error) {
	var total int64
	for {
		var n int64
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, stmt, args...)
			if err == nil {
				n, err = res.RowsAffected()
			}
			if err != nil {
				return internal(err, what)
			}
			return nil
		})
		total += n
		if err != nil || n < retentionChunk {
			return total, err
		}
	}
}
