package apiv2

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/recon-vn/recon/client"
	"recon/sqlstore/dbtest"
)

// TestInvoiceSDK drives the Go SDK's invoice calls (client/invoices.go)
// against a real Handler: create (with a key a retry replays), check,
// issue a draft, replace, adjust, cancel with the rules' codes in
// *client.Error, read, list, the XML and PDF files and provider accounts.
func TestInvoiceSDK(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newInvoiceEnv(t, engine)
		sdk := func(token string) *client.V2 {
			c, err := client.New(e.url, client.WithTokenSource(client.StaticToken(token)))
			if err != nil {
				t.Fatal(err)
			}
			return c.V2()
		}
		shop, live := sdk("test"), sdk("admin")
		in := client.InvoiceRequest{Buyer: &client.InvoiceBuyer{Name: "Nguyễn Văn A", TaxCode: "0100112437"},
			Items: []client.InvoiceItemInput{{ItemName: "Áo thun", Quantity: "2", UnitPrice: 50_000, VATRate: "10"}}}
		var replayed bool
		inv, err := shop.CreateInvoice(ctx, in, client.WithIdempotencyKey("inv-sdk-1"), client.Replayed(&replayed))
		if err != nil || inv.Status != client.InvoicePending || inv.Number == nil || *inv.Number != 1 || inv.Totals.TotalAmount != 110_000 || replayed {
			t.Fatalf("created: %+v %v", inv, err)
		}
		again, err := shop.CreateInvoice(ctx, in, client.WithIdempotencyKey("inv-sdk-1"), client.Replayed(&replayed))
		if err != nil || again.ReferenceCode != inv.ReferenceCode || !replayed {
			t.Fatalf("retried: %+v %v %v", again, replayed, err)
		}
		if c, err := shop.CheckInvoice(ctx, inv.TrackingCode); err != nil || c.Status != client.InvoiceCheckPending {
			t.Fatalf("check: %+v %v", c, err)
		}
		_, err = shop.CancelInvoice(ctx, inv.ReferenceCode, "sai")
		if ce := (*client.Error)(nil); !errors.As(err, &ce) || ce.StatusCode != 422 || ce.Code != client.CodeInvoiceNotIssued {
			t.Fatalf("cancel a pending invoice: %v", err)
		}
		e.answered(t)
		if c, err := shop.CheckInvoice(ctx, inv.TrackingCode); err != nil || c.Status != client.InvoiceCheckSuccess || c.Invoice.CQTCode == "" {
			t.Fatalf("check after the answer: %+v %v", c, err)
		}
		in.AdjustmentType = "increase"
		adj, err := shop.AdjustInvoice(ctx, inv.ReferenceCode, in)
		if err != nil || adj.OriginalReferenceCode != inv.ReferenceCode || adj.AdjustmentType != "increase" {
			t.Fatalf("adjust: %+v %v", adj, err)
		}
		in.AdjustmentType = ""
		rep, err := shop.ReplaceInvoice(ctx, inv.ReferenceCode, in)
		if err != nil || rep.OriginalReferenceCode != inv.ReferenceCode {
			t.Fatalf("replace: %+v %v", rep, err)
		}
		_, err = shop.ReplaceInvoice(ctx, inv.ReferenceCode, in)
		if ce := (*client.Error)(nil); !errors.As(err, &ce) || ce.Code != client.CodeInvoiceAlreadyReplaced {
			t.Fatalf("replace twice: %v", err)
		}
		in.IsDraft = true
		draft, err := shop.CreateInvoice(ctx, in)
		if err != nil || draft.Number != nil || draft.IssuedDate != nil {
			t.Fatalf("draft: %+v %v", draft, err)
		}
		if got, err := shop.IssueInvoice(ctx, draft.ReferenceCode); err != nil || got.Status != client.InvoicePending {
			t.Fatalf("issue: %+v %v", got, err)
		}
		if got, err := shop.Invoice(ctx, inv.ReferenceCode); err != nil || got.Status != client.InvoiceReplaced {
			t.Fatalf("the replaced original: %+v %v", got, err)
		}
		n := 0
		for got, err := range shop.AllInvoices(ctx, client.InvoiceFilter{PerPage: 2}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			_ = got
		}
		if n != 4 {
			t.Errorf("AllInvoices walked %d, want 4", n)
		}
		xml, err := shop.InvoiceXML(ctx, inv.ReferenceCode)
		if err != nil || !bytes.Contains(xml, []byte("<HDon")) {
			t.Errorf("xml: %v %.100s", err, xml)
		}
		pdf, err := shop.InvoicePDF(ctx, inv.ReferenceCode)
		if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF")) {
			t.Errorf("pdf: %v", err)
		}
		if _, err := shop.InvoiceXML(ctx, "nope"); err == nil {
			t.Error("the XML of no invoice")
		}
		if accts, canSend, err := shop.InvoiceProviderAccounts(ctx); err != nil || !canSend || len(accts) != 1 || !accts[0].Sandbox {
			t.Errorf("test provider accounts: %+v %v %v", accts, canSend, err)
		}
		if accts, canSend, err := live.InvoiceProviderAccounts(ctx); err != nil || canSend || len(accts) != 0 {
			t.Errorf("live provider accounts: %+v %v %v", accts, canSend, err)
		}
		in.IsDraft = false
		_, err = live.CreateInvoice(ctx, in)
		if ce := (*client.Error)(nil); !errors.As(err, &ce) || ce.Code != client.CodeInvoiceProviderUnavailable {
			t.Errorf("live issue: %v", err)
		}
	})
}
