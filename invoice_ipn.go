package recon

import (
	"encoding/json"
	"fmt"
	"time"
)

// InvoiceIPNBody is the body of the INVOICE_ISSUED and INVOICE_FAILED
// notifications (docs/invoices.md, Providers): when, which, and the invoice
// as the API shows it (its status issued with cqt_code, or failed with
// failure_reason).
type InvoiceIPNBody struct {
	Timestamp        int64    `json:"timestamp"`
	NotificationType string   `json:"notification_type"`
	Invoice          *Invoice `json:"invoice"`
}

// InvoiceIPNDelivery builds the IPN of a provider's answer for inv (event
// IPNInvoiceIssued or IPNInvoiceFailed), sent only to a target that
// subscribes to it (IPNWants).
func InvoiceIPNDelivery(inv *Invoice, event string, at time.Time) (*Delivery, error) {
	if event != IPNInvoiceIssued && event != IPNInvoiceFailed {
		return nil, fmt.Errorf("recon: unknown invoice IPN event %q", event)
	}
	payload, err := json.Marshal(InvoiceIPNBody{Timestamp: at.Unix(), NotificationType: event, Invoice: inv})
	if err != nil {
		return nil, err
	}
	return &Delivery{CompanyID: inv.CompanyID, Kind: DeliveryIPN, OrderID: inv.OrderID, Event: event, Payload: payload}, nil
}
