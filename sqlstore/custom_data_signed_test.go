package sqlstore_test

import (
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestMigrationMarksCustomDataUnsigned: migration 00023 marks the orders
// made before it, whose custom_data no signature covered, unsigned, except
// those without custom data; an order made after it keeps what checkout
// said, and one without custom data is signed (docs/api.md, Payment gateway).
func TestMigrationMarksCustomDataUnsigned(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		c := &recon.Company{FullName: "Sao Mai", ShortName: "saomai", Status: recon.CompanyActive, Subscription: "standard",
			Config: recon.CompanyConfig{DataStorageDays: 30}}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		for _, o := range []*recon.Order{
			{CompanyID: c.ID, InvoiceNumber: "DATA", PaymentCode: "DH1", Amount: 1, CustomData: `["x"]`, CustomDataSigned: true},
			{CompanyID: c.ID, InvoiceNumber: "UNSIGNED", PaymentCode: "DH2", Amount: 1, CustomData: `["x"]`},
			{CompanyID: c.ID, InvoiceNumber: "EMPTY", PaymentCode: "DH3", Amount: 1},
		} {
			if err := db.CreateOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		check := func(when string, want map[string]bool) {
			t.Helper()
			for invoice, signed := range want {
				o, err := db.Order(ctx, c.Tenant(), invoice)
				if err != nil || o.CustomDataSigned != signed {
					t.Fatalf("%s: %s signed %v (%v), want %v", when, invoice, o.CustomDataSigned, err, signed)
				}
			}
		}
		check("made now", map[string]bool{"DATA": true, "UNSIGNED": false, "EMPTY": true})
		if err := db.MigrateTo(ctx, 22); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil { // 00023 and what follows it, which reading an order needs
			t.Fatal(err)
		}
		check("made before 00023", map[string]bool{"DATA": false, "UNSIGNED": false, "EMPTY": true})
	})
}
