package sqlstore

import (
	"testing"

	"recon"
)

// TestPageStart: the day holding the row at an offset, from the day rows
// of several accounts (summed per day), of the accounts asked for, within
// the days asked for; none (dayN 0) past the rows, which is what a listing
// meets when rows were deleted between its total and its page, and then
// walks every row (startDeepPage).
func TestPageStart(t *testing.T) {
	db := openSQLite(t)
	// Days 10, 11, 12 of accounts 1 and 2 of company 7; company 8 beside.
	if _, err := db.db.ExecContext(t.Context(), `INSERT INTO transaction_day_counts (company_id, bank_account_id, day, n)
		VALUES (7, 1, 10, 3), (7, 2, 10, 4), (7, 1, 11, 5), (7, 2, 12, 6), (8, 1, 12, 100)`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		accounts []int64
		from, to int64
		offset   int64
		want     pageStart
	}{
		{"newest day", nil, noDay, -noDay, 0, pageStart{day: 12, dayN: 6}},
		{"last row of the newest day", nil, noDay, -noDay, 5, pageStart{day: 12, dayN: 6}},
		{"first row of the next", nil, noDay, -noDay, 6, pageStart{day: 11, dayN: 5, skipped: 6}},
		{"two accounts' rows of a day summed", nil, noDay, -noDay, 11, pageStart{day: 10, dayN: 7, skipped: 11}},
		{"last row", nil, noDay, -noDay, 17, pageStart{day: 10, dayN: 7, skipped: 11}},
		{"past the rows", nil, noDay, -noDay, 18, pageStart{}},
		{"one account", []int64{1}, noDay, -noDay, 5, pageStart{day: 10, dayN: 3, skipped: 5}},
		{"days in range", nil, 10, 11, 5, pageStart{day: 10, dayN: 7, skipped: 5}},
		{"past the range's rows", nil, 11, 11, 5, pageStart{}},
	} {
		// Read in one statement, and a few rows at a time: a read that
		// ends inside a day, or holds only part of one, reads it again.
		for _, first := range []int64{dayRowsFirst, 1, 2, 3} {
			got, err := db.pageStart(t.Context(), 7, tc.accounts, tc.from, tc.to, tc.offset, first)
			if err != nil || got != tc.want {
				t.Errorf("%s, %d rows first: pageStart(offset %d) = %+v, %v; want %+v", tc.name, first, tc.offset, got, err, tc.want)
			}
		}
	}
}

// TestPageStartOfAnUnreachableDatabase: a read of the day rows that fails
// is an error, never "no day" (which would walk every row before the page),
// and so is a read of a listing's version.
func TestPageStartOfAnUnreachableDatabase(t *testing.T) {
	db := openSQLite(t)
	if _, err := db.db.ExecContext(t.Context(), `INSERT INTO transaction_day_counts (company_id, bank_account_id, day, n) VALUES (7, 1, 10, 3)`); err != nil {
		t.Fatal(err)
	}
	db.db.Close()
	if got, err := db.pageStart(t.Context(), 7, nil, noDay, -noDay, 0, dayRowsFirst); err == nil {
		t.Fatalf("pageStart on a closed database = %+v, nil; want an error", got)
	}
	// Known at 0, the version of a company never changed: an error, never
	// "unchanged", or a kept page would be served unchecked.
	f := recon.TransactionFilter{Page: 1, Limit: 20}
	if _, _, v, err := db.TransactionsIfChanged(t.Context(), recon.LiveTenant(7), f, 0); err == nil {
		t.Fatalf("TransactionsIfChanged on a closed database = version %d, nil; want an error", v)
	}
}
