package recon_test

import (
	"testing"
	"time"

	"recon"
)

// TestNextOrder is the order's transitions as a table, without a database:
// cancel takes an order awaiting payment, void a captured one, both to
// CANCELLED with their stamp; every other pair is refused with the sentence
// the gateway and the dashboard show.
func TestNextOrder(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	paidAt := now.Add(-time.Hour)
	for _, tc := range []struct {
		status string
		event  recon.OrderEvent
		code   string
		msg    string
	}{
		{recon.OrderAwaitingPayment, recon.OrderCancel, "", ""},
		{recon.OrderCaptured, recon.OrderVoid, "", ""},
		{recon.OrderCaptured, recon.OrderCancel, recon.ECONFLICT, "order INV-1 is paid: void it instead of cancelling"},
		{recon.OrderAwaitingPayment, recon.OrderVoid, recon.ECONFLICT, "order INV-1 is not paid: cancel it instead of voiding"},
		{recon.OrderCancelled, recon.OrderCancel, recon.ECONFLICT, "order INV-1 is already cancelled"},
		{recon.OrderCancelled, recon.OrderVoid, recon.ECONFLICT, "order INV-1 is already cancelled"},
		{recon.OrderAwaitingPayment, "refund", recon.EINVALID, `unknown order event "refund"`},
	} {
		t.Run(tc.status+"/"+string(tc.event), func(t *testing.T) {
			o := &recon.Order{ID: 4, InvoiceNumber: "INV-1", Status: tc.status, Amount: 100, PaidAt: paidAt}
			before := *o
			n, err := recon.NextOrder(o, tc.event, now)
			if *o != before {
				t.Fatalf("NextOrder changed its argument: %+v", o)
			}
			if allowed := recon.OrderAllows(o, tc.event); allowed != (tc.code == "") {
				t.Errorf("OrderAllows = %v, NextOrder's error %v", allowed, err)
			}
			if tc.code != "" {
				if recon.ErrorCode(err) != tc.code || recon.ErrorMessage(err) != tc.msg || n != nil {
					t.Fatalf("NextOrder = %v, %v (%s); want %s %q", n, err, recon.ErrorCode(err), tc.code, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := before
			want.Status, want.UpdatedAt = recon.OrderCancelled, now
			if tc.event == recon.OrderVoid {
				want.VoidedAt = now
			} else {
				want.CancelledAt = now
			}
			if *n != want {
				t.Errorf("NextOrder =\n%+v\nwant\n%+v", *n, want)
			}
		})
	}
}
