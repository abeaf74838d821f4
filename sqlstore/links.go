package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"recon"
)

// The links between the dashboard's pages (recon.PageLinkStore; docs/dashboard.md,
// "Links between pages"), each read for a page of ids by the indexes the
// pages already use.

// maxLinkIDs bounds the ids of one call: a page of a list (the export reads
// 100 at a time).
const maxLinkIDs = 1000

// idArgs is the tenant's id then ids, as the arguments of a statement whose
// IN list is db.params(2, len(ids)).
func idArgs(companyID int64, ids []int64) []any {
	args := make([]any, 0, len(ids)+1)
	args = append(args, companyID)
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

func checkLinkIDs(ids []int64) error {
	if len(ids) > maxLinkIDs {
		return recon.Errorf(recon.EINVALID, "at most %d ids at once", maxLinkIDs)
	}
	return nil
}

// TransactionLinks implements recon.PageLinkStore: the transactions' decisions
// (match_decisions_transaction) with their orders, then their exceptions
// (the exceptions' key).
func (db *DB) TransactionLinks(ctx context.Context, tenant recon.TenantID, ids []int64) (map[int64]recon.TransactionLink, error) {
	out := map[int64]recon.TransactionLink{}
	if len(ids) == 0 {
		return out, nil
	}
	if err := checkLinkIDs(ids); err != nil {
		return nil, err
	}
	args := idArgs(tenant.ID(), ids)
	in := db.params(2, len(ids))
	rows, err := db.db.QueryContext(ctx, `
		SELECT d.transaction_id, d.outcome, d.order_id, o.invoice_number
		FROM match_decisions d LEFT JOIN orders o ON o.id = d.order_id AND o.company_id = d.company_id
		WHERE d.company_id = $1 AND d.transaction_id IN (`+in+`)
		ORDER BY d.id`, args...)
	if err != nil {
		return nil, internal(err, "read transaction links")
	}
	paidBy := map[int64]bool{} // the link's order is a paying decision's
	for rows.Next() {
		var tx int64
		var outcome string
		var order sql.NullInt64
		var invoice sql.NullString
		if err := rows.Scan(&tx, &outcome, &order, &invoice); err != nil {
			rows.Close()
			return nil, internal(err, "read transaction links")
		}
		l := out[tx]
		l.Outcome = outcome
		pays := recon.PaysOrder(outcome)
		if order.Valid && invoice.Valid && (pays || !paidBy[tx]) {
			l.OrderID, l.Invoice = order.Int64, invoice.String
			paidBy[tx] = paidBy[tx] || pays
		}
		l.Paid = l.Paid || pays
		out[tx] = l
	}
	if err := rows.Close(); err != nil {
		return nil, internal(err, "read transaction links")
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "read transaction links")
	}
	rows, err = db.db.QueryContext(ctx, `SELECT transaction_id, kind, resolved FROM exceptions
		WHERE company_id = $1 AND transaction_id IN (`+in+`)`, args...)
	if err != nil {
		return nil, internal(err, "read transaction links")
	}
	defer rows.Close()
	for rows.Next() {
		var tx int64
		var kind string
		var resolved bool
		if err := rows.Scan(&tx, &kind, &resolved); err != nil {
			return nil, internal(err, "read transaction links")
		}
		l := out[tx]
		l.ExceptionKind, l.ExceptionResolved = kind, resolved
		out[tx] = l
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "read transaction links")
	}
	return out, nil
}

// TransactionsByID implements recon.PageLinkStore.
func (db *DB) TransactionsByID(ctx context.Context, tenant recon.TenantID, ids []int64) ([]*recon.Transaction, error) {
	if err := checkLinkIDs(ids); err != nil {
		return nil, err
	}
	return db.transactionsByID(ctx, tenant.ID(), ids)
}

// OrderInvoices implements recon.PageLinkStore: by the orders' key.
func (db *DB) OrderInvoices(ctx context.Context, tenant recon.TenantID, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	if err := checkLinkIDs(ids); err != nil {
		return nil, err
	}
	rows, err := db.db.QueryContext(ctx, `SELECT id, invoice_number FROM orders WHERE company_id = $1 AND id IN (`+db.params(2, len(ids))+`)`,
		idArgs(tenant.ID(), ids)...)
	if err != nil {
		return nil, internal(err, "read order invoices")
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var invoice string
		if err := rows.Scan(&id, &invoice); err != nil {
			return nil, internal(err, "read order invoices")
		}
		out[id] = invoice
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "read order invoices")
	}
	return out, nil
}

// CustomerTransactions implements recon.PageLinkStore: the customer's orders
// (orders_customer), their decisions (match_decisions_order), newest first.
func (db *DB) CustomerTransactions(ctx context.Context, tenant recon.TenantID, customerID string, limit int) ([]*recon.Transaction, error) {
	companyID := tenant.ID()
	limit = max(1, min(limit, maxLinkIDs))
	rows, err := db.db.QueryContext(ctx, `
		SELECT d.transaction_id FROM match_decisions d JOIN orders o ON o.id = d.order_id
		WHERE o.company_id = $1 AND o.customer_id = $2 AND d.company_id = $1
		GROUP BY d.transaction_id ORDER BY MAX(d.id) DESC LIMIT $3`, companyID, customerID, limit)
	if err != nil {
		return nil, internal(err, "list customer transactions")
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, internal(err, "list customer transactions")
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return nil, internal(err, "list customer transactions")
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "list customer transactions")
	}
	return db.transactionsByID(ctx, companyID, ids)
}

// CountDeliveries implements recon.PageLinkStore: at most bound index entries
// (deliveries_company, or the partial indexes of failing and dead rows).
func (db *DB) CountDeliveries(ctx context.Context, tenant recon.TenantID, f recon.DeliveryFilter, bound int) (int64, error) {
	if err := recon.CheckDeliveryStatus("status", f.Status); err != nil {
		return 0, err
	}
	if err := recon.CheckDeliveryKind("kind", f.Kind); err != nil {
		return 0, err
	}
	args := queryArgs{tenant.ID()}
	where := []string{"company_id = $1"}
	switch {
	case f.Failing && f.Status != "" && f.Status != recon.DeliveryPending:
		return 0, recon.FieldError("status", "failing deliveries are pending; status %s cannot be failing too", f.Status)
	case f.Failing:
		where = append(where, "status = "+args.add(recon.DeliveryPending), "attempts > 0")
	case f.Status != "":
		where = append(where, "status = "+args.add(f.Status))
	}
	if f.Kind != "" {
		where = append(where, "kind = "+args.add(f.Kind))
	}
	var n int64
	err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM deliveries WHERE `+strings.Join(where, " AND ")+
		` LIMIT `+args.add(bound)+`) counted`, args...).Scan(&n)
	if err != nil {
		return 0, internal(err, "count deliveries")
	}
	return n, nil
}
