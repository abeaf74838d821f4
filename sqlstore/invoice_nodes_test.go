package sqlstore_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestInvoiceNumberingTwoNodes is the numbering's promise (docs/invoices.md,
// Numbering) with two nodes: 500 invoices issued from 20 goroutines over two
// *sqlstore.DB handles on one database, half created to issue and half
// drafts issued, some answered failed on the way; the numbers are exactly
// 1..500. On PostgreSQL the nodes race on the counter row's lock; on
// SQLite on the file's writer lock.
func TestInvoiceNumberingTwoNodes(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		url := dbtest.NewURL(t, engine)
		nodes := []*sqlstore.DB{dbtest.OpenURL(t, url), dbtest.OpenURL(t, url)}
		ctx := t.Context()
		c := &recon.Company{FullName: "Sao Mai Ltd", ShortName: "saomai", Status: recon.CompanyActive, Subscription: "standard",
			Config: recon.CompanyConfig{DataStorageDays: 30}}
		if err := nodes[0].CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		tenant := c.Tenant()
		at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		content := func() *recon.Invoice {
			return &recon.Invoice{TemplateCode: recon.InvoiceTemplateVAT, Series: "C26TAA", IssuedDate: at, Currency: "VND", ExchangeRate: "1",
				PaymentMethod: "TM/CK", Buyer: recon.Buyer{Name: "Khách lẻ"},
				Items:  []recon.InvoiceItem{{LineNumber: 1, LineType: recon.LineGoods, ItemName: "Hàng", Quantity: "1", UnitPrice: 1000, VATRate: recon.VAT10, Amount: 1000, VATAmount: 100}},
				Totals: recon.InvoiceTotals{TotalBeforeTax: 1000, VATTotal: 100, TotalAmount: 1100}}
		}
		const workers, each = 20, 25
		drafts := make([]string, workers*each)
		for i := range drafts {
			if i%2 == 1 {
				d, err := nodes[i%2].CreateInvoice(ctx, tenant, content(), false, "", at)
				if err != nil {
					t.Fatal(err)
				}
				drafts[i] = d.ReferenceCode
			}
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		numbers := make(chan int64, workers*each)
		errs := make(chan error, workers*each)
		for w := range workers {
			node := nodes[w%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range each {
					k := w*each + i
					var inv *recon.Invoice
					var err error
					if drafts[k] == "" {
						inv, err = node.CreateInvoice(ctx, tenant, content(), true, "sandbox", at)
					} else {
						inv, err = node.IssueInvoice(ctx, tenant, drafts[k], at, "sandbox", at)
					}
					if err == nil && k%7 == 0 {
						_, err = node.RecordInvoiceAnswer(ctx, tenant, inv.ReferenceCode, recon.InvoiceAnswer{Failure: "refused"}, at)
					}
					if err != nil {
						errs <- err
						return
					}
					numbers <- inv.Number
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		close(numbers)
		for err := range errs {
			t.Fatal(err)
		}
		var got []int64
		for n := range numbers {
			got = append(got, n)
		}
		slices.Sort(got)
		for i, n := range got {
			if n != int64(i+1) {
				t.Fatalf("numbers are not exactly 1..%d: at %d got %d (%d numbers)", workers*each, i, n, len(got))
			}
		}
		if len(got) != workers*each {
			t.Fatalf("%d numbers, want %d", len(got), workers*each)
		}
		// What is stored agrees: 500 numbered invoices, 1..500.
		list, total, err := nodes[1].Invoices(ctx, tenant, recon.InvoiceFilter{PerPage: 1000})
		if err != nil || total != workers*each {
			t.Fatalf("stored: %d, %v", total, err)
		}
		var stored []int64
		for _, inv := range list {
			stored = append(stored, inv.Number)
		}
		slices.Sort(stored)
		if !slices.Equal(stored, got) {
			t.Fatal("the stored numbers differ from the issued ones")
		}
	})
}
