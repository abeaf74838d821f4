package recon

import (
	"context"
	"time"
)

// Electronic invoices (docs/invoices.md): Vietnamese e-invoices under Decree
// 123/2020/ND-CP and Circular 78/2021/TT-BTC, issued by the company (the
// seller) for a sale, usually a paid order, and sent to the tax authority
// through a provider. This file is the contract the invoice packages share:
// the types, their states and the store; the rules live beside it
// (invoice_*.go).

// Invoice statuses.
const (
	InvoiceDraft     = "draft"     // kept as a draft: no number, may still change
	InvoicePending   = "pending"   // numbered and sent to the provider, no answer yet
	InvoiceIssued    = "issued"    // accepted by the tax authority (through the provider)
	InvoiceFailed    = "failed"    // refused by the provider; its number stays used
	InvoiceCancelled = "cancelled" // an issued invoice cancelled, with a reason
	InvoiceReplaced  = "replaced"  // an issued invoice a replacement took the place of
	InvoiceAdjusted  = "adjusted"  // an issued invoice with at least one adjustment
)

// InvoiceStatuses lists every status.
var InvoiceStatuses = []string{InvoiceDraft, InvoicePending, InvoiceIssued, InvoiceFailed, InvoiceCancelled, InvoiceReplaced, InvoiceAdjusted}

// Invoice templates (KHMSHDon): the kind of invoice.
const (
	InvoiceTemplateVAT   = "1" // hóa đơn giá trị gia tăng
	InvoiceTemplateSales = "2" // hóa đơn bán hàng
)

// Line types of an invoice item (TChat).
const (
	LineGoods     = 1 // goods or a service
	LinePromotion = 2 // a promotion (khuyến mại)
	LineDiscount  = 3 // a trade discount (chiết khấu thương mại)
	LineNote      = 4 // a note line (ghi chú, diễn giải): no amounts
)

// VAT rates (TSuat) an item may carry.
const (
	VATNotSubject  = "KCT"   // không chịu thuế
	VATNotDeclared = "KKKNT" // không kê khai, tính nộp thuế
	VAT0           = "0"
	VAT5           = "5"
	VAT8           = "8"
	VAT10          = "10"
)

// VATRates lists every rate, in the order totals list them.
var VATRates = []string{VAT0, VAT5, VAT8, VAT10, VATNotSubject, VATNotDeclared}

// Adjustment types of an adjusting invoice.
const (
	AdjustIncrease = "increase" // the adjustment adds its amounts to the original's
	AdjustDecrease = "decrease" // the adjustment takes its amounts off the original's
	AdjustInfo     = "info"     // the adjustment corrects information, no amounts
)

// Relations of an invoice to the one it corrects (TTHDLQuan/TCHDon).
const (
	InvoiceRelReplace = 1 // a replacement
	InvoiceRelAdjust  = 2 // an adjustment
)

// Seller is the company as an invoice names it (NBan): its legal details,
// set on the company (docs/invoices.md, The seller).
type Seller struct {
	LegalName string `json:"legal_name"`
	TaxCode   string `json:"tax_code"` // 10 digits with the check digit, or 10-3 for a branch
	Address   string `json:"address"`
	Phone     string `json:"phone,omitempty"`
	Email     string `json:"email,omitempty"`
	BankName  string `json:"bank_name,omitempty"`
	BankAcct  string `json:"bank_account,omitempty"`
}

// InvoiceItem is one line of an invoice (HHDVu). The server computes Amount
// and VATAmount from Quantity, UnitPrice, DiscountAmount and VATRate.
type InvoiceItem struct {
	LineNumber     int    `json:"line_number"`
	LineType       int    `json:"line_type"`
	ItemCode       string `json:"item_code,omitempty"`
	ItemName       string `json:"item_name"`
	Unit           string `json:"unit,omitempty"`
	Quantity       string `json:"quantity"`   // a decimal with at most 4 fraction digits, e.g. "1", "2.5"
	UnitPrice      int64  `json:"unit_price"` // whole VND
	DiscountAmount int64  `json:"discount_amount"`
	VATRate        string `json:"vat_rate"`
	Amount         int64  `json:"amount"`     // before VAT: quantity × unit price − discount, rounded half up
	VATAmount      int64  `json:"vat_amount"` // amount × rate, rounded half up
}

// RateTotal is the totals of one VAT rate (TToan/THTTLTSuat/LTSuat).
type RateTotal struct {
	VATRate   string `json:"vat_rate"`
	Amount    int64  `json:"amount"`
	VATAmount int64  `json:"vat_amount"`
}

// InvoiceTotals are an invoice's totals (TToan), all computed by the server.
type InvoiceTotals struct {
	TotalBeforeTax int64       `json:"total_before_tax"`
	ByRate         []RateTotal `json:"by_rate"`
	DiscountTotal  int64       `json:"discount_total"`
	VATTotal       int64       `json:"vat_total"`
	TotalAmount    int64       `json:"total_amount"`
	TotalInWords   string      `json:"total_in_words"` // Vietnamese, e.g. "Một trăm nghìn đồng"
}

// Invoice is an electronic invoice of a tenant (docs/invoices.md).
type Invoice struct {
	ID            int64  `json:"-"`
	CompanyID     int64  `json:"-"` // the tenant's company_id
	ReferenceCode string `json:"reference_code"`
	TrackingCode  string `json:"tracking_code"`
	TemplateCode  string `json:"template_code"`  // InvoiceTemplateVAT or InvoiceTemplateSales
	Series        string `json:"invoice_series"` // e.g. C26TAA
	// Number is assigned at issue, per tenant, template, series and year,
	// from 1, without gaps, never reused; 0 for a draft.
	Number        int64         `json:"invoice_number"`
	IssuedDate    time.Time     `json:"issued_date"`
	Currency      string        `json:"currency"`
	ExchangeRate  string        `json:"exchange_rate"`
	PaymentMethod string        `json:"payment_method"` // e.g. "TM/CK"
	Seller        Seller        `json:"seller"`
	Buyer         Buyer         `json:"buyer"`
	Items         []InvoiceItem `json:"items"`
	Totals        InvoiceTotals `json:"totals"`
	OrderID       int64         `json:"-"` // the order it was made from, 0 when none
	Status        string        `json:"status"`
	FailureReason string        `json:"failure_reason,omitempty"`
	CQTCode       string        `json:"cqt_code,omitempty"` // the tax authority's code (MCCQT)
	LookupCode    string        `json:"lookup_code"`        // the buyer's code for the public lookup page
	// OriginalReferenceCode names the invoice this one replaces or adjusts.
	OriginalReferenceCode string `json:"original_reference_code,omitempty"`
	Relation              int    `json:"-"`                         // InvoiceRelReplace, InvoiceRelAdjust, 0
	AdjustmentType        string `json:"adjustment_type,omitempty"` // AdjustIncrease, AdjustDecrease, AdjustInfo
	CancelReason          string `json:"cancel_reason,omitempty"`
	CreatedAt, UpdatedAt  time.Time
}

// InvoiceProvider sends invoices to the tax authority (VNPT, Viettel, MISA,
// BKAV, ...; the sandbox one in test mode), one implementation per provider
// (docs/invoices.md, Providers).
type InvoiceProvider interface {
	// Name is the provider's name as provider accounts show it.
	Name() string
	// Submit sends a numbered, signed invoice. It returns at once; the
	// answer comes later through Poll.
	Submit(ctx context.Context, inv *Invoice, signedXML []byte) error
	// Poll reports the authority's answer for a submitted invoice: done is
	// false while there is none; cqtCode is the authority's code when
	// accepted, failure the reason when refused.
	Poll(ctx context.Context, inv *Invoice) (done bool, cqtCode, failure string, err error)
}
