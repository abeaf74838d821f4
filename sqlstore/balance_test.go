package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestRederiveBound: a batch that would re-derive more stored rows than
// the bound is ECONFLICT and stores nothing; rows carrying the bank's
// balance stop the re-derivation, so what lies beyond them does not count.
func TestRederiveBound(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		db.SetRederiveLimit(5)
		ctx := t.Context()
		c := &recon.Company{FullName: "Sao Mai", ShortName: "SM", Status: recon.CompanyActive, Subscription: "standard"}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		a := &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: "111"}
		if err := db.CreateBankAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		at := func(ref string, hour int, bank *int64) recon.TransactionInput {
			return recon.TransactionInput{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, hour, 0, 0, 0, time.UTC),
				AmountIn: 10, Content: "tien hang " + ref, ReferenceNumber: ref, Accumulated: bank} // a memo each: no possible duplicates
		}
		ingest := func(in ...recon.TransactionInput) error {
			_, err := db.IngestTransactions(ctx, c.Tenant(), in, make([]string, len(in)))
			return err
		}
		// Six rows without balances, 10:00 to 15:00.
		var day []recon.TransactionInput
		for h := 10; h < 16; h++ {
			day = append(day, at(fmt.Sprintf("R%d", h), h, nil))
		}
		if err := ingest(day...); err != nil {
			t.Fatal(err)
		}
		err := ingest(at("EARLY", 9, nil))
		if recon.ErrorCode(err) != recon.ECONFLICT {
			t.Fatalf("a row before 6 rows with a bound of 5: %v, want ECONFLICT", err)
		}
		if _, n, _ := db.Transactions(ctx, c.Tenant(), recon.TransactionFilter{Page: 1, Limit: 10}); n != 6 {
			t.Fatalf("%d rows stored, want 6: the refused batch stored nothing", n)
		}
		// Five rows later: within the bound.
		if err := ingest(at("MID", 10, nil)); err != nil {
			t.Fatalf("a row before 5 rows: %v", err)
		}
		// A bank balance at 16:00 and six rows after it: a row of 14:30
		// re-derives up to 16:00 only.
		bank := int64(1_000)
		more := []recon.TransactionInput{at("B16", 16, &bank)}
		for h := 17; h < 23; h++ {
			more = append(more, at(fmt.Sprintf("R%d", h), h, nil))
		}
		if err := ingest(more...); err != nil {
			t.Fatal(err)
		}
		late := at("LATE", 14, nil)
		late.TransactionDate = late.TransactionDate.Add(30 * time.Minute)
		if err := ingest(late); err != nil {
			t.Fatalf("a row before a bank balance and 6 rows after it: %v", err)
		}
	})
}
