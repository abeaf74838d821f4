package sqlstore

import "database/sql"

// scanner is what a scanX function reads one row from: *sql.Row or *sql.Rows.
type scanner = interface{ Scan(...any) error }

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
