package client

import (
	"context"
	"encoding/json"
)

// Company is the caller's company (spec §2.1; docs/api.md, Company API).
type Company struct {
	ID             int64         `json:"id"`
	FullName       string        `json:"full_name"`
	ShortName      string        `json:"short_name"`
	Role           string        `json:"role"` // the caller's role: SuperAdmin, Admin, ...
	Status         string        `json:"status"`
	Subscription   string        `json:"subscription"`
	BeginDate      string        `json:"begin_date"` // YYYY-MM-DD
	EndDate        string        `json:"end_date"`
	Configurations Configuration `json:"configurations"`
	Seller         Seller        `json:"seller"`
	Invoicing      Invoicing     `json:"invoicing"`
}

// Seller is the company as its e-invoices name it (docs/invoices.md, The
// seller); "" for what is not set yet.
type Seller struct {
	LegalName   string `json:"legal_name"`
	TaxCode     string `json:"tax_code"` // 0123456789 or 0123456789-001
	Address     string `json:"address"`
	Phone       string `json:"phone"`
	Email       string `json:"email"`
	BankName    string `json:"bank_name"`
	BankAccount string `json:"bank_account"`
}

// Invoicing is how the company issues invoices.
type Invoicing struct {
	InvoiceTemplate string `json:"invoice_template"` // "1" VAT invoice, "2" sales invoice
	InvoiceSeries   string `json:"invoice_series"`   // e.g. C26TAA
	AutoInvoice     bool   `json:"auto_invoice"`
}

// SellerUpdate is a change of the seller's details and invoice settings:
// nil fields are kept.
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
}

// Configuration is a company's configuration (spec §2.2; docs/api.md, Company
// API).
type Configuration struct {
	BankSubAccount bool `json:"bank_sub_account"`
	Paycode        bool `json:"paycode"`
	// DataStorageTime is the retention in days, as the spec types it ("0": keep all).
	DataStorageTime    string              `json:"data_storage_time"`
	PaymentCodeFormats []PaymentCodeFormat `json:"payment_code_formats"`
}

// Character types of a payment-code format.
const (
	NumberOnly      = "NumberOnly"
	NumberAndLetter = "NumberAndLetter"
)

// PaymentCodeFormat is a payment-code format (spec §2.3; docs/api.md, Company
// API): a prefix and a suffix of SuffixFrom to SuffixTo characters.
type PaymentCodeFormat struct {
	Prefix        string `json:"prefix"`
	SuffixFrom    int    `json:"suffix_from"`
	SuffixTo      int    `json:"suffix_to"`
	CharacterType string `json:"character_type"` // NumberOnly or NumberAndLetter
	IsActive      bool   `json:"is_active"`
}

// MarshalJSON writes the request form: is_active as the integer 0 or 1,
// as the API requires (answers render it as a boolean).
func (f PaymentCodeFormat) MarshalJSON() ([]byte, error) {
	active := 0
	if f.IsActive {
		active = 1
	}
	return json.Marshal(struct {
		Prefix        string `json:"prefix"`
		SuffixFrom    int    `json:"suffix_from"`
		SuffixTo      int    `json:"suffix_to"`
		CharacterType string `json:"character_type"`
		IsActive      int    `json:"is_active"`
	}{f.Prefix, f.SuffixFrom, f.SuffixTo, f.CharacterType, active})
}

// Company returns the caller's company: GET /api/v1/company. It needs a
// user token with scope company whose user is Admin or SuperAdmin.
func (c *Client) Company(ctx context.Context) (*Company, error) {
	var out envelope[Company]
	if _, err := c.do(ctx, &request{method: "GET", path: "/api/v1/company", auth: authBearer, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// UpdateSeller sets the seller's details and invoice settings given:
// PATCH /api/v1/company. A field that fails its check (a tax code with a
// wrong check digit, ...) is an *Error with Code validation_error naming it.
func (c *Client) UpdateSeller(ctx context.Context, u SellerUpdate) (*Company, error) {
	var out envelope[Company]
	if _, err := c.do(ctx, &request{method: "PATCH", path: "/api/v1/company", auth: authBearer, json: u, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// SetPaymentCodeFormats replaces the company's payment-code formats (an
// empty list clears them): PATCH /api/v1/company/configurations. A format
// the rules refuse is an *Error with Code validation_error and the server's
// message ("Format #1: ...").
func (c *Client) SetPaymentCodeFormats(ctx context.Context, formats []PaymentCodeFormat) (*Configuration, error) {
	if formats == nil {
		formats = []PaymentCodeFormat{}
	}
	var out envelope[struct {
		Data Configuration `json:"data"`
	}]
	// The list replaces the stored one: sending it twice is harmless.
	_, err := c.do(ctx, &request{method: "PATCH", path: "/api/v1/company/configurations", auth: authBearer,
		json: map[string]any{"payment_code_formats": formats}, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out.Data.Data, nil
}

// MemoExplanation says which payment code a memo holds and why (POST
// /api/v1/company/try-memo).
type MemoExplanation struct {
	Memo       string  `json:"memo"`
	Normalized string  `json:"normalized"` // what the rules read: no diacritics, upper case
	Code       *string `json:"code"`       // nil when the memo holds none
	Summary    string  `json:"summary"`
	Candidates []struct {
		Position int    `json:"position"` // in characters of Normalized
		Format   int    `json:"format"`   // 1-based number of the format
		Prefix   string `json:"prefix"`
		Text     string `json:"text"`
		Match    bool   `json:"match"`
		Reason   string `json:"reason"`
	} `json:"candidates"`
	Ignored []string `json:"ignored"` // inactive or unusable formats
}

// TryMemo explains which payment code the company's formats find in memo,
// or, with formats not nil, those formats (checked as SetPaymentCodeFormats
// checks them, nothing stored): POST /api/v1/company/try-memo.
func (c *Client) TryMemo(ctx context.Context, memo string, formats []PaymentCodeFormat) (*MemoExplanation, error) {
	body := map[string]any{"memo": memo}
	if formats != nil {
		body["payment_code_formats"] = formats
	}
	var out envelope[MemoExplanation]
	if _, err := c.do(ctx, &request{method: "POST", path: "/api/v1/company/try-memo", auth: authBearer, json: body, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}
