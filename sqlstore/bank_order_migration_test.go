package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestBankOrderMigrationKeepsExistingRows runs migration 00022 over a
// database holding transactions (as one upgraded from before it would): the
// account's last date is filled, so a later row is appended after the
// stored balance, and a row whose bank balance a discontinuity recorded
// keeps it when an earlier row arrives late.
func TestBankOrderMigrationKeepsExistingRows(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db, c, a := storeWithAccount(t, engine)
		ctx := t.Context()
		at := func(ref string, hour, minute int, in int64, bank *int64) recon.TransactionInput {
			return recon.TransactionInput{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, hour, minute, 0, 0, time.UTC),
				AmountIn: in, Content: "chuyen tien", ReferenceNumber: ref, Accumulated: bank}
		}
		ingest := func(in ...recon.TransactionInput) {
			t.Helper()
			if _, err := db.IngestTransactions(ctx, c.Tenant(), in, make([]string, len(in))); err != nil {
				t.Fatal(err)
			}
		}
		b1, b3 := int64(1_000), int64(5_000)
		ingest(at("R1", 8, 0, 1_000, &b1), at("R2", 9, 0, 100, nil), at("R3", 10, 0, 10, &b3), at("R4", 11, 0, 1, nil))
		// Back to the schema before 00022, rows and all, then up again.
		if err := db.MigrateTo(ctx, 21); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		ingest(at("LATE", 8, 30, 50, nil))
		ingest(at("R5", 12, 0, 1, nil))
		list, _, err := db.Transactions(ctx, c.Tenant(), recon.TransactionFilter{Page: 1, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range list {
			got = append(got, fmt.Sprintf("%s %d", x.ReferenceNumber, x.Accumulated))
		}
		if want := "[R5 5002 R4 5001 R3 5000 R2 1150 LATE 1050 R1 1000]"; fmt.Sprint(got) != want {
			t.Fatalf("balances after the migration: %v, want %s", got, want)
		}
		ds, err := db.BalanceDiscontinuities(ctx, c.Tenant())
		if err != nil || len(ds) != 1 || ds[0].Expected != 1_160 || ds[0].Reported != 5_000 {
			t.Fatalf("discontinuities %+v, %v; want R3's, expected 1160", ds, err)
		}
	})
}
