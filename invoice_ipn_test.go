package recon

import (
	"encoding/json"
	"testing"
	"time"
)

func TestInvoiceIPNDelivery(t *testing.T) {
	inv := &Invoice{CompanyID: 7, ReferenceCode: "r", TrackingCode: "t", TemplateCode: "1", Series: "C26TAA", Number: 42,
		IssuedDate: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), Status: InvoiceIssued, CQTCode: "SBX", LookupCode: "K7QW2M9XHD4P",
		Totals: InvoiceTotals{TotalAmount: 110000}, OrderID: 9}
	at := time.Unix(1795662931, 0)
	d, err := InvoiceIPNDelivery(inv, IPNInvoiceIssued, at)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"timestamp":1795662931,"notification_type":"INVOICE_ISSUED","invoice":{"reference_code":"r","tracking_code":"t",` +
		`"template_code":"1","invoice_series":"C26TAA","invoice_number":42,"issued_date":"2026-11-26","status":"issued","cqt_code":"SBX",` +
		`"failure_reason":"","lookup_code":"K7QW2M9XHD4P","total_amount":110000,"original_reference_code":""}}`
	if string(d.Payload) != want || d.CompanyID != 7 || d.OrderID != 9 || d.Event != IPNInvoiceIssued || d.Kind != DeliveryIPN {
		t.Fatalf("delivery %+v\npayload %s\nwant    %s", d, d.Payload, want)
	}
	if !json.Valid(d.Payload) {
		t.Fatal("invalid JSON")
	}
	if _, err := InvoiceIPNDelivery(inv, IPNOrderPaid, at); err == nil {
		t.Fatal("ORDER_PAID accepted as an invoice event")
	}
}
