package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestExceptionsWhereOrdersAreTaken: a credit naming no order opens an
// exception only for a company that takes orders, and a credit without a
// code only on an account that orders are paid into; the orders' checks
// for a batch over 150 accounts (more than one statement's worth) find
// the two accounts that take orders, wherever they fall.
func TestExceptionsWhereOrdersAreTaken(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		company := func(name string, accounts int) (*recon.Company, []int64) {
			t.Helper()
			co := &recon.Company{FullName: name, ShortName: name, Status: recon.CompanyActive, Config: recon.CompanyConfig{Paycode: true}}
			if err := db.CreateCompany(ctx, co); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ReplacePaymentCodeFormats(ctx, co.ID, []recon.PaymentCodeFormat{
				{Prefix: "DH", SuffixFrom: 4, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
				t.Fatal(err)
			}
			ids := make([]int64, accounts)
			for i := range ids {
				a := &recon.BankAccount{CompanyID: co.ID, BankName: "VCB", AccountNumber: fmt.Sprintf("%s%03d", name, i)}
				if err := db.CreateBankAccount(ctx, a); err != nil {
					t.Fatal(err)
				}
				ids[i] = a.ID
			}
			return co, ids
		}
		// One credit without a code into each account, then one naming
		// an order that does not exist.
		push := func(co *recon.Company, accounts []int64) []recon.IngestResult {
			t.Helper()
			var in []recon.TransactionInput
			for i, a := range accounts {
				in = append(in, recon.TransactionInput{BankAccountID: a, TransactionDate: day, AmountIn: 50_000, Content: "chuyen tien", ReferenceNumber: fmt.Sprintf("N%d", i)})
			}
			in = append(in, recon.TransactionInput{BankAccountID: accounts[0], TransactionDate: day, AmountIn: 70_000, Content: "thanh toan DH99999", ReferenceNumber: "U1"})
			res, err := recon.Ingest(ctx, db, co.Tenant(), day, in)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}

		shop, accounts := company("SHOP", 150)
		for _, i := range []int{3, 120} {
			if err := db.CreateOrder(ctx, &recon.Order{CompanyID: shop.ID, InvoiceNumber: fmt.Sprint("INV", i), PaymentCode: fmt.Sprint("DH1000", i), Amount: 100_000, BankAccountID: accounts[i]}); err != nil {
				t.Fatal(err)
			}
		}
		res := push(shop, accounts)
		var opened []int
		for i, r := range res {
			if r.Exception {
				opened = append(opened, i)
			}
		}
		if want := []int{3, 120, 150}; fmt.Sprint(opened) != fmt.Sprint(want) {
			t.Errorf("exceptions opened for inputs %v, want %v (the accounts taking orders, and the unknown code)", opened, want)
		}

		quiet, accounts := company("QUIET", 2)
		for i, r := range push(quiet, accounts) {
			if r.Exception {
				t.Errorf("input %d of a company without orders opened an exception", i)
			}
		}
	})
}
