package sqlstore

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestInsertChangesByRuns: SQLite logs a run of at least changeRun
// consecutive ids of one kind by counting it out and the rest one by one
// (sqliteInsertChanges); either way each change gets its id, its
// kind and the seq after first given by its place in the set.
func TestInsertChangesByRuns(t *testing.T) {
	db := openSQLite(t)
	var ids []int64
	var kinds []string
	add := func(kind string, from int64, n int) {
		for i := range int64(n) {
			ids, kinds = append(ids, from+i), append(kinds, kind)
		}
	}
	add("added", 100, changeRun)     // a run, first
	add("added", 200, changeRun-1)   // one short of a run
	add("modified", 207, changeRun)  // consecutive with the last, another kind: a run of its own
	add("added", 300, 1)             // a single change
	add("removed", 400, 3*changeRun) // a long run, last
	const first = 41
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	tx, err := db.db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := sqliteInsertChanges(t.Context(), db, tx, 7, first, ids, kinds, storedTime(now)); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(t.Context(), `SELECT company_id, seq, transaction_id, kind, created_at FROM transaction_changes ORDER BY seq`)
	got, err := collect(rows, err, "read changes", func(s scanner) (*string, error) {
		var company, seq, id int64
		var kind string
		var at time.Time
		err := s.Scan(&company, &seq, &id, &kind, &at)
		line := fmt.Sprintf("%d %d %d %s %s", company, seq, id, kind, at.UTC().Format(time.RFC3339))
		return &line, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range ids {
		want = append(want, fmt.Sprintf("7 %d %d %s 2026-11-27T09:00:00Z", first+i+1, ids[i], kinds[i]))
	}
	var lines []string
	for _, l := range got {
		lines = append(lines, *l)
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("the change log holds\n%v\nwant\n%v", lines, want)
	}
}
