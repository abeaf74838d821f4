package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestAmountCountsMigrationCountsExistingRows runs migration 00017 over a
// database holding transactions (as one upgraded from before it would): the
// amount filters' totals count the rows stored before it.
func TestAmountCountsMigrationCountsExistingRows(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		c := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		var in []recon.TransactionInput
		for _, number := range []string{"111", "222"} {
			a := &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: number}
			if err := db.CreateBankAccount(ctx, a); err != nil {
				t.Fatal(err)
			}
			for i := range 30 {
				tr := recon.TransactionInput{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, 8, i, 0, 0, time.UTC),
					AmountIn: 1000, Content: "chuyen tien", ReferenceNumber: fmt.Sprintf("R%d", i)}
				if i%3 == 0 {
					tr.AmountIn, tr.AmountOut = 0, 20000
				}
				in = append(in, tr)
			}
		}
		if _, err := db.IngestTransactions(ctx, c.Tenant(), in, make([]string, len(in))); err != nil {
			t.Fatal(err)
		}
		// Back to the schema before 00017, rows and all, then up again.
		if err := db.MigrateTo(ctx, 16); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		out, in1000 := int64(20000), int64(1000)
		for _, tc := range []struct {
			f    recon.TransactionFilter
			want int64
		}{
			{recon.TransactionFilter{AmountOut: &out}, 20},
			{recon.TransactionFilter{AmountIn: &in1000}, 40},
			{recon.TransactionFilter{AmountIn: &in1000, AccountNumber: "222"}, 20},
		} {
			tc.f.Page, tc.f.Limit = 1, 1
			if _, total, err := db.Transactions(ctx, c.Tenant(), tc.f); err != nil || total != tc.want {
				t.Errorf("filter %+v after the migration: total %d, %v; want %d", tc.f, total, err, tc.want)
			}
		}
	})
}
