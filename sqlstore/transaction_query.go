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

// Transactions implements recon.TransactionStore. The page comes from the
// index that serves the filters (see the migration); the total comes from
// transaction_account_counts when at most account filters are set (a row
// per account), from transaction_day_counts when dates are set as well (a
// sum over the days in range, whatever the number of transactions), from
// transaction_amount_counts when only amount and account filters are set (a
// sum over a row per account: an amount shared by 20,000 rows costs no more
// than one shared by two), and from COUNT(*) over the same index otherwise,
// where the reference filter is selective or an amount is combined with
// dates.
// A listing's (recon.Listing) may read from the standby (WithStandby).
func (db *DB) Transactions(ctx context.Context, tenant recon.TenantID, f recon.TransactionFilter) ([]*recon.Transaction, int64, error) {
	return listedPage(ctx, db, func(db *DB) ([]*recon.Transaction, int64, error) { return db.transactions(ctx, tenant, f) })
}

// tenantVersion is the version of the transactions of the tenant $1: its
// sync_counters.seq (0 before its first change), which every database
// transaction that changes a listed field moves in the same commit
// (sqlstore/sync.go). TransactionsIfChanged and AuthEpochAndVersion read
// it.
const tenantVersion = `COALESCE((SELECT seq FROM sync_counters WHERE company_id = $1), 0)`

// TransactionsIfChanged implements recon.TransactionStore. The version
// (tenantVersion) is read before the page and on the same database, so the
// page is never older than its version, standby or not.
func (db *DB) TransactionsIfChanged(ctx context.Context, tenant recon.TenantID, f recon.TransactionFilter, known int64) (list []*recon.Transaction, total, version int64, err error) {
	err = db.listing(ctx, func(db *DB) error {
		if err := db.db.QueryRowContext(ctx, `SELECT `+tenantVersion, tenant.ID()).Scan(&version); err != nil {
			return internal(err, "read the transactions' version")
		}
		if version == known {
			return nil
		}
		list, total, err = db.transactions(ctx, tenant, f)
		return err
	})
	return list, total, version, err
}

// transactions is Transactions on one database: the primary or the standby.
func (db *DB) transactions(ctx context.Context, tenant recon.TenantID, f recon.TransactionFilter) ([]*recon.Transaction, int64, error) {
	companyID := tenant.ID()
	fq, err := db.filterQuery(ctx, companyID, f)
	if err != nil || fq == nil {
		return []*recon.Transaction{}, 0, err
	}
	accountIDs := fq.accountIDs
	countable := f.ReferenceNumber == "" && f.AmountIn == nil && f.AmountOut == nil
	from := "transactions t" + db.d.indexedBy(fq.index)

	offset := int64(f.Page-1) * int64(f.Limit)
	var total int64
	switch {
	case countable && f.FromDate == "" && f.ToDate == "":
		total, err = db.sumAccounts(ctx, companyID, accountIDs)
	case countable:
		total, err = db.sumDays(ctx, companyID, accountIDs, fq.fromDay, fq.toDay, "n")
	case f.ReferenceNumber == "" && f.FromDate == "" && f.ToDate == "":
		total, err = db.countByAmounts(ctx, companyID, accountIDs, f.AmountIn, f.AmountOut)
	default:
		err = db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+strings.Join(fq.where, " AND "), fq.args.queryArgs...).Scan(&total)
	}
	if err != nil {
		return nil, 0, internal(err, "count transactions")
	}
	order := "DESC" // of the page's walk of the index
	if countable && offset >= deepPage && offset < total {
		if offset, order, err = db.startDeepPage(ctx, companyID, fq, offset, int64(f.Limit)); err != nil {
			return nil, 0, internal(err, "list transactions")
		}
	}
	if offset >= total {
		return []*recon.Transaction{}, total, nil
	}
	cond, limit, off := strings.Join(fq.where, " AND "), fq.args.add(f.Limit), fq.args.add(offset)
	// A deferred join: the page's ids come from the index alone (every
	// listing index ends in transaction_date, id), and only those 20 rows
	// are read in full, however deep the page.
	rows, err := db.db.QueryContext(ctx, `
		SELECT `+transactionColumns+`
		FROM (SELECT t.id FROM `+from+` WHERE `+cond+`
		      ORDER BY t.transaction_date `+order+`, t.id `+order+` LIMIT `+limit+` OFFSET `+off+`) page
		JOIN transactions t ON t.id = page.id
		JOIN bank_accounts b ON b.id = t.bank_account_id
		ORDER BY t.transaction_date DESC, t.id DESC`, fq.args.queryArgs...)
	if err != nil {
		return nil, 0, internal(err, "list transactions")
	}
	defer rows.Close()
	out := make([]*recon.Transaction, 0, f.Limit)
	for rows.Next() {
		t, err := scanTransaction(rows)
		if err != nil {
			return nil, 0, internal(err, "list transactions")
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, internal(err, "list transactions")
	}
	return out, total, nil
}

// transactionColumns are what scanTransaction reads, from transactions t
// joined with bank_accounts b.
const transactionColumns = `t.id, t.company_id, t.bank_account_id, b.bank_name, b.account_number, t.transaction_date,
	t.amount_in, t.amount_out, t.accumulated, t.content, t.reference_number, t.code, t.sub_account, t.created_at,
	COALESCE(t.dup_state, ''), COALESCE(t.dup_of, 0)`

func scanTransaction(s scanner) (*recon.Transaction, error) {
	var t recon.Transaction
	var code, sub sql.NullString
	if err := s.Scan(&t.ID, &t.CompanyID, &t.BankAccountID, &t.BankName, &t.AccountNumber, &t.TransactionDate,
		&t.AmountIn, &t.AmountOut, &t.Accumulated, &t.Content, &t.ReferenceNumber, &code, &sub, &t.CreatedAt,
		&t.DupState, &t.DupOf); err != nil {
		return nil, err
	}
	t.Code, t.SubAccount = code.String, sub.String
	t.TransactionDate, t.CreatedAt = recon.WallClock(t.TransactionDate.UTC()), t.CreatedAt.UTC()
	return &t, nil
}

// Transaction implements recon.TransactionStore.
func (db *DB) Transaction(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Transaction, error) {
	companyID := tenant.ID()
	t, err := scanTransaction(db.db.QueryRowContext(ctx, `SELECT `+transactionColumns+`
		FROM transactions t JOIN bank_accounts b ON b.id = t.bank_account_id WHERE t.company_id = $1 AND t.id = $2`, companyID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "transaction %d not found", id)
	}
	if err != nil {
		return nil, internal(err, "read transaction")
	}
	refs, err := db.otherRefs(ctx, db.db, companyID, []int64{id})
	if err != nil {
		return nil, err
	}
	t.References = refs[id]
	return t, nil
}

// filterQuery is the WHERE of a §4.3 filter over transactions t, for the
// listing and the dashboard's search: its terms and their arguments, the
// accounts it reads, its date bounds as day numbers (for the per-day
// counts) and the index that serves it. Its statements name the index, so
// their parameters are opaque to the planner.
type filterQuery struct {
	where          []string
	args           opaqueArgs
	accountIDs     []int64
	fromDay, toDay int64
	index          string
	// fromArg and toArg are the arguments of the from_date and to_date
	// terms, or -1.
	fromArg, toArg int
}

// bound sets the date bound whose argument is *arg (fq.fromArg, op ">=", or
// fq.toArg, "<") to at, which pageStart found inside the filter's range:
// the term's argument moves, or the term is added.
func (fq *filterQuery) bound(arg *int, op string, at time.Time) {
	if *arg >= 0 {
		fq.args.queryArgs[*arg] = at
		return
	}
	fq.where = append(fq.where, "t.transaction_date "+op+" "+fq.args.add(at))
	*arg = len(fq.args.queryArgs) - 1
}

// filterQuery builds f's WHERE; nil when f selects nothing (an account
// number none of the company's accounts has).
func (db *DB) filterQuery(ctx context.Context, companyID int64, f recon.TransactionFilter) (*filterQuery, error) {
	fq := &filterQuery{fromDay: noDay, toDay: -noDay,
		args: opaqueArgs{d: db.d}, fromArg: -1, toArg: -1}
	arg := fq.args.add
	fq.where = []string{"t.company_id = " + arg(companyID)}
	if f.AccountNumber != "" || f.ReferenceNumber != "" && f.BankAccountID == 0 {
		// The unique (bank_account_id, reference_number) index serves the
		// reference filter, one seek per account of the company (of the
		// one account when bank_account_id names it).
		ids, err := db.accountIDsByNumber(ctx, companyID, f.AccountNumber)
		if err != nil || len(ids) == 0 {
			return nil, err
		}
		fq.accountIDs = ids
	}
	if f.BankAccountID != 0 {
		if f.AccountNumber != "" && !slices.Contains(fq.accountIDs, f.BankAccountID) {
			return nil, nil
		}
		fq.accountIDs = []int64{f.BankAccountID}
	}
	if len(fq.accountIDs) > 0 {
		fq.where = append(fq.where, "t.bank_account_id IN ("+fq.args.list(fq.accountIDs)+")")
	}
	for _, d := range []struct {
		name, value, op string
		day             *int64
		next            int
		arg             *int
	}{{"from_date", f.FromDate, ">=", &fq.fromDay, 0, &fq.fromArg}, {"to_date", f.ToDate, "<", &fq.toDay, 1, &fq.toArg}} {
		if d.value == "" {
			continue
		}
		day, err := time.Parse(recon.DateLayout, d.value)
		if err != nil {
			return nil, recon.FieldError(d.name, "%s must be a date in the form YYYY-MM-DD", d.name)
		}
		fq.where = append(fq.where, "t.transaction_date "+d.op+" "+arg(day.AddDate(0, 0, d.next)))
		*d.day, *d.arg = dayNumber(day), len(fq.args.queryArgs)-1
	}
	if f.ReferenceNumber != "" {
		fq.where = append(fq.where, "t.reference_number = "+arg(f.ReferenceNumber))
	}
	// Exactly one of a transaction's amounts is positive, so a positive
	// amount_in implies amount_out = 0 and the reverse: saying so lets
	// transactions_company_amounts serve the filter with rows already in
	// date order. (A filter on 0 implies nothing and gets no such term.)
	if f.AmountIn != nil {
		fq.where = append(fq.where, "t.amount_in = "+arg(*f.AmountIn))
		if *f.AmountIn > 0 && f.AmountOut == nil {
			fq.where = append(fq.where, "t.amount_out = 0")
		}
	}
	if f.AmountOut != nil {
		if *f.AmountOut > 0 && f.AmountIn == nil {
			fq.where = append(fq.where, "t.amount_in = 0")
		}
		fq.where = append(fq.where, "t.amount_out = "+arg(*f.AmountOut))
	}
	// The index that serves the filters (see the migration), named to the
	// engines that take a name (see dialect.indexedBy).
	fq.index = "transactions_company_date"
	switch {
	case f.ReferenceNumber != "":
		fq.index = "sqlite_autoindex_transactions_1" // UNIQUE (bank_account_id, reference_number)
	case f.AmountIn != nil || f.AmountOut != nil:
		fq.index = "transactions_company_amounts"
	case fq.accountIDs != nil:
		fq.index = "transactions_account_date"
	}
	return fq, nil
}

// accountIDsByNumber returns the ids of the company's accounts with the
// number, or of all its accounts when number is "".
func (db *DB) accountIDsByNumber(ctx context.Context, companyID int64, number string) ([]int64, error) {
	a := opaqueArgs{d: db.d}
	c, n := a.add(companyID), a.add(number)
	rows, err := db.db.QueryContext(ctx, `SELECT id FROM bank_accounts WHERE company_id = `+c+` AND (`+n+` = '' OR account_number = `+n+`) ORDER BY id`, a.queryArgs...)
	if err != nil {
		return nil, internal(err, "find bank accounts")
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, internal(err, "find bank accounts")
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// countByAmounts is the total of an amount filter (with or without
// accounts) from transaction_amount_counts: a sum over one row per account
// when both amounts are known, which a positive amount implies (its
// transaction's other amount is 0, as the listing's condition says).
func (db *DB) countByAmounts(ctx context.Context, companyID int64, accountIDs []int64, amountIn, amountOut *int64) (int64, error) {
	if amountIn == nil && amountOut != nil && *amountOut > 0 {
		amountIn = new(int64)
	}
	if amountOut == nil && amountIn != nil && *amountIn > 0 {
		amountOut = new(int64)
	}
	a := opaqueArgs{d: db.d}
	q := `SELECT COALESCE(SUM(n), 0) FROM transaction_amount_counts WHERE ` + countsOf(&a, companyID, accountIDs)
	if amountIn != nil {
		q += ` AND amount_in = ` + a.add(*amountIn)
	}
	if amountOut != nil {
		q += ` AND amount_out = ` + a.add(*amountOut)
	}
	var n int64
	err := db.db.QueryRowContext(ctx, q, a.queryArgs...).Scan(&n)
	return n, err
}

// countsOf is the condition on the company's rows of a counts table (of
// the accounts, when there are any), its arguments added to a.
func countsOf(a *opaqueArgs, companyID int64, accountIDs []int64) string {
	cond := `company_id = ` + a.add(companyID)
	if len(accountIDs) > 0 {
		cond += ` AND bank_account_id IN (` + a.list(accountIDs) + `)`
	}
	return cond
}

// noDay is a day number before every day, and -noDay one after: no bound
// (day numbers fit PostgreSQL's integer).
const noDay = -1 << 30

// sumAccounts is the number of the company's transactions (of the accounts,
// when there are any), from transaction_account_counts: a row per account,
// kept by the day rows' triggers (migration 00048).
func (db *DB) sumAccounts(ctx context.Context, companyID int64, accountIDs []int64) (int64, error) {
	a := opaqueArgs{d: db.d}
	var total int64
	err := db.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM transaction_account_counts WHERE `+countsOf(&a, companyID, accountIDs),
		a.queryArgs...).Scan(&total)
	return total, err
}

// sumDays sums a column expression of transaction_day_counts (n, or the
// matched and unmatched counts of the dashboard's search) over the
// company's days fromDay to toDay, of the accounts when there are any.
// Its plan is named, so its values are opaque: the company's rows by the
// primary key, or its days in range by the index of days (migration 00048)
// when there are bounds.
//
// The number of transactions (expr "n") in a range that holds whole buckets
// of days sums their rows of transaction_bucket_counts (migration 00050)
// and the day rows of the range's ends only: at most 31 days on each side
// (docs/design.md, "Totals per bucket of days").
func (db *DB) sumDays(ctx context.Context, companyID int64, accountIDs []int64, fromDay, toDay int64, expr string) (int64, error) {
	a := opaqueArgs{d: db.d}
	bounded := fromDay != noDay || toDay != -noDay
	index := "sqlite_autoindex_transaction_day_counts_1"
	if bounded {
		index = "transaction_day_counts_days"
	}
	days := func(from, to int64) string {
		return `SELECT COALESCE(SUM(` + expr + `), 0) FROM transaction_day_counts` + db.d.indexedBy(index) +
			` WHERE ` + countsOf(&a, companyID, accountIDs) + ` AND day >= ` + a.add(from) + ` AND day <= ` + a.add(to)
	}
	// The buckets the range holds whole: first<<bucketShift is the first
	// day of bucket first, as day>>bucketShift is the bucket of a day (both
	// floor).
	first, last := (fromDay+1<<bucketShift-1)>>bucketShift, (toDay+1)>>bucketShift-1
	var q string
	if expr == "n" && bounded && first <= last {
		q = `SELECT (` + days(fromDay, first<<bucketShift-1) + `) + (` + days((last+1)<<bucketShift, toDay) + `) +
			(SELECT COALESCE(SUM(n), 0) FROM transaction_bucket_counts WHERE ` + countsOf(&a, companyID, accountIDs) +
			` AND bucket >= ` + a.add(first) + ` AND bucket <= ` + a.add(last) + `)`
	} else {
		q = days(fromDay, toDay)
	}
	var total int64
	err := db.db.QueryRowContext(ctx, q, a.queryArgs...).Scan(&total)
	return total, err
}

// bucketShift makes a day's bucket of transaction_bucket_counts: day >>
// bucketShift, 32 days (migration 00050 writes the same shift).
const bucketShift = 5

// deepPage is the offset from which a countable listing skips whole days by
// their counts (pageStart) rather than walking its index past every row
// before the page.
const deepPage = 1000

// startDeepPage bounds fq to the day holding the row at offset (pageStart)
// and returns the offset in that day and the order to walk it in: newest
// first, or oldest first from the day's start when the page ends in the
// older half of its day (docs/design.md, "Deep pages").
func (db *DB) startDeepPage(ctx context.Context, companyID int64, fq *filterQuery, offset, limit int64) (int64, string, error) {
	start, err := db.pageStart(ctx, companyID, fq.accountIDs, fq.fromDay, fq.toDay, offset, dayRowsFirst)
	if err != nil || start.dayN == 0 { // none: the counts changed since the total; every row is walked
		return offset, "DESC", err
	}
	fq.bound(&fq.toArg, "<", dayStart(start.day+1))
	offset -= start.skipped
	if end := offset + limit; end <= start.dayN && offset > start.dayN/2 {
		fq.bound(&fq.fromArg, ">=", dayStart(start.day))
		return start.dayN - end, "ASC", nil
	}
	return offset, "DESC", nil
}

// pageStart is where a page at an offset starts: the day holding its first
// row and that day's rows (dayN, 0 when the offset is past the rows), and
// the rows of the newer days (skipped).
type pageStart struct{ day, dayN, skipped int64 }

// pageStart reads the company's day rows (of the accounts, when there are
// any), fromDay to toDay, newest first through the index of days
// (migration 00048), until the day holding the row at offset: a few rows
// for a page a few days deep (docs/design.md, "Deep pages"). It reads them
// first at a time, four times more at each read: PostgreSQL runs a
// statement to its end whatever the caller reads of it, so a single
// statement read every day row in range.
func (db *DB) pageStart(ctx context.Context, companyID int64, accountIDs []int64, fromDay, toDay, offset, first int64) (pageStart, error) {
	var skipped int64
	for limit := first; ; limit *= 4 {
		a := opaqueArgs{d: db.d}
		rows, err := db.db.QueryContext(ctx, `SELECT day, n FROM transaction_day_counts`+db.d.indexedBy("transaction_day_counts_days")+
			` WHERE `+countsOf(&a, companyID, accountIDs)+` AND day >= `+a.add(fromDay)+` AND day <= `+a.add(toDay)+
			` ORDER BY day DESC LIMIT `+a.add(limit), a.queryArgs...)
		days, err := collect(rows, err, "find the page's day", func(s scanner) (*[2]int64, error) {
			var dn [2]int64
			return &dn, s.Scan(&dn[0], &dn[1])
		})
		if err != nil {
			return pageStart{}, err
		}
		full := int64(len(days)) == limit
		if full { // the last day may go on past the limit: read again, whole, next time
			last := days[len(days)-1][0]
			for len(days) > 0 && days[len(days)-1][0] == last {
				days = days[:len(days)-1]
			}
			toDay = last
		}
		for i := 0; i < len(days); { // a day's rows are adjacent
			day, dayN := days[i][0], int64(0)
			for ; i < len(days) && days[i][0] == day; i++ {
				dayN += days[i][1]
			}
			if skipped+dayN > offset {
				return pageStart{day: day, dayN: dayN, skipped: skipped}, nil
			}
			skipped += dayN
		}
		if !full {
			return pageStart{}, nil
		}
	}
}

// dayRowsFirst is how many day rows a deep page's pageStart reads first.
const dayRowsFirst = 64

// BalanceDiscontinuities lists the company's discontinuities, newest first.
func (db *DB) BalanceDiscontinuities(ctx context.Context, tenant recon.TenantID) ([]*recon.BalanceDiscontinuity, error) {
	companyID := tenant.ID()
	rows, err := db.db.QueryContext(ctx, `
		SELECT id, company_id, bank_account_id, transaction_id, expected, reported, created_at
		FROM balance_discontinuities WHERE company_id = $1 ORDER BY id DESC LIMIT 1000`, companyID)
	if err != nil {
		return nil, internal(err, "list balance discontinuities")
	}
	defer rows.Close()
	out := []*recon.BalanceDiscontinuity{}
	for rows.Next() {
		var d recon.BalanceDiscontinuity
		if err := rows.Scan(&d.ID, &d.CompanyID, &d.BankAccountID, &d.TransactionID, &d.Expected, &d.Reported, &d.CreatedAt); err != nil {
			return nil, internal(err, "list balance discontinuities")
		}
		d.CreatedAt = d.CreatedAt.UTC()
		out = append(out, &d)
	}
	return out, rows.Err()
}

// recodePage is how many transactions RecodeTransactions reads and updates per database transaction.
const recodePage = 1000

// RecodeTransactions implements recon.TransactionStore, a page of ids at a
// time so that a long history never holds the write lock for long.
func (db *DB) RecodeTransactions(ctx context.Context, tenant recon.TenantID, from time.Time, extract func(string) string) (int64, error) {
	companyID := tenant.ID()
	var changed int64
	lastID := int64(0)
	fromArg := recon.WallClock(from) // the zero time is year 1: every transaction
	for {
		var n int
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT id, content, code FROM transactions
				WHERE company_id = $1 AND transaction_date >= $2 AND id > $3 ORDER BY id LIMIT $4`,
				companyID, fromArg, lastID, recodePage)
			if err != nil {
				return internal(err, "recode transactions")
			}
			type upd struct {
				id   int64
				code string
			}
			var updates []upd
			for rows.Next() {
				var id int64
				var content string
				var code sql.NullString
				if err := rows.Scan(&id, &content, &code); err != nil {
					rows.Close()
					return internal(err, "recode transactions")
				}
				n++
				lastID = id
				if c := extract(content); c != code.String {
					updates = append(updates, upd{id, c})
				}
			}
			if err := rows.Close(); err != nil {
				return internal(err, "recode transactions")
			}
			var modified changeSet
			for _, u := range updates {
				if _, err := tx.ExecContext(ctx, `UPDATE transactions SET code = $1 WHERE id = $2`, nullString(u.code), u.id); err != nil {
					return internal(err, "recode transactions")
				}
				modified.add(recon.ChangeModified, u.id)
			}
			changed += int64(len(updates))
			return db.stampChanges(ctx, tx, companyID, modified, db.now()) // last: see sqlstore/sync.go
		})
		if err != nil {
			return changed, err
		}
		if n < recodePage {
			return changed, nil
		}
	}
}
