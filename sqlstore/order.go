package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"recon"
)

const orderColumns = `id, company_id, invoice_number, order_ref, customer_id, status, amount, currency, description,
	payment_code, virtual_account, bank_account_id, paid_amount, custom_data, custom_data_signed, user_agent, ip_address,
	success_url, error_url, cancel_url, payment_method, created_at, updated_at, paid_at, paid_transaction_id,
	cancelled_at, voided_at, refunded_amount, public_id, buyer, expires_at, expired_at`

func scanOrder(s scanner) (*recon.Order, error) {
	var o recon.Order
	var va sql.NullString
	var bank, paidTx sql.NullInt64
	var paidAt, cancelledAt, voidedAt, expiresAt, expiredAt sql.NullTime
	var buyer string
	if err := s.Scan(&o.ID, &o.CompanyID, &o.InvoiceNumber, &o.OrderID, &o.CustomerID, &o.Status, &o.Amount, &o.Currency,
		&o.Description, &o.PaymentCode, &va, &bank, &o.PaidAmount, &o.CustomData, &o.CustomDataSigned, &o.UserAgent, &o.IPAddress,
		&o.SuccessURL, &o.ErrorURL, &o.CancelURL, &o.PaymentMethod, &o.CreatedAt, &o.UpdatedAt, &paidAt, &paidTx,
		&cancelledAt, &voidedAt, &o.RefundedAmount, &o.PublicID, &buyer, &expiresAt, &expiredAt); err != nil {
		return nil, err
	}
	b, err := recon.ParseBuyerJSON(buyer)
	if err != nil {
		return nil, err
	}
	o.Buyer = b
	o.VirtualAccount, o.BankAccountID, o.PaidTransactionID = va.String, bank.Int64, paidTx.Int64
	o.CreatedAt, o.UpdatedAt = o.CreatedAt.UTC(), o.UpdatedAt.UTC()
	for _, t := range []struct {
		src sql.NullTime
		dst *time.Time
	}{{paidAt, &o.PaidAt}, {cancelledAt, &o.CancelledAt}, {voidedAt, &o.VoidedAt}, {expiresAt, &o.ExpiresAt}, {expiredAt, &o.ExpiredAt}} {
		if t.src.Valid {
			*t.dst = t.src.Time.UTC()
		}
	}
	return &o, nil
}

func nullTime(t time.Time) sql.NullTime { return sql.NullTime{Time: storedTime(t), Valid: !t.IsZero()} }

// storedTimeOrZero is storedTime keeping the zero time zero.
func storedTimeOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return storedTime(t)
}

// CreateOrder implements recon.OrderStore. Every order gets a v2 id
// (PublicID), random from the store's randomness unless the caller set one.
func (db *DB) CreateOrder(ctx context.Context, o *recon.Order) error {
	return db.createOrder(ctx, db.db, o)
}

func (db *DB) createOrder(ctx context.Context, q querier, o *recon.Order) error {
	now := db.now()
	o.Status, o.CreatedAt, o.UpdatedAt = recon.OrderAwaitingPayment, now, now
	if o.PublicID == "" {
		o.PublicID = recon.NewXIDFrom(db.rand)
	}
	if o.Currency == "" {
		o.Currency = "VND"
	}
	if o.CustomData == "" {
		o.CustomData = "[]"
	}
	if o.CustomData == "[]" {
		o.CustomDataSigned = true // nothing the payer could have written
	}
	if o.PaymentMethod == "" {
		o.PaymentMethod = "BANK_TRANSFER"
	}
	o.ExpiresAt = storedTimeOrZero(o.ExpiresAt)
	err := q.QueryRowContext(ctx, `
		INSERT INTO orders (company_id, invoice_number, order_ref, customer_id, status, amount, currency, description,
			payment_code, virtual_account, bank_account_id, custom_data, user_agent, ip_address, success_url, error_url,
			cancel_url, payment_method, created_at, updated_at, search_text, custom_data_signed, public_id, buyer, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $19, $20, $21, $22, $23, $24)
		RETURNING id`,
		o.CompanyID, o.InvoiceNumber, o.OrderID, o.CustomerID, o.Status, o.Amount, o.Currency, o.Description,
		o.PaymentCode, nullString(o.VirtualAccount), idArg(o.BankAccountID), o.CustomData, o.UserAgent, o.IPAddress,
		o.SuccessURL, o.ErrorURL, o.CancelURL, o.PaymentMethod, now, orderSearchText(o), o.CustomDataSigned,
		o.PublicID, recon.BuyerJSON(o.Buyer), nullTime(o.ExpiresAt)).Scan(&o.ID)
	switch db.d.violation(err) {
	case uniqueViolation:
		msg := err.Error()
		switch {
		case strings.Contains(msg, "payment_code"):
			return conflict(err, "payment code %s is already used by another order", o.PaymentCode)
		case strings.Contains(msg, "virtual_account"):
			return conflict(err, "virtual account %s is already used by another order", o.VirtualAccount)
		case strings.Contains(msg, "public_id"):
			return conflict(err, "order id %s is already used by another order", o.PublicID)
		}
		return conflict(err, "order_invoice_number %q already exists", o.InvoiceNumber)
	case foreignKeyViolation:
		return notFound(err, "company %d not found", o.CompanyID)
	}
	if err != nil {
		return internal(err, "create order")
	}
	return nil
}

// PaymentCodesInUse implements recon.OrderStore. It reads the company's
// codes through the (company_id, payment_code) index; checkout calls it only
// after a drawn code was taken.
func (db *DB) PaymentCodesInUse(ctx context.Context, tenant recon.TenantID, prefix string, n, list int) (int64, []string, error) {
	companyID := tenant.ID()
	const where = ` FROM orders WHERE company_id = $1 AND substr(payment_code, 1, $2) = $3 AND length(payment_code) = $4`
	args := []any{companyID, len(prefix), prefix, len(prefix) + n}
	var count int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*)`+where, args...).Scan(&count); err != nil {
		return 0, nil, internal(err, "count payment codes")
	}
	if list <= 0 || count > int64(list) {
		return count, nil, nil
	}
	rows, err := db.db.QueryContext(ctx, `SELECT payment_code`+where, args...)
	if err != nil {
		return 0, nil, internal(err, "list payment codes")
	}
	defer rows.Close()
	codes := make([]string, 0, count)
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return 0, nil, internal(err, "list payment codes")
		}
		codes = append(codes, c)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, internal(err, "list payment codes")
	}
	return int64(len(codes)), codes, nil
}

// Order implements recon.OrderStore.
func (db *DB) Order(ctx context.Context, tenant recon.TenantID, invoice string) (*recon.Order, error) {
	companyID := tenant.ID()
	return orderBy(ctx, db.db, `company_id = $1 AND invoice_number = $2`, "", companyID, invoice)
}

func orderBy(ctx context.Context, q querier, where, lock string, args ...any) (*recon.Order, error) {
	o, err := scanOrder(q.QueryRowContext(ctx, `SELECT `+orderColumns+` FROM orders WHERE `+where+lock, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "order not found")
	}
	if err != nil {
		return nil, internal(err, "read order")
	}
	return o, nil
}

// Orders implements recon.OrderStore.
// A listing's (recon.Listing) may read from the standby (WithStandby).
func (db *DB) Orders(ctx context.Context, tenant recon.TenantID, f recon.OrderFilter) ([]*recon.Order, int64, error) {
	return listedPage(ctx, db, func(db *DB) ([]*recon.Order, int64, error) { return db.orders(ctx, tenant, f) })
}

// orders is Orders on one database: the primary or the standby.
func (db *DB) orders(ctx context.Context, tenant recon.TenantID, f recon.OrderFilter) ([]*recon.Order, int64, error) {
	companyID := tenant.ID()
	loc := f.Location
	if loc == nil {
		loc = time.UTC
	}
	where := []string{"company_id = $1"}
	args := queryArgs{companyID}
	arg := args.add
	day := func(field, d string) (time.Time, error) {
		t, err := time.ParseInLocation(recon.DateLayout, d, loc)
		if err != nil {
			return t, recon.FieldError(field, "%s must be a date in the form YYYY-MM-DD", field)
		}
		return t.UTC(), nil
	}
	if f.Status != "" {
		where = append(where, "status = "+arg(f.Status))
	}
	if f.V2Status != "" {
		cond, ok := v2StatusWhere[f.V2Status]
		if !ok {
			return nil, 0, recon.FieldError("status", "status must be one of %s", strings.Join(recon.OrderV2Statuses, ", "))
		}
		where = append(where, cond)
	}
	if f.CustomerID != "" {
		where = append(where, "customer_id = "+arg(f.CustomerID))
	}
	for _, d := range []struct {
		field, v string
		from, to bool
	}{{"created_at", f.CreatedOn, true, true}, {"from_created_at", f.From, true, false}, {"end_created_at", f.To, false, true}} {
		if d.v == "" {
			continue
		}
		t, err := day(d.field, d.v)
		if err != nil {
			return nil, 0, err
		}
		if d.from {
			where = append(where, "created_at >= "+arg(t))
		}
		if d.to {
			where = append(where, "created_at < "+arg(t.AddDate(0, 0, 1)))
		}
	}
	if f.Query != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(f.Query)) + "%"
		where = append(where, "search_text LIKE "+arg(like)+` ESCAPE '\'`)
	}
	cond := strings.Join(where, " AND ")
	var total int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM orders WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, internal(err, "count orders")
	}
	order := "DESC"
	if f.Ascending {
		order = "ASC"
	}
	offset := int64(f.Page-1) * int64(f.PerPage)
	rows, err := db.db.QueryContext(ctx, `SELECT `+orderColumns+` FROM orders WHERE `+cond+
		` ORDER BY created_at `+order+`, id `+order+` LIMIT `+arg(f.PerPage)+` OFFSET `+arg(offset), args...)
	out, err := collect(rows, err, "list orders", scanOrder)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// CancelOrder implements recon.OrderStore: an unpaid order becomes
// CANCELLED, with no notification.
func (db *DB) CancelOrder(ctx context.Context, tenant recon.TenantID, invoice string, now time.Time) (*recon.Order, error) {
	companyID := tenant.ID()
	return db.closeOrder(ctx, companyID, invoice, now, recon.OrderCancel, nil)
}

// VoidOrder implements recon.OrderStore: a paid order becomes CANCELLED and,
// when the company has an active IPN target, notify's TRANSACTION_VOID
// delivery is enqueued in the same database transaction.
func (db *DB) VoidOrder(ctx context.Context, tenant recon.TenantID, invoice string, now time.Time, notify func(*recon.Order) (*recon.Delivery, error)) (*recon.Order, error) {
	companyID := tenant.ID()
	o, err := db.closeOrder(ctx, companyID, invoice, now, recon.OrderVoid, notify)
	if err == nil {
		db.enqueued(1)
	}
	return o, err
}

// closeOrder applies event (recon.NextOrder: cancel or void, both ending
// CANCELLED) to the company's order, locked, stamping cancelled_at or
// voided_at, cancels its active virtual accounts, and enqueues notify's delivery (if any) in the same transaction.
func (db *DB) closeOrder(ctx context.Context, companyID int64, invoice string, now time.Time, event recon.OrderEvent, notify func(*recon.Order) (*recon.Delivery, error)) (*recon.Order, error) {
	var o *recon.Order
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		locked, err := orderBy(ctx, tx, `company_id = $1 AND invoice_number = $2`, db.d.forUpdate(), companyID, invoice)
		if err != nil {
			return err
		}
		if o, err = recon.NextOrder(locked, event, storedTime(now)); err != nil {
			return err
		}
		at, stamp := "cancelled_at", o.CancelledAt
		if event == recon.OrderVoid {
			at, stamp = "voided_at", o.VoidedAt
		}
		if _, err := tx.ExecContext(ctx, `UPDATE orders SET status = $1, `+at+` = $2, updated_at = $2 WHERE id = $3`, o.Status, stamp, o.ID); err != nil {
			return internal(err, "close order")
		}
		if err := db.closeVAs(ctx, tx, recon.VACancelled, stamp, o.ID); err != nil {
			return err
		}
		return db.notify(ctx, tx, o, notify, now)
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// notify enqueues build(o) in tx when notifyAt says so (the IPN target
// subscribes to its type: wantsIPN).
func (db *DB) notify(ctx context.Context, tx *sql.Tx, o *recon.Order, build func(*recon.Order) (*recon.Delivery, error), now time.Time) error {
	if build == nil {
		return nil
	}
	d, err := build(o)
	if err != nil {
		return internal(err, "build notification")
	}
	due, ok, err := notifyAt(ctx, tx, o.CompanyID, recon.DeliveryIPN, now, wantsIPN(d.Event))
	if err != nil || !ok {
		return err
	}
	return db.enqueue(ctx, tx, d, now, due)
}

// v2StatusWhere is recon.Order.V2Status as SQL: each v2 status's condition
// on the stored state.
var v2StatusWhere = map[string]string{
	recon.OrderPending:       "status = '" + recon.OrderAwaitingPayment + "' AND paid_amount = 0",
	recon.OrderPartiallyPaid: "status = '" + recon.OrderAwaitingPayment + "' AND paid_amount > 0",
	recon.OrderPaid:          "status = '" + recon.OrderCaptured + "'",
	recon.OrderV2Cancelled:   "status = '" + recon.OrderCancelled + "' AND expired_at IS NULL",
	recon.OrderExpired:       "status = '" + recon.OrderCancelled + "' AND expired_at IS NOT NULL",
}

// orderSearchText is what the list's keyword search (q) reads: the five
// fields it searches, lowered, joined by a newline (a q holds no control
// character, so a match never spans two fields). Migrations 00019 and 00037
// (the payment code).
func orderSearchText(o *recon.Order) string {
	s := o.InvoiceNumber + "\n" + o.OrderID + "\n" + o.Description + "\n" + o.CustomerID
	if o.PaymentCode != "" {
		s += "\n" + o.PaymentCode
	}
	return strings.ToLower(s)
}
