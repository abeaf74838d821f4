package recon

import (
	"encoding/json"
	"fmt"
	"time"
)

// InvoiceIPNBody is the body of the INVOICE_ISSUED and INVOICE_FAILED
// notifications (docs/invoices.md, Providers): when, which, and the
// invoice's identity and outcome.
type InvoiceIPNBody struct {
	Timestamp        int64             `json:"timestamp"`
	NotificationType string            `json:"notification_type"`
	Invoice          InvoiceIPNInvoice `json:"invoice"`
}

// InvoiceIPNInvoice is the invoice of an InvoiceIPNBody.
type InvoiceIPNInvoice struct {
	ReferenceCode string `json:"reference_code"`
	TrackingCode  string `json:"tracking_code"`
	TemplateCode  string `json:"template_code"`
	Series        string `json:"invoice_series"`
	Number        int64  `json:"invoice_number"`
	IssuedDate    string `json:"issued_date"` // YYYY-MM-DD
	Status        string `json:"status"`      // issued or failed
	CQTCode       string `json:"cqt_code"`
	FailureReason string `json:"failure_reason"`
	LookupCode    string `json:"lookup_code"`
	TotalAmount   int64  `json:"total_amount"`
	// OriginalReferenceCode names the invoice a replacement or adjustment corrects.
	OriginalReferenceCode string `json:"original_reference_code"`
}

// InvoiceIPNDelivery builds the IPN of a provider's answer for inv (event
// IPNInvoiceIssued or IPNInvoiceFailed), sent only to a target that
// subscribes to it (IPNWants).
func InvoiceIPNDelivery(inv *Invoice, event string, at time.Time) (*Delivery, error) {
	if event != IPNInvoiceIssued && event != IPNInvoiceFailed {
		return nil, fmt.Errorf("recon: unknown invoice IPN event %q", event)
	}
	body := InvoiceIPNBody{Timestamp: at.Unix(), NotificationType: event, Invoice: InvoiceIPNInvoice{
		ReferenceCode: inv.ReferenceCode, TrackingCode: inv.TrackingCode, TemplateCode: inv.TemplateCode, Series: inv.Series,
		Number: inv.Number, IssuedDate: inv.IssuedDate.Format(DateLayout), Status: inv.Status, CQTCode: inv.CQTCode,
		FailureReason: inv.FailureReason, LookupCode: inv.LookupCode, TotalAmount: inv.Totals.TotalAmount,
		OriginalReferenceCode: inv.OriginalReferenceCode,
	}}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &Delivery{CompanyID: inv.CompanyID, Kind: DeliveryIPN, OrderID: inv.OrderID, Event: event, Payload: payload}, nil
}
