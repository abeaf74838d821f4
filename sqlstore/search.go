package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"recon"
)

// searchWindow is how many rows of the §4.3 filter a search reads at most
// per request (docs/benchmarks.md, "Transactions screen: code, matched
// state, memo"): the code, matched state and memo have no index (an index
// on the code cost SQLite's ingestion up to a third of its rate), so a
// search reads the rows newest first, a window at a time, and says how far
// back it read.
const searchWindow = 5000

// SearchTransactions implements recon.DashboardStore. It reads at most
// searchWindow rows that the §4.3 filter selects, from the same indexes as
// Transactions, newest first after s.Before, and keeps those that pass the
// code, matched-state and memo filters, up to s.Limit. The total is exact
// when it comes from the day counts (on every page): a matched or unmatched
// state with no other search filter and only account and date filters.
// A listing's (recon.Listing) may read from the standby (WithStandby).
func (db *DB) SearchTransactions(ctx context.Context, tenant recon.TenantID, s recon.TransactionSearch) (*recon.TransactionSearchPage, error) {
	return listed(ctx, db, func(db *DB) (*recon.TransactionSearchPage, error) { return db.searchTransactions(ctx, tenant, s) })
}

// searchTransactions is SearchTransactions on one database: the primary or the standby.
func (db *DB) searchTransactions(ctx context.Context, tenant recon.TenantID, s recon.TransactionSearch) (*recon.TransactionSearchPage, error) {
	companyID := tenant.ID()
	page := &recon.TransactionSearchPage{Rows: []*recon.Transaction{}}
	f := s.TransactionFilter
	fq, err := db.filterQuery(ctx, companyID, f)
	if err != nil || fq == nil {
		return page, err
	}
	where, arg := fq.where, fq.args.add
	if s.Before != 0 {
		var date time.Time
		err := db.db.QueryRowContext(ctx, `SELECT transaction_date FROM transactions WHERE company_id = $1 AND id = $2`, companyID, s.Before).Scan(&date)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, recon.FieldError("before", "transaction %d is not among yours (deleted since?): start the search again", s.Before)
		}
		if err != nil {
			return nil, internal(err, "search transactions")
		}
		d, id := arg(date), arg(s.Before)
		where = append(where, "(t.transaction_date < "+d+" OR t.transaction_date = "+d+" AND t.id < "+id+")")
	}

	// What the window's rows are tested on: the memo and code are read from
	// the table only when asked for (the rest is in the index).
	content, code, state := "''", "''", "1"
	if s.Memo != "" {
		content = "t.content"
	}
	if s.Code != "" {
		code = "t.code"
	}
	paying := func() string {
		var outcomes []string
		for _, o := range recon.PayingOutcomes {
			outcomes = append(outcomes, arg(o))
		}
		return "EXISTS (SELECT 1 FROM match_decisions m WHERE m.transaction_id = t.id AND m.company_id = t.company_id AND m.outcome IN (" +
			strings.Join(outcomes, ",") + "))"
	}
	var conds []string
	switch s.Matched {
	case recon.StateMatched:
		conds = append(conds, paying())
	case recon.StateUnmatched:
		conds = append(conds, "t.amount_in > 0 AND NOT "+paying())
	case recon.StateException:
		conds = append(conds, "EXISTS (SELECT 1 FROM exceptions e WHERE e.transaction_id = t.id AND e.company_id = t.company_id AND NOT e.resolved)")
	}
	switch s.Direction {
	case recon.DirectionIn:
		conds = append(conds, "t.amount_in > 0")
	case recon.DirectionOut:
		conds = append(conds, "t.amount_out > 0")
	}
	if len(conds) > 0 {
		state = "CASE WHEN " + strings.Join(conds, " AND ") + " THEN 1 ELSE 0 END"
	}
	rows, err := db.db.QueryContext(ctx, `SELECT t.id, t.transaction_date, `+content+`, `+code+`, `+state+`
		FROM transactions t`+db.d.indexedBy(fq.index)+` WHERE `+strings.Join(where, " AND ")+`
		ORDER BY t.transaction_date DESC, t.id DESC LIMIT `+arg(searchWindow), fq.args.queryArgs...)
	if err != nil {
		return nil, internal(err, "search transactions")
	}
	memo := recon.NormalizeMemo(s.Memo)
	var ids []int64
	for rows.Next() {
		var id int64
		var date time.Time
		var text string
		var c sql.NullString
		var hit int
		if err := rows.Scan(&id, &date, &text, &c, &hit); err != nil {
			rows.Close()
			return nil, internal(err, "search transactions")
		}
		if len(ids) == f.Limit {
			// A row beyond a full page: the next page starts after the last shown.
			page.Next = ids[len(ids)-1]
			break
		}
		page.Scanned++
		page.ReadTo = recon.WallClock(date.UTC())
		if hit == 1 && c.String == s.Code && (memo == "" || strings.Contains(recon.NormalizeMemo(text), memo)) {
			ids = append(ids, id)
		}
		if page.Scanned == searchWindow {
			page.Next = id
		}
	}
	if err := rows.Close(); err != nil {
		return nil, internal(err, "search transactions")
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "search transactions")
	}
	if page.Rows, err = db.transactionsByID(ctx, companyID, ids); err != nil {
		return nil, err
	}
	if n := dayCount(s); n != "" && s.Code == "" && s.Memo == "" && f.ReferenceNumber == "" && f.AmountIn == nil && f.AmountOut == nil {
		if page.Total, err = db.sumDays(ctx, companyID, fq.accountIDs, fq.fromDay, fq.toDay, n); err != nil {
			return nil, internal(err, "count transactions")
		}
		page.Counted = true
	}
	return page, nil
}

// dayCount is the sum of transaction_day_counts that counts what s's
// matched state and direction select, "" when they have none: matched_n
// transfers paid an order, the rest of in_n did not; the home's tiles count
// the same sums (DayFlows).
func dayCount(s recon.TransactionSearch) string {
	switch {
	case s.Direction == recon.DirectionOut && s.Matched == "":
		return "out_n"
	case s.Direction == recon.DirectionOut:
		return ""
	case s.Matched == recon.StateMatched:
		return "matched_n"
	case s.Matched == recon.StateUnmatched:
		return "in_n - matched_n"
	case s.Matched == "" && s.Direction == recon.DirectionIn:
		return "in_n"
	}
	return ""
}

// transactionsByID reads the tenant's transactions with the ids, in the
// listing's order.
func (db *DB) transactionsByID(ctx context.Context, companyID int64, ids []int64) ([]*recon.Transaction, error) {
	if len(ids) == 0 {
		return []*recon.Transaction{}, nil
	}
	args := []any{companyID}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.db.QueryContext(ctx, `SELECT `+transactionColumns+`
		FROM transactions t JOIN bank_accounts b ON b.id = t.bank_account_id
		WHERE t.company_id = $1 AND t.id IN (`+db.params(2, len(ids))+`)
		ORDER BY t.transaction_date DESC, t.id DESC`, args...)
	return collect(rows, err, "search transactions", scanTransaction)
}
