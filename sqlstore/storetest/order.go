package storetest

import (
	"fmt"
	"testing"
	"time"

	"recon"
)

func newOrder(t *testing.T, s recon.Store, companyID, accountID int64, invoice, code string, amount int64) *recon.Order {
	t.Helper()
	o := &recon.Order{CompanyID: companyID, InvoiceNumber: invoice, PaymentCode: code, Amount: amount, BankAccountID: accountID,
		CustomerID: "CUST-" + invoice, Description: "Đơn hàng " + invoice, CustomData: `[{"k":"v"}]`}
	if err := s.CreateOrder(t.Context(), o); err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	return o
}

// pay ingests one incoming transfer with the code (as extraction would give it).
func pay(t *testing.T, s recon.Store, tenant recon.TenantID, accountID int64, ref, code, sub string, amount int64) int64 {
	t.Helper()
	in := tx(accountID, ref, "2026-03-01 10:00:00", amount, 0)
	in.SubAccount = sub
	res, err := s.IngestTransactions(t.Context(), tenant, []recon.TransactionInput{in}, []string{code})
	if err != nil {
		t.Fatalf("IngestTransactions: %v", err)
	}
	return res[0].ID
}

func testOrders(t *testing.T, open Open) {
	run(t, "CreateAndRead", open, testOrdersCreateAndRead)
	run(t, "Conflicts", withAccount(open), testOrdersConflicts)
	run(t, "Matching", withAccount(open), testOrdersMatching)
	run(t, "NoIPNTargetNoDelivery", withAccount(open), testOrdersNoIPNTargetNoDelivery)
	run(t, "CancelAndVoid", withAccount(open), testOrdersCancelAndVoid)
	run(t, "IPNOnlyWhatTheTargetSubscribesTo", withAccount(open), testOrdersIPNSubscriptions)
	run(t, "Filters", open, testOrdersFilters)
}

func testOrdersCreateAndRead(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	a := newAccount(t, s, c.ID, "111")
	o := newOrder(t, s, c.ID, a.ID, "INV-1", "DH10001", 150_000)
	if o.ID == 0 || o.Status != recon.OrderAwaitingPayment || o.Currency != "VND" {
		t.Fatalf("created %+v", o)
	}
	got, err := s.Order(t.Context(), c.Tenant(), "INV-1")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "order", o, got)
	_, err = s.Order(t.Context(), other.Tenant(), "INV-1")
	wantCode(t, err, recon.ENOTFOUND, "")
}

// An invoice number or a payment code is used once in a company; another
// company may use them too.
func testOrdersConflicts(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	other := newCompany(t, s, 2)
	newOrder(t, s, c.ID, a.ID, "INV-1", "DH10001", 150_000)
	err := s.CreateOrder(t.Context(), &recon.Order{CompanyID: c.ID, InvoiceNumber: "INV-1", PaymentCode: "DH10002", Amount: 1})
	wantCode(t, err, recon.ECONFLICT, `order_invoice_number "INV-1" already exists`)
	err = s.CreateOrder(t.Context(), &recon.Order{CompanyID: c.ID, InvoiceNumber: "INV-2", PaymentCode: "DH10001", Amount: 1})
	wantCode(t, err, recon.ECONFLICT, "payment code DH10001 is already used by another order")
	// Another company may use the same invoice number and code.
	newOrder(t, s, other.ID, 0, "INV-1", "DH10001", 5)
}

func testOrdersMatching(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthSecretKey, Secret: "s3cret", Active: true}); err != nil {
		t.Fatal(err)
	}
	exact := newOrder(t, s, c.ID, a.ID, "EXACT", "DH20001", 100_000)
	short := newOrder(t, s, c.ID, a.ID, "SHORT", "DH20002", 100_000)
	over := newOrder(t, s, c.ID, a.ID, "OVER", "DH20003", 100_000)
	va := &recon.Order{CompanyID: c.ID, InvoiceNumber: "VA", PaymentCode: "DH20004", VirtualAccount: "VA999", Amount: 50_000}
	if err := s.CreateOrder(t.Context(), va); err != nil {
		t.Fatal(err)
	}
	tExact := pay(t, s, c.Tenant(), a.ID, "R1", "DH20001", "", 100_000)
	pay(t, s, c.Tenant(), a.ID, "R2", "DH20002", "", 40_000)
	tShort2 := pay(t, s, c.Tenant(), a.ID, "R3", "DH20002", "", 60_000)
	pay(t, s, c.Tenant(), a.ID, "R4", "DH20003", "", 120_000)
	tDup := pay(t, s, c.Tenant(), a.ID, "R5", "DH20001", "", 100_000)
	tNone := pay(t, s, c.Tenant(), a.ID, "R6", "DH99999", "", 1_000)
	pay(t, s, c.Tenant(), a.ID, "R7", "", "VA999", 50_000) // the virtual account, no code
	pay(t, s, c.Tenant(), a.ID, "R8", "", "", 7_000)       // names nothing
	tNoVA := pay(t, s, c.Tenant(), a.ID, "R9", "", "VA404", 2_000)
	for _, w := range []struct {
		inv    string
		status string
		paid   int64
	}{{"EXACT", recon.OrderCaptured, 100_000}, {"SHORT", recon.OrderCaptured, 100_000}, {"OVER", recon.OrderCaptured, 120_000}, {"VA", recon.OrderCaptured, 50_000}} {
		o, err := s.Order(t.Context(), c.Tenant(), w.inv)
		if err != nil {
			t.Fatal(err)
		}
		if o.Status != w.status || o.PaidAmount != w.paid || o.PaidAt.IsZero() {
			t.Errorf("order %s: %s paid %d at %v; want %s %d", w.inv, o.Status, o.PaidAmount, o.PaidAt, w.status, w.paid)
		}
	}
	if o, _ := s.Order(t.Context(), c.Tenant(), "SHORT"); o.PaidTransactionID != tShort2 {
		t.Errorf("SHORT paid by %d, want %d", o.PaidTransactionID, tShort2)
	}
	outcomes := func(orderID, txID int64) string {
		ds, err := s.MatchDecisions(t.Context(), c.Tenant(), orderID, txID)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, d := range ds {
			out += d.Outcome + "/" + d.Rule + " "
		}
		return out
	}
	for _, w := range []struct {
		order, tx int64
		want      string
	}{
		{exact.ID, 0, "matched/code duplicate/code "},
		{short.ID, 0, "underpaid/code matched/code "},
		{over.ID, 0, "overpaid/code "},
		{va.ID, 0, "matched/sub_account "},
		{0, tExact, "matched/code "},
		{0, tDup, "duplicate/code "},
		{0, tNone, "unmatched/ "},
		{0, tNoVA, "unmatched/ "},
	} {
		if got := outcomes(w.order, w.tx); got != w.want {
			t.Errorf("decisions of order %d / tx %d: %q, want %q", w.order, w.tx, got, w.want)
		}
	}
	ds, _ := s.MatchDecisions(t.Context(), c.Tenant(), short.ID, 0)
	if ds[0].Reason != "payment code DH20002 names order SHORT: 40000 of 100000 VND paid, 60000 short" || ds[0].PaidTotal != 40_000 {
		t.Errorf("underpaid reason %q", ds[0].Reason)
	}
	for tx, want := range map[int64]string{tNone: "no order with payment code DH99999", tNoVA: "no order with virtual account VA404"} {
		if ds, _ := s.MatchDecisions(t.Context(), c.Tenant(), 0, tx); len(ds) != 1 || ds[0].Reason != want || ds[0].TransactionID != tx {
			t.Errorf("tx %d: decisions %+v, want one saying %q", tx, ds, want)
		}
	}
	if ds, _ := s.MatchDecisions(t.Context(), recon.TenantFromRow(c.ID+1, true), 0, tNone); len(ds) != 0 {
		t.Errorf("another company sees the decisions of tx %d: %+v", tNone, ds)
	}
	// The report: by outcome over the day.
	rep, err := s.Reconciliation(t.Context(), c.Tenant(), "2026-03-01", "2026-03-01")
	if err != nil {
		t.Fatal(err)
	}
	wantCounts := map[string]int64{recon.MatchCaptured: 3, recon.MatchUnderpaid: 1, recon.MatchOverpaid: 1, recon.MatchDuplicate: 1, recon.MatchNone: 3}
	diff(t, "report counts", wantCounts, rep.Counts)
	if len(rep.Unmatched) != 3 || len(rep.Underpaid) != 1 || rep.Amounts[recon.MatchNone] != 10_000 {
		t.Errorf("report lists: %d unmatched, %d underpaid, unmatched amount %d", len(rep.Unmatched), len(rep.Underpaid), rep.Amounts[recon.MatchNone])
	}
	// One ORDER_PAID IPN per capture, in the outbox.
	n := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid)
	if n != 4 {
		t.Errorf("%d ORDER_PAID deliveries, want 4", n)
	}
}

func testOrdersNoIPNTargetNoDelivery(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	newOrder(t, s, c.ID, a.ID, "A", "DH30001", 10)
	pay(t, s, c.Tenant(), a.ID, "R1", "DH30001", "", 10)
	if n := countDeliveries(t, s, c.Tenant(), ""); n != 0 {
		t.Fatalf("%d deliveries without an IPN target", n)
	}
}

func testOrdersCancelAndVoid(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	newOrder(t, s, c.ID, a.ID, "UNPAID", "DH40001", 10)
	newOrder(t, s, c.ID, a.ID, "PAID", "DH40002", 10)
	pay(t, s, c.Tenant(), a.ID, "R1", "DH40002", "", 10)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	void := func(o *recon.Order) (*recon.Delivery, error) {
		return recon.IPNDelivery(o, recon.IPNTransactionVoid, now)
	}
	_, err := s.VoidOrder(t.Context(), c.Tenant(), "UNPAID", now, void)
	wantCode(t, err, recon.ECONFLICT, "order UNPAID is not paid: cancel it instead of voiding")
	_, err = s.CancelOrder(t.Context(), c.Tenant(), "PAID", now)
	wantCode(t, err, recon.ECONFLICT, "order PAID is paid: void it instead of cancelling")
	o, err := s.CancelOrder(t.Context(), c.Tenant(), "UNPAID", now)
	if err != nil || o.Status != recon.OrderCancelled {
		t.Fatalf("cancel: %v %v", o, err)
	}
	_, err = s.CancelOrder(t.Context(), c.Tenant(), "UNPAID", now)
	wantCode(t, err, recon.ECONFLICT, "order UNPAID is already cancelled")
	o, err = s.VoidOrder(t.Context(), c.Tenant(), "PAID", now, void)
	if err != nil || o.Status != recon.OrderCancelled || o.VoidedAt.IsZero() {
		t.Fatalf("void: %v %v", o, err)
	}
	if n := countDeliveries(t, s, c.Tenant(), recon.IPNTransactionVoid); n != 1 {
		t.Fatalf("%d TRANSACTION_VOID deliveries, want 1", n)
	}
	// A transfer for a voided order is a duplicate, not a new payment.
	pay(t, s, c.Tenant(), a.ID, "R2", "DH40002", "", 10)
	if o, _ := s.Order(t.Context(), c.Tenant(), "PAID"); o.Status != recon.OrderCancelled {
		t.Fatalf("a late transfer revived a voided order: %s", o.Status)
	}
	_, err = s.CancelOrder(t.Context(), newCompany(t, s, 2).Tenant(), "PAID", now)
	wantCode(t, err, recon.ENOTFOUND, "")
}

// testOrdersIPNSubscriptions: ORDER_PAID and TRANSACTION_VOID are enqueued
// only when the active IPN target subscribes to them (its settings'
// notification_types; docs/api-v2.md, Notifications); a target saved
// before API v2 ("{}") receives both, as v1 always sent them.
func testOrdersIPNSubscriptions(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	void := func(o *recon.Order) (*recon.Delivery, error) {
		return recon.IPNDelivery(o, recon.IPNTransactionVoid, now)
	}
	for i, tc := range []struct {
		settings   string
		paid, void int
	}{
		{settings: "", paid: 1, void: 1}, // saved the v1 way: "{}"
		{settings: `{"notification_types":["ORDER_PARTIALLY_PAID","ORDER_EXPIRED"]}`},
		{settings: `{"notification_types":["TRANSACTION_VOID"]}`, void: 1},
		{settings: `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID"],"kept":true}`, paid: 1},
	} {
		if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true, Settings: tc.settings}); err != nil {
			t.Fatal(err)
		}
		inv, code := fmt.Sprintf("SUB%d", i), fmt.Sprintf("DH5000%d", i)
		newOrder(t, s, c.ID, a.ID, inv, code, 10)
		paidBefore, voidBefore := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid), countDeliveries(t, s, c.Tenant(), recon.IPNTransactionVoid)
		pay(t, s, c.Tenant(), a.ID, "R"+inv, code, "", 10)
		if o, err := s.VoidOrder(t.Context(), c.Tenant(), inv, now, void); err != nil || o.Status != recon.OrderCancelled {
			t.Fatalf("settings %q: void: %v %v", tc.settings, o, err)
		}
		paid := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid) - paidBefore
		voided := countDeliveries(t, s, c.Tenant(), recon.IPNTransactionVoid) - voidBefore
		if paid != tc.paid || voided != tc.void {
			t.Errorf("settings %q: %d ORDER_PAID and %d TRANSACTION_VOID enqueued, want %d and %d", tc.settings, paid, voided, tc.paid, tc.void)
		}
	}
}

func testOrdersFilters(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	for i := range 5 {
		newOrder(t, s, c.ID, 0, fmt.Sprintf("INV-%d", i), fmt.Sprintf("DH5000%d", i), 10)
	}
	list, total, err := s.Orders(t.Context(), c.Tenant(), recon.OrderFilter{Page: 1, PerPage: 2})
	if err != nil || total != 5 || len(list) != 2 || list[0].InvoiceNumber != "INV-4" {
		t.Fatalf("page 1: %d %d %v", total, len(list), err)
	}
	list, _, _ = s.Orders(t.Context(), c.Tenant(), recon.OrderFilter{Page: 1, PerPage: 10, Ascending: true, Query: "inv-3"})
	if len(list) != 1 || list[0].InvoiceNumber != "INV-3" {
		t.Fatalf("q: %v", list)
	}
	// q searches invoice, description and customer, case folded by
	// Unicode's rules (Đ is đ) on both engines,
	// and the payment code (migration 00037), in any case.
	for q, want := range map[string]string{"ĐƠN HÀNG INV-2": "INV-2", "cust-inv-1": "INV-1", "Đơn hàng INV-0": "INV-0", "dh50003": "INV-3", "DH50004": "INV-4"} {
		list, total, err = s.Orders(t.Context(), c.Tenant(), recon.OrderFilter{Page: 1, PerPage: 10, Query: q})
		if err != nil || total != 1 || len(list) != 1 || list[0].InvoiceNumber != want {
			t.Fatalf("q %q: total %d, %v, %v", q, total, list, err)
		}
	}
	list, _, _ = s.Orders(t.Context(), c.Tenant(), recon.OrderFilter{Page: 1, PerPage: 10, Query: "%"})
	if len(list) != 0 {
		t.Fatalf("q %% matched %d orders: LIKE wildcards must be literal", len(list))
	}
	today := time.Now().UTC().Format(recon.DateLayout)
	_, total, _ = s.Orders(t.Context(), c.Tenant(), recon.OrderFilter{Page: 1, PerPage: 10, CreatedOn: today, Status: recon.OrderAwaitingPayment, CustomerID: "CUST-INV-1"})
	if total != 1 {
		t.Fatalf("created_at + status + customer: total %d", total)
	}
}

// countDeliveries counts the company's deliveries of the event ("" for any) in the outbox.
func countDeliveries(t *testing.T, s recon.Store, tenant recon.TenantID, event string) int {
	t.Helper()
	ds, ok := s.(recon.DeliveryStore)
	if !ok {
		t.Fatal("the store does not implement recon.DeliveryStore")
	}
	list, err := ds.Deliveries(t.Context(), tenant, recon.DeliveryFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range list {
		if event == "" || d.Event == event {
			n++
		}
	}
	return n
}
