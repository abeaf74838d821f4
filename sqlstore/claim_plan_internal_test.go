package sqlstore

import (
	"strings"
	"testing"
	"time"
)

// TestClaimReadsCompaniesByKey: SQLite's plan of the claim of deliveries
// looks up the company of each delivery it considers by its key, and never
// scans the companies table: with company_id IN (SELECT the active
// companies), every claim listed all of them, which at 10,000 companies took
// most of the server's CPU (activeCompany).
func TestClaimReadsCompaniesByKey(t *testing.T) {
	db := openSQLite(t)
	now := time.Now()
	rows, err := db.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+sqliteClaimDeliveries, now, now, 10, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	searched := 0
	for _, step := range plan {
		switch {
		case strings.HasPrefix(step, "SCAN c"), strings.HasPrefix(step, "SCAN p"):
			t.Errorf("the claim scans the companies (%q); plan:\n%s", step, strings.Join(plan, "\n"))
		case strings.HasPrefix(step, "SEARCH c USING INTEGER PRIMARY KEY"):
			searched++
		}
	}
	if searched != 2 { // the unordered deliveries' and the ordered heads'
		t.Errorf("the claim looks companies up by key %d times, want 2; plan:\n%s", searched, strings.Join(plan, "\n"))
	}
}
