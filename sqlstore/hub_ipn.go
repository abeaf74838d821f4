package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"recon"
)

// SetHubIPN implements recon.HubStore: the target of kind recon.DeliveryHubIPN.
func (db *DB) SetHubIPN(ctx context.Context, tenant recon.TenantID, t *recon.Target) error {
	companyID := tenant.ID()
	return db.setTarget(ctx, companyID, recon.DeliveryHubIPN, t)
}

// notifyLinkedBalances enqueues, within ingestion's transaction, the
// balance-change notification of each new row on a linked account (as
// lockAccounts read them), when notifyAt says so. A batch on no linked
// account costs nothing more. It returns how many it enqueued.
func (db *DB) notifyLinkedBalances(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow, ids map[accountKey]int64, accounts map[int64]*accountState, now time.Time) (int, error) {
	if !slices.ContainsFunc(rows, func(r insertRow) bool { return accounts[r.BankAccountID].linked != nil }) {
		return 0, nil
	}
	due, ok, err := notifyAt(ctx, tx, companyID, recon.DeliveryHubIPN, now, nil)
	if err != nil || !ok {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		a := accounts[r.BankAccountID].linked
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
