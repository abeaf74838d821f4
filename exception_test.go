package recon

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSimilarCodes(t *testing.T) {
	formats := []PaymentCodeFormat{
		{Prefix: "dh", SuffixFrom: 2, SuffixTo: 3, CharacterType: NumberOnly},
		{Prefix: "HD", SuffixFrom: 2, SuffixTo: 6, CharacterType: NumberOnly},
		{Prefix: "XY", SuffixFrom: 3, SuffixTo: 6, CharacterType: NumberAndLetter},
	}
	got := SimilarCodes("dh12", formats)
	for _, want := range []string{
		"DH13", "DH02", // replaced
		"DH123", "DH012", // inserted (DH allows 3 digits)
		"DH21", // neighbours swapped
		"HD12", // the same suffix under another prefix
	} {
		if !slices.Contains(got, want) {
			t.Errorf("SimilarCodes(dh12) lacks %s: %v", want, got)
		}
	}
	for _, not := range []string{
		"DH12",   // itself
		"DH1",    // too short for DH
		"DH1A",   // DH is NumberOnly
		"DH1234", // two edits
		"XY12",   // too short for XY
		"HD21",   // two changes
	} {
		if slices.Contains(got, not) {
			t.Errorf("SimilarCodes(dh12) holds %s", not)
		}
	}
	if g := SimilarCodes("XY1A2", formats); !slices.Contains(g, "XY1B2") || !slices.Contains(g, "XY12A") || slices.Contains(g, "XY1A") {
		t.Errorf("SimilarCodes(XY1A2) = %v, want letters in the suffix, 3 to 6 of them", g)
	}
	seen := map[string]bool{}
	for _, c := range got {
		if seen[c] {
			t.Errorf("%s twice", c)
		}
		seen[c] = true
	}
	if SimilarCodes("", formats) != nil || SimilarCodes("ZZ12", formats) != nil {
		t.Error("a code of no format has similar codes")
	}
}

func TestRankSuggestions(t *testing.T) {
	var in []*Suggestion
	for id := int64(1); id <= 12; id++ {
		s := &Suggestion{Order: &Order{ID: id}, Reasons: []string{SuggestSameAmount}}
		if id == 3 {
			s.Reasons = append(s.Reasons, SuggestSimilarCode)
		}
		in = append(in, s)
	}
	var ids []int64
	for _, s := range RankSuggestions(in) {
		ids = append(ids, s.Order.ID)
	}
	if want := []int64{3, 12, 11, 10, 9, 8, 7, 6, 5, 4}; !slices.Equal(ids, want) {
		t.Fatalf("ranked %v, want %v", ids, want)
	}
}

func TestResolveInputValidate(t *testing.T) {
	for _, c := range []struct {
		in    ResolveInput
		field string // "" when valid
	}{
		{ResolveInput{Action: ResolveMatch, OrderID: 1, Note: "typo"}, ""},
		{ResolveInput{Action: ResolveRefund, Note: "sent back\non 10/3"}, ""},
		{ResolveInput{Action: ResolveIgnore, Note: strings.Repeat("é", 250)}, ""},
		{ResolveInput{Action: "MATCH", OrderID: 1, Note: "x"}, "action"},
		{ResolveInput{Action: ResolveMatch, Note: "x"}, "order_id"},
		{ResolveInput{Action: ResolveRefund, OrderID: 1, Note: "x"}, "order_id"},
		{ResolveInput{Action: ResolveIgnore, Note: " \t\n"}, "note"},
		{ResolveInput{Action: ResolveIgnore, Note: strings.Repeat("x", 501)}, "note"},
		{ResolveInput{Action: ResolveIgnore, Note: "bell\a"}, "note"},
		{ResolveInput{Action: ResolveIgnore, Note: "\xff"}, "note"},
		{ResolveInput{Action: ResolveRefund, Note: "x", Amount: 5, Receiver: RefundReceiver{BankBIN: "970436", AccountNumber: "1", AccountName: "A"}}, ""},
		{ResolveInput{Action: ResolveIgnore, Note: "x", Amount: 5}, "receiver"},
		{ResolveInput{Action: ResolveMatch, OrderID: 1, Note: "x", Receiver: RefundReceiver{BankBIN: "970436"}}, "receiver"},
		{ResolveInput{Action: ResolveRefund, Note: "x", Amount: -5}, "amount"},
		{ResolveInput{Action: ResolveRefund, Note: "x", Amount: 5}, "receiver"},
		{ResolveInput{Action: ResolveRefund, Note: "x", Receiver: RefundReceiver{BankBIN: "1"}}, "receiver.bank_bin"},
	} {
		err := c.in.Validate()
		var field string
		if e, ok := err.(*Error); ok {
			for f := range e.Fields {
				field = f
			}
		}
		if field != c.field || (c.field == "") != (err == nil) {
			t.Errorf("%+v: %v, want a problem with %q", c.in, err, c.field)
		}
	}
}

func TestCheckResolution(t *testing.T) {
	tx := &Transaction{ID: 7}
	open := &Order{ID: 1, InvoiceNumber: "A", Status: OrderAwaitingPayment}
	paid := &Order{ID: 2, InvoiceNumber: "B", Status: OrderCaptured}
	cancelled := &Order{ID: 3, InvoiceNumber: "C", Status: OrderCancelled}
	voided := &Order{ID: 4, InvoiceNumber: "D", Status: OrderCancelled, VoidedAt: time.Unix(1, 0)}
	match := &ResolveInput{Action: ResolveMatch, OrderID: 1}
	ignore := &ResolveInput{Action: ResolveIgnore}
	resolved := &ExceptionResolution{Action: ResolveIgnore, UserEmail: "a@b.vn", CreatedAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	for _, c := range []struct {
		e    *Exception
		in   *ResolveInput
		o    *Order
		code string
		msg  string
	}{
		{&Exception{Transaction: tx, Kind: ExceptionUnmatched}, match, open, "", ""},
		{&Exception{Transaction: tx, Kind: ExceptionDuplicate, OrderID: 2}, match, open, "", ""},
		{&Exception{Transaction: tx, Kind: ExceptionUnderpaid, OrderID: 2}, ignore, nil, "", ""},
		{&Exception{Transaction: tx, Kind: ExceptionUnmatched, Resolution: resolved}, ignore, nil, ECONFLICT, "transaction 7 is already resolved (ignore by a@b.vn at 2026-03-01T00:00:00Z)"},
		{&Exception{Transaction: tx, Kind: ExceptionOverpaid, OrderID: 2}, match, open, ECONFLICT, "transaction 7 is already applied to order 2 (overpaid): refund or ignore it instead"},
		{&Exception{Transaction: tx, Kind: ExceptionUnmatched}, match, nil, ENOTFOUND, "order 1 not found"},
		{&Exception{Transaction: tx, Kind: ExceptionUnmatched}, match, paid, ECONFLICT, "order 2 (B) is already paid"},
		{&Exception{Transaction: tx, Kind: ExceptionUnmatched}, match, cancelled, ECONFLICT, "order 3 (C) is cancelled"},
		{&Exception{Transaction: tx, Kind: ExceptionUnmatched}, match, voided, ECONFLICT, "order 4 (D) is voided"},
		{&Exception{Transaction: tx, Kind: ExceptionRefundTransfer}, ignore, nil, "", ""},
		{&Exception{Transaction: tx, Kind: ExceptionRefundTransfer}, match, open, ECONFLICT, "transaction 7 is money that went out with a refund's reference: it can only be ignored, once dealt with at the bank"},
		{&Exception{Transaction: tx, Kind: ExceptionRefundTransfer}, &ResolveInput{Action: ResolveRefund}, nil, ECONFLICT, "transaction 7 is money that went out with a refund's reference: it can only be ignored, once dealt with at the bank"},
	} {
		err := CheckResolution(c.e, c.in, c.o)
		if ErrorCode(err) != c.code || (err != nil && ErrorMessage(err) != c.msg) {
			t.Errorf("%s %s: %v, want %s %q", c.e.Kind, c.in.Action, err, c.code, c.msg)
		}
	}
}

func TestWhoMayResolveExceptions(t *testing.T) {
	for _, c := range []struct {
		user *User
		may  bool
	}{
		{&User{Role: RoleSuperAdmin}, true},
		{&User{Role: RoleAdmin}, true},
		{&User{Role: RoleAccountant}, true},
		{&User{Role: RoleMember, Permissions: Permissions}, false},
		{nil, false},
	} {
		caller := &Caller{User: c.user, Scopes: Scopes}
		if caller.May(ActionResolveExceptions) != c.may || (caller.Authorize(ActionResolveExceptions) == nil) != c.may {
			t.Errorf("%+v may resolve: %v, want %v", c.user, caller.May(ActionResolveExceptions), c.may)
		}
		if c.user != nil && slices.Contains(c.user.GrantableScopes([]string{ScopeExceptionWrite}), ScopeExceptionWrite) != c.may {
			t.Errorf("%+v is granted exception:write: want %v", c.user, c.may)
		}
	}
}

// TestGetsSuggestions: which exceptions are offered orders, by kind and
// whether resolved.
func TestGetsSuggestions(t *testing.T) {
	for _, c := range []struct {
		kind     string
		resolved bool
		want     bool
	}{
		{ExceptionUnmatched, false, true},
		{ExceptionDuplicate, false, true},
		{ExceptionUnderpaid, false, false},
		{ExceptionOverpaid, false, false},
		{ExceptionRefundTransfer, false, false},
		{ExceptionUnmatched, true, false},
		{ExceptionDuplicate, true, false},
	} {
		e := &Exception{Kind: c.kind, Transaction: &Transaction{ID: 1}}
		if c.resolved {
			e.Resolution = &ExceptionResolution{Action: ResolveIgnore}
		}
		if got := e.GetsSuggestions(); got != c.want {
			t.Errorf("%s (resolved %v): GetsSuggestions = %v, want %v", c.kind, c.resolved, got, c.want)
		}
	}
}

func TestOverpaymentAndRemainder(t *testing.T) {
	for _, c := range []struct {
		amount, paid, transfer, over, left int64
	}{
		{100, 0, 100, 0, 100},
		{100, 0, 150, 50, 100},
		{100, 40, 60, 0, 60},
		{100, 40, 70, 10, 60},
		{100, 40, 10, 0, 60},
		{100, 120, 1, 21, 0},
		{100, MaxAmount, math.MaxInt64, math.MaxInt64, 0}, // overflows: all of it
	} {
		o := &Order{Amount: c.amount, PaidAmount: c.paid}
		if got := Overpayment(c.transfer, o); got != c.over {
			t.Errorf("Overpayment(%d, paid %d of %d) = %d, want %d", c.transfer, c.paid, c.amount, got, c.over)
		}
		if got := Remainder(o); got != c.left {
			t.Errorf("Remainder(paid %d of %d) = %d, want %d", c.paid, c.amount, got, c.left)
		}
	}
}

func TestCheckRemainder(t *testing.T) {
	under := func() *Exception {
		return &Exception{Transaction: &Transaction{ID: 7}, Kind: ExceptionUnderpaid, OrderID: 3}
	}
	open := func() *Order {
		return &Order{ID: 3, InvoiceNumber: "A", Status: OrderAwaitingPayment, Amount: 100, PaidAmount: 40}
	}
	if err := CheckRemainder(under(), open()); err != nil {
		t.Fatalf("an underpaid open order: %v", err)
	}
	for name, c := range map[string]struct {
		e    func(*Exception)
		o    func(*Order) *Order
		code string
	}{
		"unmatched":     {func(e *Exception) { e.Kind = ExceptionUnmatched }, func(o *Order) *Order { return o }, ECONFLICT},
		"paid":          {func(*Exception) {}, func(o *Order) *Order { o.Status = OrderCaptured; return o }, ECONFLICT},
		"cancelled":     {func(*Exception) {}, func(o *Order) *Order { o.Status = OrderCancelled; return o }, ECONFLICT},
		"paid in full":  {func(*Exception) {}, func(o *Order) *Order { o.PaidAmount = 100; return o }, ECONFLICT},
		"gone":          {func(*Exception) {}, func(*Order) *Order { return nil }, ENOTFOUND},
		"another order": {func(*Exception) {}, func(o *Order) *Order { o.ID = 4; return o }, ENOTFOUND},
	} {
		e := under()
		c.e(e)
		if err := CheckRemainder(e, c.o(open())); ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", name, err, c.code)
		}
	}
	if !Closes(ResolveWriteOff) || Closes(ResolveAskRemainder) || !Closes(ResolveIgnore) {
		t.Error("Closes")
	}
}

func TestExceptionHistory(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 3, 1, 10, m, 0, 0, time.UTC) }
	e := &Exception{Transaction: &Transaction{CreatedAt: at(0)}, Kind: ExceptionUnmatched, Reason: "no order with payment code DH1"}
	derived := &MatchDecision{Outcome: MatchNone, Reason: e.Reason, CreatedAt: at(0)}
	manual := &MatchDecision{Outcome: MatchCaptured, Rule: MatchByHand, CreatedAt: at(5)}
	ask := &ExceptionResolution{Action: ResolveAskRemainder, CreatedAt: at(3)}
	match := &ExceptionResolution{Action: ResolveMatch, CreatedAt: at(5), Closes: true}
	line := func(h []HistoryEntry) string {
		var out []string
		for _, x := range h {
			switch {
			case x.Queued:
				out = append(out, "queued:"+x.Kind)
			case x.Decision != nil:
				out = append(out, "decision:"+x.Decision.Outcome)
			default:
				out = append(out, "person:"+x.Resolution.Action)
			}
		}
		return strings.Join(out, " ")
	}
	// Open: the derived decision stands; nothing is added.
	if got := line(ExceptionHistory(e, []*MatchDecision{derived})); got != "decision:unmatched" {
		t.Errorf("open: %s", got)
	}
	// After a manual match the derived decision is gone: the queued one stays.
	e.Decisions = []*ExceptionResolution{ask, match}
	if got := line(ExceptionHistory(e, []*MatchDecision{manual})); got != "queued:unmatched person:ask_remainder decision:matched person:match" {
		t.Errorf("matched: %s", got)
	}
	// An automatic decision stored (underpaid): no queued line.
	e.Kind, e.Decisions = ExceptionUnderpaid, nil
	if got := line(ExceptionHistory(e, []*MatchDecision{{Outcome: MatchUnderpaid, Rule: MatchByCode, CreatedAt: at(0)}})); got != "decision:underpaid" {
		t.Errorf("underpaid: %s", got)
	}
}
