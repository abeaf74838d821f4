package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// E-invoices (docs/invoices.md, API): /v1/invoices and
// /v1/provider-accounts, served by API v2 (bearer tokens with the scopes
// invoice:read and invoice:write, the v2 envelope and idempotency keys).

// The error codes of the invoice rules: a 422 *Error's Code (a missing
// cancel reason and a bad adjustment type are 400s with their own codes).
const (
	CodeInvoiceNotIssued           = "invoice_not_issued"             // 422: the original is not issued
	CodeInvoiceAlreadyReplaced     = "invoice_already_replaced"       // 422: the original was replaced
	CodeInvoiceCancelled           = "invoice_cancelled"              // 422: the invoice was cancelled
	CodeInvoiceAdjustedNoCancel    = "invoice_adjusted_cannot_cancel" // 422: an adjusted invoice cannot be cancelled
	CodeInvoiceProviderUnavailable = "invoice_provider_unavailable"   // 422: no provider: draft and export only
	CodeInvoiceCancelReason        = "cancel_reason_required"         // 400: cancel needs a reason
	CodeInvoiceAdjustmentType      = "invalid_adjustment_type"        // 400: increase, decrease or info
)

// Invoice statuses.
const (
	InvoiceDraft     = "draft"
	InvoicePending   = "pending"
	InvoiceIssued    = "issued"
	InvoiceFailed    = "failed"
	InvoiceCancelled = "cancelled"
	InvoiceReplaced  = "replaced"
	InvoiceAdjusted  = "adjusted"
)

// Tracking states of GET /v1/invoices/create/check/{tracking_code}.
const (
	InvoiceCheckPending = "Pending"
	InvoiceCheckSuccess = "Success"
	InvoiceCheckFailed  = "Failed"
)

// InvoiceBuyer is an invoice's buyer.
type InvoiceBuyer struct {
	Name      string `json:"name,omitempty"`
	LegalName string `json:"legal_name,omitempty"`
	TaxCode   string `json:"tax_code,omitempty"`
	Address   string `json:"address,omitempty"`
	Email     string `json:"email,omitempty"`
	Phone     string `json:"phone,omitempty"`
}

// InvoiceItemInput is a line as a merchant gives it: the server computes
// its amounts.
type InvoiceItemInput struct {
	LineNumber     int    `json:"line_number,omitempty"` // default: its position
	LineType       int    `json:"line_type,omitempty"`   // 1 goods or service (default), 2 promotion, 3 discount, 4 note
	ItemCode       string `json:"item_code,omitempty"`
	ItemName       string `json:"item_name"`
	Unit           string `json:"unit,omitempty"`
	Quantity       string `json:"quantity,omitempty"` // a decimal, e.g. "2" or "2.5"
	UnitPrice      int64  `json:"unit_price,omitempty"`
	DiscountAmount int64  `json:"discount_amount,omitempty"`
	VATRate        string `json:"vat_rate,omitempty"` // KCT, KKKNT, 0, 5, 8 or 10
}

// InvoiceRequest is the body of Create, Replace and Adjust.
type InvoiceRequest struct {
	IsDraft bool `json:"is_draft,omitempty"` // Create only
	// OriginalReferenceCode is set by Replace and Adjust.
	OriginalReferenceCode string             `json:"original_invoice_reference_code,omitempty"`
	AdjustmentType        string             `json:"adjustment_type,omitempty"` // Adjust: increase, decrease or info
	TemplateCode          string             `json:"template_code,omitempty"`   // default: the company's
	Series                string             `json:"invoice_series,omitempty"`  // default: the company's
	PaymentMethod         string             `json:"payment_method,omitempty"`  // default TM/CK
	Buyer                 *InvoiceBuyer      `json:"buyer,omitempty"`
	Items                 []InvoiceItemInput `json:"items"`
	OrderID               string             `json:"order_id,omitempty"` // a v2 order's id
	OrderInvoiceNumber    string             `json:"order_invoice_number,omitempty"`
}

// InvoiceItem is a line with the server's amounts.
type InvoiceItem struct {
	LineNumber     int    `json:"line_number"`
	LineType       int    `json:"line_type"`
	ItemCode       string `json:"item_code"`
	ItemName       string `json:"item_name"`
	Unit           string `json:"unit"`
	Quantity       string `json:"quantity"`
	UnitPrice      int64  `json:"unit_price"`
	DiscountAmount int64  `json:"discount_amount"`
	VATRate        string `json:"vat_rate"`
	Amount         int64  `json:"amount"`
	VATAmount      int64  `json:"vat_amount"`
}

// InvoiceRateTotal is the totals of one VAT rate.
type InvoiceRateTotal struct {
	VATRate   string `json:"vat_rate"`
	Amount    int64  `json:"amount"`
	VATAmount int64  `json:"vat_amount"`
}

// InvoiceTotals are an invoice's totals, in whole VND, and in words.
type InvoiceTotals struct {
	TotalBeforeTax int64              `json:"total_before_tax"`
	ByRate         []InvoiceRateTotal `json:"by_rate"`
	DiscountTotal  int64              `json:"discount_total"`
	VATTotal       int64              `json:"vat_total"`
	TotalAmount    int64              `json:"total_amount"`
	TotalInWords   string             `json:"total_in_words"`
}

// InvoiceSeller is the company as its invoices name it.
type InvoiceSeller struct {
	LegalName string `json:"legal_name"`
	TaxCode   string `json:"tax_code"`
	Address   string `json:"address"`
	Phone     string `json:"phone"`
	Email     string `json:"email"`
}

// Invoice is an e-invoice as the API shows it.
type Invoice struct {
	ReferenceCode         string        `json:"reference_code"`
	TrackingCode          string        `json:"tracking_code"`
	TemplateCode          string        `json:"template_code"`
	Series                string        `json:"invoice_series"`
	Number                *int64        `json:"invoice_number"` // nil for a draft
	IssuedDate            *string       `json:"issued_date"`    // YYYY-MM-DD, nil for a draft
	Currency              string        `json:"currency"`
	ExchangeRate          string        `json:"exchange_rate"`
	PaymentMethod         string        `json:"payment_method"`
	Seller                InvoiceSeller `json:"seller"`
	Buyer                 InvoiceBuyer  `json:"buyer"`
	Items                 []InvoiceItem `json:"items"`
	Totals                InvoiceTotals `json:"totals"`
	OrderID               *string       `json:"order_id"`
	Status                string        `json:"status"`
	FailureReason         string        `json:"failure_reason"`
	CQTCode               string        `json:"cqt_code"`
	LookupCode            string        `json:"lookup_code"`
	OriginalReferenceCode string        `json:"original_reference_code"`
	AdjustmentType        string        `json:"adjustment_type"`
	CancelReason          string        `json:"cancel_reason"`
	CreatedAt             *string       `json:"created_at"`
	UpdatedAt             *string       `json:"updated_at"`
}

// InvoiceCheck is the answer of CheckInvoice.
type InvoiceCheck struct {
	TrackingCode string  `json:"tracking_code"`
	Status       string  `json:"status"` // InvoiceCheckPending, InvoiceCheckSuccess or InvoiceCheckFailed
	Invoice      Invoice `json:"invoice"`
}

// InvoiceProviderAccount is a provider the tenant's invoices are sent through.
type InvoiceProviderAccount struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Sandbox  bool   `json:"sandbox"`
	Active   bool   `json:"active"`
}

// CreateInvoice creates an invoice: a draft (IsDraft), or issued at once
// (pending until the provider answers: CheckInvoice follows it).
func (v *V2) CreateInvoice(ctx context.Context, in InvoiceRequest, opts ...V2CallOption) (*Invoice, error) {
	return v.postInvoice(ctx, "create", in, opts)
}

// ReplaceInvoice issues a replacement of the issued invoice original.
func (v *V2) ReplaceInvoice(ctx context.Context, original string, in InvoiceRequest, opts ...V2CallOption) (*Invoice, error) {
	in.OriginalReferenceCode = original
	return v.postInvoice(ctx, "replace", in, opts)
}

// AdjustInvoice issues an adjustment of the issued invoice original (in's
// AdjustmentType: increase, decrease or info).
func (v *V2) AdjustInvoice(ctx context.Context, original string, in InvoiceRequest, opts ...V2CallOption) (*Invoice, error) {
	in.OriginalReferenceCode = original
	return v.postInvoice(ctx, "adjust", in, opts)
}

// IssueInvoice issues a draft.
func (v *V2) IssueInvoice(ctx context.Context, referenceCode string, opts ...V2CallOption) (*Invoice, error) {
	return v.postInvoice(ctx, "issue", map[string]string{"reference_code": referenceCode}, opts)
}

// CancelInvoice cancels an issued invoice with the reason.
func (v *V2) CancelInvoice(ctx context.Context, referenceCode, reason string, opts ...V2CallOption) (*Invoice, error) {
	return v.postInvoice(ctx, "cancel", map[string]string{"reference_code": referenceCode, "reason": reason}, opts)
}

func (v *V2) postInvoice(ctx context.Context, action string, body any, opts []V2CallOption) (*Invoice, error) {
	var inv Invoice
	if _, err := v.call(ctx, http.MethodPost, "/v1/invoices/"+action, nil, body, &inv, opts...); err != nil {
		return nil, err
	}
	return &inv, nil
}

// CheckInvoice follows an invoice by its tracking code.
func (v *V2) CheckInvoice(ctx context.Context, trackingCode string) (*InvoiceCheck, error) {
	var c InvoiceCheck
	if _, err := v.call(ctx, http.MethodGet, "/v1/invoices/create/check/"+url.PathEscape(trackingCode), nil, nil, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Invoice returns one invoice.
func (v *V2) Invoice(ctx context.Context, referenceCode string) (*Invoice, error) {
	var inv Invoice
	if _, err := v.call(ctx, http.MethodGet, "/v1/invoices/"+url.PathEscape(referenceCode), nil, nil, &inv); err != nil {
		return nil, err
	}
	return &inv, nil
}

// InvoiceFilter narrows Invoices.
type InvoiceFilter struct {
	Status   string
	OrderID  string // a v2 order's id
	FromDate string // YYYY-MM-DD
	ToDate   string
	PerPage  int
}

func (f InvoiceFilter) query(page int) url.Values {
	return v2Filter(map[string]string{"status": f.Status, "order_id": f.OrderID, "from_date": f.FromDate, "to_date": f.ToDate}, page, 1, f.PerPage)
}

// Invoices returns one page of invoices, newest first.
func (v *V2) Invoices(ctx context.Context, f InvoiceFilter, page int) ([]Invoice, V2PageMeta, error) {
	return v2List[Invoice](ctx, v, "/v1/invoices", f.query(page))
}

// AllInvoices walks every page of Invoices.
func (v *V2) AllInvoices(ctx context.Context, f InvoiceFilter) iter.Seq2[Invoice, error] {
	return v2Pages(ctx, func(ctx context.Context, page int) ([]Invoice, V2PageMeta, error) { return v.Invoices(ctx, f, page) })
}

// InvoiceXML returns an invoice's signed XML.
func (v *V2) InvoiceXML(ctx context.Context, referenceCode string) ([]byte, error) {
	return v.invoiceFile(ctx, referenceCode, "xml")
}

// InvoicePDF returns an invoice's PDF.
func (v *V2) InvoicePDF(ctx context.Context, referenceCode string) ([]byte, error) {
	return v.invoiceFile(ctx, referenceCode, "pdf")
}

func (v *V2) invoiceFile(ctx context.Context, referenceCode, kind string) ([]byte, error) {
	var body []byte
	req := &request{method: http.MethodGet, path: "/v1/invoices/" + url.PathEscape(referenceCode) + "/" + kind, auth: authBearer, idempotent: true, rawOut: &body}
	if _, err := v.c.do(ctx, req, nil); err != nil {
		return nil, err
	}
	return body, nil
}

// InvoiceProviderAccounts lists the providers the tenant's invoices are
// sent through, and whether it can send at all (false: invoices can be
// drafted and exported but not sent).
func (v *V2) InvoiceProviderAccounts(ctx context.Context) ([]InvoiceProviderAccount, bool, error) {
	var list []InvoiceProviderAccount
	var env struct {
		Data *[]InvoiceProviderAccount `json:"data"`
		Meta struct {
			CanSend bool `json:"can_send"`
		} `json:"meta"`
	}
	env.Data = &list
	req := &request{method: http.MethodGet, path: "/v1/provider-accounts", auth: authBearer, idempotent: true}
	if _, err := v.c.do(ctx, req, &env); err != nil {
		return nil, false, err
	}
	return list, env.Meta.CanSend, nil
}
