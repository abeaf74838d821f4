package sqlstore_test

import (
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestMigrationAddsPaymentCodesToTheSearch: migration 00037 adds the
// payment code to the orders search of the orders made before it (its Down
// takes it out again), and an order made after it is found by its code at
// once (docs/dashboard.md, Links between pages).
func TestMigrationAddsPaymentCodesToTheSearch(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		c := &recon.Company{FullName: "Sao Mai", ShortName: "saomai", Status: recon.CompanyActive, Subscription: "standard",
			Config: recon.CompanyConfig{DataStorageDays: 30}}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		found := func(q string) []string {
			t.Helper()
			list, _, err := db.Orders(ctx, c.Tenant(), recon.OrderFilter{Query: q, Page: 1, PerPage: 10})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, o := range list {
				out = append(out, o.InvoiceNumber)
			}
			return out
		}
		if err := db.CreateOrder(ctx, &recon.Order{CompanyID: c.ID, InvoiceNumber: "BEFORE", PaymentCode: "DH7001", Amount: 1}); err != nil {
			t.Fatal(err)
		}
		if got := found("dh7001"); len(got) != 1 {
			t.Fatalf("made now: %v", got)
		}
		if err := db.MigrateTo(ctx, 36); err != nil { // 00037's Down: the search without codes
			t.Fatal(err)
		}
		if got := found("dh7001"); len(got) != 0 {
			t.Fatalf("before 00037: %v", got)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if got := found("dh7001"); len(got) != 1 || got[0] != "BEFORE" {
			t.Fatalf("made before 00037: %v", got)
		}
		if got := found("before"); len(got) != 1 {
			t.Fatalf("the invoice number after 00037: %v", got)
		}
	})
}
