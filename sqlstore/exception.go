package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"recon"
)

// recordExceptions queues the batch's exceptions in the ingestion's database
// transaction (see recon.ExceptionKinds): every incoming row whose decision
// is underpaid, overpaid or duplicate; every incoming row whose code or
// virtual account names no order, when the tenant has orders at all (a
// tenant that takes codes but no gateway orders has nothing to match them
// to, and would pay a row per transfer); and every incoming row with neither
// code nor virtual account to a bank account that some order names, the
// account the checkout page asks payers to pay into. decided is match's
// decision per row (nil when it made none); accounts are the rows' accounts
// as lockAccounts read them.
//
// It returns the rows (indexes into rows) it queued. When no row is an
// exception it costs no statement.
func (db *DB) recordExceptions(ctx context.Context, tx *sql.Tx, companyID int64, rows []insertRow, ids map[accountKey]int64, accounts map[int64]*accountState, decided []*recon.MatchDecision) ([]int, error) {
	type exc struct {
		row     int
		kind    string
		orderID int64
		reason  string
	}
	var out, unmatched, noCode []exc
	hasOrders := false
	for i := range rows {
		r := &rows[i]
		if r.AmountIn <= 0 {
			continue
		}
		var d *recon.MatchDecision
		if decided != nil {
			d = decided[i]
		}
		switch {
		case d != nil:
			hasOrders = true
			if recon.IsException(d.Outcome) {
				out = append(out, exc{i, d.Outcome, d.OrderID, d.Reason})
			}
		case recon.NamesOrder(r.AmountIn, r.code, r.SubAccount):
			unmatched = append(unmatched, exc{row: i, kind: recon.ExceptionUnmatched}) // reason below, if queued
		default:
			noCode = append(noCode, exc{i, recon.ExceptionUnmatched, 0, recon.NoCodeReason})
		}
	}
	// Whether the company has orders, and which accounts orders name, were
	// read with the accounts' locks (accountsRead).
	for _, a := range accounts {
		hasOrders = hasOrders || a.companyOrders
	}
	if hasOrders {
		for _, e := range unmatched {
			r := &rows[e.row]
			e.reason = recon.UnmatchedDecision(companyID, 0, r.code, r.SubAccount, r.AmountIn, time.Time{}).Reason
			out = append(out, e)
		}
	}
	for _, e := range noCode {
		if accounts[rows[e.row].BankAccountID].ordersInto {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b exc) int { return a.row - b.row })
	for start := 0; start < len(out); start += insertChunk {
		chunk := out[start:min(start+insertChunk, len(out))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO exceptions (transaction_id, company_id, bank_account_id, transaction_date, kind, order_id, reason) VALUES `)
		args := make([]any, 0, 7*len(chunk))
		for n, e := range chunk {
			if n > 0 {
				sb.WriteByte(',')
			}
			r := &rows[e.row]
			sb.WriteString("(" + db.params(len(args)+1, 7) + ")")
			args = append(args, ids[r.key()], companyID, r.BankAccountID, recon.WallClock(r.TransactionDate), e.kind, idArg(e.orderID), e.reason)
		}
		if _, err := tx.ExecContext(deferrable(ctx), sb.String(), args...); err != nil {
			return nil, internal(err, "queue exceptions")
		}
	}
	opened := make([]int, len(out))
	for k, e := range out {
		opened[k] = e.row
	}
	return opened, nil
}

// exceptionColumns are what scanException reads: exceptions e joined with
// its transaction (transactionColumns) and, when resolved, its resolution r.
const exceptionColumns = `e.kind, e.order_id, e.reason, ` + transactionColumns + `, ` + resolutionColumns

// resolutionColumns are what scanResolution reads: exception_resolutions r
// and the xid of the refund rf it created.
const resolutionColumns = `r.id, r.action, r.order_id, r.note, r.user_id, r.user_email, r.previous_kind, r.previous_reason,
	r.order_status_before, r.order_paid_before, r.created_at, rf.xid, r.amount, r.va_number, r.closes`

// exceptionFrom joins the exception's transaction and the decision that
// closed it (at most one: exception_resolutions_closing).
const exceptionFrom = ` JOIN transactions t ON t.id = e.transaction_id
	JOIN bank_accounts b ON b.id = t.bank_account_id
	LEFT JOIN exception_resolutions r ON r.transaction_id = e.transaction_id AND r.company_id = e.company_id AND r.closes
	LEFT JOIN refunds rf ON rf.id = r.refund_id`

// resolutionFields are the scan destinations of resolutionColumns (every
// one nullable: the LEFT JOIN of a listing).
type resolutionFields struct {
	id, order, user, paid, amount                                   sql.NullInt64
	action, note, email, prevKind, prevReason, statusBefore, refund sql.NullString
	va                                                              sql.NullString
	closes                                                          sql.NullBool
	at                                                              sql.NullTime
}

func (f *resolutionFields) dest() []any {
	return []any{&f.id, &f.action, &f.order, &f.note, &f.user, &f.email, &f.prevKind, &f.prevReason, &f.statusBefore, &f.paid, &f.at, &f.refund,
		&f.amount, &f.va, &f.closes}
}

// resolution is the decision read, nil when the LEFT JOIN found none.
func (f *resolutionFields) resolution(companyID, transactionID int64) *recon.ExceptionResolution {
	if !f.id.Valid {
		return nil
	}
	return &recon.ExceptionResolution{ID: f.id.Int64, CompanyID: companyID, TransactionID: transactionID, Action: f.action.String,
		OrderID: f.order.Int64, Note: f.note.String, UserID: f.user.Int64, UserEmail: f.email.String, CreatedAt: f.at.Time.UTC(),
		PreviousKind: f.prevKind.String, PreviousReason: f.prevReason.String, OrderStatusBefore: f.statusBefore.String, OrderPaidBefore: f.paid.Int64,
		RefundID: f.refund.String, Amount: f.amount.Int64, VANumber: f.va.String, Closes: f.closes.Bool}
}

func scanException(s scanner) (*recon.Exception, error) {
	var e recon.Exception
	var order sql.NullInt64
	var t recon.Transaction
	var code, sub sql.NullString
	var r resolutionFields
	if err := s.Scan(append([]any{&e.Kind, &order, &e.Reason,
		&t.ID, &t.CompanyID, &t.BankAccountID, &t.BankName, &t.AccountNumber, &t.TransactionDate,
		&t.AmountIn, &t.AmountOut, &t.Accumulated, &t.Content, &t.ReferenceNumber, &code, &sub, &t.CreatedAt, &t.DupState, &t.DupOf}, r.dest()...)...); err != nil {
		return nil, err
	}
	t.Code, t.SubAccount = code.String, sub.String
	t.TransactionDate, t.CreatedAt = recon.WallClock(t.TransactionDate.UTC()), t.CreatedAt.UTC()
	e.Transaction, e.OrderID = &t, order.Int64
	e.Resolution = r.resolution(t.CompanyID, t.ID)
	return &e, nil
}

// Exceptions implements recon.ExceptionStore. Each kind is one range of
// exceptions_list (tenant, open or resolved, kind, newest first), read up to
// a page past the cursor; the kinds' pages are merged here. The bank-account
// filter is checked on the index's rows (a tenant has few accounts).
func (db *DB) Exceptions(ctx context.Context, tenant recon.TenantID, f recon.ExceptionFilter) ([]*recon.Exception, bool, error) {
	companyID := tenant.ID()
	if f.Limit <= 0 {
		return nil, false, recon.FieldError("limit", "limit must be positive")
	}
	kinds := recon.ExceptionKinds
	if f.Kind != "" {
		if !slices.Contains(kinds, f.Kind) {
			return nil, false, recon.FieldError("kind", "kind must be one of %s", strings.Join(recon.ExceptionKinds, ", "))
		}
		kinds = []string{f.Kind}
	}
	where := []string{"e.company_id = $1", "e.resolved = $2", "e.kind = $3"}
	args := queryArgs{companyID, f.Resolved, ""}
	more, err := exceptionWhere(f, &args)
	if err != nil {
		return nil, false, err
	}
	where = append(where, more...)
	arg := args.add
	if f.After != 0 {
		var date anyTime
		err := db.db.QueryRowContext(ctx, `SELECT transaction_date FROM exceptions WHERE transaction_id = $1 AND company_id = $2`,
			f.After, companyID).Scan(&date)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, recon.FieldError("after", "after must be the transaction id of an exception of a previous page; %d is none", f.After)
		}
		if err != nil {
			return nil, false, internal(err, "read the cursor")
		}
		d, id := arg(storedTime(date.t)), arg(f.After)
		where = append(where, "e.transaction_date <= "+d, "(e.transaction_date < "+d+" OR e.transaction_id < "+id+")")
	}
	q := `SELECT ` + exceptionColumns + ` FROM exceptions e` + db.d.indexedBy("exceptions_list") + exceptionFrom +
		` WHERE ` + strings.Join(where, " AND ") + ` ORDER BY e.transaction_date DESC, e.transaction_id DESC LIMIT ` + arg(f.Limit+1)
	var all []*recon.Exception
	for _, k := range kinds {
		args[2] = k
		rows, err := db.db.QueryContext(ctx, q, args...)
		list, err := collect(rows, err, "list exceptions", scanException)
		if err != nil {
			return nil, false, err
		}
		all = append(all, list...)
	}
	slices.SortFunc(all, func(a, b *recon.Exception) int {
		if c := b.Transaction.TransactionDate.Compare(a.Transaction.TransactionDate); c != 0 {
			return c
		}
		return int(b.Transaction.ID - a.Transaction.ID)
	})
	if len(all) > f.Limit {
		return all[:f.Limit], true, nil
	}
	return all, false, nil
}

// exceptionWhere is the filter's conditions but the tenant, state and kind
// (the dates, the bank account, the memo), their arguments added to args.
// The memo is compared with LIKE, without case, both as typed and as
// recon.NormalizeMemo reads it (upper case, no diacritics) against the
// memo in upper case: a memo of the bank's upper-case ASCII is found by
// "chuyển khoản" as by "CHUYEN KHOAN".
func exceptionWhere(f recon.ExceptionFilter, args *queryArgs) ([]string, error) {
	var where []string
	for _, d := range []struct {
		field, v string
		op       string
		days     int
	}{{"from_date", f.FromDate, ">=", 0}, {"to_date", f.ToDate, "<", 1}} {
		if d.v == "" {
			continue
		}
		day, err := time.Parse(recon.DateLayout, d.v)
		if err != nil {
			return nil, recon.FieldError(d.field, "%s must be a date in the form YYYY-MM-DD", d.field)
		}
		where = append(where, "e.transaction_date "+d.op+" "+args.add(day.AddDate(0, 0, d.days)))
	}
	if f.BankAccountID != 0 {
		where = append(where, "e.bank_account_id = "+args.add(f.BankAccountID))
	}
	if f.Memo != "" {
		esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
		typed := "%" + esc.Replace(strings.ToLower(f.Memo)) + "%"
		normal := "%" + esc.Replace(recon.NormalizeMemo(f.Memo)) + "%"
		where = append(where, "(LOWER(t.content) LIKE "+args.add(typed)+` ESCAPE '\' OR UPPER(t.content) LIKE `+args.add(normal)+` ESCAPE '\')`)
	}
	return where, nil
}

// ExceptionTotals implements recon.ExceptionStore: one statement grouping
// the filter's exceptions by kind (exceptions_list's range of the tenant
// and state, each row's transaction joined for its amount and memo).
func (db *DB) ExceptionTotals(ctx context.Context, tenant recon.TenantID, f recon.ExceptionFilter) (*recon.ExceptionTotals, error) {
	args := queryArgs{tenant.ID(), f.Resolved}
	where := []string{"e.company_id = $1", "e.resolved = $2"}
	if f.Kind != "" {
		if !slices.Contains(recon.ExceptionKinds, f.Kind) {
			return nil, recon.FieldError("kind", "kind must be one of %s", strings.Join(recon.ExceptionKinds, ", "))
		}
		where = append(where, "e.kind = "+args.add(f.Kind))
	}
	more, err := exceptionWhere(f, &args)
	if err != nil {
		return nil, err
	}
	rows, err := db.db.QueryContext(ctx, `SELECT e.kind, COUNT(*), COALESCE(SUM(t.amount_in + t.amount_out), 0)
		FROM exceptions e JOIN transactions t ON t.id = e.transaction_id
		WHERE `+strings.Join(append(where, more...), " AND ")+` GROUP BY e.kind`, args...)
	sums, err := collect(rows, err, "total exceptions", func(s scanner) (*recon.ExceptionTotal, error) {
		var k recon.ExceptionTotal
		return &k, s.Scan(&k.Kind, &k.Count, &k.Amount)
	})
	if err != nil {
		return nil, err
	}
	return recon.SumExceptionTotals(sums)
}

// Exception implements recon.ExceptionStore: the exception with every
// decision a person made about it and the order it names.
func (db *DB) Exception(ctx context.Context, tenant recon.TenantID, transactionID int64) (*recon.Exception, error) {
	companyID := tenant.ID()
	e, err := exceptionOf(ctx, db.db, companyID, transactionID)
	if err != nil {
		return nil, err
	}
	if e.Decisions, err = exceptionDecisions(ctx, db.db, companyID, transactionID); err != nil {
		return nil, err
	}
	if e.OrderID != 0 {
		o, err := orderBy(ctx, db.db, `company_id = $1 AND id = $2`, "", companyID, e.OrderID)
		if err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
			return nil, err
		}
		e.Order = o
	}
	return e, nil
}

// exceptionDecisions reads every decision about the transaction, oldest
// first.
func exceptionDecisions(ctx context.Context, q querier, companyID, transactionID int64) ([]*recon.ExceptionResolution, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+resolutionColumns+` FROM exception_resolutions r LEFT JOIN refunds rf ON rf.id = r.refund_id
		WHERE r.transaction_id = $1 AND r.company_id = $2 ORDER BY r.id`, transactionID, companyID)
	return collect(rows, err, "read the decisions", func(s scanner) (*recon.ExceptionResolution, error) {
		var f resolutionFields
		if err := s.Scan(f.dest()...); err != nil {
			return nil, err
		}
		return f.resolution(companyID, transactionID), nil
	})
}

func exceptionOf(ctx context.Context, q querier, companyID, transactionID int64) (*recon.Exception, error) {
	e, err := scanException(q.QueryRowContext(ctx, `SELECT `+exceptionColumns+` FROM exceptions e`+exceptionFrom+`
		WHERE e.transaction_id = $1 AND e.company_id = $2`, transactionID, companyID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "transaction %d is not an exception", transactionID)
	}
	if err != nil {
		return nil, internal(err, "read exception")
	}
	return e, nil
}

// ExceptionSuggestions implements recon.ExceptionStore for a whole page of
// exceptions: one statement per reason, whatever the number of exceptions,
// each bounded. Only an exception that GetsSuggestions (recon.Exception)
// gets them. Same amount: a UNION ALL of one branch per
// distinct amount, each the newest recon.MaxSuggestions open unpaid orders
// of that amount (orders_open_amount); similar codes: every exception's
// candidates in one IN list on the unique (company_id, payment_code) index
// (chunked by the engines' parameter limits), each code naming at most one
// order; same customer: the named orders' customers in one query, then one
// branch per customer (orders_customer), the named order left out here.
func (db *DB) ExceptionSuggestions(ctx context.Context, tenant recon.TenantID, list []*recon.Exception, formats []recon.PaymentCodeFormat) ([][]*recon.Suggestion, error) {
	companyID := tenant.ID()
	out := make([][]*recon.Suggestion, len(list))
	var open []int // the exceptions that get suggestions
	for i, e := range list {
		out[i] = []*recon.Suggestion{}
		if e.GetsSuggestions() {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return out, nil
	}
	byID := make([]map[int64]*recon.Suggestion, len(list))
	add := func(i int, reason string, o *recon.Order) {
		if byID[i] == nil {
			byID[i] = map[int64]*recon.Suggestion{}
		}
		s := byID[i][o.ID]
		if s == nil {
			c := *o
			s = &recon.Suggestion{Order: &c}
			byID[i][o.ID] = s
			out[i] = append(out[i], s)
		}
		if !slices.Contains(s.Reasons, reason) {
			s.Reasons = append(s.Reasons, reason)
		}
	}
	limit := strconv.Itoa(recon.MaxSuggestions + 1) // one more: the customer's branch may hold the named order
	// branches reads, in one statement, the newest open orders per value of
	// column (each branch bounded), keyed by the value.
	branches := func(column, extra string, values []any) (map[any][]*recon.Order, error) {
		var sb strings.Builder
		for n := range values {
			if n > 0 {
				sb.WriteString(" UNION ALL ")
			}
			sb.WriteString(`SELECT * FROM (SELECT ` + orderColumns + ` FROM orders WHERE company_id = $1 AND status = $2 AND ` +
				column + ` = ` + db.d.param(3+n) + extra + ` ORDER BY id DESC LIMIT ` + limit + `) b` + strconv.Itoa(n))
		}
		rows, err := db.db.QueryContext(ctx, sb.String(), append([]any{companyID, recon.OrderAwaitingPayment}, values...)...)
		orders, err := collect(rows, err, "suggest orders", scanOrder)
		if err != nil {
			return nil, err
		}
		got := map[any][]*recon.Order{}
		for _, o := range orders {
			key := any(o.Amount)
			if column == "customer_id" {
				key = o.CustomerID
			}
			got[key] = append(got[key], o)
		}
		return got, nil
	}

	amounts := map[int64]bool{}
	var amountArgs []any
	for _, i := range open {
		if a := list[i].Transaction.AmountIn; !amounts[a] {
			amounts[a] = true
			amountArgs = append(amountArgs, a)
		}
	}
	for start := 0; start < len(amountArgs); start += insertChunk {
		got, err := branches("amount", ` AND paid_amount = 0`, amountArgs[start:min(start+insertChunk, len(amountArgs))])
		if err != nil {
			return nil, err
		}
		for _, i := range open {
			for _, o := range got[list[i].Transaction.AmountIn][:min(len(got[list[i].Transaction.AmountIn]), recon.MaxSuggestions)] {
				add(i, recon.SuggestSameAmount, o)
			}
		}
	}

	wanted := map[string][]int{} // code → the exceptions it is similar to
	var codes []any
	for _, i := range open {
		for _, c := range recon.SimilarCodes(list[i].Transaction.Code, formats) {
			if _, seen := wanted[c]; !seen {
				codes = append(codes, c)
			}
			wanted[c] = append(wanted[c], i)
		}
	}
	for start := 0; start < len(codes); start += insertChunk {
		chunk := codes[start:min(start+insertChunk, len(codes))]
		rows, err := db.db.QueryContext(ctx, `SELECT `+orderColumns+` FROM orders WHERE company_id = $1 AND status = $2 AND payment_code IN (`+
			db.params(3, len(chunk))+`) ORDER BY id DESC`, append([]any{companyID, recon.OrderAwaitingPayment}, chunk...)...)
		orders, err := collect(rows, err, "suggest orders", scanOrder)
		if err != nil {
			return nil, err
		}
		for _, o := range orders {
			for _, i := range wanted[o.PaymentCode] {
				add(i, recon.SuggestSimilarCode, o)
			}
		}
	}

	var named []any
	for _, i := range open {
		if id := list[i].OrderID; id != 0 {
			named = append(named, id)
		}
	}
	for start := 0; start < len(named); start += insertChunk {
		chunk := named[start:min(start+insertChunk, len(named))]
		rows, err := db.db.QueryContext(ctx, `SELECT id, customer_id FROM orders WHERE company_id = $1 AND id IN (`+db.params(2, len(chunk))+`)`,
			append([]any{companyID}, chunk...)...)
		type named struct {
			id       int64
			customer string
		}
		found, err := collect(rows, err, "read the named orders", func(s scanner) (*named, error) {
			var n named
			return &n, s.Scan(&n.id, &n.customer)
		})
		if err != nil {
			return nil, err
		}
		customerOf := map[int64]string{}
		var customers []any
		for _, n := range found {
			if n.customer != "" && !slices.Contains(customers, any(n.customer)) {
				customers = append(customers, n.customer)
			}
			customerOf[n.id] = n.customer
		}
		if len(customers) == 0 {
			continue
		}
		got, err := branches("customer_id", "", customers)
		if err != nil {
			return nil, err
		}
		for _, i := range open {
			e := list[i]
			c, ok := customerOf[e.OrderID]
			if !ok || c == "" {
				continue
			}
			kept := 0
			for _, o := range got[c] {
				if o.ID != e.OrderID && kept < recon.MaxSuggestions {
					add(i, recon.SuggestSameCustomer, o)
					kept++
				}
			}
		}
	}
	for _, i := range open {
		out[i] = recon.RankSuggestions(out[i])
	}
	return out, nil
}

// ResolveException implements recon.ExceptionStore. In one database
// transaction it locks the transaction's bank account (the order every
// ingestion of the account takes its locks in: account, then orders), the
// exception's row and the order, checks recon.CheckResolution, marks the
// exception resolved (only if still open: the guard against a concurrent
// resolution, with the unique key of exception_resolutions behind it), and
// records the resolution. A match goes the way of an automatic one:
// recon.MatchPayments, a match decision (rule manual), the order's new state
// and, when it captures, the ORDER_PAID IPN in the outbox.
func (db *DB) ResolveException(ctx context.Context, tenant recon.TenantID, transactionID int64, in recon.ResolveInput, by *recon.User, now time.Time) (*recon.ExceptionResolution, error) {
	companyID := tenant.ID()
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if by == nil || by.ID == 0 || by.Email == "" {
		return nil, recon.Errorf(recon.EINVALID, "a resolution needs the user who decides it")
	}
	now = storedTime(now)
	var res *recon.ExceptionResolution
	enqueued := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var account int64
		err := tx.QueryRowContext(ctx, `SELECT bank_account_id FROM exceptions WHERE transaction_id = $1 AND company_id = $2`,
			transactionID, companyID).Scan(&account)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(err, "transaction %d is not an exception", transactionID)
		}
		if err != nil {
			return internal(err, "read exception")
		}
		if _, err := tx.ExecContext(ctx, `SELECT id FROM bank_accounts WHERE id = $1 AND company_id = $2`+db.d.forUpdate(), account, companyID); err != nil {
			return internal(err, "lock bank account")
		}
		if _, err := tx.ExecContext(ctx, `SELECT resolved FROM exceptions WHERE transaction_id = $1 AND company_id = $2`+db.d.forUpdate(), transactionID, companyID); err != nil {
			return internal(err, "lock exception")
		}
		e, err := exceptionOf(ctx, tx, companyID, transactionID)
		if err != nil {
			return err
		}
		var o *recon.Order
		orderID := in.OrderID
		if recon.ForUnderpaid(in.Action) {
			orderID = e.OrderID
		}
		if (in.Action == recon.ResolveMatch || recon.ForUnderpaid(in.Action)) && e.Resolution == nil && orderID != 0 {
			o, err = orderBy(ctx, tx, `company_id = $1 AND id = $2`, db.d.forUpdate(), companyID, orderID)
			if err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
				return err
			}
		}
		if err := recon.CheckResolution(e, &in, o); err != nil {
			return err
		}
		if in.VA != nil && (in.VA.OrderID != o.ID || in.VA.Number == "") {
			return recon.Errorf(recon.EINVALID, "the virtual account %s is not one of order %d", in.VA.Number, o.ID)
		}
		closes := recon.Closes(in.Action)
		if closes {
			r, err := tx.ExecContext(ctx, `UPDATE exceptions SET resolved = $1 WHERE transaction_id = $2 AND company_id = $3 AND resolved = $4`,
				true, transactionID, companyID, false)
			if err != nil {
				return internal(err, "resolve exception")
			}
			if n, err := r.RowsAffected(); err != nil || n != 1 {
				return conflict(err, "transaction %d was resolved meanwhile", transactionID)
			}
		}
		t := e.Transaction
		res = &recon.ExceptionResolution{CompanyID: companyID, TransactionID: transactionID, Action: in.Action, OrderID: in.OrderID,
			Note: in.Note, UserID: by.ID, UserEmail: by.Email, CreatedAt: now, PreviousKind: e.Kind, PreviousReason: e.Reason, Closes: closes}
		if o != nil {
			res.OrderID, res.OrderStatusBefore, res.OrderPaidBefore = o.ID, o.Status, o.PaidAmount
		}
		switch {
		case in.Action == recon.ResolveMatch:
			if enqueued, res.Decision, err = db.applyByHand(ctx, tx, o, t, now); err != nil {
				return err
			}
		case in.Action == recon.ResolveWriteOff:
			if enqueued, res.Amount, err = db.writeOff(ctx, tx, o, t, now); err != nil {
				return err
			}
		case in.VA != nil:
			res.Amount, res.VANumber = in.VA.Amount, in.VA.Number
		case in.Action == recon.ResolveDuplicate:
			if _, err := tx.ExecContext(ctx, `UPDATE transactions SET dup_state = $1 WHERE id = $2`, recon.DupConfirmed, transactionID); err != nil {
				return internal(err, "resolve a possible duplicate")
			}
		case in.Action == recon.ResolveDistinct:
			var reopened bool
			if enqueued, reopened, err = db.enterDistinct(ctx, tx, companyID, e, now); err != nil {
				return err
			}
			closes = !reopened // an exception of another kind stays open
			res.Closes = closes
		}
		var refundRow sql.NullInt64
		if in.Action == recon.ResolveRefund && in.Receiver.Known() {
			req := &recon.RefundRequest{TransactionID: transactionID, Amount: in.Amount, Reason: refundReason(in.Note),
				Receiver: in.Receiver, By: recon.RefundActor{UserID: by.ID, Email: by.Email}}
			if err := req.Validate(); err != nil {
				return err
			}
			r, err := db.createRefund(ctx, tx, companyID, req, now)
			if err != nil {
				return err
			}
			res.RefundID = r.ID
			if err := tx.QueryRowContext(ctx, `SELECT id FROM refunds WHERE xid = $1`, r.ID).Scan(&refundRow); err != nil {
				return internal(err, "read refund")
			}
		}
		err = tx.QueryRowContext(ctx, `
			INSERT INTO exception_resolutions (company_id, transaction_id, action, order_id, note, user_id, user_email,
				previous_kind, previous_reason, order_status_before, order_paid_before, created_at, refund_id, amount, va_number, closes)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
			companyID, transactionID, res.Action, idArg(res.OrderID), res.Note, res.UserID, res.UserEmail,
			res.PreviousKind, res.PreviousReason, res.OrderStatusBefore, res.OrderPaidBefore, now, refundRow, res.Amount, res.VANumber, closes).Scan(&res.ID)
		if db.d.violation(err) == uniqueViolation {
			return conflict(err, "transaction %d was resolved meanwhile", transactionID)
		}
		if err != nil {
			return internal(err, "record resolution")
		}
		// Its match state changed (an exception resolved, maybe matched):
		// logged last (sqlstore/sync.go).
		var modified changeSet
		modified.add(recon.ChangeModified, transactionID)
		return db.stampChanges(ctx, tx, companyID, modified, db.now())
	})
	if err != nil {
		return nil, err
	}
	db.enqueued(enqueued)
	return res, nil
}

// applyByHand applies transfer t to the open order o as match does for a
// transfer that names it: recon.SettlePayments (the decision and the order's
// new state) and the IPN when it captures. It returns the deliveries enqueued.
func (db *DB) applyByHand(ctx context.Context, tx *sql.Tx, o *recon.Order, t *recon.Transaction, now time.Time) (int, *recon.MatchDecision, error) {
	st, err := recon.SettlePayments(o, []recon.Payment{{Amount: t.AmountIn, Rule: recon.MatchByHand, TransactionID: t.ID, Code: t.Code}}, now)
	if err != nil {
		return 0, nil, err
	}
	d := st.Decisions[0]
	if err := db.insertDecisions(ctx, tx, []*recon.MatchDecision{d}); err != nil {
		return 0, nil, err
	}
	// Only unmatched and duplicate transfers are matched by hand: none had
	// paid an order before.
	if recon.PaysOrder(d.Outcome) {
		if err := addMatchedDays(ctx, tx, o.CompanyID, []paidTransfer{{t.BankAccountID, t.TransactionDate, t.AmountIn}}); err != nil {
			return 0, nil, err
		}
	}
	if err := db.writeOrderPayments(ctx, tx, st.Order); err != nil {
		return 0, nil, err
	}
	if st.Captured < 0 {
		return 0, d, nil
	}
	// Paid: its accounts are done, as when matching captures it.
	if err := db.closeVAs(ctx, tx, recon.VAPaid, now, o.ID); err != nil {
		return 0, nil, err
	}
	paid := *st.Order
	paid.PaidAt = t.TransactionDate // the IPN's transaction_date, as match sends it
	ipn, err := readTarget(ctx, tx, o.CompanyID, recon.DeliveryIPN)
	if err != nil {
		return 0, nil, err
	}
	n, err := db.notifyPaid(ctx, tx, o.CompanyID, []*recon.Order{&paid}, ipn, now)
	return n, d, err
}

// writeOff captures the underpaid order o, locked, by writing off its
// remainder (recon.WriteOff): its status, paid time and paying transfer
// (t, the underpaid one), its active accounts paid, the order queued for
// its automatic invoice and its ORDER_PAID IPN as for any paid order. It
// returns the deliveries enqueued and the amount written off.
func (db *DB) writeOff(ctx context.Context, tx *sql.Tx, o *recon.Order, t *recon.Transaction, now time.Time) (int, int64, error) {
	paid, off := recon.WriteOff(o, t.ID, now)
	if err := db.writeOrderPayments(ctx, tx, paid); err != nil {
		return 0, 0, err
	}
	if err := db.closeVAs(ctx, tx, recon.VAPaid, now, o.ID); err != nil {
		return 0, 0, err
	}
	ipn, err := readTarget(ctx, tx, o.CompanyID, recon.DeliveryIPN)
	if err != nil {
		return 0, 0, err
	}
	n, err := db.notifyPaid(ctx, tx, o.CompanyID, []*recon.Order{paid}, ipn, now)
	return n, off, err
}

// refundReason is a resolution's note as the reason of the refund it
// creates: on one line, at most recon.MaxRefundReason characters.
func refundReason(note string) string {
	r := []rune(strings.Join(strings.Fields(note), " "))
	return string(r[:min(len(r), recon.MaxRefundReason)])
}
