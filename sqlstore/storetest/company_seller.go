package storetest

import (
	"testing"

	"recon"
)

// The seller of a company's invoices (docs/invoices.md, The seller): stored
// with the company, read by its test tenant, checked again by the store.

func sp(v string) *string { return &v }

func bp(v bool) *bool { return &v }

func testCompanySeller(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	if c.Config.Invoicing.Template != recon.InvoiceTemplateVAT {
		t.Fatalf("new company's template %q, want %q", c.Config.Invoicing.Template, recon.InvoiceTemplateVAT)
	}
	up := recon.SellerUpdate{
		LegalName: sp("Công ty TNHH Thanh Toán Việt"), TaxCode: sp(" 0100112437001 "), Address: sp("1 Lý Thường Kiệt, Hoàn Kiếm, Hà Nội"),
		Phone: sp("+842439341234"), Email: sp("ketoan@thanhtoan.vn"), BankName: sp("Vietcombank"), BankAccount: sp("0011004123456"),
		InvoiceTemplate: sp("2"), InvoiceSeries: sp("C26TAA"), AutoInvoice: bp(true),
	}
	got, err := s.UpdateCompany(t.Context(), c.ID, func(u *recon.Company) error { return up.Apply(&u.Config) })
	if err != nil {
		t.Fatalf("UpdateCompany: %v", err)
	}
	want := *c
	want.Config.Seller = recon.Seller{
		LegalName: "Công ty TNHH Thanh Toán Việt", TaxCode: "0100112437-001", Address: "1 Lý Thường Kiệt, Hoàn Kiếm, Hà Nội",
		Phone: "+842439341234", Email: "ketoan@thanhtoan.vn", BankName: "Vietcombank", BankAcct: "0011004123456",
	}
	want.Config.Invoicing = recon.InvoiceSettings{Template: "2", Series: "C26TAA", AutoInvoice: true}
	diff(t, "returned company", &want, got)
	stored, err := s.Company(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "stored company", &want, stored)
	list, err := s.Companies(t.Context())
	if err != nil || len(list) != 2 {
		t.Fatalf("Companies = %v, %v", list, err)
	}
	diff(t, "listed seller", want.Config.Seller, list[0].Config.Seller)
	diff(t, "other company's seller", other.Config.Seller, list[1].Config.Seller)
	// The test tenant reads its company's seller.
	tt := testTenant(t, s, c.ID)
	co, err := s.Company(t.Context(), tt.ID.ID())
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "seller in test mode", want.Config.Seller, co.Config.Seller)
	diff(t, "invoicing in test mode", want.Config.Invoicing, co.Config.Invoicing)
	// A partial update keeps the rest; an empty tax code clears it.
	got, err = s.UpdateCompany(t.Context(), c.ID, func(u *recon.Company) error {
		return (&recon.SellerUpdate{AutoInvoice: bp(false), TaxCode: sp("")}).Apply(&u.Config)
	})
	if err != nil {
		t.Fatal(err)
	}
	want.Config.Seller.TaxCode, want.Config.Invoicing.AutoInvoice = "", false
	diff(t, "after a partial update", &want, got)
	if _, err := got.Config.InvoiceSeller(); recon.ErrorReason(err) != recon.RuleSellerIncomplete {
		t.Fatalf("InvoiceSeller without a tax code: %v", err)
	}
}

func testCompanySellerRefusedStoresNothing(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	for _, tc := range []struct {
		up    recon.SellerUpdate
		field string
	}{
		{recon.SellerUpdate{LegalName: sp("X"), TaxCode: sp("0100112438")}, "tax_code"},
		{recon.SellerUpdate{LegalName: sp("X"), TaxCode: sp("0100112437-000")}, "tax_code"},
		{recon.SellerUpdate{LegalName: sp("X"), InvoiceSeries: sp("C26ZAA")}, "invoice_series"},
		{recon.SellerUpdate{LegalName: sp("X"), InvoiceTemplate: sp("3")}, "invoice_template"},
		{recon.SellerUpdate{LegalName: sp("X"), AutoInvoice: bp(true)}, "auto_invoice"},
		{recon.SellerUpdate{LegalName: sp("X"), Email: sp("not-an-address")}, "email"},
	} {
		_, err := s.UpdateCompany(t.Context(), c.ID, func(u *recon.Company) error { return tc.up.Apply(&u.Config) })
		wantCode(t, err, recon.EINVALID, "")
		if e, ok := err.(*recon.Error); !ok || len(e.Fields[tc.field]) == 0 {
			t.Errorf("error %v does not name %s", err, tc.field)
		}
	}
	// The store checks what it writes, whoever changed it.
	_, err := s.UpdateCompany(t.Context(), c.ID, func(u *recon.Company) error {
		u.Config.Seller.LegalName, u.Config.Seller.TaxCode = "X", "0100112438"
		return nil
	})
	wantCode(t, err, recon.EINVALID, "")
	got, err := s.Company(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "company after refused updates", c, got)
}
