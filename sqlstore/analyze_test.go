package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestIngestionRefreshesStatistics: on PostgreSQL, a bulk load through the
// ingestion refreshes the planner's statistics of transactions itself, so
// that listings right after the load do not plan on the empty table's
// (docs/benchmarks.md, "Measured from outside"). It waits for the ANALYZE
// the ingestion started in the background.
func TestIngestionRefreshesStatistics(t *testing.T) {
	db := dbtest.OpenStore(t, "postgres")
	ctx := context.Background()
	co := &recon.Company{FullName: "Stats", ShortName: "S", Status: recon.CompanyActive}
	if err := db.CreateCompany(ctx, co); err != nil {
		t.Fatal(err)
	}
	acct := &recon.BankAccount{CompanyID: co.ID, BankName: "VCB", AccountNumber: "1"}
	if err := db.CreateBankAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	var analysed bool
	for batch := range 6 {
		in := make([]recon.TransactionInput, 1000)
		for i := range in {
			// Each row its own amount, as in a real load: rows of one
			// amount and memo on one day are each other's possible
			// duplicates, and comparing 6000 of them pairwise took this
			// test a minute of CPU under the race detector.
			in[i] = recon.TransactionInput{BankAccountID: acct.ID, AmountIn: int64(1000 + batch*1000 + i),
				TransactionDate: time.Date(2026, 1, 1, 0, 0, batch*1000+i, 0, time.UTC),
				ReferenceNumber: fmt.Sprintf("S-%d-%d", batch, i), Content: "chuyen tien"}
		}
		if _, err := recon.Ingest(ctx, db, co.Tenant(), in[len(in)-1].TransactionDate, in); err != nil {
			t.Fatal(err)
		}
		if batch == 3 {
			// 4000 rows: below the threshold, nothing analysed the table.
			if err := db.SQL().QueryRow(`SELECT last_analyze IS NOT NULL AND last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'transactions'`).Scan(&analysed); err != nil {
				t.Fatal(err)
			}
			if analysed {
				t.Fatal("transactions was analysed after 4000 rows, below the threshold of 5000")
			}
		}
	}
	deadline := time.Now().Add(time.Minute)
	for !analysed {
		if time.Now().After(deadline) {
			t.Fatal("6000 rows ingested, and no ANALYZE of transactions within a minute")
		}
		time.Sleep(20 * time.Millisecond)
		if err := db.SQL().QueryRow(`SELECT last_analyze IS NOT NULL AND last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'transactions'`).Scan(&analysed); err != nil {
			t.Fatal(err)
		}
	}
	var tuples float64
	if err := db.SQL().QueryRow(`SELECT reltuples FROM pg_class WHERE relname = 'transactions'`).Scan(&tuples); err != nil {
		t.Fatal(err)
	}
	if tuples < 5000 {
		t.Fatalf("the statistics count %.0f rows after an ANALYZE of at least 5000", tuples)
	}
}
