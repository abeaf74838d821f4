package recon

import (
	"strings"
	"unicode/utf8"
)

// The seller: the company's legal details and invoice settings
// (docs/invoices.md, The seller), set through PATCH /api/v1/company, the
// dashboard's settings and `recon company update`, all with SellerUpdate.

// InvoiceSettings is how a company issues invoices.
type InvoiceSettings struct {
	// Template is the default template of new invoices: InvoiceTemplateVAT
	// ("1", the default) or InvoiceTemplateSales ("2").
	Template string
	// Series is the default series of new invoices (e.g. C26TAA), "" when
	// not set yet: the series the company registered with the tax authority.
	Series string
	// AutoInvoice issues an invoice for each order that becomes paid.
	AutoInvoice bool
}

// Limits of the seller's fields, in bytes.
const (
	MaxSellerLegalName   = 400
	MaxSellerAddress     = 500
	MaxSellerEmail       = 255
	MaxSellerBankName    = 255
	MaxSellerBankAccount = 30
)

// RuleSellerIncomplete is the reason of an invoice refused because the
// company's legal details are not set.
const RuleSellerIncomplete = "seller_incomplete"

// SellerUpdate is a change of the seller's details and invoice settings:
// the fields given (non-nil) are set, the others kept. JSON names are the
// fields of PATCH /api/v1/company (docs/api.md, Company API).
type SellerUpdate struct {
	LegalName       *string `json:"legal_name,omitempty"`
	TaxCode         *string `json:"tax_code,omitempty"`
	Address         *string `json:"address,omitempty"`
	Phone           *string `json:"phone,omitempty"`
	Email           *string `json:"email,omitempty"`
	BankName        *string `json:"bank_name,omitempty"`
	BankAccount     *string `json:"bank_account,omitempty"`
	InvoiceTemplate *string `json:"invoice_template,omitempty"`
	InvoiceSeries   *string `json:"invoice_series,omitempty"`
	AutoInvoice     *bool   `json:"auto_invoice,omitempty"`
	// DuplicateWindowDays sets CompanyConfig.DuplicateWindowDays (0 to
	// MaxDuplicateWindowDays; docs/statements.md, Possible duplicates).
	DuplicateWindowDays *int `json:"duplicate_window_days,omitempty"`
}

// Empty reports whether u changes nothing.
func (u *SellerUpdate) Empty() bool { return *u == SellerUpdate{} }

// Apply sets u's fields on c (trimmed; the tax code in its canonical form,
// see NormalizeTaxCode) and checks the result with ValidateInvoicing. On
// error c may be half changed: apply it to a copy or inside
// CompanyStore.UpdateCompany, which then writes nothing.
func (u *SellerUpdate) Apply(c *CompanyConfig) error {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	s := &c.Seller
	set(&s.LegalName, u.LegalName)
	set(&s.Address, u.Address)
	set(&s.Phone, u.Phone)
	set(&s.Email, u.Email)
	set(&s.BankName, u.BankName)
	set(&s.BankAcct, u.BankAccount)
	set(&c.Invoicing.Template, u.InvoiceTemplate)
	set(&c.Invoicing.Series, u.InvoiceSeries)
	if u.TaxCode != nil {
		s.TaxCode = strings.TrimSpace(*u.TaxCode)
		if s.TaxCode != "" {
			norm, err := NormalizeTaxCode(s.TaxCode)
			if err != nil {
				return FieldError("tax_code", "tax_code: %v", err)
			}
			s.TaxCode = norm
		}
	}
	if u.AutoInvoice != nil {
		c.Invoicing.AutoInvoice = *u.AutoInvoice
	}
	if u.DuplicateWindowDays != nil {
		if err := CheckDuplicateWindow(*u.DuplicateWindowDays); err != nil {
			return err
		}
		c.DuplicateWindowDays = *u.DuplicateWindowDays
	}
	return c.ValidateInvoicing()
}

// ValidateInvoicing checks the seller's details and the invoice settings
// as stored: every field may be empty (not set yet) except the template,
// but a field that is set must be well-formed, and auto_invoice needs the
// legal name, tax code, address and series.
func (c *CompanyConfig) ValidateInvoicing() error {
	s := &c.Seller
	text := func(field, v string, max int) error {
		switch {
		case !utf8.ValidString(v):
			return FieldError(field, "%s must be UTF-8 text", field)
		case len(v) > max:
			return FieldError(field, "%s must be at most %d bytes", field, max)
		case strings.ContainsAny(v, "\x00\r\n\t"):
			return FieldError(field, "%s must be one line of text", field)
		}
		return nil
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"legal_name", s.LegalName, MaxSellerLegalName}, {"address", s.Address, MaxSellerAddress},
		{"email", s.Email, MaxSellerEmail}, {"bank_name", s.BankName, MaxSellerBankName},
		{"bank_account", s.BankAcct, MaxSellerBankAccount}, {"phone", s.Phone, 16},
	} {
		if err := text(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	if s.TaxCode != "" {
		if norm, err := NormalizeTaxCode(s.TaxCode); err != nil {
			return FieldError("tax_code", "tax_code: %v", err)
		} else if norm != s.TaxCode {
			return FieldError("tax_code", "tax_code must be written %s", norm)
		}
	}
	if p := s.Phone; p != "" {
		digits := strings.TrimPrefix(p, "+")
		if len(digits) < 8 || len(digits) > 15 || !allDigits(digits) {
			return FieldError("phone", "phone must be 8 to 15 digits, optionally after a +, not %q", p)
		}
	}
	if e := s.Email; e != "" {
		local, domain, ok := strings.Cut(e, "@")
		if !ok || local == "" || !strings.Contains(domain, ".") || strings.ContainsAny(e, " <>,;") || strings.Contains(domain, "@") {
			return FieldError("email", "email must be an address such as ketoan@example.vn, not %q", e)
		}
	}
	if a := s.BankAcct; a != "" && strings.Trim(a, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
		return FieldError("bank_account", "bank_account must be letters and digits only, not %q", a)
	}
	if !ValidInvoiceTemplate(c.Invoicing.Template) {
		return FieldError("invoice_template", "invoice_template must be %q (VAT invoice) or %q (sales invoice)", InvoiceTemplateVAT, InvoiceTemplateSales)
	}
	if c.Invoicing.Series != "" {
		if err := ValidateInvoiceSeries(c.Invoicing.Series); err != nil {
			return FieldError("invoice_series", "invoice_series: %v", err)
		}
	}
	if c.Invoicing.AutoInvoice {
		if missing := c.sellerMissing(); len(missing) > 0 {
			return FieldError("auto_invoice", "auto_invoice needs the seller's %s first", strings.Join(missing, ", "))
		}
	}
	return nil
}

// sellerMissing names what an invoice needs and the company lacks.
func (c *CompanyConfig) sellerMissing() []string {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"legal_name", c.Seller.LegalName}, {"tax_code", c.Seller.TaxCode}, {"address", c.Seller.Address}, {"invoice_series", c.Invoicing.Series},
	} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	return missing
}

// InvoiceSeller returns the seller an invoice names, or a 422 of reason
// seller_incomplete when the company has not set its legal name, tax code,
// address or default series yet.
func (c *CompanyConfig) InvoiceSeller() (Seller, error) {
	if missing := c.sellerMissing(); len(missing) > 0 {
		return Seller{}, RuleError(RuleSellerIncomplete, "set the company's %s before issuing invoices (PATCH /api/v1/company, the dashboard's settings or recon company update)", strings.Join(missing, ", "))
	}
	return c.Seller, nil
}
