package checkout_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/checkout"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestService runs Create, Cancel and Void against a real database, without
// HTTP: each row acts on the company as the rows before left it.
func TestService(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		c := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
			Config: recon.CompanyConfig{Paycode: true, DataStorageDays: 365}}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		svc := &checkout.Service{Store: db, Clock: testkit.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)),
			NewCode: func() string { return "DH12345678" }}
		in := checkout.Input{InvoiceNumber: "INV-1", Amount: 150000, CustomData: "[]"}
		for _, tc := range []struct {
			name    string
			prepare func() error
			act     func() (*recon.Order, error)
			code    string // the error's code, or "" on success
			message string // its message when it has one
			status  string // the order's status after a success
		}{
			{name: "no bank account", act: func() (*recon.Order, error) { return svc.Create(ctx, c.Tenant(), in) },
				code: recon.EINVALID, message: "merchant has no bank account to receive the payment"},
			{name: "no active format",
				prepare: func() error {
					return db.CreateBankAccount(ctx, &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: "0011223344", HolderName: "SAO MAI"})
				},
				act:  func() (*recon.Order, error) { return svc.Create(ctx, c.Tenant(), in) },
				code: recon.EINVALID, message: "the merchant cannot take bank-transfer payments yet: payment codes must be on (paycode) with an active payment-code format"},
			{name: "created",
				prepare: func() error {
					_, err := db.ReplacePaymentCodeFormats(ctx, c.ID, []recon.PaymentCodeFormat{
						{Prefix: "DH", SuffixFrom: 8, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}})
					return err
				},
				act:    func() (*recon.Order, error) { return svc.Create(ctx, c.Tenant(), in) },
				status: recon.OrderAwaitingPayment},
			{name: "invoice taken", act: func() (*recon.Order, error) { return svc.Create(ctx, c.Tenant(), in) },
				code: recon.ECONFLICT, message: `order_invoice_number "INV-1" already exists for this merchant`},
			{name: "code taken five times and the format too large to list",
				act: func() (*recon.Order, error) {
					return svc.Create(ctx, c.Tenant(), checkout.Input{InvoiceNumber: "INV-2", Amount: 1, CustomData: "[]"})
				},
				code: recon.ECONFLICT, message: "payment-code format DH followed by 8 digits: 1 of 100000000 payment codes are used and 5 random draws were all taken: retry, and make suffix_to longer or put a wider format first"},
			{name: "void of an unpaid order", act: func() (*recon.Order, error) { return svc.Void(ctx, c.Tenant(), "INV-1") },
				code: recon.ECONFLICT},
			{name: "cancel", act: func() (*recon.Order, error) { return svc.Cancel(ctx, c.Tenant(), "INV-1") },
				status: recon.OrderCancelled},
			{name: "cancel again", act: func() (*recon.Order, error) { return svc.Cancel(ctx, c.Tenant(), "INV-1") },
				code: recon.ECONFLICT},
		} {
			if tc.prepare != nil {
				if err := tc.prepare(); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
			}
			o, err := tc.act()
			if recon.ErrorCode(err) != tc.code || tc.message != "" && recon.ErrorMessage(err) != tc.message {
				t.Fatalf("%s: err %v, want %s %q", tc.name, err, tc.code, tc.message)
			}
			if err != nil {
				continue
			}
			stored, err := db.Order(ctx, c.Tenant(), o.InvoiceNumber)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != tc.status || stored.PaymentCode != "DH12345678" || !strings.HasPrefix(stored.CustomData, "[") {
				t.Errorf("%s: stored %s with code %s, custom data %q; want %s", tc.name, stored.Status, stored.PaymentCode, stored.CustomData, tc.status)
			}
		}
	})
}
