package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"recon"
)

// testMatching pins what matching stores: the exact sentence of every
// outcome (the API shows them), decisions of one batch in row order, and the
// refusal of a batch whose transfer would overflow an order's paid amount.
func testMatching(t *testing.T, open Open) {
	run(t, "ReasonsInOneBatch", withAccount(open), testMatchingReasonsInOneBatch)
	run(t, "ManyOrdersInOneBatch", withAccount(open), testMatchingManyOrdersInOneBatch)
}

// testMatchingManyOrdersInOneBatch: a batch paying more orders than one
// statement of the outbox's takes (sqlstore's enqueueChunk, 100) writes
// every order's state, queues each for its invoice and enqueues each IPN, in
// capture order; an order the same batch only underpays is written too.
func testMatchingManyOrdersInOneBatch(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	const n = 205 // three statements of the outbox: 100, 100, 5
	var in []recon.TransactionInput
	var codes, want []string
	for i := range n {
		inv, code := fmt.Sprintf("M%03d", i), fmt.Sprintf("DH7%04d", i)
		newOrder(t, s, c.ID, a.ID, inv, code, 10_000)
		in = append(in, tx(a.ID, "MANY-"+inv, "2026-03-01 10:00:00", 10_000, 0))
		codes, want = append(codes, code), append(want, inv)
	}
	newOrder(t, s, c.ID, a.ID, "U", "DH79999", 50_000)
	in = append(in, tx(a.ID, "MANY-U", "2026-03-01 10:00:00", 20_000, 0))
	codes = append(codes, "DH79999")
	if _, err := s.IngestTransactions(t.Context(), c.Tenant(), in, codes); err != nil {
		t.Fatal(err)
	}
	for _, inv := range []string{want[0], want[99], want[100], want[n-1]} {
		if o, err := s.Order(t.Context(), c.Tenant(), inv); err != nil || o.Status != recon.OrderCaptured || o.PaidAmount != 10_000 || o.PaidAt.IsZero() {
			t.Fatalf("order %s: %+v, %v; want captured, 10000 paid, a paid time", inv, o, err)
		}
	}
	if o, err := s.Order(t.Context(), c.Tenant(), "U"); err != nil || o.Status != recon.OrderAwaitingPayment || o.PaidAmount != 20_000 || !o.PaidAt.IsZero() {
		t.Fatalf("underpaid order: %+v, %v; want awaiting payment, 20000 paid, no paid time", o, err)
	}
	queued, _, err := s.QueuedPaidOrders(t.Context(), 1000)
	if err != nil || len(queued) != n {
		t.Fatalf("queued for their invoices: %d orders, %v; want %d", len(queued), err, n)
	}
	diff(t, "ORDER_PAID deliveries by invoice", want, paidInvoices(t, s, c.Tenant(), 500))
}

func testMatchingReasonsInOneBatch(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	newOrder(t, s, c.ID, a.ID, "A", "DH60001", 100_000)
	newOrder(t, s, c.ID, a.ID, "B", "DH60002", 50_000)
	ordV := &recon.Order{CompanyID: c.ID, InvoiceNumber: "V", PaymentCode: "DH60003", VirtualAccount: "VA600", Amount: 40_000}
	if err := s.CreateOrder(t.Context(), ordV); err != nil {
		t.Fatal(err)
	}
	newOrder(t, s, c.ID, a.ID, "X", "DH60004", 10)
	if _, err := s.CancelOrder(t.Context(), c.Tenant(), "X", time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	// One batch, the orders' transfers interleaved.
	rows := []struct {
		ref, code, sub string
		amount         int64
	}{
		{"R1", "DH60002", "", 30_000},      // B underpaid
		{"R2", "DH60001", "", 100_000},     // A matched
		{"R3", "DH60002", "", 20_000},      // B matched
		{"R4", "DH60001", "", 5_000},       // A duplicate
		{"R5", "DH60003", "VA600", 10_000}, // V underpaid, by sub-account
		{"R6", "", "VA600", 45_000},        // V overpaid, by sub-account
		{"R7", "DH60004", "", 10},          // X cancelled: duplicate
		{"R8", "DH60099", "", 10},          // no such order
	}
	in := make([]recon.TransactionInput, len(rows))
	codes := make([]string, len(rows))
	for i, r := range rows {
		in[i] = tx(a.ID, r.ref, "2026-03-01 10:00:00", r.amount, 0)
		in[i].SubAccount = r.sub
		codes[i] = r.code
	}
	res, err := s.IngestTransactions(t.Context(), c.Tenant(), in, codes)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ outcome, rule, reason string }{
		{recon.MatchUnderpaid, "code", "payment code DH60002 names order B: 30000 of 50000 VND paid, 20000 short"},
		{recon.MatchCaptured, "code", "payment code DH60001 names order A: 100000 of 100000 VND paid"},
		{recon.MatchCaptured, "code", "payment code DH60002 names order B: 50000 of 50000 VND paid"},
		{recon.MatchDuplicate, "code", "payment code DH60001 names order A, which is already captured"},
		{recon.MatchUnderpaid, "sub_account", "virtual account VA600 names order V: 10000 of 40000 VND paid, 30000 short"},
		{recon.MatchOverpaid, "sub_account", "virtual account VA600 names order V: 55000 VND paid for 40000, 15000 over"},
		{recon.MatchDuplicate, "code", "payment code DH60004 names order X, which is already cancelled"},
		{recon.MatchNone, "", "no order with payment code DH60099"},
	}
	var ids []int64
	for i, w := range want {
		ds, err := s.MatchDecisions(t.Context(), c.Tenant(), 0, res[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 || ds[0].Outcome != w.outcome || ds[0].Rule != w.rule || ds[0].Reason != w.reason || ds[0].Amount != rows[i].amount {
			t.Fatalf("row %s: decisions %+v, want one %s/%s %q", rows[i].ref, ds, w.outcome, w.rule, w.reason)
		}
		ids = append(ids, ds[0].ID)
	}
	// Recorded in the batch's row order.
	for i := 1; i < len(ids)-1; i++ { // the last is derived on read, not stored
		if ids[i] <= ids[i-1] {
			t.Fatalf("decision ids %v are not in row order", ids)
		}
	}
	for _, w := range []struct {
		inv    string
		status string
		paid   int64
		by     int64
	}{{"A", recon.OrderCaptured, 100_000, res[1].ID}, {"B", recon.OrderCaptured, 50_000, res[2].ID}, {"V", recon.OrderCaptured, 55_000, res[5].ID}, {"X", recon.OrderCancelled, 0, 0}} {
		o, err := s.Order(t.Context(), c.Tenant(), w.inv)
		if err != nil {
			t.Fatal(err)
		}
		if o.Status != w.status || o.PaidAmount != w.paid || o.PaidTransactionID != w.by {
			t.Errorf("order %s: %s paid %d by %d; want %s %d by %d", w.inv, o.Status, o.PaidAmount, o.PaidTransactionID, w.status, w.paid, w.by)
		}
	}
	// One ORDER_PAID per capture, enqueued in the order the captures happened.
	diff(t, "ORDER_PAID deliveries by invoice", []string{"A", "B", "V"}, paidInvoices(t, s, c.Tenant(), 10))
}

// paidInvoices returns the invoice numbers of the tenant's ORDER_PAID
// deliveries among its newest limit, in the order they were enqueued.
func paidInvoices(t *testing.T, s recon.Store, tenant recon.TenantID, limit int) []string {
	t.Helper()
	ds, err := s.(recon.DeliveryStore).Deliveries(t.Context(), tenant, recon.DeliveryFilter{Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(ds) - 1; i >= 0; i-- { // listed newest first
		var body struct {
			Order struct {
				Invoice string `json:"order_invoice_number"`
			} `json:"order"`
		}
		if err := json.Unmarshal(ds[i].Payload, &body); err != nil {
			t.Fatal(err)
		}
		if ds[i].Event == recon.IPNOrderPaid {
			got = append(got, body.Order.Invoice)
		}
	}
	return got
}
