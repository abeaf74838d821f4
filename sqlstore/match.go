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

// match applies docs/design.md, D5 to a batch's new incoming rows, inside the
// ingestion's database transaction: each row naming an order, by sub-account
// (the order's virtual account) or else by payment code, is matched against
// it. The rules (captured, underpaid, overpaid, duplicate, the reason
// sentence, the checked sum of paid amounts) are recon.MatchPayments', which
// recon.SettlePayments applies (the decisions and the order's new state), and
// recon.OrderRoutes says which order a row names; match locks the named
// orders, hands each its transfers in batch order, records
// every decision, writes the orders' new state, and enqueues an ORDER_PAID IPN
// for each capture when the company has an active IPN target. It reports how
// many deliveries it enqueued. A transfer that would overflow an order's paid
// amount fails the whole batch with recon.MatchPayments' EINVALID error.
//
// A row whose code or sub-account names no order is not written to
// match_decisions: the transaction row, stored in the same database
// transaction with its code and sub-account, already records that decision,
// and MatchDecisions derives it (see recon.UnmatchedDecision). Writing it
// would double the rows a company that takes codes but no gateway orders
// stores (ingestion ran at 38,000 tx/s on SQLite with it, 60,000 without).
// Rows naming nothing get no decision at all; the reconciliation report
// counts both as unmatched.
//
// It also returns the decision of each row (nil for a row it made none for),
// from which recordExceptions queues the exceptions.
//
// What match reads (the named orders, locked, their virtual accounts and
// the IPN target) is reads, read by readNamed before the caller's writes
// where it can be (ingestTx), so that the writes wait for the commit
// (sqlstore/pipeline.go); nil, match reads it first.
func (db *DB) match(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow, ids map[accountKey]int64, now time.Time, reads *namedOrders) (int, []*recon.MatchDecision, error) {
	if reads == nil {
		var err error
		if reads, err = db.readNamed(ctx, tx, companyID, rows); err != nil {
			return 0, nil, err
		}
	}
	if len(reads.orders) == 0 {
		return 0, nil, nil
	}
	routes := recon.NewOrderRoutes(reads.orders, reads.accounts...)
	// Each named order's payments, in batch order; row[k] is payment k's row.
	type named struct {
		o        *recon.Order
		row      []int
		payments []recon.Payment
	}
	var groups []*named
	byOrder := map[int64]*named{}
	for i, r := range rows {
		if !recon.NamesOrder(r.AmountIn, r.code, r.SubAccount) {
			continue
		}
		va, o := routes.RouteVA(r.SubAccount, r.code)
		rule := recon.MatchByVA
		if va == nil {
			o, rule = routes.Route(r.SubAccount, r.code)
		}
		if o == nil {
			continue // unmatched: see recon.UnmatchedDecision
		}
		g := byOrder[o.ID]
		if g == nil {
			g = &named{o: o}
			byOrder[o.ID] = g
			groups = append(groups, g)
		}
		g.row = append(g.row, i)
		g.payments = append(g.payments, recon.Payment{Amount: r.AmountIn, Rule: rule, TransactionID: ids[r.key()], Code: r.code, VA: va})
	}
	// By row, so that decisions and notifications keep the batch's order.
	decided := make([]*recon.MatchDecision, len(rows))
	capturedBy := make([]*recon.Order, len(rows))
	partlyPaid := make([]*recon.Order, len(rows))
	var changed []*recon.Order // their new state, written in one go below
	var paidIDs []int64        // orders captured: their accounts are done
	for _, g := range groups {
		st, err := recon.SettlePayments(g.o, g.payments, now)
		if err != nil {
			return 0, nil, err
		}
		for k, d := range st.Decisions {
			decided[g.row[k]] = d
		}
		if st.Captured >= 0 {
			capturedBy[g.row[st.Captured]] = st.Order
			paidIDs = append(paidIDs, g.o.ID)
		}
		for _, k := range st.PartiallyPaid {
			part := *g.o // as it stood after payment k: awaiting payment, paid so far
			part.PaidAmount, part.PaidTransactionID, part.UpdatedAt = st.Decisions[k].PaidTotal, g.payments[k].TransactionID, now
			partlyPaid[g.row[k]] = &part
		}
		if st.Changed {
			changed = append(changed, st.Order)
		}
	}
	var captured, partial []*recon.Order
	for i, o := range capturedBy {
		if o != nil {
			paid := *o
			paid.PaidAt = recon.WallClock(rows[i].TransactionDate) // the IPN's transaction_date
			captured = append(captured, &paid)
		}
	}
	for i, o := range partlyPaid {
		if o != nil {
			o.PaidAt = recon.WallClock(rows[i].TransactionDate)
			partial = append(partial, o)
		}
	}
	if err := db.closeVAs(ctx, tx, recon.VAPaid, now, paidIDs...); err != nil {
		return 0, nil, err
	}
	if err := db.writeOrderPayments(ctx, tx, changed...); err != nil {
		return 0, nil, err
	}
	decisions := make([]*recon.MatchDecision, 0, len(rows))
	for _, d := range decided {
		if d != nil {
			decisions = append(decisions, d)
		}
	}
	if err := db.insertDecisions(ctx, tx, decisions); err != nil {
		return 0, nil, err
	}
	var paid []paidTransfer
	for i, d := range decided {
		if d != nil && recon.PaysOrder(d.Outcome) {
			paid = append(paid, paidTransfer{rows[i].BankAccountID, rows[i].TransactionDate, rows[i].AmountIn})
		}
	}
	if err := addMatchedDays(ctx, tx, companyID, paid); err != nil {
		return 0, nil, err
	}
	enqueued, err := db.notifyPaid(ctx, tx, companyID, captured, reads.ipn, now)
	if err != nil {
		return 0, nil, err
	}
	n, err := db.notifyPartiallyPaid(ctx, tx, partial, reads.ipn, now)
	if err != nil {
		return 0, nil, err
	}
	return enqueued + n, decided, nil
}

// namedOrders is what match reads: the orders the rows name, locked, the
// virtual accounts of API v2 they name, and, when any order is named, the
// tenant's IPN target (readTarget).
type namedOrders struct {
	orders   []*recon.Order
	accounts []*recon.VirtualAccount
	ipn      target
	// names: what the rows name; byAccount: some order is named through an
	// API v2 virtual account, whose accounts finishNamed then reads.
	names     orderNames
	byAccount bool
}

// orderNames are the payment codes and v1 virtual accounts (sub_account)
// by which incoming rows name orders, each once (a batch may name the same
// code many times).
type orderNames struct{ codes, vas []string }

// add adds the names of a row of amountIn VND in, its code and its
// sub-account.
func (n *orderNames) add(amountIn int64, code, sub string) {
	if amountIn <= 0 {
		return
	}
	if code != "" {
		n.codes = append(n.codes, code)
	}
	if sub != "" {
		n.vas = append(n.vas, sub)
	}
}

// compact sorts the names and drops the repeated.
func (n *orderNames) compact() {
	slices.Sort(n.codes)
	slices.Sort(n.vas)
	n.codes, n.vas = slices.Compact(n.codes), slices.Compact(n.vas)
}

// readNamed reads what match reads for rows.
func (db *DB) readNamed(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow) (*namedOrders, error) {
	var names orderNames
	for _, r := range rows {
		names.add(r.AmountIn, r.code, r.SubAccount)
	}
	n := &namedOrders{}
	if r, ok := db.namedRead(companyID, names, n); ok {
		if err := db.d.readTogether(ctx, db, tx, []batchRead{r}); err != nil {
			return nil, err
		}
	}
	return n, db.finishNamed(ctx, tx, companyID, n)
}

// finishNamed reads the API v2 virtual accounts the rows name, once
// namedRead locked their orders: every writer of an account locks its
// order first (sqlstore/va.go).
func (db *DB) finishNamed(ctx context.Context, tx *sql.Tx, companyID int64, n *namedOrders) error {
	if !n.byAccount {
		return nil
	}
	var err error
	n.accounts, err = db.vasNamed(ctx, tx, companyID, vaNumbers(n.names.codes, n.names.vas))
	return err
}

// vaNumbers are the numbers by which rows name API v2's virtual accounts:
// a bank one by sub_account, a memo one by the code in the memo.
func vaNumbers(codes, vas []string) []string { return append(slices.Clip(vas), codes...) }

// writeOrderPayments writes what payments changed of the orders: their
// status, paid amount and time, and the transfer that completed each. How
// is the dialect's (updateOrderPayments): one statement on PostgreSQL.
func (db *DB) writeOrderPayments(ctx context.Context, tx *sql.Tx, orders ...*recon.Order) error {
	if len(orders) == 0 {
		return nil
	}
	return internalOrNil(db.d.updateOrderPayments(ctx, tx, orders), "update order")
}

// updateOrderPayment is one order's update of writeOrderPayments.
const updateOrderPayment = `UPDATE orders SET status = $1, paid_amount = $2, updated_at = $3, paid_at = $4, paid_transaction_id = $5 WHERE id = $6`

// notifyPaid queues each captured order for auto_invoice, and enqueues an
// ORDER_PAID IPN for it (PaidAt is the IPN's transaction_date) when
// notifyAt says so for ipn, the tenant's IPN target (readTarget; the
// target subscribes to ORDER_PAID: wantsIPN), and reports how many.
func (db *DB) notifyPaid(ctx context.Context, tx *sql.Tx, companyID int64, captured []*recon.Order, ipn target, now time.Time) (int, error) {
	if len(captured) == 0 {
		return 0, nil
	}
	// Every way an order becomes paid comes here: queue it for its
	// automatic invoice (docs/invoices.md, From the order).
	if err := db.queuePaidOrders(ctx, tx, companyID, captured, now); err != nil {
		return 0, err
	}
	due, ok, err := ipn.at(now, wantsIPN(recon.IPNOrderPaid))
	if err != nil || !ok {
		return 0, err
	}
	return len(captured), db.enqueueIPNs(ctx, tx, captured, recon.IPNOrderPaid, now, due)
}

// notifyPartiallyPaid enqueues an ORDER_PARTIALLY_PAID IPN for each order
// as a payment left it (PaidAt the IPN's transaction_date), when ipn, the
// tenant's IPN target, subscribes (docs/api-v2.md, Notifications), and
// reports how many.
func (db *DB) notifyPartiallyPaid(ctx context.Context, tx *sql.Tx, orders []*recon.Order, ipn target, now time.Time) (int, error) {
	if len(orders) == 0 {
		return 0, nil
	}
	due, ok, err := ipn.at(now, wantsIPN(recon.IPNOrderPartiallyPaid))
	if err != nil || !ok {
		return 0, err
	}
	return len(orders), db.enqueueIPNs(ctx, tx, orders, recon.IPNOrderPartiallyPaid, now, due)
}

// enqueueIPNs enqueues an IPN of type t for each order, in one go.
func (db *DB) enqueueIPNs(ctx context.Context, tx *sql.Tx, orders []*recon.Order, t string, now, due time.Time) error {
	ds := make([]*recon.Delivery, len(orders))
	for i, o := range orders {
		d, err := recon.IPNDelivery(o, t, now)
		if err != nil {
			return internal(err, "build IPN")
		}
		ds[i] = d
	}
	return db.enqueueAll(ctx, tx, ds, now, due)
}

// namedRead is the read of the company's orders that names name by
// payment code, by v1 virtual account (sub_account), or through an API v2
// virtual account (vaNumbers), locked on PostgreSQL, with the tenant's IPN
// target, into n: one statement, read with the ingestion's other reads
// before its writes (docs/design.md, "A transaction's reads sent
// together"). ok is false when names is empty: nothing to read.
func (db *DB) namedRead(companyID int64, names orderNames, n *namedOrders) (r batchRead, ok bool) {
	names.compact()
	n.names = names
	if len(names.codes)+len(names.vas) == 0 {
		return batchRead{}, false
	}
	query, args := db.lockOrdersQuery(companyID, names.codes, names.vas)
	return batchRead{what: "find orders", query: query, args: args, scan: func(rows rowScanner) error {
		for rows.Next() {
			var byAccount bool
			var ipn targetRow
			o, err := scanOrder(scanFunc(func(dest ...any) error {
				return rows.Scan(append(append(dest, &byAccount), ipn.dest()...)...)
			}))
			if err != nil {
				return err
			}
			n.orders = append(n.orders, o)
			n.byAccount = n.byAccount || byAccount
			n.ipn = ipn.target()
		}
		return nil
	}}, true
}

// lockOrdersQuery is namedRead's statement and its arguments. The ids of
// the orders named each way are one subquery, each arm probing its own
// index (oneOf), the API v2 accounts by their key (company, number); the
// orders are then read by primary key (oneOfQuery), the company checked on
// each row read: +o.company_id, an expression no index serves, so that no
// planner reads the company's orders by its index instead (as both did
// while their statistics were older than the company's orders; the unary
// plus is SQLite's documented way to keep a term off an index).
// An OR of the ways instead lost the probes on SQLite once a company had a
// thousand codes asked (TestOrdersNamedByABatchFoundByKey). The arguments
// follow the statement's text: SQLite numbers its "?" in that order.
func (db *DB) lockOrdersQuery(companyID int64, codes, vas []string) (string, []any) {
	args := []any{companyID}
	numbers := vaNumbers(codes, vas)
	accounts := func() string {
		return `FROM virtual_accounts va WHERE va.company_id = $1 AND va.number ` + oneOf(db, &args, numbers)
	}
	columns := prefixed("o.", orderColumns) + `, EXISTS (SELECT 1 ` + accounts() + `), ` + targetColumns
	named := []string{`SELECT va.order_id ` + accounts()}
	if len(codes) > 0 {
		named = append(named, `SELECT id FROM orders WHERE company_id = $1 AND payment_code `+oneOf(db, &args, codes))
	}
	if len(vas) > 0 {
		named = append(named, `SELECT id FROM orders WHERE company_id = $1 AND virtual_account `+oneOf(db, &args, vas))
	}
	return `SELECT ` + columns + `
		FROM orders o JOIN companies c ON c.id = $1
		LEFT JOIN delivery_targets t ON t.company_id = $1 AND t.kind = '` + recon.DeliveryIPN + `'
		WHERE o.id ` + db.d.oneOfQuery(strings.Join(named, " UNION ALL ")) + ` AND +o.company_id = $1
		ORDER BY o.id` + db.d.forUpdateOf("o"), args
}

func (db *DB) insertDecisions(ctx context.Context, tx *sql.Tx, ds []*recon.MatchDecision) error {
	for start := 0; start < len(ds); start += insertChunk {
		chunk := ds[start:min(start+insertChunk, len(ds))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO match_decisions (company_id, transaction_id, order_id, outcome, rule, code, amount, order_amount, paid_total, reason, created_at) VALUES `)
		args := make([]any, 0, 11*len(chunk))
		for n, d := range chunk {
			if n > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(" + db.params(len(args)+1, 11) + ")")
			args = append(args, d.CompanyID, d.TransactionID, idArg(d.OrderID), d.Outcome, d.Rule, d.Code, d.Amount, d.OrderAmount, d.PaidTotal, d.Reason, storedTime(d.CreatedAt))
		}
		if _, err := tx.ExecContext(deferrable(ctx), sb.String(), args...); err != nil {
			return internal(err, "record match decisions")
		}
	}
	return nil
}

const decisionColumns = `id, company_id, transaction_id, order_id, outcome, rule, code, amount, order_amount, paid_total, reason, created_at`

func scanDecision(s scanner) (*recon.MatchDecision, error) {
	var d recon.MatchDecision
	var order sql.NullInt64
	if err := s.Scan(&d.ID, &d.CompanyID, &d.TransactionID, &order, &d.Outcome, &d.Rule, &d.Code, &d.Amount, &d.OrderAmount, &d.PaidTotal, &d.Reason, &d.CreatedAt); err != nil {
		return nil, err
	}
	d.OrderID, d.CreatedAt = order.Int64, d.CreatedAt.UTC()
	return &d, nil
}

// MatchDecisions implements recon.OrderStore.
func (db *DB) MatchDecisions(ctx context.Context, tenant recon.TenantID, orderID, transactionID int64) ([]*recon.MatchDecision, error) {
	companyID := tenant.ID()
	q := `SELECT ` + decisionColumns + ` FROM match_decisions WHERE company_id = $1 AND `
	if orderID != 0 {
		return db.decisions(ctx, q+`order_id = $2 ORDER BY id`, companyID, orderID)
	}
	ds, err := db.decisions(ctx, q+`transaction_id = $2 ORDER BY id`, companyID, transactionID)
	if err != nil || len(ds) > 0 {
		return ds, err
	}
	var code, sub sql.NullString
	var amountIn int64
	var at time.Time
	err = db.db.QueryRowContext(ctx, `SELECT code, sub_account, amount_in, created_at FROM transactions WHERE company_id = $1 AND id = $2`,
		companyID, transactionID).Scan(&code, &sub, &amountIn, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return ds, nil
	}
	if err != nil {
		return nil, internal(err, "list match decisions")
	}
	if d := recon.UnmatchedDecision(companyID, transactionID, code.String, sub.String, amountIn, at.UTC()); d != nil {
		ds = append(ds, d)
	}
	return ds, nil
}

func (db *DB) decisions(ctx context.Context, q string, args ...any) ([]*recon.MatchDecision, error) {
	rows, err := db.db.QueryContext(ctx, q, args...)
	return collect(rows, err, "list match decisions", scanDecision)
}

// prefixed qualifies each of a comma-separated column list with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
