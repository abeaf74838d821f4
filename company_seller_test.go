package recon

import "testing"

func TestSellerUpdate(t *testing.T) {
	s := func(v string) *string { return &v }
	yes := true
	base := func() CompanyConfig { return CompanyConfig{Invoicing: InvoiceSettings{Template: InvoiceTemplateVAT}} }

	c := base()
	up := SellerUpdate{LegalName: s("  Công ty A "), TaxCode: s("0100109106-002"), Address: s("Hà Nội"), InvoiceSeries: s("K26TAB"), AutoInvoice: &yes}
	if err := up.Apply(&c); err != nil {
		t.Fatal(err)
	}
	if c.Seller.LegalName != "Công ty A" || c.Seller.TaxCode != "0100109106-002" || c.Invoicing != (InvoiceSettings{"1", "K26TAB", true}) {
		t.Fatalf("applied: %+v", c)
	}
	if seller, err := c.InvoiceSeller(); err != nil || seller.TaxCode != "0100109106-002" {
		t.Fatalf("InvoiceSeller: %+v %v", seller, err)
	}
	if (&SellerUpdate{}).Empty() != true || up.Empty() {
		t.Fatal("Empty")
	}

	for _, tc := range []struct {
		name  string
		up    SellerUpdate
		field string
	}{
		{"check digit", SellerUpdate{TaxCode: s("0100109107")}, "tax_code"},
		{"dots", SellerUpdate{TaxCode: s("0100.109.106")}, "tax_code"},
		{"12 digits", SellerUpdate{TaxCode: s("001099012345")}, "tax_code"},
		{"template", SellerUpdate{InvoiceTemplate: s("")}, "invoice_template"},
		{"series type", SellerUpdate{InvoiceSeries: s("C26ABC")}, "invoice_series"},
		{"series length", SellerUpdate{InvoiceSeries: s("C26T")}, "invoice_series"},
		{"auto without seller", SellerUpdate{AutoInvoice: &yes}, "auto_invoice"},
		{"two lines", SellerUpdate{Address: s("a\nb")}, "address"},
		{"long name", SellerUpdate{LegalName: s(string(make([]byte, MaxSellerLegalName+1)))}, "legal_name"},
		{"invalid UTF-8", SellerUpdate{LegalName: s("\xff")}, "legal_name"},
		{"phone", SellerUpdate{Phone: s("+84 24 3934")}, "phone"},
		{"email", SellerUpdate{Email: s("a@b")}, "email"},
		{"bank account", SellerUpdate{BankAccount: s("0011-004")}, "bank_account"},
	} {
		c := base()
		err := tc.up.Apply(&c)
		e, ok := err.(*Error)
		if !ok || e.Code != EINVALID || len(e.Fields[tc.field]) == 0 {
			t.Errorf("%s: %v, want EINVALID naming %s", tc.name, err, tc.field)
		}
	}
	c = base()
	if _, err := c.InvoiceSeller(); ErrorCode(err) != EUNPROCESSABLE || ErrorReason(err) != RuleSellerIncomplete {
		t.Errorf("InvoiceSeller of an empty seller: %v", err)
	}
}
