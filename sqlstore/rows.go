package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"recon"
)

// scanner is what a scanX function reads one row from: *sql.Row or *sql.Rows.
type scanner = interface{ Scan(...any) error }

// scanAlso is a scanner whose every Scan also fills more, after the
// destinations it is given: scanTransaction(scanAlso{s, more}) reads a
// query of transactionColumns and columns of its own.
type scanAlso struct {
	scanner
	more []any
}

func (s scanAlso) Scan(dest ...any) error { return s.scanner.Scan(append(dest, s.more...)...) }

// collect reads every row of a query with scan. The query's error (err, as
// QueryContext returned it with rows), a row's and the iteration's are
// EINTERNAL naming what; no rows is an empty, non-nil list.
func collect[T any](rows *sql.Rows, err error, what string, scan func(scanner) (*T, error)) ([]*T, error) {
	if err != nil {
		return nil, internal(err, what)
	}
	defer rows.Close()
	out := []*T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, internal(err, what)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, what)
	}
	return out, nil
}

// createdPage is the listing refunds and invoices share (docs/api-v2.md,
// Envelope and errors: lists): the rows of table (aliased "t") matching
// where, narrowed to the days from and to (YYYY-MM-DD, inclusive, in loc;
// "" for no bound) by created_at, counted, and one page of them newest
// first. A malformed day is EINVALID naming from_date or to_date.
func createdPage[T any](ctx context.Context, db *DB, table, alias, cols string, where []string, args *queryArgs, from, to string,
	loc *time.Location, page, perPage int, scan func(scanner) (*T, error)) ([]*T, int64, error) {
	for _, d := range []struct {
		field, v string
		days     int
		op       string
	}{{"from_date", from, 0, ">="}, {"to_date", to, 1, "<"}} {
		if d.v == "" {
			continue
		}
		t, err := time.ParseInLocation(recon.DateLayout, d.v, loc)
		if err != nil {
			return nil, 0, recon.FieldError(d.field, "%s must be a date in the form YYYY-MM-DD", d.field)
		}
		where = append(where, alias+".created_at "+d.op+" "+args.add(storedTime(t.AddDate(0, 0, d.days))))
	}
	cond := strings.Join(where, " AND ")
	var total int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` `+alias+` WHERE `+cond, *args...).Scan(&total); err != nil {
		return nil, 0, internal(err, "count "+table)
	}
	offset := int64(page-1) * int64(perPage)
	limit, off := args.add(perPage), args.add(offset)
	rows, err := db.db.QueryContext(ctx, `SELECT `+cols+` FROM `+table+` `+alias+` WHERE `+cond+
		` ORDER BY `+alias+`.created_at DESC, `+alias+`.id DESC LIMIT `+limit+` OFFSET `+off, *args...)
	list, err := collect(rows, err, "list "+table, scan)
	return list, total, err
}
