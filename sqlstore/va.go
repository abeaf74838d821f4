package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"recon"
)

// The virtual accounts of API v2 (docs/api-v2.md, Virtual accounts;
// migration 00026). Every writer of an account locks its order first, as
// ingestion does (match: bank accounts, then orders, then their accounts
// are read), so an order's accounts do not change under a matching batch.

const vaColumns = `va.id, va.company_id, va.order_id, o.public_id, va.number, va.kind, va.amount_mode, va.amount, va.status,
	va.holder_name, va.bank_account_id, va.expires_at, va.created_at, va.updated_at`

const vaFrom = ` FROM virtual_accounts va JOIN orders o ON o.id = va.order_id`

func scanVA(s scanner) (*recon.VirtualAccount, error) {
	var va recon.VirtualAccount
	var amount sql.NullInt64
	if err := s.Scan(&va.ID, &va.CompanyID, &va.OrderID, &va.OrderPublicID, &va.Number, &va.Kind, &va.AmountMode, &amount, &va.Status,
		&va.HolderName, &va.BankAccountID, &va.ExpiresAt, &va.CreatedAt, &va.UpdatedAt); err != nil {
		return nil, err
	}
	va.Amount = amount.Int64
	va.ExpiresAt, va.CreatedAt, va.UpdatedAt = va.ExpiresAt.UTC(), va.CreatedAt.UTC(), va.UpdatedAt.UTC()
	return &va, nil
}

// insertVA stores va; a number the tenant holds is ECONFLICT naming it.
func insertVA(ctx context.Context, q querier, d dialect, va *recon.VirtualAccount) error {
	va.ExpiresAt, va.CreatedAt, va.UpdatedAt = storedTime(va.ExpiresAt), storedTime(va.CreatedAt), storedTime(va.UpdatedAt)
	amount := sql.NullInt64{Int64: va.Amount, Valid: va.AmountMode != recon.VAOpen}
	err := q.QueryRowContext(ctx, `
		INSERT INTO virtual_accounts (company_id, order_id, number, kind, amount_mode, amount, status, holder_name,
			bank_account_id, expires_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
		va.CompanyID, va.OrderID, va.Number, va.Kind, va.AmountMode, amount, va.Status, va.HolderName,
		va.BankAccountID, va.ExpiresAt, va.CreatedAt, va.UpdatedAt).Scan(&va.ID)
	if d.violation(err) == uniqueViolation {
		msg := "virtual account number " + va.Number + " is already used"
		return &recon.Error{Code: recon.ECONFLICT, Message: msg, Fields: map[string][]string{"number": {msg}}, Err: err}
	}
	if err != nil {
		return internal(err, "create virtual account")
	}
	return nil
}

// CreateOrderWithVA implements recon.VAStore. A memo code that is some
// order's payment code is refused like a taken number (recon.MemoVAPrefix).
func (db *DB) CreateOrderWithVA(ctx context.Context, o *recon.Order, va *recon.VirtualAccount) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := takenAsCode(ctx, tx, o.CompanyID, va); err != nil {
			return err
		}
		if err := db.createOrder(ctx, tx, o); err != nil {
			return err
		}
		va.CompanyID, va.OrderID, va.OrderPublicID = o.CompanyID, o.ID, o.PublicID
		return insertVA(ctx, tx, db.d, va)
	})
}

// takenAsCode refuses a memo code that an order of the tenant has as its
// payment code: a transfer carrying it would name two things.
func takenAsCode(ctx context.Context, q querier, companyID int64, va *recon.VirtualAccount) error {
	if va.Kind != recon.VAKindMemo {
		return nil
	}
	var taken bool
	if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM orders WHERE company_id = $1 AND payment_code = $2)`,
		companyID, va.Number).Scan(&taken); err != nil {
		return internal(err, "check memo code")
	}
	if taken {
		msg := "memo code " + va.Number + " is an order's payment code"
		return &recon.Error{Code: recon.ECONFLICT, Message: msg, Fields: map[string][]string{"number": {msg}}}
	}
	return nil
}

// OrderByPublicID implements recon.VAStore.
func (db *DB) OrderByPublicID(ctx context.Context, tenant recon.TenantID, id string) (*recon.Order, error) {
	return orderBy(ctx, db.db, `company_id = $1 AND public_id = $2`, "", tenant.ID(), strings.ToLower(id))
}

// OrderVAs implements recon.VAStore.
func (db *DB) OrderVAs(ctx context.Context, tenant recon.TenantID, orderIDs []int64) (map[int64][]*recon.VirtualAccount, error) {
	out := map[int64][]*recon.VirtualAccount{}
	if len(orderIDs) == 0 {
		return out, nil
	}
	args := []any{tenant.ID()}
	for _, id := range orderIDs {
		args = append(args, id)
	}
	rows, err := db.db.QueryContext(ctx, `SELECT `+vaColumns+vaFrom+` WHERE va.company_id = $1 AND va.order_id IN (`+
		db.params(2, len(orderIDs))+`) ORDER BY va.id`, args...)
	vas, err := collect(rows, err, "list virtual accounts", scanVA)
	if err != nil {
		return nil, err
	}
	for _, va := range vas {
		out[va.OrderID] = append(out[va.OrderID], va)
	}
	return out, nil
}

// AddVA implements recon.VAStore.
func (db *DB) AddVA(ctx context.Context, tenant recon.TenantID, orderID string, plan func(o *recon.Order) (*recon.VirtualAccount, error)) (*recon.VirtualAccount, error) {
	var va *recon.VirtualAccount
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		o, err := orderBy(ctx, tx, `company_id = $1 AND public_id = $2`, db.d.forUpdate(), tenant.ID(), strings.ToLower(orderID))
		if err != nil {
			return err
		}
		if va, err = plan(o); err != nil {
			return err
		}
		va.CompanyID, va.OrderID, va.OrderPublicID = o.CompanyID, o.ID, o.PublicID
		if err := takenAsCode(ctx, tx, o.CompanyID, va); err != nil {
			return err
		}
		return insertVA(ctx, tx, db.d, va)
	})
	if err != nil {
		return nil, err
	}
	return va, nil
}

// CancelVA implements recon.VAStore: under the order's lock, recon.NextVA.
func (db *DB) CancelVA(ctx context.Context, tenant recon.TenantID, orderID, number string, now time.Time) (*recon.VirtualAccount, error) {
	now = storedTime(now)
	var va *recon.VirtualAccount
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		o, err := orderBy(ctx, tx, `company_id = $1 AND public_id = $2`, db.d.forUpdate(), tenant.ID(), strings.ToLower(orderID))
		if err != nil {
			return err
		}
		cur, err := scanVA(tx.QueryRowContext(ctx, `SELECT `+vaColumns+vaFrom+` WHERE va.company_id = $1 AND va.order_id = $2 AND va.number = $3`,
			o.CompanyID, o.ID, number))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(err, "order %s has no virtual account %s", o.PublicID, number)
		}
		if err != nil {
			return internal(err, "read virtual account")
		}
		if va, err = recon.NextVA(cur, recon.VACancel, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE virtual_accounts SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4`,
			va.Status, now, va.ID, recon.VAActive); err != nil {
			return internal(err, "cancel virtual account")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return va, nil
}

// VirtualAccounts implements recon.VAStore.
func (db *DB) VirtualAccounts(ctx context.Context, tenant recon.TenantID, f recon.VAFilter) ([]*recon.VirtualAccount, int64, error) {
	where := []string{"va.company_id = $1"}
	args := queryArgs{tenant.ID()}
	if f.OrderID != 0 {
		where = append(where, "va.order_id = "+args.add(f.OrderID))
	}
	if f.Status != "" {
		where = append(where, "va.status = "+args.add(f.Status))
	}
	cond := strings.Join(where, " AND ")
	var total int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM virtual_accounts va WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, internal(err, "count virtual accounts")
	}
	page, per := max(f.Page, 1), f.PerPage
	if per <= 0 {
		per = 20
	}
	rows, err := db.db.QueryContext(ctx, `SELECT `+vaColumns+vaFrom+` WHERE `+cond+` ORDER BY va.created_at DESC, va.id DESC LIMIT `+
		args.add(per)+` OFFSET `+args.add(int64(page-1)*int64(per)), args...)
	out, err := collect(rows, err, "list virtual accounts", scanVA)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// expiryBatch is how many orders ExpireOrders reads at a time.
const expiryBatch = 100

// ExpireOrders implements recon.VAStore. Accounts past their expiry are
// expired by one conditional UPDATE (no notification: it happens once
// whoever runs it). Each pending order past its expiry is expired in its
// own database transaction: locked, recon.ExpireOrder applied to it as it
// is then, written only while still pending (a conditional UPDATE, so of
// two nodes one expires it and the other finds it done), its active
// accounts expired and, to a target that subscribes to ORDER_EXPIRED
// (recon.IPNWants), notify's delivery enqueued.
func (db *DB) ExpireOrders(ctx context.Context, now time.Time, notify func(*recon.Order) (*recon.Delivery, error)) (int, error) {
	now = storedTime(now)
	if err := db.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE virtual_accounts SET status = $1, updated_at = $2 WHERE status = $3 AND expires_at <= $2`,
			recon.VAExpired, now, recon.VAActive)
		return internalOrNil(err, "expire virtual accounts")
	}); err != nil {
		return 0, err
	}
	expired, enqueued := 0, 0
	defer func() { db.enqueued(enqueued) }()
	for {
		rows, err := db.db.QueryContext(ctx, `SELECT id FROM orders WHERE status = $1 AND paid_amount = 0 AND expires_at <= $2
			ORDER BY expires_at, id LIMIT `+strconv.Itoa(expiryBatch), recon.OrderAwaitingPayment, now)
		ids, err := collectIDs(rows, err)
		if err != nil {
			return expired, err
		}
		for _, id := range ids {
			done, n, err := db.expireOrder(ctx, id, now, notify)
			if err != nil {
				return expired, err
			}
			if done {
				expired++
			}
			enqueued += n
		}
		if len(ids) < expiryBatch {
			return expired, nil
		}
	}
}

// expireOrder expires one order (see ExpireOrders); it reports whether it
// did and how many deliveries it enqueued.
func (db *DB) expireOrder(ctx context.Context, id int64, now time.Time, notify func(*recon.Order) (*recon.Delivery, error)) (bool, int, error) {
	done, enqueued := false, 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		locked, err := orderBy(ctx, tx, `id = $1`, db.d.forUpdate(), id)
		if err != nil {
			return err
		}
		o, ok := recon.ExpireOrder(locked, now)
		if !ok {
			return nil
		}
		r, err := tx.ExecContext(ctx, `UPDATE orders SET status = $1, expired_at = $2, updated_at = $2
			WHERE id = $3 AND status = $4 AND paid_amount = 0 AND expired_at IS NULL`, o.Status, now, o.ID, recon.OrderAwaitingPayment)
		if err != nil {
			return internal(err, "expire order")
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return internalOrNil(err, "expire order")
		}
		done = true
		if _, err := tx.ExecContext(ctx, `UPDATE virtual_accounts SET status = $1, updated_at = $2 WHERE order_id = $3 AND status = $4`,
			recon.VAExpired, now, o.ID, recon.VAActive); err != nil {
			return internal(err, "expire virtual accounts")
		}
		if notify == nil {
			return nil
		}
		due, ok, err := notifyAt(ctx, tx, o.CompanyID, recon.DeliveryIPN, now, wantsIPN(recon.IPNOrderExpired))
		if err != nil || !ok {
			return err
		}
		d, err := notify(o)
		if err != nil {
			return internal(err, "build notification")
		}
		enqueued++
		return db.enqueue(ctx, tx, d, now, due)
	})
	if err != nil {
		return false, 0, err
	}
	return done, enqueued, nil
}

// wantsIPN is notifyAt's filter of an IPN of type t: whether the active
// target subscribes to it (its notification_types; docs/api-v2.md,
// Notifications).
func wantsIPN(t string) func(string) (bool, error) {
	return func(settings string) (bool, error) { return recon.IPNWants(settings, t) }
}

// closeVAs moves the orders' active accounts to status (cancelled with the
// order, paid with it), in the orders' database transaction: one statement
// for all of them (match closes those of every order a batch paid).
func (db *DB) closeVAs(ctx context.Context, tx *sql.Tx, status string, now time.Time, orderIDs ...int64) error {
	if len(orderIDs) == 0 {
		return nil
	}
	args := []any{status, storedTime(now), recon.VAActive}
	for _, id := range orderIDs {
		args = append(args, id)
	}
	_, err := tx.ExecContext(deferrable(ctx), `UPDATE virtual_accounts SET status = $1, updated_at = $2 WHERE status = $3 AND order_id IN (`+
		db.params(4, len(orderIDs))+`)`, args...)
	return internalOrNil(err, "close virtual accounts")
}

// vasNamed reads the tenant's accounts whose number is one of numbers.
func (db *DB) vasNamed(ctx context.Context, q querier, companyID int64, numbers []string) ([]*recon.VirtualAccount, error) {
	if len(numbers) == 0 {
		return nil, nil
	}
	args := []any{companyID}
	rows, err := q.QueryContext(ctx, `SELECT `+vaColumns+vaFrom+` WHERE va.company_id = $1 AND va.number `+
		oneOf(db, &args, numbers)+` ORDER BY va.id`, args...)
	return collect(rows, err, "find virtual accounts", scanVA)
}

func internalOrNil(err error, op string) error {
	if err == nil {
		return nil
	}
	return internal(err, op)
}

func collectIDs(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, internal(err, "list orders")
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, internal(err, "list orders")
		}
		ids = append(ids, id)
	}
	return ids, internalOrNil(rows.Err(), "list orders")
}

// VirtualAccountsNumbered returns every tenant's virtual accounts with the
// number, for the operator's CLI (`recon simulate transfer --va`), which
// names an account without a tenant, as BankAccountByID names a bank
// account. A number is unique per tenant only: several tenants may hold it.
func (db *DB) VirtualAccountsNumbered(ctx context.Context, number string) ([]*recon.VirtualAccount, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+vaColumns+vaFrom+` WHERE va.number = $1 ORDER BY va.id`, number)
	return collect(rows, err, "find virtual accounts", scanVA)
}
