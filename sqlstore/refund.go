package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"recon"
)

var _ recon.RefundStore = (*DB)(nil)

// Refunds (docs/api-v2.md, Refunds; migration 00027). Money never goes
// wrong under concurrency because every writer of what a refund draws on
// takes the same locks in the same order, the order ingestion takes them:
// the bank accounts of the transactions (in id order), then the order,
// then the refund rows. Ingestion holds an account's lock while it adds a
// payment to an order (match) or settles a refund (settleRefunds); a new
// refund holds its transactions' accounts and its order while it reads
// what they have left and writes what it takes; a change of a refund holds
// its account and order before its row. So two refunds racing for the last
// VND, a refund racing a late payment, and a cancel racing the refund's
// outgoing transfer are serialized, and each sees what the other wrote.

const refundColumns = `r.id, r.xid, r.company_id, r.reference, r.order_id, r.transaction_id, r.bank_account_id, r.amount,
	r.reason, r.receiver_bin, r.receiver_account, r.receiver_name, r.status, r.failure_reason,
	r.requested_by_user_id, r.requested_by_email, r.requested_by_client, r.decided_by_user_id, r.decided_by_email,
	r.payout, r.settled_transaction_id, r.created_at, r.updated_at,
	COALESCE((SELECT o.public_id FROM orders o WHERE o.id = r.order_id), '')`

// storedRefund is a refund with its row id, which allocations reference.
type storedRefund struct {
	rowID int64
	*recon.Refund
}

func scanRefund(s scanner) (*storedRefund, error) {
	r := &recon.Refund{}
	var rowID int64
	var order, tx, reqUser, decUser, settled sql.NullInt64
	if err := s.Scan(&rowID, &r.ID, &r.CompanyID, &r.Reference, &order, &tx, &r.BankAccountID, &r.Amount,
		&r.Reason, &r.Receiver.BankBIN, &r.Receiver.AccountNumber, &r.Receiver.AccountName, &r.Status, &r.FailureReason,
		&reqUser, &r.RequestedBy.Email, &r.RequestedBy.ClientID, &decUser, &r.DecidedBy.Email,
		&r.Payout, &settled, &r.CreatedAt, &r.UpdatedAt, &r.OrderPublicID); err != nil {
		return nil, err
	}
	r.OrderID, r.TransactionID, r.SettledTransactionID = order.Int64, tx.Int64, settled.Int64
	r.RequestedBy.UserID, r.DecidedBy.UserID = reqUser.Int64, decUser.Int64
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return &storedRefund{rowID, r}, nil
}

// holdingStatuses is recon.HoldingRefundStatuses as SQL arguments.
func holdingStatuses() []any {
	out := make([]any, len(recon.HoldingRefundStatuses))
	for i, s := range recon.HoldingRefundStatuses {
		out[i] = s
	}
	return out
}

// refundBy reads one refund of the company (with lock, when not "") and its
// allocations.
func (db *DB) refundBy(ctx context.Context, q querier, companyID int64, xid, lock string) (*storedRefund, error) {
	r, err := scanRefund(q.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds r WHERE r.company_id = $1 AND r.xid = $2`+lock, companyID, xid))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "refund %s not found", xid)
	}
	if err != nil {
		return nil, internal(err, "read refund")
	}
	if err := db.loadAllocations(ctx, q, companyID, []*storedRefund{r}); err != nil {
		return nil, err
	}
	return r, nil
}

// loadAllocations fills the refunds' allocations, newest transaction first
// (the order they were drawn in: their transaction's date, then id).
func (db *DB) loadAllocations(ctx context.Context, q querier, companyID int64, refunds []*storedRefund) error {
	if len(refunds) == 0 {
		return nil
	}
	byRow := map[int64]*storedRefund{}
	args := []any{companyID}
	for _, r := range refunds {
		byRow[r.rowID] = r
		args = append(args, r.rowID)
	}
	rows, err := q.QueryContext(ctx, `SELECT a.refund_id, a.transaction_id, a.amount FROM refund_allocations a
		LEFT JOIN transactions t ON t.id = a.transaction_id
		WHERE a.company_id = $1 AND a.refund_id IN (`+db.params(2, len(refunds))+`)
		ORDER BY a.refund_id, t.transaction_date DESC, a.transaction_id DESC`, args...)
	if err != nil {
		return internal(err, "read refund allocations")
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var a recon.RefundAllocation
		if err := rows.Scan(&id, &a.TransactionID, &a.Amount); err != nil {
			return internal(err, "read refund allocations")
		}
		byRow[id].Allocations = append(byRow[id].Allocations, a)
	}
	return rows.Err()
}

// refundThreshold reads the company's threshold through the tenant (a test
// tenant reads its company's): 0 when none.
func refundThreshold(ctx context.Context, q querier, companyID int64) (int64, error) {
	var v sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT p.refund_approval_threshold FROM `+tenantCompany+` WHERE c.id = $1`, companyID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound(err, "company %d not found", companyID)
	}
	if err != nil {
		return 0, internal(err, "read refund approval threshold")
	}
	return v.Int64, nil
}

// RefundApprovalThreshold implements recon.RefundStore.
func (db *DB) RefundApprovalThreshold(ctx context.Context, tenant recon.TenantID) (int64, error) {
	return refundThreshold(ctx, db.db, tenant.ID())
}

// SetRefundApprovalThreshold implements recon.RefundStore: the company's
// row holds it, for both of its tenants.
func (db *DB) SetRefundApprovalThreshold(ctx context.Context, tenant recon.TenantID, vnd int64) error {
	if vnd < 0 || vnd > recon.MaxAmount {
		return recon.FieldError("refund_approval_threshold", "refund_approval_threshold must be a whole number of VND from 1 to %d, or 0 for none", int64(recon.MaxAmount))
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE companies SET refund_approval_threshold = $1
			WHERE id = (SELECT COALESCE(test_of, id) FROM companies WHERE id = $2)`, idArg(vnd), tenant.ID())
		if err != nil {
			return internal(err, "set refund approval threshold")
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return notFound(err, "company %d not found", tenant.ID())
		}
		return nil
	})
}

// lockAccountIDs locks the company's bank accounts, in id order.
func (db *DB) lockAccountIDs(ctx context.Context, tx *sql.Tx, companyID int64, ids []int64) error {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `SELECT id FROM bank_accounts WHERE id = $1 AND company_id = $2`+db.d.forUpdate(), id, companyID); err != nil {
			return internal(err, "lock bank account")
		}
	}
	return nil
}

// refundSources reads the transactions (ids) as refunds see them: amount,
// account, date and what refunds holding their amount draw on each.
func (db *DB) refundSources(ctx context.Context, q querier, companyID int64, ids []int64, orderID int64) ([]recon.RefundSource, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{companyID}
	for _, id := range ids {
		args = append(args, id)
	}
	in := db.params(2, len(ids))
	rows, err := q.QueryContext(ctx, `SELECT id, bank_account_id, transaction_date, amount_in FROM transactions
		WHERE company_id = $1 AND id IN (`+in+`)`, args...)
	sources, err := collect(rows, err, "read refund sources", func(s scanner) (*recon.RefundSource, error) {
		src := recon.RefundSource{OrderID: orderID}
		if err := s.Scan(&src.TransactionID, &src.BankAccountID, &src.TransactionDate, &src.AmountIn); err != nil {
			return nil, err
		}
		src.TransactionDate = recon.WallClock(src.TransactionDate.UTC())
		return &src, nil
	})
	if err != nil {
		return nil, err
	}
	held := map[int64]int64{}
	rows, err = q.QueryContext(ctx, `SELECT a.transaction_id, SUM(a.amount) FROM refund_allocations a JOIN refunds r ON r.id = a.refund_id
		WHERE a.company_id = $1 AND a.transaction_id IN (`+in+`) AND r.status IN (`+db.params(len(args)+1, len(recon.HoldingRefundStatuses))+`)
		GROUP BY a.transaction_id`, append(args, holdingStatuses()...)...)
	if err != nil {
		return nil, internal(err, "read refunded amounts")
	}
	defer rows.Close()
	for rows.Next() {
		var id, sum int64
		if err := rows.Scan(&id, &sum); err != nil {
			return nil, internal(err, "read refunded amounts")
		}
		held[id] = sum
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "read refunded amounts")
	}
	out := make([]recon.RefundSource, len(sources))
	for i, s := range sources {
		s.Refunded = held[s.TransactionID]
		out[i] = *s
	}
	return out, nil
}

// payingOrder returns the order a transaction paid (a paying decision), 0 none.
func payingOrder(ctx context.Context, q querier, companyID, transactionID int64) (int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT order_id, outcome FROM match_decisions WHERE company_id = $1 AND transaction_id = $2 AND order_id IS NOT NULL`,
		companyID, transactionID)
	if err != nil {
		return 0, internal(err, "read the paid order")
	}
	defer rows.Close()
	var paid int64
	for rows.Next() {
		var order int64
		var outcome string
		if err := rows.Scan(&order, &outcome); err != nil {
			return 0, internal(err, "read the paid order")
		}
		if recon.PaysOrder(outcome) {
			paid = order
		}
	}
	return paid, rows.Err()
}

// payingTransactions returns the ids and accounts of the transactions that
// paid the order.
func (db *DB) payingTransactions(ctx context.Context, q querier, companyID, orderID int64) (ids, accounts []int64, err error) {
	args := []any{companyID, orderID}
	for _, o := range recon.PayingOutcomes {
		args = append(args, o)
	}
	rows, err := q.QueryContext(ctx, `SELECT t.id, t.bank_account_id FROM match_decisions d JOIN transactions t ON t.id = d.transaction_id
		WHERE d.company_id = $1 AND d.order_id = $2 AND d.outcome IN (`+db.params(3, len(recon.PayingOutcomes))+`) ORDER BY t.id`, args...)
	if err != nil {
		return nil, nil, internal(err, "read the order's payments")
	}
	defer rows.Close()
	for rows.Next() {
		var id, account int64
		if err := rows.Scan(&id, &account); err != nil {
			return nil, nil, internal(err, "read the order's payments")
		}
		ids, accounts = append(ids, id), append(accounts, account)
	}
	return ids, accounts, rows.Err()
}

// lockRefundPlan reads, under the locks of the package comment, what a new
// refund of in may draw on.
func (db *DB) lockRefundPlan(ctx context.Context, tx *sql.Tx, companyID int64, orderID, transactionID int64) (*recon.RefundPlan, error) {
	p := &recon.RefundPlan{}
	var err error
	if transactionID != 0 {
		var account int64
		err := tx.QueryRowContext(ctx, `SELECT bank_account_id FROM transactions WHERE company_id = $1 AND id = $2`, companyID, transactionID).Scan(&account)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound(err, "transaction %d not found", transactionID)
		}
		if err != nil {
			return nil, internal(err, "read transaction")
		}
		if err := db.lockAccountIDs(ctx, tx, companyID, []int64{account}); err != nil {
			return nil, err
		}
		if orderID, err = payingOrder(ctx, tx, companyID, transactionID); err != nil {
			return nil, err
		}
		if orderID != 0 {
			if p.Order, err = orderBy(ctx, tx, `company_id = $1 AND id = $2`, db.d.forUpdate(), companyID, orderID); err != nil {
				return nil, err
			}
		}
		p.Sources, err = db.refundSources(ctx, tx, companyID, []int64{transactionID}, orderID)
		return p, err
	}
	if _, err := orderBy(ctx, tx, `company_id = $1 AND id = $2`, "", companyID, orderID); err != nil {
		if recon.ErrorCode(err) == recon.ENOTFOUND {
			return nil, notFound(err, "order %d not found", orderID)
		}
		return nil, err
	}
	_, accounts, err := db.payingTransactions(ctx, tx, companyID, orderID)
	if err != nil {
		return nil, err
	}
	if err := db.lockAccountIDs(ctx, tx, companyID, accounts); err != nil {
		return nil, err
	}
	if p.Order, err = orderBy(ctx, tx, `company_id = $1 AND id = $2`, db.d.forUpdate(), companyID, orderID); err != nil {
		return nil, err
	}
	// Read again under the order's lock: a payment that came meanwhile is
	// in (its account's lock is not needed: every refund of the order's
	// transactions takes the order's lock before reading them).
	ids, _, err := db.payingTransactions(ctx, tx, companyID, orderID)
	if err != nil {
		return nil, err
	}
	p.Sources, err = db.refundSources(ctx, tx, companyID, ids, orderID)
	return p, err
}

// CreateRefund implements recon.RefundStore.
func (db *DB) CreateRefund(ctx context.Context, tenant recon.TenantID, in *recon.RefundRequest, now time.Time) (*recon.Refund, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	var r *recon.Refund
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = db.createRefund(ctx, tx, tenant.ID(), in, storedTime(now))
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// createRefund is CreateRefund within tx (also a resolution's, ResolveException).
func (db *DB) createRefund(ctx context.Context, tx *sql.Tx, companyID int64, in *recon.RefundRequest, now time.Time) (*recon.Refund, error) {
	p, err := db.lockRefundPlan(ctx, tx, companyID, in.OrderID, in.TransactionID)
	if err != nil {
		return nil, err
	}
	if p.Threshold, err = refundThreshold(ctx, tx, companyID); err != nil {
		return nil, err
	}
	r, err := recon.NewRefund(in, p)
	if err != nil {
		return nil, err
	}
	r.CompanyID, r.CreatedAt, r.UpdatedAt = companyID, now, now
	if p.Order != nil {
		r.OrderPublicID = p.Order.PublicID
	}
	r.ID = recon.NewXIDFrom(db.rand)
	// A reference is drawn until it is new to the tenant (34^10 of them: a
	// second draw is as good as never needed; the unique key is the last guard).
	for tries := 0; ; tries++ {
		r.Reference = recon.NewRefundReference(db.rand)
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM refunds WHERE company_id = $1 AND reference = $2)`, companyID, r.Reference).Scan(&taken); err != nil {
			return nil, internal(err, "check refund reference")
		}
		if !taken {
			break
		}
		if tries == 10 {
			return nil, internal(errors.New("no free reference"), "draw refund reference")
		}
	}
	var rowID int64
	err = tx.QueryRowContext(ctx, `
		INSERT INTO refunds (xid, company_id, reference, order_id, transaction_id, bank_account_id, amount, reason,
			receiver_bin, receiver_account, receiver_name, status, requested_by_user_id, requested_by_email, requested_by_client,
			created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16) RETURNING id`,
		r.ID, companyID, r.Reference, idArg(r.OrderID), idArg(r.TransactionID), r.BankAccountID, r.Amount, r.Reason,
		r.Receiver.BankBIN, r.Receiver.AccountNumber, r.Receiver.AccountName, r.Status,
		idArg(r.RequestedBy.UserID), r.RequestedBy.Email, r.RequestedBy.ClientID, now).Scan(&rowID)
	if db.d.violation(err) == uniqueViolation {
		return nil, conflict(err, "a refund with reference %s was stored concurrently; retry", r.Reference)
	}
	if err != nil {
		return nil, internal(err, "insert refund")
	}
	for _, a := range r.Allocations {
		if _, err := tx.ExecContext(ctx, `INSERT INTO refund_allocations (refund_id, company_id, transaction_id, amount) VALUES ($1, $2, $3, $4)`,
			rowID, companyID, a.TransactionID, a.Amount); err != nil {
			return nil, internal(err, "insert refund allocation")
		}
	}
	if r.OrderID != 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE orders SET refunded_amount = refunded_amount + $1 WHERE id = $2 AND company_id = $3`,
			r.Amount, r.OrderID, companyID); err != nil {
			return nil, internal(err, "hold the order's refunded amount")
		}
	}
	return r, nil
}

// Refund implements recon.RefundStore.
func (db *DB) Refund(ctx context.Context, tenant recon.TenantID, id string) (*recon.Refund, error) {
	if !recon.ValidXID(id) {
		return nil, recon.Errorf(recon.ENOTFOUND, "refund %s not found", id)
	}
	r, err := db.refundBy(ctx, db.db, tenant.ID(), strings.ToLower(id), "")
	if err != nil {
		return nil, err
	}
	return r.Refund, nil
}

// Refunds implements recon.RefundStore.
// A listing's (recon.Listing) may read from the standby (WithStandby).
func (db *DB) Refunds(ctx context.Context, tenant recon.TenantID, f recon.RefundFilter) ([]*recon.Refund, int64, error) {
	return listedPage(ctx, db, func(db *DB) ([]*recon.Refund, int64, error) { return db.refunds(ctx, tenant, f) })
}

// refunds is Refunds on one database: the primary or the standby.
func (db *DB) refunds(ctx context.Context, tenant recon.TenantID, f recon.RefundFilter) ([]*recon.Refund, int64, error) {
	companyID := tenant.ID()
	loc := f.Location
	if loc == nil {
		loc = time.UTC
	}
	if f.Page <= 0 {
		f.Page = 1
	}
	if f.PerPage <= 0 {
		f.PerPage = 20
	}
	where := []string{"r.company_id = $1"}
	args := queryArgs{companyID}
	arg := args.add
	if f.OrderID != 0 {
		where = append(where, "r.order_id = "+arg(f.OrderID))
	}
	if f.TransactionID != 0 {
		c, t := arg(companyID), arg(f.TransactionID)
		where = append(where, "(r.transaction_id = "+t+" OR r.id IN (SELECT refund_id FROM refund_allocations WHERE company_id = "+c+" AND transaction_id = "+t+"))")
	}
	if f.Status != "" {
		if !slices.Contains(recon.RefundStatuses, f.Status) {
			return nil, 0, recon.FieldError("status", "status must be one of %s", strings.Join(recon.RefundStatuses, ", "))
		}
		where = append(where, "r.status = "+arg(f.Status))
	}
	list, total, err := createdPage(ctx, db, "refunds", "r", refundColumns, where, &args, f.From, f.To, loc, f.Page, f.PerPage, scanRefund)
	if err != nil {
		return nil, 0, err
	}
	if err := db.loadAllocations(ctx, db.db, companyID, list); err != nil {
		return nil, 0, err
	}
	out := make([]*recon.Refund, len(list))
	for i, r := range list {
		out[i] = r.Refund
	}
	return out, total, nil
}

// Refundable implements recon.RefundStore (no locks: a reading for show).
func (db *DB) Refundable(ctx context.Context, tenant recon.TenantID, orderID, transactionID int64) (int64, error) {
	companyID := tenant.ID()
	p := &recon.RefundPlan{}
	var ids []int64
	var err error
	if transactionID != 0 {
		var exists bool
		if err := db.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM transactions WHERE company_id = $1 AND id = $2)`, companyID, transactionID).Scan(&exists); err != nil {
			return 0, internal(err, "read transaction")
		}
		if !exists {
			return 0, recon.Errorf(recon.ENOTFOUND, "transaction %d not found", transactionID)
		}
		ids = []int64{transactionID}
		if orderID, err = payingOrder(ctx, db.db, companyID, transactionID); err != nil {
			return 0, err
		}
	} else if ids, _, err = db.payingTransactions(ctx, db.db, companyID, orderID); err != nil {
		return 0, err
	}
	if orderID != 0 {
		if p.Order, err = orderBy(ctx, db.db, `company_id = $1 AND id = $2`, "", companyID, orderID); err != nil {
			return 0, err
		}
	}
	if p.Sources, err = db.refundSources(ctx, db.db, companyID, ids, orderID); err != nil {
		return 0, err
	}
	return p.Refundable(), nil
}

// ChangeRefund implements recon.RefundStore. A settlement is ingestion's
// (settleRefunds): it needs the outgoing transfer. now is in the business
// time zone of the caller, which a REFUND_FAILED notification is dated in.
func (db *DB) ChangeRefund(ctx context.Context, tenant recon.TenantID, id string, ch recon.RefundChange, now time.Time) (*recon.Refund, error) {
	companyID := tenant.ID()
	if ch.Event == recon.RefundSettle {
		return nil, recon.Errorf(recon.EINVALID, "a refund settles when its outgoing transfer is ingested")
	}
	if !recon.ValidXID(id) {
		return nil, recon.Errorf(recon.ENOTFOUND, "refund %s not found", id)
	}
	id = strings.ToLower(id)
	date := now // in the caller's business time zone: REFUND_FAILED's date
	now = storedTime(now)
	var out *recon.Refund
	enqueued := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		seen, err := db.refundBy(ctx, tx, companyID, id, "")
		if err != nil {
			return err
		}
		if err := db.lockAccountIDs(ctx, tx, companyID, []int64{seen.BankAccountID}); err != nil {
			return err
		}
		var o *recon.Order
		if seen.OrderID != 0 {
			if o, err = orderBy(ctx, tx, `company_id = $1 AND id = $2`, db.d.forUpdate(), companyID, seen.OrderID); err != nil {
				return err
			}
		}
		r, err := db.refundBy(ctx, tx, companyID, id, db.d.forUpdate())
		if err != nil {
			return err
		}
		n, err := recon.NextRefund(r.Refund, ch, now)
		if err != nil {
			return err
		}
		if err := writeRefund(ctx, tx, r.rowID, n); err != nil {
			return err
		}
		if recon.RefundHolds(r.Status) && !recon.RefundHolds(n.Status) && n.OrderID != 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE orders SET refunded_amount = refunded_amount - $1 WHERE id = $2 AND company_id = $3`,
				n.Amount, n.OrderID, companyID); err != nil {
				return internal(err, "free the order's refunded amount")
			}
			o.RefundedAmount -= n.Amount
		}
		if n.Status == recon.RefundFailed {
			if enqueued, err = db.notifyRefund(ctx, tx, n, o, recon.IPNRefundFailed, date, now); err != nil {
				return err
			}
		}
		out = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	db.enqueued(enqueued)
	return out, nil
}

// writeRefund writes what a change moves of a refund.
func writeRefund(ctx context.Context, tx *sql.Tx, rowID int64, r *recon.Refund) error {
	_, err := tx.ExecContext(ctx, `UPDATE refunds SET status = $1, failure_reason = $2, decided_by_user_id = $3, decided_by_email = $4,
		payout = $5, settled_transaction_id = $6, updated_at = $7 WHERE id = $8`,
		r.Status, r.FailureReason, idArg(r.DecidedBy.UserID), r.DecidedBy.Email, r.Payout, idArg(r.SettledTransactionID), r.UpdatedAt, rowID)
	if err != nil {
		return internal(err, "update refund")
	}
	return nil
}

// notifyRefund enqueues the refund's IPN of event for a target that
// subscribes to it (notifyAt with recon.IPNWants), dated date
// (recon.RefundIPNDelivery), and reports how many.
func (db *DB) notifyRefund(ctx context.Context, tx *sql.Tx, r *recon.Refund, o *recon.Order, event string, date, now time.Time) (int, error) {
	due, ok, err := notifyAt(ctx, tx, r.CompanyID, recon.DeliveryIPN, now, wantsIPN(event))
	if err != nil || !ok {
		return 0, err
	}
	d, err := recon.RefundIPNDelivery(r, o, event, date, now)
	if err != nil {
		return 0, internal(err, "build refund IPN")
	}
	if err := db.enqueue(ctx, tx, d, now, due); err != nil {
		return 0, err
	}
	return 1, nil
}

// settleRefunds is settlement as reconciliation (docs/api-v2.md, How a
// refund settles), inside the ingestion's database transaction, so that
// every way in settles refunds the same way: each new outgoing row whose
// memo carries a refund's reference (recon.RefundReferences) is decided by
// recon.SettleRefund, in batch order: it settles a pending or processing
// refund of its amount sent from the refund's account (succeeded, the
// transfer recorded, a REFUND_SUCCEEDED IPN for a subscribing target), once:
// a second transfer for a settled refund (another bank reference; the same
// one is a duplicate ingestion never stores twice), or one for a refund
// cancelled, rejected, failed or waiting for approval, or of another amount
// or account, settles nothing and is queued as a refund_transfer exception
// for a person. The refunds are locked after the accounts (held) and the
// orders (match's), the order every refund writer takes.
func (db *DB) settleRefunds(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow, ids map[accountKey]int64, now time.Time) (int, error) {
	cands := make([][]string, len(rows))
	var refs []any
	for i := range rows {
		r := &rows[i]
		if r.AmountOut <= 0 {
			continue
		}
		cands[i] = recon.RefundReferences(r.Content)
		for _, c := range cands[i] {
			if !slices.Contains(refs, any(c)) {
				refs = append(refs, c)
			}
		}
	}
	if len(refs) == 0 {
		return 0, nil
	}
	found := map[string]*storedRefund{}
	for start := 0; start < len(refs); start += insertChunk {
		chunk := refs[start:min(start+insertChunk, len(refs))]
		q, err := tx.QueryContext(ctx, `SELECT `+refundColumns+` FROM refunds r WHERE r.company_id = $1 AND r.reference IN (`+
			db.params(2, len(chunk))+`) ORDER BY r.id`+db.d.forUpdate(), append([]any{companyID}, chunk...)...)
		list, err := collect(q, err, "find refunds", scanRefund)
		if err != nil {
			return 0, err
		}
		for _, r := range list {
			found[r.Reference] = r
		}
	}
	if len(found) == 0 {
		return 0, nil
	}
	enqueued := 0
	for i := range rows {
		row := &rows[i]
		var r *storedRefund
		for _, c := range cands[i] {
			if r = found[c]; r != nil {
				break
			}
		}
		if r == nil {
			continue
		}
		txID := ids[row.key()]
		outcome, reason := recon.SettleRefund(r.Refund, txID, row.BankAccountID, row.AmountOut)
		switch outcome {
		case recon.RefundSettled:
			n, err := recon.NextRefund(r.Refund, recon.RefundChange{Event: recon.RefundSettle, SettledBy: txID}, now)
			if err != nil {
				return 0, err
			}
			if err := writeRefund(ctx, tx, r.rowID, n); err != nil {
				return 0, err
			}
			r.Refund = n // a later row of the batch sees it settled
			var o *recon.Order
			if n.OrderID != 0 {
				if o, err = orderBy(ctx, tx, `company_id = $1 AND id = $2`, "", companyID, n.OrderID); err != nil {
					return 0, err
				}
			}
			k, err := db.notifyRefund(ctx, tx, n, o, recon.IPNRefundSucceeded, recon.WallClock(row.TransactionDate), now)
			if err != nil {
				return 0, err
			}
			enqueued += k
		case recon.RefundTransferException:
			if _, err := tx.ExecContext(ctx, `INSERT INTO exceptions (transaction_id, company_id, bank_account_id, transaction_date, kind, order_id, reason)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				txID, companyID, row.BankAccountID, recon.WallClock(row.TransactionDate), recon.ExceptionRefundTransfer, idArg(r.OrderID), reason); err != nil {
				return 0, internal(err, "queue refund exception")
			}
		}
	}
	return enqueued, nil
}

// PayoutsDue implements recon.RefundStore.
func (db *DB) PayoutsDue(ctx context.Context, payout string, before time.Time, limit int) ([]*recon.Refund, []recon.TenantID, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+refundColumns+`, c.test_of IS NULL FROM refunds r JOIN companies c ON c.id = r.company_id
		WHERE r.payout = $1 AND r.status = $2 AND r.updated_at <= $3 ORDER BY r.updated_at, r.id LIMIT $4`,
		payout, recon.RefundProcessing, storedTime(before), limit)
	if err != nil {
		return nil, nil, internal(err, "list due payouts")
	}
	defer rows.Close()
	var out []*recon.Refund
	var tenants []recon.TenantID
	for rows.Next() {
		var live bool
		r, err := scanRefund(scanFunc(func(dest ...any) error { return rows.Scan(append(dest, &live)...) }))
		if err != nil {
			return nil, nil, internal(err, "list due payouts")
		}
		out = append(out, r.Refund)
		tenants = append(tenants, recon.TenantFromRow(r.CompanyID, live))
	}
	return out, tenants, rows.Err()
}

// scanFunc is a scanner made of a function.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }
