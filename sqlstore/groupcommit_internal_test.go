package sqlstore

import (
	"testing"

	"recon"
)

// TestLanesByOverlappingAccounts: a call joins the lane that shares an
// account with it, a call sharing none opens its own (stored in parallel),
// and a call overlapping two lanes merges them, keeping arrival order within
// each.
func TestLanesByOverlappingAccounts(t *testing.T) {
	call := func(accounts ...int64) *ingestCall {
		var in []recon.TransactionInput
		for _, a := range accounts {
			in = append(in, recon.TransactionInput{BankAccountID: a})
		}
		return &ingestCall{in: in, accounts: accountsOf(in)}
	}
	var g ingestGroup
	ab, c, b, cd, ad, e := call(1, 2, 1), call(3), call(2), call(4, 3), call(1, 4), call(5)
	l1 := g.enqueue(7, ab)
	l2 := g.enqueue(7, c)
	if l1 == nil || l2 == nil || l1 == l2 {
		t.Fatalf("calls on accounts {1,2} and {3} got lanes %p and %p; want two new lanes", l1, l2)
	}
	if g.enqueue(7, b) != nil || g.enqueue(7, cd) != nil {
		t.Fatal("a call overlapping a lane opened another")
	}
	if other := g.enqueue(8, call(1)); other == nil {
		t.Fatal("another company's call joined this company's lane")
	}
	if g.enqueue(7, ad) != nil {
		t.Fatal("a call overlapping two lanes opened a third")
	}
	if !l2.merged || l1.merged || len(g.lanes[7]) != 1 || g.lanes[7][0] != l1 {
		t.Fatalf("after a call on {1,4}: lane 1 merged %v, lane 2 merged %v, %d lanes; want lane 2 merged into lane 1", l1.merged, l2.merged, len(g.lanes[7]))
	}
	want := []*ingestCall{ab, b, c, cd, ad}
	if len(l1.queue) != len(want) {
		t.Fatalf("lane 1 holds %d calls, want %d", len(l1.queue), len(want))
	}
	for i := range want {
		if l1.queue[i] != want[i] {
			t.Fatalf("lane 1's call %d is %v, want %v", i, l1.queue[i].accounts, want[i].accounts)
		}
	}
	if l5 := g.enqueue(7, e); l5 == nil || l5 == l1 {
		t.Fatal("a call on account 5 did not get a lane of its own")
	}
}

// TestOneLanePerCompany: where the engine runs one writer at a time
// (SQLite), a company's calls share one lane whatever their accounts, and
// another company's calls still get their own.
func TestOneLanePerCompany(t *testing.T) {
	call := func(account int64) *ingestCall {
		in := []recon.TransactionInput{{BankAccountID: account}}
		return &ingestCall{in: in, accounts: accountsOf(in)}
	}
	g := ingestGroup{oneLane: true}
	a, b := call(1), call(2)
	l := g.enqueue(7, a)
	if l == nil || g.enqueue(7, b) != nil {
		t.Fatal("a call on another account of the same company opened a second lane")
	}
	if len(g.lanes[7]) != 1 || len(l.queue) != 2 || l.queue[0] != a || l.queue[1] != b {
		t.Fatalf("company 7: %d lanes, the lane's queue %v; want one lane holding both calls in order", len(g.lanes[7]), l.queue)
	}
	if g.enqueue(8, call(1)) == nil {
		t.Fatal("another company's call joined this company's lane")
	}
}
