package sqlstore_test

import (
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestMigrationBackfillsDeliveryOrders: migration 00018 gives the IPNs
// written before it their order (read from the payload), only an order of
// the same tenant, and nothing to other notifications.
func TestMigrationBackfillsDeliveryOrders(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		c := &recon.Company{FullName: "Sao Mai", ShortName: "saomai", Status: recon.CompanyActive, Subscription: "standard",
			Config: recon.CompanyConfig{DataStorageDays: 30}}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		b := &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: "111", HolderName: "SAO MAI"}
		if err := db.CreateBankAccount(ctx, b); err != nil {
			t.Fatal(err)
		}
		o := &recon.Order{CompanyID: c.ID, InvoiceNumber: "A", PaymentCode: "DH1", Amount: 100_000, BankAccountID: b.ID}
		if err := db.CreateOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		if err := db.SetIPN(ctx, c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
			t.Fatal(err)
		}
		in := recon.TransactionInput{BankAccountID: b.ID, TransactionDate: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), AmountIn: 100_000,
			Content: "DH1", ReferenceNumber: "R1"}
		if _, err := db.IngestTransactions(ctx, c.Tenant(), []recon.TransactionInput{in}, []string{"DH1"}); err != nil {
			t.Fatal(err)
		}
		// Another IPN whose payload names an order id of no order of the tenant.
		other := &recon.Delivery{CompanyID: c.ID, Kind: recon.DeliveryIPN, Event: recon.IPNOrderPaid, Payload: []byte(`{"order":{"id":"999999"}}`)}
		if err := db.EnqueueDelivery(ctx, other); err != nil {
			t.Fatal(err)
		}
		if err := db.MigrateTo(ctx, 17); err != nil {
			t.Fatal(err)
		}
		if err := db.MigrateTo(ctx, 18); err != nil {
			t.Fatal(err)
		}
		got, err := db.OrderDeliveries(ctx, c.Tenant(), o, 10)
		if err != nil || len(got) != 1 || got[0].OrderID != o.ID || got[0].Event != recon.IPNOrderPaid {
			t.Fatalf("after the backfill: %v, %v", got, err)
		}
		d, err := db.Delivery(ctx, c.Tenant(), other.ID)
		if err != nil || d.OrderID != 0 {
			t.Fatalf("an IPN naming no order of the tenant: %+v, %v", d, err)
		}
	})
}
