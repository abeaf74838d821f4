package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"recon"
)

// SetHubIPN implements recon.HubStore: the target of kind recon.DeliveryHubIPN.
func (db *DB) SetHubIPN(ctx context.Context, companyID int64, t *recon.Target) error {
	return db.setTarget(ctx, companyID, recon.DeliveryHubIPN, t, "{}")
}

// notifyLinkedBalances enqueues, within ingestion's transaction, the
// balance-change notification of each new row on a linked account, when
// notifyAt says so (an active hub IPN target, or test mode: one indexed read
// per batch otherwise). It returns how many it enqueued.
func (db *DB) notifyLinkedBalances(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow, ids map[accountKey]int64) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	now := db.now()
	due, ok, err := notifyAt(ctx, tx, companyID, recon.DeliveryHubIPN, now, nil)
	if err != nil || !ok {
		return 0, err
	}
	type linked struct{ brand, number, xid string }
	accounts := map[int64]*linked{}
	for _, r := range rows {
		if _, seen := accounts[r.BankAccountID]; seen {
			continue
		}
		var a linked
		err := tx.QueryRowContext(ctx, `SELECT bank_name, account_number, xid FROM bank_accounts
			WHERE company_id = $1 AND id = $2 AND xid IS NOT NULL AND link_state = $3`, companyID, r.BankAccountID, recon.AccountLinked).
			Scan(&a.brand, &a.number, &a.xid)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			accounts[r.BankAccountID] = nil
		case err != nil:
			return 0, internal(err, "read linked account")
		default:
			accounts[r.BankAccountID] = &a
		}
	}
	n := 0
	for _, r := range rows {
		a := accounts[r.BankAccountID]
		if a == nil {
			continue
		}
		t := &recon.Transaction{ID: ids[r.key()], AccountNumber: a.number, TransactionDate: recon.WallClock(r.TransactionDate),
			AmountIn: r.AmountIn, AmountOut: r.AmountOut, Accumulated: r.accumulated, Content: r.Content,
			ReferenceNumber: r.ReferenceNumber, Code: r.code, SubAccount: r.SubAccount}
		d, err := recon.BalanceChangeDelivery(companyID, t, a.brand, a.xid)
		if err != nil {
			return 0, internal(err, "make balance-change notification")
		}
		if err := db.enqueue(ctx, tx, d, now, due); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}
