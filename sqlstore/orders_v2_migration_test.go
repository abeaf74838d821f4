package sqlstore_test

import (
	"fmt"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestMigrationGivesOrdersPublicIDs: migration 00026 gives every order made
// before it a v2 id derived from its row id (docs/api-v2.md, Orders), the
// same on both engines, by which it is read; orders made after it get a
// random one from the store's randomness.
func TestMigrationGivesOrdersPublicIDs(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		c := &recon.Company{FullName: "Sao Mai", ShortName: "saomai", Status: recon.CompanyActive, Subscription: "standard",
			Config: recon.CompanyConfig{DataStorageDays: 30}}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		var orders []*recon.Order
		for i := range 2 {
			o := &recon.Order{CompanyID: c.ID, InvoiceNumber: fmt.Sprintf("OLD-%d", i), PaymentCode: fmt.Sprintf("DH%d", i), Amount: 1}
			if err := db.CreateOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
			if !recon.ValidXID(o.PublicID) {
				t.Fatalf("made now: public id %q", o.PublicID)
			}
			orders = append(orders, o)
		}
		if orders[0].PublicID == orders[1].PublicID {
			t.Fatal("two orders drew the same public id")
		}
		if err := db.MigrateTo(ctx, 25); err != nil {
			t.Fatal(err)
		}
		if err := db.MigrateTo(ctx, 26); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil { // the later migrations, which the store's queries read
			t.Fatal(err)
		}
		for _, o := range orders {
			want := fmt.Sprintf("00000000-0000-4000-8000-%012d", o.ID)
			got, err := db.OrderByPublicID(ctx, c.Tenant(), want)
			if err != nil || got.InvoiceNumber != o.InvoiceNumber || !recon.ValidXID(want) {
				t.Fatalf("%s: read by %s: %v, %v", o.InvoiceNumber, want, got, err)
			}
		}
	})
}
