package sqlstore_test

import (
	"testing"

	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestKeyReadKeepsItsIndexPlan (PostgreSQL): the key read's statement
// keeps one plan per connection (migration 00054), and that plan reads
// sync_counters by its key even when it was made while the table held one
// row, which a plan made for that size would read whole. The table then
// grows to 2,000 tenants under the same connection, and every read still
// probes: the connection's own counts (pg_stat_xact_user_tables, exact
// within its transaction) show index scans of sync_counters and no
// sequential scan.
func TestKeyReadKeepsItsIndexPlan(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, sqlstore.EnginePostgres)
	ctx := t.Context()
	a, _ := companyWithAccount(t, db, "111")
	if err := db.Exec(ctx, `INSERT INTO sync_counters (company_id, seq) VALUES ($1, 7)`, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, `ANALYZE sync_counters`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	read := func(round int) {
		t.Helper()
		var epoch, tenant, version int64
		if err := tx.QueryRowContext(ctx, sqlstore.PGKeyRead, []int64{a.ID}).Scan(&epoch, &tenant, &version); err != nil {
			t.Fatalf("read %d: %v", round, err)
		}
		if tenant != a.ID || version != 7 {
			t.Fatalf("read %d: tenant %d version %d, want %d and 7", round, tenant, version, a.ID)
		}
	}
	for i := range 6 { // past the five runs after which a plan may be kept
		read(i)
	}
	// Other tenants' rows, committed by other connections, seen by the
	// next statements of this READ COMMITTED transaction.
	for i := range 4 {
		if err := db.Exec(ctx, `INSERT INTO companies (full_name, short_name, status, created_at)
			SELECT 'c' || g, 'c', 'active', now() FROM generate_series(1, 500) g`); err != nil {
			t.Fatalf("companies %d: %v", i, err)
		}
	}
	if err := db.Exec(ctx, `INSERT INTO sync_counters (company_id, seq) SELECT id, 1 FROM companies WHERE id <> $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	for i := 6; i < 12; i++ {
		read(i)
	}
	var seq, idx int64
	if err := tx.QueryRowContext(ctx, `SELECT seq_scan, COALESCE(idx_scan, 0) FROM pg_stat_xact_user_tables
		WHERE relname = 'sync_counters'`).Scan(&seq, &idx); err != nil {
		t.Fatal(err)
	}
	if seq != 0 || idx < 12 {
		t.Fatalf("sync_counters read %d times sequentially and %d times by index over 12 key reads; want 0 and at least 12", seq, idx)
	}
}
