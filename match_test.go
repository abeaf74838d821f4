package recon_test

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"recon"
)

func matchOrder(status string, amount, paid int64) *recon.Order {
	return &recon.Order{InvoiceNumber: "INV-7", PaymentCode: "DH20002", VirtualAccount: "VA999", Status: status, Amount: amount, PaidAmount: paid}
}

func byCode(amount int64) recon.Payment {
	return recon.Payment{Amount: amount, Rule: recon.MatchByCode}
}
func byVA(amount int64) recon.Payment {
	return recon.Payment{Amount: amount, Rule: recon.MatchBySubAccount}
}

// TestMatchPayments: each outcome, its exact sentence (the API shows them),
// and each refusal.
func TestMatchPayments(t *testing.T) {
	const open, captured, cancelled = recon.OrderAwaitingPayment, recon.OrderCaptured, recon.OrderCancelled
	under := func(total int64, reason string) recon.PaymentMatch {
		return recon.PaymentMatch{Outcome: recon.MatchUnderpaid, PaidTotal: total, Reason: reason}
	}
	paid := func(total int64, reason string) recon.PaymentMatch {
		return recon.PaymentMatch{Outcome: recon.MatchCaptured, PaidTotal: total, Reason: reason, Captured: true}
	}
	over := func(total int64, reason string) recon.PaymentMatch {
		return recon.PaymentMatch{Outcome: recon.MatchOverpaid, PaidTotal: total, Reason: reason, Captured: true}
	}
	dup := func(total int64, reason string) recon.PaymentMatch {
		return recon.PaymentMatch{Outcome: recon.MatchDuplicate, PaidTotal: total, Reason: reason}
	}
	for _, c := range []struct {
		name     string
		order    *recon.Order
		payments []recon.Payment
		want     []recon.PaymentMatch
		err      string // the EINVALID message, when refused
	}{
		{"exact", matchOrder(open, 100_000, 0), []recon.Payment{byCode(100_000)},
			[]recon.PaymentMatch{paid(100_000, "payment code DH20002 names order INV-7: 100000 of 100000 VND paid")}, ""},
		{"underpaid then paid", matchOrder(open, 100_000, 0), []recon.Payment{byCode(40_000), byCode(60_000)},
			[]recon.PaymentMatch{
				under(40_000, "payment code DH20002 names order INV-7: 40000 of 100000 VND paid, 60000 short"),
				paid(100_000, "payment code DH20002 names order INV-7: 100000 of 100000 VND paid"),
			}, ""},
		{"overpaid at once", matchOrder(open, 100_000, 0), []recon.Payment{byCode(120_000)},
			[]recon.PaymentMatch{over(120_000, "payment code DH20002 names order INV-7: 120000 VND paid for 100000, 20000 over")}, ""},
		{"short, short, over", matchOrder(open, 100, 0), []recon.Payment{byCode(30), byVA(30), byCode(50)},
			[]recon.PaymentMatch{
				under(30, "payment code DH20002 names order INV-7: 30 of 100 VND paid, 70 short"),
				under(60, "virtual account VA999 names order INV-7: 60 of 100 VND paid, 40 short"),
				over(110, "payment code DH20002 names order INV-7: 110 VND paid for 100, 10 over"),
			}, ""},
		{"paid in an earlier batch", matchOrder(open, 100_000, 40_000), []recon.Payment{byVA(60_000)},
			[]recon.PaymentMatch{paid(100_000, "virtual account VA999 names order INV-7: 100000 of 100000 VND paid")}, ""},
		{"captured, then duplicates", matchOrder(open, 10, 0), []recon.Payment{byCode(10), byCode(10), byVA(5)},
			[]recon.PaymentMatch{
				paid(10, "payment code DH20002 names order INV-7: 10 of 10 VND paid"),
				dup(10, "payment code DH20002 names order INV-7, which is already captured"),
				dup(10, "virtual account VA999 names order INV-7, which is already captured"),
			}, ""},
		{"already captured", matchOrder(captured, 10, 12), []recon.Payment{byCode(10)},
			[]recon.PaymentMatch{dup(12, "payment code DH20002 names order INV-7, which is already captured")}, ""},
		{"cancelled unpaid", matchOrder(cancelled, 10, 4), []recon.Payment{byVA(6)},
			[]recon.PaymentMatch{dup(4, "virtual account VA999 names order INV-7, which is already cancelled")}, ""},
		{"an order of 0 VND", matchOrder(open, 0, 0), []recon.Payment{byCode(1)},
			[]recon.PaymentMatch{over(1, "payment code DH20002 names order INV-7: 1 VND paid for 0, 1 over")}, ""},
		{"no payments", matchOrder(open, 10, 0), nil, []recon.PaymentMatch{}, ""},
		{"at the int64 limit", matchOrder(open, math.MaxInt64, math.MaxInt64-5), []recon.Payment{byCode(5)},
			[]recon.PaymentMatch{paid(math.MaxInt64, "payment code DH20002 names order INV-7: 9223372036854775807 of 9223372036854775807 VND paid")}, ""},
		{"a duplicate adds nothing, so cannot overflow", matchOrder(captured, math.MaxInt64, math.MaxInt64), []recon.Payment{byCode(math.MaxInt64)},
			[]recon.PaymentMatch{dup(math.MaxInt64, "payment code DH20002 names order INV-7, which is already captured")}, ""},
		{"overflow", matchOrder(open, math.MaxInt64, math.MaxInt64-5), []recon.Payment{byCode(6)}, nil,
			"a transfer of 6 VND to order INV-7 would overflow its paid amount (9223372036854775802 VND paid so far)"},
		{"overflow later in the sequence", matchOrder(open, math.MaxInt64, 0), []recon.Payment{byCode(1 << 62), byVA(1 << 62)}, nil,
			"a transfer of 4611686018427387904 VND to order INV-7 would overflow its paid amount (4611686018427387904 VND paid so far)"},
		{"zero payment", matchOrder(open, 10, 0), []recon.Payment{byCode(0)}, nil,
			"a transfer to order INV-7 must pay more than 0 VND, not 0"},
		{"negative payment", matchOrder(open, 10, 0), []recon.Payment{byCode(5), byCode(-5)}, nil,
			"a transfer to order INV-7 must pay more than 0 VND, not -5"},
		{"unknown rule", matchOrder(open, 10, 0), []recon.Payment{{Amount: 5, Rule: "memo"}}, nil,
			`a transfer names order INV-7 by an unknown rule "memo"`},
		{"negative order amount", matchOrder(open, -1, 0), []recon.Payment{byCode(5)}, nil,
			"order INV-7 has a negative amount (-1 VND, 0 VND paid)"},
		{"negative paid amount", matchOrder(open, 10, -3), []recon.Payment{byCode(5)}, nil,
			"order INV-7 has a negative amount (10 VND, -3 VND paid)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := *c.order
			got, err := recon.MatchPayments(c.order, c.payments)
			if c.err != "" {
				if recon.ErrorCode(err) != recon.EINVALID || recon.ErrorMessage(err) != c.err || got != nil {
					t.Fatalf("got %+v, %v; want EINVALID %q", got, err, c.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("matches (-want +got):\n%s", d)
			}
			if *c.order != before {
				t.Errorf("MatchPayments changed the order: %+v, was %+v", *c.order, before)
			}
		})
	}
}

func TestUnmatchedDecision(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, code, sub string
		amountIn        int64
		reason          string // "" for no decision
	}{
		{"by code", "DH99999", "", 1_000, "no order with payment code DH99999"},
		{"code wins", "DH99999", "VA404", 1_000, "no order with payment code DH99999"},
		{"by sub-account", "", "VA404", 2_000, "no order with virtual account VA404"},
		{"names nothing", "", "", 7_000, ""},
		{"outgoing", "DH99999", "", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := recon.UnmatchedDecision(3, 42, c.code, c.sub, c.amountIn, at)
			if c.reason == "" {
				if d != nil {
					t.Fatalf("got %+v, want no decision", d)
				}
				return
			}
			want := &recon.MatchDecision{CompanyID: 3, TransactionID: 42, Outcome: recon.MatchNone, Code: c.code, Amount: c.amountIn, Reason: c.reason, CreatedAt: at}
			if diff := cmp.Diff(want, d); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMatchPaymentsProperty checks MatchPayments against a model in
// arbitrary-precision arithmetic, on random orders and transfer sequences
// (amounts small enough to need several transfers, and near the int64 limit):
// it is refused exactly when an open order's paid amount would pass the int64
// limit; otherwise paid totals never wrap and account for every non-duplicate
// transfer, an order is captured at most once (exactly once when open and
// paid in full), only by the transfer that reaches its amount, and every
// transfer after that is a duplicate. Cutting the sequence in two batches
// and carrying the order's state across gives the same decisions.
func TestMatchPaymentsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		size := rapid.Int64Range(0, 1000)
		huge := rapid.Int64Range(math.MaxInt64/4, math.MaxInt64)
		o := &recon.Order{
			InvoiceNumber: "INV-" + rapid.StringMatching(`[A-Z0-9]{1,6}`).Draw(t, "invoice"),
			PaymentCode:   "DH" + rapid.StringMatching(`[0-9]{4,8}`).Draw(t, "code"),
			Status:        rapid.SampledFrom([]string{recon.OrderAwaitingPayment, recon.OrderAwaitingPayment, recon.OrderCaptured, recon.OrderCancelled}).Draw(t, "status"),
			Amount:        rapid.OneOf(size, huge).Draw(t, "amount"),
		}
		if rapid.Bool().Draw(t, "va") {
			o.VirtualAccount = "VA" + rapid.StringMatching(`[0-9]{3,6}`).Draw(t, "va number")
		}
		// Anywhere below the amount, or just below it: near the int64 limit,
		// where the next transfer may overflow.
		o.PaidAmount = rapid.OneOf(rapid.Int64Range(0, o.Amount), rapid.Int64Range(max(o.Amount-1000, 0), o.Amount)).Draw(t, "paid")
		if o.Status == recon.OrderAwaitingPayment && o.PaidAmount == o.Amount && o.Amount > 0 {
			o.PaidAmount-- // an open order is short of its amount
		}
		payments := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) recon.Payment {
			return recon.Payment{
				Amount: rapid.OneOf(rapid.Int64Range(1, 1000), huge).Draw(t, "amount"),
				Rule:   rapid.SampledFrom([]string{recon.MatchByCode, recon.MatchBySubAccount}).Draw(t, "rule"),
			}
		}), 0, 12).Draw(t, "payments")
		before := *o

		got, err := recon.MatchPayments(o, payments)
		if *o != before {
			t.Fatalf("MatchPayments changed the order: %+v, was %+v", *o, before)
		}

		// The model: the same rules on big integers.
		maxInt := big.NewInt(math.MaxInt64)
		open := o.Status == recon.OrderAwaitingPayment
		total := big.NewInt(o.PaidAmount)
		overflowAt := -1
		for i, p := range payments {
			if !open {
				continue
			}
			total.Add(total, big.NewInt(p.Amount))
			if total.Cmp(maxInt) > 0 {
				overflowAt = i
				break
			}
			if total.Cmp(big.NewInt(o.Amount)) >= 0 {
				open = false
			}
		}
		if overflowAt >= 0 {
			want := "would overflow its paid amount"
			if recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(recon.ErrorMessage(err), want) || !strings.Contains(recon.ErrorMessage(err), o.InvoiceNumber) {
				t.Fatalf("transfer %d overflows the paid amount: got %v, want EINVALID saying %q", overflowAt, err, want)
			}
			return
		}
		if err != nil {
			t.Fatalf("refused without overflow: %v", err)
		}
		if len(got) != len(payments) {
			t.Fatalf("%d matches for %d payments", len(got), len(payments))
		}

		open = o.Status == recon.OrderAwaitingPayment
		prev, captures := o.PaidAmount, 0
		nonDuplicate := big.NewInt(0)
		for i, m := range got {
			p := payments[i]
			named := "payment code " + o.PaymentCode
			if p.Rule == recon.MatchBySubAccount {
				named = "virtual account " + o.VirtualAccount
			}
			if !strings.HasPrefix(m.Reason, named+" names order "+o.InvoiceNumber) {
				t.Fatalf("match %d: reason %q does not name %q and the order", i, m.Reason, named)
			}
			if m.PaidTotal < prev {
				t.Fatalf("match %d: paid total went down from %d to %d", i, prev, m.PaidTotal)
			}
			if !open {
				if m.Outcome != recon.MatchDuplicate || m.PaidTotal != prev || m.Captured {
					t.Fatalf("match %d after capture (or for a closed order): %+v, want a duplicate at %d", i, m, prev)
				}
				continue
			}
			nonDuplicate.Add(nonDuplicate, big.NewInt(p.Amount))
			if m.PaidTotal-prev != p.Amount {
				t.Fatalf("match %d: paid total %d after %d, for a transfer of %d", i, m.PaidTotal, prev, p.Amount)
			}
			switch {
			case m.PaidTotal < o.Amount:
				if m.Outcome != recon.MatchUnderpaid || m.Captured {
					t.Fatalf("match %d: %+v short of %d, want underpaid", i, m, o.Amount)
				}
			case m.PaidTotal == o.Amount:
				if m.Outcome != recon.MatchCaptured || !m.Captured {
					t.Fatalf("match %d: %+v reaches %d exactly, want matched", i, m, o.Amount)
				}
			default:
				if m.Outcome != recon.MatchOverpaid || !m.Captured {
					t.Fatalf("match %d: %+v past %d, want overpaid", i, m, o.Amount)
				}
			}
			if m.Captured {
				captures++
				open = false
			}
			prev = m.PaidTotal
		}
		// Every transfer that was not a duplicate is in the final total, once.
		if final := new(big.Int).Add(big.NewInt(o.PaidAmount), nonDuplicate); final.Cmp(big.NewInt(prev)) != 0 {
			t.Fatalf("final paid total %d; initial %d plus non-duplicate transfers %s = %s", prev, o.PaidAmount, nonDuplicate, final)
		}
		sum := big.NewInt(o.PaidAmount)
		for _, p := range payments {
			sum.Add(sum, big.NewInt(p.Amount))
		}
		wantCaptures := 0
		if o.Status == recon.OrderAwaitingPayment && len(payments) > 0 && sum.Cmp(big.NewInt(o.Amount)) >= 0 {
			wantCaptures = 1
		}
		if captures != wantCaptures {
			t.Fatalf("%d captures, want %d", captures, wantCaptures)
		}

		// Two batches, the order's state carried across, decide the same.
		cut := rapid.IntRange(0, len(payments)).Draw(t, "cut")
		first, err := recon.MatchPayments(o, payments[:cut])
		if err != nil {
			t.Fatal(err)
		}
		next := *o
		for _, m := range first {
			next.PaidAmount = m.PaidTotal
			if m.Captured {
				next.Status = recon.OrderCaptured
			}
		}
		second, err := recon.MatchPayments(&next, payments[cut:])
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(got, append(first, second...)); d != "" {
			t.Fatalf("one batch vs two cut at %d (-one +two):\n%s", cut, d)
		}
	})
}

// TestOrderRoutes: a transfer names the order of the virtual account it was
// sent to before the order of its memo's code, and nothing else.
func TestOrderRoutes(t *testing.T) {
	a := &recon.Order{ID: 1, PaymentCode: "DH1", VirtualAccount: "VA1"}
	b := &recon.Order{ID: 2, PaymentCode: "DH2"}
	routes := recon.NewOrderRoutes([]*recon.Order{a, b})
	for _, c := range []struct {
		sub, code string
		want      *recon.Order
		rule      string
	}{
		{"VA1", "DH2", a, recon.MatchBySubAccount}, // the virtual account wins over the code
		{"VA1", "", a, recon.MatchBySubAccount},
		{"", "DH2", b, recon.MatchByCode},
		{"VA-UNKNOWN", "DH2", b, recon.MatchByCode}, // an unknown account falls back to the code
		{"VA-UNKNOWN", "DH-UNKNOWN", nil, ""},
		{"", "", nil, ""},
	} {
		o, rule := routes.Route(c.sub, c.code)
		if o != c.want || rule != c.rule {
			t.Errorf("Route(%q, %q) = %v, %q; want %v, %q", c.sub, c.code, o, rule, c.want, c.rule)
		}
	}
	for _, c := range []struct {
		in         int64
		code, sub  string
		namesOrder bool
	}{{1, "DH1", "", true}, {1, "", "VA1", true}, {1, "", "", false}, {0, "DH1", "VA1", false}, {-5, "DH1", "", false}} {
		if got := recon.NamesOrder(c.in, c.code, c.sub); got != c.namesOrder {
			t.Errorf("NamesOrder(%d, %q, %q) = %v", c.in, c.code, c.sub, got)
		}
	}
}

// TestSettlePayments: the capture step every way of matching shares: the
// decisions as recorded, the order's new state, which payment captured it,
// and whether the order is written at all.
func TestSettlePayments(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	earlier := now.Add(-time.Hour)
	pay := func(tx, amount int64, rule string) recon.Payment {
		return recon.Payment{Amount: amount, Rule: rule, TransactionID: tx, Code: "DH20002"}
	}
	for _, c := range []struct {
		name     string
		status   string
		paid     int64
		payments []recon.Payment
		outcomes []string
		captured int
		changed  bool
		after    func(o *recon.Order) // the order after, from a copy of the one given
	}{
		{"short", recon.OrderAwaitingPayment, 0, []recon.Payment{pay(11, 40, recon.MatchByCode)},
			[]string{recon.MatchUnderpaid}, -1, true, func(o *recon.Order) { o.PaidAmount, o.UpdatedAt = 40, now }},
		{"short then captured, then a duplicate", recon.OrderAwaitingPayment, 10, []recon.Payment{pay(11, 40, recon.MatchBySubAccount), pay(12, 50, recon.MatchByCode), pay(13, 5, recon.MatchByCode)},
			[]string{recon.MatchUnderpaid, recon.MatchCaptured, recon.MatchDuplicate}, 1, true, func(o *recon.Order) {
				o.PaidAmount, o.UpdatedAt, o.Status, o.PaidAt, o.PaidTransactionID = 100, now, recon.OrderCaptured, now, 12
			}},
		{"overpaid by hand", recon.OrderAwaitingPayment, 0, []recon.Payment{pay(21, 150, recon.MatchByHand)},
			[]string{recon.MatchOverpaid}, 0, true, func(o *recon.Order) {
				o.PaidAmount, o.UpdatedAt, o.Status, o.PaidAt, o.PaidTransactionID = 150, now, recon.OrderCaptured, now, 21
			}},
		{"already captured", recon.OrderCaptured, 100, []recon.Payment{pay(31, 100, recon.MatchByCode)},
			[]string{recon.MatchDuplicate}, -1, false, func(*recon.Order) {}},
		{"cancelled", recon.OrderCancelled, 0, []recon.Payment{pay(41, 100, recon.MatchBySubAccount)},
			[]string{recon.MatchDuplicate}, -1, false, func(*recon.Order) {}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &recon.Order{ID: 5, CompanyID: 9, InvoiceNumber: "INV-7", PaymentCode: "DH20002", Status: c.status,
				Amount: 100, PaidAmount: c.paid, UpdatedAt: earlier}
			before := *o
			st, err := recon.SettlePayments(o, c.payments, now)
			if err != nil {
				t.Fatal(err)
			}
			if *o != before {
				t.Fatalf("SettlePayments changed its argument: %+v", o)
			}
			ms, _ := recon.MatchPayments(o, c.payments)
			for k, d := range st.Decisions {
				p, m := c.payments[k], ms[k]
				want := recon.MatchDecision{CompanyID: 9, TransactionID: p.TransactionID, OrderID: 5, Outcome: c.outcomes[k], Rule: p.Rule,
					Code: "DH20002", Amount: p.Amount, OrderAmount: 100, PaidTotal: m.PaidTotal, Reason: m.Reason, CreatedAt: now}
				if diff := cmp.Diff(want, *d); diff != "" {
					t.Errorf("decision %d (-want +got):\n%s", k, diff)
				}
			}
			if len(st.Decisions) != len(c.payments) || st.Captured != c.captured || st.Changed != c.changed {
				t.Errorf("%d decisions, captured %d, changed %v; want %d, %d, %v", len(st.Decisions), st.Captured, st.Changed, len(c.payments), c.captured, c.changed)
			}
			want := before
			c.after(&want)
			if diff := cmp.Diff(want, *st.Order); diff != "" {
				t.Errorf("order after (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := recon.SettlePayments(&recon.Order{InvoiceNumber: "X", Status: recon.OrderAwaitingPayment, Amount: 1},
		[]recon.Payment{{Amount: 0, Rule: recon.MatchByCode}}, now); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("a payment of 0 VND: %v, want MatchPayments' EINVALID", err)
	}
}
