package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"recon"
)

var _ recon.InvoiceStore = (*DB)(nil)

// Electronic invoices (docs/invoices.md, Numbering; The life cycle;
// migration 00029). A number is assigned at issue, inside the issuing
// transaction, by one statement that takes the counter row's lock
// (INSERT ... ON CONFLICT DO UPDATE ... RETURNING: PostgreSQL's row lock,
// SQLite's writer lock), so concurrent issues on any number of nodes queue
// on the counter of their tenant, template, series and year and each gets
// the next number; a failed transaction gives its number back with
// everything else it wrote, and a committed one keeps it used whatever the
// provider answers later. A change of an issued invoice (replace, adjust,
// cancel) locks the original's row before it checks the rules, so two
// corrections racing for one original are serialized and the second sees
// the first.

const invoiceColumns = `i.id, i.company_id, i.reference_code, i.tracking_code, i.template, i.series, i.number, i.issued_date,
	i.currency, i.exchange_rate, i.payment_method, i.seller, i.buyer, i.items, i.totals, i.order_id, i.status,
	i.failure_reason, i.cqt_code, i.lookup_code, i.relation, i.adjustment_type, i.cancel_reason, i.created_at, i.updated_at,
	COALESCE((SELECT o.reference_code FROM invoices o WHERE o.id = i.original_id), '')`

func scanInvoice(s scanner) (*recon.Invoice, error) {
	inv := &recon.Invoice{}
	var issued sql.NullTime
	var order sql.NullInt64
	var seller, buyer, items, totals string
	if err := s.Scan(&inv.ID, &inv.CompanyID, &inv.ReferenceCode, &inv.TrackingCode, &inv.TemplateCode, &inv.Series, &inv.Number, &issued,
		&inv.Currency, &inv.ExchangeRate, &inv.PaymentMethod, &seller, &buyer, &items, &totals, &order, &inv.Status,
		&inv.FailureReason, &inv.CQTCode, &inv.LookupCode, &inv.Relation, &inv.AdjustmentType, &inv.CancelReason, &inv.CreatedAt, &inv.UpdatedAt,
		&inv.OriginalReferenceCode); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		text string
		v    any
	}{{seller, &inv.Seller}, {buyer, &inv.Buyer}, {items, &inv.Items}, {totals, &inv.Totals}} {
		if err := json.Unmarshal([]byte(f.text), f.v); err != nil {
			return nil, fmt.Errorf("invoice %s: %w", inv.ReferenceCode, err)
		}
	}
	if issued.Valid {
		inv.IssuedDate = issued.Time.UTC()
	}
	inv.OrderID = order.Int64
	inv.CreatedAt, inv.UpdatedAt = inv.CreatedAt.UTC(), inv.UpdatedAt.UTC()
	return inv, nil
}

// invoiceBy reads one invoice of the company where cond (on i, arguments
// from $2) holds, with lock when not "".
func (db *DB) invoiceBy(ctx context.Context, q querier, companyID int64, cond, lock string, args ...any) (*recon.Invoice, error) {
	inv, err := scanInvoice(q.QueryRowContext(ctx, `SELECT `+invoiceColumns+` FROM invoices i WHERE i.company_id = $1 AND `+cond+lock,
		append([]any{companyID}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "invoice not found")
	}
	if err != nil {
		return nil, internal(err, "read invoice")
	}
	return inv, nil
}

// invoiceRef reads the invoice of the company whose reference code is ref.
func (db *DB) invoiceRef(ctx context.Context, q querier, companyID int64, ref, lock string) (*recon.Invoice, error) {
	if !recon.ValidXID(ref) {
		return nil, recon.Errorf(recon.ENOTFOUND, "invoice %s not found", ref)
	}
	inv, err := db.invoiceBy(ctx, q, companyID, `i.reference_code = $2`, lock, strings.ToLower(ref))
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return nil, recon.Errorf(recon.ENOTFOUND, "invoice %s not found", ref)
	}
	return inv, err
}

// Invoice implements recon.InvoiceStore.
func (db *DB) Invoice(ctx context.Context, tenant recon.TenantID, ref string) (*recon.Invoice, error) {
	return db.invoiceRef(ctx, db.db, tenant.ID(), ref, "")
}

// InvoiceByTracking implements recon.InvoiceStore.
func (db *DB) InvoiceByTracking(ctx context.Context, tenant recon.TenantID, tracking string) (*recon.Invoice, error) {
	if !recon.ValidXID(tracking) {
		return nil, recon.Errorf(recon.ENOTFOUND, "tracking code %s not found", tracking)
	}
	inv, err := db.invoiceBy(ctx, db.db, tenant.ID(), `i.tracking_code = $2`, "", strings.ToLower(tracking))
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return nil, recon.Errorf(recon.ENOTFOUND, "tracking code %s not found", tracking)
	}
	return inv, err
}

// InvoiceByLookup implements recon.InvoiceStore.
func (db *DB) InvoiceByLookup(ctx context.Context, lookup string) (*recon.Invoice, recon.TenantID, error) {
	lookup = strings.ToUpper(strings.TrimSpace(lookup))
	if len(lookup) != recon.InvoiceLookupLen {
		return nil, recon.TenantID{}, recon.Errorf(recon.ENOTFOUND, "no invoice has lookup code %s", lookup)
	}
	var live bool
	inv, err := scanInvoice(scanFunc(func(dest ...any) error {
		return db.db.QueryRowContext(ctx, `SELECT `+invoiceColumns+`, c.test_of IS NULL FROM invoices i JOIN companies c ON c.id = i.company_id
			WHERE i.lookup_code = $1`, lookup).Scan(append(dest, &live)...)
	}))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, recon.TenantID{}, recon.Errorf(recon.ENOTFOUND, "no invoice has lookup code %s", lookup)
	}
	if err != nil {
		return nil, recon.TenantID{}, internal(err, "find invoice by lookup code")
	}
	return inv, recon.TenantFromRow(inv.CompanyID, live), nil
}

// Invoices implements recon.InvoiceStore.
// A listing's (recon.Listing) may read from the standby (WithStandby).
func (db *DB) Invoices(ctx context.Context, tenant recon.TenantID, f recon.InvoiceFilter) ([]*recon.Invoice, int64, error) {
	return listedPage(ctx, db, func(db *DB) ([]*recon.Invoice, int64, error) { return db.invoices(ctx, tenant, f) })
}

// invoices is Invoices on one database: the primary or the standby.
func (db *DB) invoices(ctx context.Context, tenant recon.TenantID, f recon.InvoiceFilter) ([]*recon.Invoice, int64, error) {
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
	where := []string{"i.company_id = $1"}
	args := queryArgs{tenant.ID()}
	arg := args.add
	if f.Status != "" {
		if !slices.Contains(recon.InvoiceStatuses, f.Status) {
			return nil, 0, recon.FieldError("status", "status must be one of %s", strings.Join(recon.InvoiceStatuses, ", "))
		}
		where = append(where, "i.status = "+arg(f.Status))
	}
	if f.OrderID != 0 {
		where = append(where, "i.order_id = "+arg(f.OrderID))
	}
	if f.Original != "" {
		where = append(where, "i.original_id = (SELECT o.id FROM invoices o WHERE o.company_id = $1 AND o.reference_code = "+arg(f.Original)+")")
	}
	return createdPage(ctx, db, "invoices", "i", invoiceColumns, where, &args, f.From, f.To, loc, f.Page, f.PerPage, scanInvoice)
}

// nextInvoiceNumber takes the next number of the tenant's counter of
// template, series and year, under the counter row's lock held until tx
// ends (the package comment).
func (db *DB) nextInvoiceNumber(ctx context.Context, tx *sql.Tx, companyID int64, template, series string, year int) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `INSERT INTO invoice_counters (company_id, template, series, year, last_number) VALUES ($1, $2, $3, $4, 1)
		ON CONFLICT (company_id, template, series, year) DO UPDATE SET last_number = invoice_counters.last_number + 1
		RETURNING last_number`, companyID, template, series, year).Scan(&n)
	if err != nil {
		return 0, internal(err, "take invoice number")
	}
	return n, nil
}

// insertInvoice stores inv for the company (numbered first when issue),
// setting what the store sets. original is the row id of the invoice it
// corrects, 0 none.
func (db *DB) insertInvoice(ctx context.Context, tx *sql.Tx, companyID int64, inv *recon.Invoice, issue, auto bool, provider string, original int64, now time.Time) (*recon.Invoice, error) {
	out := *inv
	out.CompanyID, out.CreatedAt, out.UpdatedAt = companyID, now, now
	out.ReferenceCode = recon.NewXIDFrom(db.rand)
	out.TrackingCode = recon.NewXIDFrom(db.rand)
	out.LookupCode = recon.NewInvoiceLookupCode(db.rand)
	out.Number, out.Status, out.FailureReason, out.CQTCode, out.CancelReason = 0, recon.InvoiceDraft, "", "", ""
	year := 0
	if issue {
		if out.IssuedDate.IsZero() {
			return nil, recon.FieldError("issued_date", "an issued invoice needs its date")
		}
		year = out.IssuedDate.Year()
		n, err := db.nextInvoiceNumber(ctx, tx, companyID, out.TemplateCode, out.Series, year)
		if err != nil {
			return nil, err
		}
		out.Number, out.Status = n, recon.InvoicePending
	} else {
		provider = ""
	}
	var texts [4]string
	for i, v := range []any{out.Seller, out.Buyer, out.Items, out.Totals} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, internal(err, "encode invoice")
		}
		texts[i] = string(b)
	}
	var issued sql.NullTime
	if !out.IssuedDate.IsZero() {
		out.IssuedDate = storedTime(out.IssuedDate)
		issued = sql.NullTime{Time: out.IssuedDate, Valid: true}
	}
	err := tx.QueryRowContext(ctx, `INSERT INTO invoices (company_id, reference_code, tracking_code, template, series, number, year, issued_date,
		currency, exchange_rate, payment_method, seller, buyer, items, totals, order_id, auto, status, lookup_code, original_id, relation,
		adjustment_type, provider, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $24) RETURNING id`,
		companyID, out.ReferenceCode, out.TrackingCode, out.TemplateCode, out.Series, out.Number, year, issued,
		out.Currency, out.ExchangeRate, out.PaymentMethod, texts[0], texts[1], texts[2], texts[3], idArg(out.OrderID), auto, out.Status,
		out.LookupCode, idArg(original), out.Relation, out.AdjustmentType, provider, now).Scan(&out.ID)
	if db.d.violation(err) == uniqueViolation {
		return nil, conflict(err, "an invoice was stored concurrently with the same code; retry")
	}
	if err != nil {
		return nil, internal(err, "insert invoice")
	}
	return &out, nil
}

// CreateInvoice implements recon.InvoiceStore.
func (db *DB) CreateInvoice(ctx context.Context, tenant recon.TenantID, inv *recon.Invoice, issue bool, provider string, now time.Time) (*recon.Invoice, error) {
	var out *recon.Invoice
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = db.insertInvoice(ctx, tx, tenant.ID(), inv, issue, false, provider, 0, storedTime(now))
		return err
	})
	return out, err
}

// IssueInvoice implements recon.InvoiceStore.
func (db *DB) IssueInvoice(ctx context.Context, tenant recon.TenantID, ref string, issued time.Time, provider string, now time.Time) (*recon.Invoice, error) {
	companyID := tenant.ID()
	now = storedTime(now)
	var out *recon.Invoice
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		inv, err := db.invoiceRef(ctx, tx, companyID, ref, db.d.forUpdate())
		if err != nil {
			return err
		}
		if err := recon.CanIssueInvoice(inv); err != nil {
			return err
		}
		issued = storedTime(issued)
		n, err := db.nextInvoiceNumber(ctx, tx, companyID, inv.TemplateCode, inv.Series, issued.Year())
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE invoices SET number = $1, year = $2, issued_date = $3, status = $4, provider = $5, updated_at = $6 WHERE id = $7`,
			n, issued.Year(), issued, recon.InvoicePending, provider, now, inv.ID); err != nil {
			return internal(err, "issue invoice")
		}
		inv.Number, inv.IssuedDate, inv.Status, inv.UpdatedAt = n, issued, recon.InvoicePending, now
		out = inv
		return nil
	})
	return out, err
}

// SetInvoiceXML implements recon.InvoiceStore.
func (db *DB) SetInvoiceXML(ctx context.Context, tenant recon.TenantID, ref string, xml []byte) error {
	if !recon.ValidXID(ref) {
		return recon.Errorf(recon.ENOTFOUND, "invoice %s not found", ref)
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE invoices SET signed_xml = $1 WHERE company_id = $2 AND reference_code = $3 AND status = $4`,
			xml, tenant.ID(), strings.ToLower(ref), recon.InvoicePending)
		if err != nil {
			return internal(err, "store invoice XML")
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			if _, err := db.invoiceRef(ctx, tx, tenant.ID(), ref, ""); err != nil {
				return err
			}
			return recon.RuleError(recon.RuleInvoiceNotPending, "invoice %s is not pending: its XML is the one it was sent with", ref)
		}
		return nil
	})
}

// InvoiceXML implements recon.InvoiceStore.
func (db *DB) InvoiceXML(ctx context.Context, tenant recon.TenantID, ref string) ([]byte, error) {
	if _, err := db.invoiceRef(ctx, db.db, tenant.ID(), ref, ""); err != nil {
		return nil, err
	}
	var xml []byte
	if err := db.db.QueryRowContext(ctx, `SELECT signed_xml FROM invoices WHERE company_id = $1 AND reference_code = $2`,
		tenant.ID(), strings.ToLower(ref)).Scan(&xml); err != nil {
		return nil, internal(err, "read invoice XML")
	}
	return xml, nil
}

// RecordInvoiceAnswer implements recon.InvoiceStore.
func (db *DB) RecordInvoiceAnswer(ctx context.Context, tenant recon.TenantID, ref string, ans recon.InvoiceAnswer, now time.Time) (*recon.Invoice, error) {
	companyID := tenant.ID()
	now = storedTime(now)
	var out *recon.Invoice
	enqueued := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		inv, err := db.invoiceRef(ctx, tx, companyID, ref, db.d.forUpdate())
		if err != nil {
			return err
		}
		if inv.Status != recon.InvoicePending {
			return recon.RuleError(recon.RuleInvoiceNotPending, "invoice %s is %s: it was answered already", inv.ReferenceCode, inv.Status)
		}
		event := recon.IPNInvoiceIssued
		inv.Status, inv.CQTCode, inv.FailureReason, inv.UpdatedAt = recon.InvoiceIssued, ans.CQTCode, "", now
		if ans.Failure != "" {
			event = recon.IPNInvoiceFailed
			inv.Status, inv.CQTCode, inv.FailureReason = recon.InvoiceFailed, "", ans.Failure
		}
		if _, err := tx.ExecContext(ctx, `UPDATE invoices SET status = $1, cqt_code = $2, failure_reason = $3, updated_at = $4 WHERE id = $5`,
			inv.Status, inv.CQTCode, inv.FailureReason, now, inv.ID); err != nil {
			return internal(err, "record invoice answer")
		}
		if enqueued, err = db.notifyInvoice(ctx, tx, inv, event, now); err != nil {
			return err
		}
		out = inv
		return nil
	})
	if err != nil {
		return nil, err
	}
	db.enqueued(enqueued)
	return out, nil
}

// notifyInvoice enqueues the invoice's IPN of event for a target that
// subscribes to it, and reports how many.
func (db *DB) notifyInvoice(ctx context.Context, tx *sql.Tx, inv *recon.Invoice, event string, now time.Time) (int, error) {
	due, ok, err := notifyAt(ctx, tx, inv.CompanyID, recon.DeliveryIPN, now, wantsIPN(event))
	if err != nil || !ok {
		return 0, err
	}
	d, err := recon.InvoiceIPNDelivery(inv, event, now)
	if err != nil {
		return 0, internal(err, "build invoice IPN")
	}
	if err := db.enqueue(ctx, tx, d, now, due); err != nil {
		return 0, err
	}
	return 1, nil
}

// CorrectInvoice implements recon.InvoiceStore.
func (db *DB) CorrectInvoice(ctx context.Context, tenant recon.TenantID, originalRef string, inv *recon.Invoice, provider string, now time.Time) (*recon.Invoice, error) {
	companyID := tenant.ID()
	now = storedTime(now)
	var out *recon.Invoice
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		orig, err := db.invoiceRef(ctx, tx, companyID, originalRef, db.d.forUpdate())
		if err != nil {
			return err
		}
		status, err := invoiceCorrection(orig, inv)
		if err != nil {
			return err
		}
		if out, err = db.insertInvoice(ctx, tx, companyID, inv, true, false, provider, orig.ID, now); err != nil {
			return err
		}
		out.OriginalReferenceCode = orig.ReferenceCode
		if _, err := tx.ExecContext(ctx, `UPDATE invoices SET status = $1, updated_at = $2 WHERE id = $3`, status, now, orig.ID); err != nil {
			return internal(err, "update the original invoice")
		}
		return nil
	})
	return out, err
}

// CancelInvoice implements recon.InvoiceStore.
func (db *DB) CancelInvoice(ctx context.Context, tenant recon.TenantID, ref, reason string, now time.Time) (*recon.Invoice, error) {
	companyID := tenant.ID()
	now = storedTime(now)
	var out *recon.Invoice
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		inv, err := db.invoiceRef(ctx, tx, companyID, ref, db.d.forUpdate())
		if err != nil {
			return err
		}
		if err := recon.CanCancelInvoice(inv, reason); err != nil {
			return err
		}
		inv.Status, inv.CancelReason, inv.UpdatedAt = recon.InvoiceCancelled, strings.TrimSpace(reason), now
		if _, err := tx.ExecContext(ctx, `UPDATE invoices SET status = $1, cancel_reason = $2, updated_at = $3 WHERE id = $4`,
			inv.Status, inv.CancelReason, now, inv.ID); err != nil {
			return internal(err, "cancel invoice")
		}
		out = inv
		return nil
	})
	return out, err
}

// PendingInvoices implements recon.InvoiceStore.
func (db *DB) PendingInvoices(ctx context.Context, before time.Time, limit int) ([]*recon.Invoice, []recon.TenantID, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+invoiceColumns+`, c.test_of IS NULL FROM invoices i JOIN companies c ON c.id = i.company_id
		WHERE i.status = $1 AND i.updated_at <= $2 ORDER BY i.updated_at, i.id LIMIT $3`, recon.InvoicePending, storedTime(before), limit)
	if err != nil {
		return nil, nil, internal(err, "list pending invoices")
	}
	defer rows.Close()
	var out []*recon.Invoice
	var tenants []recon.TenantID
	for rows.Next() {
		var live bool
		inv, err := scanInvoice(scanFunc(func(dest ...any) error { return rows.Scan(append(dest, &live)...) }))
		if err != nil {
			return nil, nil, internal(err, "list pending invoices")
		}
		out = append(out, inv)
		tenants = append(tenants, recon.TenantFromRow(inv.CompanyID, live))
	}
	return out, tenants, rows.Err()
}

// queuePaidOrders queues the orders a payment made paid for the
// auto_invoice step (docs/invoices.md, From the order), inside the
// payment's transaction: an order is queued once (its key), whether or not
// its company wants invoices; the step decides.
func (db *DB) queuePaidOrders(ctx context.Context, tx *sql.Tx, companyID int64, orders []*recon.Order, now time.Time) error {
	for chunk := range slices.Chunk(orders, enqueueChunk) {
		rows := make([]string, len(chunk))
		var args []any
		for i, o := range chunk {
			rows[i] = "(" + db.params(len(args)+1, 3) + ")"
			args = append(args, o.ID, companyID, now)
		}
		if _, err := tx.ExecContext(deferrable(ctx), `INSERT INTO invoice_order_queue (order_id, company_id, queued_at) VALUES `+
			strings.Join(rows, ", ")+` ON CONFLICT (order_id) DO NOTHING`, args...); err != nil {
			return internal(err, "queue paid order for its invoice")
		}
	}
	return nil
}

// QueuedPaidOrders implements recon.InvoiceStore: one statement, the
// orders read with their queue rows (no statement deletes an order, so each
// queued one exists).
func (db *DB) QueuedPaidOrders(ctx context.Context, limit int) ([]*recon.Order, []recon.TenantID, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+prefixed("o.", orderColumns)+`, c.test_of IS NULL
		FROM invoice_order_queue q JOIN companies c ON c.id = q.company_id JOIN orders o ON o.id = q.order_id AND o.company_id = q.company_id
		ORDER BY q.queued_at, q.order_id LIMIT $1`, limit)
	if err != nil {
		return nil, nil, internal(err, "list queued paid orders")
	}
	defer rows.Close()
	var out []*recon.Order
	var tenants []recon.TenantID
	for rows.Next() {
		var live bool
		o, err := scanOrder(scanFunc(func(dest ...any) error { return rows.Scan(append(dest, &live)...) }))
		if err != nil {
			return nil, nil, internal(err, "list queued paid orders")
		}
		out = append(out, o)
		tenants = append(tenants, recon.TenantFromRow(o.CompanyID, live))
	}
	return out, tenants, internalOrNil(rows.Err(), "list queued paid orders")
}

// DropQueuedOrders implements recon.InvoiceStore.
func (db *DB) DropQueuedOrders(ctx context.Context, tenant recon.TenantID, orderIDs []int64) error {
	if len(orderIDs) == 0 {
		return nil
	}
	args := []any{tenant.ID()}
	_, err := db.execWrite(ctx, `DELETE FROM invoice_order_queue WHERE company_id = $1 AND order_id `+oneOf(db, &args, orderIDs), args...)
	return internalOrNil(err, "drop queued orders")
}

// TakeQueuedOrder implements recon.InvoiceStore: the queue row's delete
// and the invoice's insert are one transaction, and only the transaction
// that deleted the row inserts (the partial unique index invoices_auto is
// the last guard).
func (db *DB) TakeQueuedOrder(ctx context.Context, tenant recon.TenantID, orderID int64, inv *recon.Invoice, provider string, now time.Time) (*recon.Invoice, error) {
	companyID := tenant.ID()
	now = storedTime(now)
	var out *recon.Invoice
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM invoice_order_queue WHERE order_id = $1 AND company_id = $2`, orderID, companyID)
		if err != nil {
			return internal(err, "take queued order")
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return internalOrNil(err, "take queued order") // another node took it
		}
		if inv == nil {
			return nil
		}
		var made bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM invoices WHERE company_id = $1 AND order_id = $2 AND auto)`,
			companyID, orderID).Scan(&made); err != nil {
			return internal(err, "read the order's automatic invoice")
		}
		if made {
			return nil // queued twice (paid, voided, paid again): one invoice
		}
		in := *inv
		in.OrderID = orderID
		out, err = db.insertInvoice(ctx, tx, companyID, &in, provider != "", true, provider, 0, now)
		return err
	})
	return out, err
}

// invoiceCorrection checks, with the life cycle's rules (docs/invoices.md,
// The life cycle: recon.CanReplaceInvoice, recon.CanAdjustInvoice), that
// orig may be corrected by inv, and returns the status orig takes.
func invoiceCorrection(orig, inv *recon.Invoice) (string, error) {
	switch inv.Relation {
	case recon.InvoiceRelReplace:
		return recon.InvoiceReplaced, recon.CanReplaceInvoice(orig)
	case recon.InvoiceRelAdjust:
		return recon.InvoiceAdjusted, recon.CanAdjustInvoice(orig, inv.AdjustmentType)
	}
	return "", recon.Errorf(recon.EINVALID, "unknown invoice relation %d", inv.Relation)
}
