package storetest

import (
	"slices"
	"testing"

	"recon"
)

// The links between the dashboard's pages (recon.PageLinkStore;
// docs/dashboard.md, Links between pages).

func testLinks(t *testing.T, open Open) {
	run(t, "TransactionLinks", withAccount(open), testTransactionLinks)
	run(t, "OrderInvoicesAndCustomers", withAccount(open), testLinkOrdersAndCustomers)
	run(t, "CountDeliveries", open, testCountDeliveries)
}

// testTransactionLinks: each transfer's order (a paying decision's first,
// else the one a decision names), outcome, matched state and exception;
// another company's ids are left out, too many ids refused.
func testTransactionLinks(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	o1 := newOrder(t, s, c.ID, a.ID, "O1", "DH1", 100)
	o2 := newOrder(t, s, c.ID, a.ID, "O2", "DH2", 50)
	under := pay(t, s, c.Tenant(), a.ID, "R1", "DH1", "", 60)
	full := pay(t, s, c.Tenant(), a.ID, "R2", "DH2", "", 50)
	dup := pay(t, s, c.Tenant(), a.ID, "R3", "DH2", "", 30)
	none := pay(t, s, c.Tenant(), a.ID, "R4", "", "", 10)
	res, err := s.IngestTransactions(t.Context(), c.Tenant(), []recon.TransactionInput{tx(a.ID, "R5", "2026-03-01 11:00:00", 0, 5)}, []string{""})
	if err != nil {
		t.Fatal(err)
	}
	out := res[0].ID
	other := newCompany(t, s, 2)
	oa := newAccount(t, s, other.ID, "222")
	newOrder(t, s, other.ID, oa.ID, "X1", "DH9", 10)
	otherTx := pay(t, s, other.Tenant(), oa.ID, "R9", "DH9", "", 10)

	links, err := s.TransactionLinks(t.Context(), c.Tenant(), []int64{under, full, dup, none, out, otherTx})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		id     int64
		link   recon.TransactionLink
		amount int64
		state  string
		exc    string
	}{
		{under, recon.TransactionLink{OrderID: o1.ID, Invoice: "O1", Outcome: recon.MatchUnderpaid, Paid: true, ExceptionKind: recon.MatchUnderpaid}, 60, recon.StateMatched, "open"},
		{full, recon.TransactionLink{OrderID: o2.ID, Invoice: "O2", Outcome: recon.MatchCaptured, Paid: true}, 50, recon.StateMatched, ""},
		{dup, recon.TransactionLink{OrderID: o2.ID, Invoice: "O2", Outcome: recon.MatchDuplicate, ExceptionKind: recon.MatchDuplicate}, 30, recon.StateUnmatched, "open"},
		{none, recon.TransactionLink{ExceptionKind: recon.StateUnmatched}, 10, recon.StateUnmatched, "open"},
		{out, recon.TransactionLink{}, 0, "", ""},
	} {
		got := links[w.id]
		if got != w.link || got.State(&recon.Transaction{AmountIn: w.amount}) != w.state || got.ExceptionState() != w.exc {
			t.Errorf("transaction %d: %+v (%q, %q), want %+v (%q, %q)", w.id, got, got.State(&recon.Transaction{AmountIn: w.amount}), got.ExceptionState(), w.link, w.state, w.exc)
		}
	}
	if _, ok := links[otherTx]; ok {
		t.Errorf("another company's transaction is linked: %+v", links[otherTx])
	}
	if links, err := s.TransactionLinks(t.Context(), c.Tenant(), nil); err != nil || len(links) != 0 {
		t.Errorf("no ids: %v %v", links, err)
	}
	if _, err := s.TransactionLinks(t.Context(), c.Tenant(), make([]int64, 1001)); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("1001 ids: %v", err)
	}
	rows, err := s.TransactionsByID(t.Context(), c.Tenant(), []int64{under, otherTx, out})
	if err != nil || len(rows) != 2 || rows[0].ID != out || rows[1].ID != under {
		t.Errorf("TransactionsByID: %v %v", rows, err)
	}
}

// testLinkOrdersAndCustomers: invoice numbers by order id, and a customer's
// transfers (by their decisions, newest first), of the tenant only.
func testLinkOrdersAndCustomers(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	o1 := newOrder(t, s, c.ID, a.ID, "O1", "DH1", 100)
	o2 := newOrder(t, s, c.ID, a.ID, "O2", "DH2", 50)
	first := pay(t, s, c.Tenant(), a.ID, "R1", "DH1", "", 60)
	second := pay(t, s, c.Tenant(), a.ID, "R2", "DH1", "", 40)
	pay(t, s, c.Tenant(), a.ID, "R3", "DH2", "", 50)
	other := newCompany(t, s, 2)
	oa := newAccount(t, s, other.ID, "222")
	x := newOrder(t, s, other.ID, oa.ID, "O1", "DH1", 10) // the same invoice and customer id
	pay(t, s, other.Tenant(), oa.ID, "R9", "DH1", "", 10)

	inv, err := s.OrderInvoices(t.Context(), c.Tenant(), []int64{o1.ID, o2.ID, x.ID})
	if err != nil || len(inv) != 2 || inv[o1.ID] != "O1" || inv[o2.ID] != "O2" {
		t.Errorf("OrderInvoices: %v %v", inv, err)
	}
	got := func(customer string, limit int) []int64 {
		t.Helper()
		rows, err := s.CustomerTransactions(t.Context(), c.Tenant(), customer, limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		return ids
	}
	if ids := got("CUST-O1", 10); !slices.Equal(ids, []int64{second, first}) {
		t.Errorf("CUST-O1: %v, want %v", ids, []int64{second, first})
	}
	if ids := got("CUST-O1", 1); len(ids) != 1 {
		t.Errorf("limit 1: %v", ids)
	}
	if ids := got("NOBODY", 10); len(ids) != 0 {
		t.Errorf("NOBODY: %v", ids)
	}
	rows, err := s.CustomerTransactions(t.Context(), other.Tenant(), "CUST-O1", 10)
	if err != nil || len(rows) != 1 || rows[0].CompanyID != other.ID {
		t.Errorf("the other company's CUST-O1: %v %v", rows, err)
	}
}

// testCountDeliveries: by status (and failing), kind, up to the bound, of
// the tenant only.
func testCountDeliveries(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	other := newCompany(t, s, 2)
	for range 3 {
		enqueue(t, s, c.ID, "ORDER_PAID")
	}
	enqueue(t, s, other.ID, "ORDER_PAID")
	for _, w := range []struct {
		f     recon.DeliveryFilter
		bound int
		want  int64
	}{
		{recon.DeliveryFilter{}, 100, 3},
		{recon.DeliveryFilter{Status: recon.DeliveryPending}, 100, 3},
		{recon.DeliveryFilter{Status: recon.DeliveryPending}, 2, 2},
		{recon.DeliveryFilter{Failing: true}, 100, 0},
		{recon.DeliveryFilter{Status: recon.DeliveryDead}, 100, 0},
		{recon.DeliveryFilter{Kind: recon.DeliveryWebhook}, 100, 0},
	} {
		if n, err := s.CountDeliveries(t.Context(), c.Tenant(), w.f, w.bound); err != nil || n != w.want {
			t.Errorf("%+v bound %d: %d %v, want %d", w.f, w.bound, n, err, w.want)
		}
	}
	if _, err := s.CountDeliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Status: "lost"}, 10); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("unknown status: %v", err)
	}
	if _, err := s.CountDeliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Status: recon.DeliveryDead, Failing: true}, 10); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("dead and failing: %v", err)
	}
}
