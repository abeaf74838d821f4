package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestCountsMigrationsKeepExistingRows runs migrations 00049 and 00050 over
// a database holding transactions, as one upgraded from before them would:
// the rows stay, the buckets are filled from the day rows (a total with
// dates over whole buckets counts every row), and ingestion goes on through
// the restated table. The rows are stored first and the schema taken back
// to 00048 (which keeps them and their day rows, and drops the buckets):
// today's code does not write the schema of 00048.
func TestCountsMigrationsKeepExistingRows(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db, c, a := storeWithAccount(t, engine)
		ctx := t.Context()
		ingest := func(from, n int) {
			t.Helper()
			var in []recon.TransactionInput
			for i := from; i < from+n; i++ {
				in = append(in, recon.TransactionInput{BankAccountID: a.ID, TransactionDate: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC).AddDate(0, 0, i),
					AmountIn: 1000, Content: "chuyen tien", ReferenceNumber: fmt.Sprintf("R%d", i)})
			}
			if _, err := db.IngestTransactions(ctx, c.Tenant(), in, make([]string, len(in))); err != nil {
				t.Fatal(err)
			}
		}
		ingest(0, 100) // 100 days, there before the migrations
		if err := db.MigrateTo(ctx, 48); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		ingest(100, 20)
		_, total, err := db.Transactions(ctx, c.Tenant(), recon.TransactionFilter{Page: 1, Limit: 20, FromDate: "2026-01-02", ToDate: "2026-04-29"})
		if err != nil || total != 118 {
			t.Fatalf("total from the second day to the 119th: %d, %v; want 118", total, err)
		}
	})
}

// storeWithAccount opens a fresh store of the engine holding one company
// with one bank account (the migration tests' start).
func storeWithAccount(t *testing.T, engine string) (*sqlstore.DB, *recon.Company, *recon.BankAccount) {
	t.Helper()
	db := dbtest.OpenStore(t, engine)
	c, a := companyWithAccount(t, db, "111")
	return db, c, a
}

// companyWithAccount adds to db a company with one bank account, numbered
// number.
func companyWithAccount(t *testing.T, db *sqlstore.DB, number string) (*recon.Company, *recon.BankAccount) {
	t.Helper()
	c := &recon.Company{FullName: "Company " + number, ShortName: "c" + number, Status: recon.CompanyActive}
	if err := db.CreateCompany(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	a := &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: number}
	if err := db.CreateBankAccount(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	return c, a
}
