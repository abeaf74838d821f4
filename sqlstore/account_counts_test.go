package sqlstore_test

import (
	"database/sql"
	"fmt"
	"maps"
	"testing"

	"recon/sqlstore/dbtest"
)

// TestAccountCountsFollowDayCounts: each row of transaction_account_counts
// is the sum of its account's rows of transaction_day_counts, and each row
// of transaction_bucket_counts the sum of its account's day rows of its
// bucket (day >> 5), whatever statement changes them (the triggers of
// migrations 00048 and 00050): an insert, the ingestion's upsert onto an
// existing day, an update of n or of another column, a delete, days of
// other buckets, before 1970 among them.
func TestAccountCountsFollowDayCounts(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			db := dbtest.OpenStore(t, engine).SQL()
			steps := []struct {
				name, sql string
				want      map[int64]int64 // account → n
			}{
				{"insert", `INSERT INTO transaction_day_counts (company_id, bank_account_id, day, n) VALUES (7, 1, 100, 3), (7, 1, 101, 4), (7, 2, 100, 5), (8, 3, 100, 9)`,
					map[int64]int64{1: 7, 2: 5}},
				{"upsert", `INSERT INTO transaction_day_counts (company_id, bank_account_id, day, n) VALUES (7, 1, 101, 2), (7, 2, 102, 1)
					ON CONFLICT (company_id, bank_account_id, day) DO UPDATE SET n = transaction_day_counts.n + excluded.n`,
					map[int64]int64{1: 9, 2: 6}},
				{"update", `UPDATE transaction_day_counts SET n = n - 2 WHERE company_id = 7 AND bank_account_id = 1 AND day = 100`,
					map[int64]int64{1: 7, 2: 6}},
				{"another column", `UPDATE transaction_day_counts SET in_sum = 500 WHERE company_id = 7`,
					map[int64]int64{1: 7, 2: 6}},
				{"delete", `DELETE FROM transaction_day_counts WHERE company_id = 7 AND day = 100`,
					map[int64]int64{1: 6, 2: 1}},
				{"other buckets", `INSERT INTO transaction_day_counts (company_id, bank_account_id, day, n) VALUES (7, 2, 128, 4), (7, 1, -5, 1), (7, 1, -33, 0)`,
					map[int64]int64{1: 7, 2: 5}},
				{"down to zero", `UPDATE transaction_day_counts SET n = 0 WHERE company_id = 7 AND day = 128`,
					map[int64]int64{1: 7, 2: 1}},
			}
			for _, s := range steps {
				if _, err := db.ExecContext(t.Context(), s.sql); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				rows, err := db.QueryContext(t.Context(), `SELECT bank_account_id, n FROM transaction_account_counts WHERE company_id = 7`)
				if err != nil {
					t.Fatal(err)
				}
				got := map[int64]int64{}
				for rows.Next() {
					var account, n int64
					if err := rows.Scan(&account, &n); err != nil {
						t.Fatal(err)
					}
					got[account] = n
				}
				if err := rows.Close(); err != nil {
					t.Fatal(err)
				}
				if len(got) != len(s.want) || got[1] != s.want[1] || got[2] != s.want[2] {
					t.Errorf("after %s: account counts %v, want %v", s.name, got, s.want)
				}
				buckets, sums := bucketRows(t, db, `SELECT company_id, bucket, bank_account_id, n FROM transaction_bucket_counts WHERE n <> 0`),
					bucketRows(t, db, `SELECT company_id, day >> 5, bank_account_id, SUM(n) FROM transaction_day_counts GROUP BY company_id, day >> 5, bank_account_id HAVING SUM(n) <> 0`)
				if !maps.Equal(buckets, sums) {
					t.Errorf("after %s: bucket counts %v, want the day rows' sums %v", s.name, buckets, sums)
				}
			}
			var other int64
			if err := db.QueryRowContext(t.Context(), `SELECT n FROM transaction_account_counts WHERE company_id = 8 AND bank_account_id = 3`).Scan(&other); err != nil || other != 9 {
				t.Errorf("the other company's account: %d, %v; want 9", other, err)
			}
		})
	}
}

// bucketRows reads (company, bucket, account, n) rows as "company/bucket/account" → n.
func bucketRows(t *testing.T, db *sql.DB, q string) map[string]int64 {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var company, bucket, account, n int64
		if err := rows.Scan(&company, &bucket, &account, &n); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%d/%d/%d", company, bucket, account)] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
