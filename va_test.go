package recon_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon"
)

var vaNow = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// TestOrderV2Status: the v2 status is a function of what is stored, and its
// v1 mapping is the one docs/api-v2.md, Orders gives.
func TestOrderV2Status(t *testing.T) {
	for _, c := range []struct {
		name   string
		o      recon.Order
		v2, v1 string
	}{
		{"nothing paid", recon.Order{Status: recon.OrderAwaitingPayment, Amount: 100}, recon.OrderPending, recon.OrderAwaitingPayment},
		{"some paid", recon.Order{Status: recon.OrderAwaitingPayment, Amount: 100, PaidAmount: 1}, recon.OrderPartiallyPaid, recon.OrderAwaitingPayment},
		{"captured", recon.Order{Status: recon.OrderCaptured, Amount: 100, PaidAmount: 100}, recon.OrderPaid, recon.OrderCaptured},
		{"cancelled", recon.Order{Status: recon.OrderCancelled, CancelledAt: vaNow}, recon.OrderV2Cancelled, recon.OrderCancelled},
		{"voided", recon.Order{Status: recon.OrderCancelled, VoidedAt: vaNow, PaidAmount: 100}, recon.OrderV2Cancelled, recon.OrderCancelled},
		{"expired", recon.Order{Status: recon.OrderCancelled, ExpiredAt: vaNow}, recon.OrderExpired, recon.OrderCancelled},
	} {
		if got := c.o.V2Status(); got != c.v2 {
			t.Errorf("%s: V2Status = %q, want %q", c.name, got, c.v2)
		}
		if got := recon.V1OrderStatus(c.o.V2Status()); got != c.v1 || got != c.o.Status {
			t.Errorf("%s: V1OrderStatus = %q, want %q (the stored status)", c.name, got, c.v1)
		}
	}
	if got := recon.V1OrderStatus("refunded"); got != "" {
		t.Errorf("V1OrderStatus(unknown) = %q, want \"\"", got)
	}
}

func TestBuyerValidate(t *testing.T) {
	for _, c := range []struct {
		in    recon.Buyer
		field string // "" valid
	}{
		{recon.Buyer{}, ""},
		{recon.Buyer{Name: " Nguyễn Văn A ", LegalName: "Công ty TNHH A", TaxCode: "0101234567", Address: "1 Tràng Tiền, Hà Nội", Email: "a@example.vn", Phone: "+84901234567"}, ""},
		{recon.Buyer{TaxCode: "0101234567-001"}, ""},
		{recon.Buyer{TaxCode: "010123456"}, "buyer.tax_code"},
		{recon.Buyer{TaxCode: "0101234567-01"}, "buyer.tax_code"},
		{recon.Buyer{TaxCode: "01012345AB"}, "buyer.tax_code"},
		{recon.Buyer{Email: "not an email"}, "buyer.email"},
		{recon.Buyer{Email: "A <a@example.vn>"}, "buyer.email"},
		{recon.Buyer{Phone: "0901"}, "buyer.phone"},
		{recon.Buyer{Phone: "09012345x7"}, "buyer.phone"},
		{recon.Buyer{Name: strings.Repeat("a", recon.MaxBuyerName+1)}, "buyer.name"},
		{recon.Buyer{Address: "line\x00"}, "buyer.address"},
	} {
		b := c.in
		err := b.Validate()
		if c.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.in, err)
			}
			continue
		}
		var fields map[string][]string
		if e, ok := err.(*recon.Error); ok {
			fields = e.Fields
		}
		if recon.ErrorCode(err) != recon.EINVALID || len(fields[c.field]) == 0 {
			t.Errorf("%+v: error %v, want EINVALID naming %s", c.in, err, c.field)
		}
	}
	b := recon.Buyer{Name: " A "}
	if err := b.Validate(); err != nil || b.Name != "A" {
		t.Errorf("Validate trims: %q, %v", b.Name, err)
	}
	if got, err := recon.ParseBuyerJSON(recon.BuyerJSON(recon.Buyer{Email: "a@b.vn"})); err != nil || got.Email != "a@b.vn" {
		t.Errorf("BuyerJSON round trip: %+v, %v", got, err)
	}
	if got := recon.BuyerJSON(recon.Buyer{}); got != "{}" {
		t.Errorf("BuyerJSON(zero) = %q", got)
	}
}

func TestExpireOrder(t *testing.T) {
	at := vaNow.Add(time.Hour)
	pending := &recon.Order{Status: recon.OrderAwaitingPayment, Amount: 100, ExpiresAt: at}
	for _, c := range []struct {
		name   string
		o      *recon.Order
		now    time.Time
		expire bool
	}{
		{"before expiry", pending, at.Add(-time.Nanosecond), false},
		{"at expiry", pending, at, true},
		{"after expiry", pending, at.Add(time.Hour), true},
		{"partially paid keeps its status", &recon.Order{Status: recon.OrderAwaitingPayment, Amount: 100, PaidAmount: 40, ExpiresAt: at}, at, false},
		{"paid", &recon.Order{Status: recon.OrderCaptured, Amount: 100, PaidAmount: 100, ExpiresAt: at}, at, false},
		{"cancelled", &recon.Order{Status: recon.OrderCancelled, ExpiresAt: at}, at, false},
		{"v1 order never expires", &recon.Order{Status: recon.OrderAwaitingPayment, Amount: 100}, at, false},
	} {
		before := *c.o
		n, ok := recon.ExpireOrder(c.o, c.now)
		if *c.o != before {
			t.Fatalf("%s: ExpireOrder changed its input", c.name)
		}
		if ok != c.expire {
			t.Errorf("%s: expired = %v, want %v", c.name, ok, c.expire)
			continue
		}
		if ok && (n.V2Status() != recon.OrderExpired || n.Status != recon.OrderCancelled || !n.ExpiredAt.Equal(c.now) || !n.UpdatedAt.Equal(c.now)) {
			t.Errorf("%s: got %+v", c.name, n)
		}
		if !ok && n != c.o {
			t.Errorf("%s: not expiring must return the order as it is", c.name)
		}
	}
}

func TestNextVA(t *testing.T) {
	for _, from := range recon.VAStatuses {
		for _, ev := range []recon.VAEvent{recon.VAPay, recon.VACancel, recon.VAExpire} {
			va := &recon.VirtualAccount{Number: "SBR1", Status: from}
			n, err := recon.NextVA(va, ev, vaNow)
			if from != recon.VAActive {
				if recon.ErrorCode(err) != recon.EUNPROCESSABLE || recon.ErrorReason(err) != recon.ReasonInvalidState || !strings.Contains(err.Error(), "is "+from) {
					t.Errorf("%s + %s: %v, want invalid_state naming the status", from, ev, err)
				}
				continue
			}
			want := map[recon.VAEvent]string{recon.VAPay: recon.VAPaid, recon.VACancel: recon.VACancelled, recon.VAExpire: recon.VAExpired}[ev]
			if err != nil || n.Status != want || !n.UpdatedAt.Equal(vaNow) || va.Status != recon.VAActive {
				t.Errorf("%s + %s: %+v, %v; want %s", from, ev, n, err, want)
			}
		}
	}
	if _, err := recon.NextVA(&recon.VirtualAccount{Status: recon.VAActive}, "melt", vaNow); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("unknown event: %v", err)
	}
	va := &recon.VirtualAccount{Status: recon.VAActive, ExpiresAt: vaNow}
	if va.ActiveAt(vaNow) || !va.ActiveAt(vaNow.Add(-time.Second)) {
		t.Error("ActiveAt: an account is active strictly before its expiry")
	}
}

func TestPlanVA(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	orderExp := vaNow.Add(10 * time.Hour)
	o := &recon.Order{ID: 7, PublicID: "x", Status: recon.OrderAwaitingPayment, Amount: 100000, PaidAmount: 30000, BankAccountID: 3, ExpiresAt: orderExp}
	for _, c := range []struct {
		name   string
		o      *recon.Order
		in     recon.VAInput
		amount int64
		exp    time.Time
		err    string // a field, or "conflict"
	}{
		{"exact by default, outstanding, order's expiry", o, recon.VAInput{}, 70000, orderExp, ""},
		{"exact with the outstanding amount", o, recon.VAInput{AmountMode: recon.VAExact, Amount: i(70000)}, 70000, orderExp, ""},
		{"exact with another amount", o, recon.VAInput{Amount: i(50000)}, 0, time.Time{}, "amount"},
		{"partial installment, shorter expiry", o, recon.VAInput{AmountMode: recon.VAPartial, Amount: i(20000), ExpiresIn: i(3600)}, 20000, vaNow.Add(time.Hour), ""},
		{"partial above outstanding", o, recon.VAInput{AmountMode: recon.VAPartial, Amount: i(70001)}, 0, time.Time{}, "amount"},
		{"partial zero", o, recon.VAInput{AmountMode: recon.VAPartial, Amount: i(0)}, 0, time.Time{}, "amount"},
		{"open", o, recon.VAInput{AmountMode: recon.VAOpen}, 0, orderExp, ""},
		{"open with an amount", o, recon.VAInput{AmountMode: recon.VAOpen, Amount: i(5)}, 0, time.Time{}, "amount"},
		{"unknown mode", o, recon.VAInput{AmountMode: "some"}, 0, time.Time{}, "amount_mode"},
		{"capped at the order's expiry", o, recon.VAInput{ExpiresIn: i(86400)}, 70000, orderExp, ""},
		{"expires_in 0", o, recon.VAInput{ExpiresIn: i(0)}, 0, time.Time{}, "expires_in"},
		{"expires_in past 30 days", o, recon.VAInput{ExpiresIn: i(30*86400 + 1)}, 0, time.Time{}, "expires_in"},
		{"holder too long", o, recon.VAInput{HolderName: strings.Repeat("a", recon.MaxHolderName+1)}, 0, time.Time{}, "holder_name"},
		{"partially paid past its expiry: a day of its own", &recon.Order{Status: recon.OrderAwaitingPayment, Amount: 10, PaidAmount: 5, ExpiresAt: vaNow.Add(-time.Hour)},
			recon.VAInput{}, 5, vaNow.Add(recon.DefaultOrderExpiry), ""},
		{"paid order", &recon.Order{Status: recon.OrderCaptured, Amount: 10, PaidAmount: 10}, recon.VAInput{}, 0, time.Time{}, "conflict"},
		{"cancelled order", &recon.Order{Status: recon.OrderCancelled, Amount: 10}, recon.VAInput{}, 0, time.Time{}, "conflict"},
		{"expired order", &recon.Order{Status: recon.OrderCancelled, Amount: 10, ExpiredAt: vaNow}, recon.VAInput{}, 0, time.Time{}, "conflict"},
	} {
		va, err := recon.PlanVA(c.o, c.in, "Shop A", vaNow)
		switch {
		case c.err == "conflict":
			if recon.ErrorCode(err) != recon.EUNPROCESSABLE || recon.ErrorReason(err) != recon.ReasonInvalidState {
				t.Errorf("%s: %v, want invalid_state", c.name, err)
			}
		case c.err != "":
			e, ok := err.(*recon.Error)
			if !ok || e.Code != recon.EINVALID || len(e.Fields[c.err]) == 0 {
				t.Errorf("%s: %v, want EINVALID naming %s", c.name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		default:
			if va.Amount != c.amount || !va.ExpiresAt.Equal(c.exp) || va.Status != recon.VAActive || va.OrderID != c.o.ID ||
				va.BankAccountID != c.o.BankAccountID || va.HolderName != "Shop A" && c.in.HolderName == "" {
				t.Errorf("%s: got %+v, want amount %d, expiry %s", c.name, va, c.amount, c.exp)
			}
		}
	}
}

// TestMatchPaymentsVA: the rules of virtual accounts' modes (docs/api-v2.md,
// Virtual accounts) and their sentences.
func TestMatchPaymentsVA(t *testing.T) {
	exact := &recon.VirtualAccount{Number: "SBR0000000000001", Kind: recon.VAKindBank, AmountMode: recon.VAExact, Status: recon.VAActive}
	partial := &recon.VirtualAccount{Number: "RECOVA00000001", Kind: recon.VAKindMemo, AmountMode: recon.VAPartial, Status: recon.VAActive}
	open := &recon.VirtualAccount{Number: "SBR0000000000003", Kind: recon.VAKindBank, AmountMode: recon.VAOpen, Status: recon.VAActive}
	expired := &recon.VirtualAccount{Number: "SBR0000000000004", Kind: recon.VAKindBank, AmountMode: recon.VAOpen, Status: recon.VAExpired}
	cancelled := &recon.VirtualAccount{Number: "RECOVA00000005", Kind: recon.VAKindMemo, AmountMode: recon.VAExact, Status: recon.VACancelled}
	pay := func(va *recon.VirtualAccount, amount int64) recon.Payment {
		return recon.Payment{Amount: amount, Rule: recon.MatchByVA, VA: va}
	}
	type out struct {
		Outcome string
		Paid    int64
		Reason  string
	}
	for _, c := range []struct {
		name     string
		status   string
		paid     int64
		payments []recon.Payment
		want     []out
	}{
		{"exact short is underpaid and counts", recon.OrderAwaitingPayment, 0, []recon.Payment{pay(exact, 40), pay(exact, 60)}, []out{
			{recon.MatchUnderpaid, 40, "virtual account SBR0000000000001 names order INV-7: 40 of 100 VND paid, 60 short"},
			{recon.MatchCaptured, 100, "virtual account SBR0000000000001 names order INV-7: 100 of 100 VND paid"}}},
		{"exact more is overpaid", recon.OrderAwaitingPayment, 0, []recon.Payment{pay(exact, 120)}, []out{
			{recon.MatchOverpaid, 120, "virtual account SBR0000000000001 names order INV-7: 120 VND paid for 100, 20 over"}}},
		{"partial adds until reached", recon.OrderAwaitingPayment, 0, []recon.Payment{pay(partial, 30), pay(partial, 30), pay(partial, 40), pay(partial, 5)}, []out{
			{recon.MatchPartial, 30, "memo code RECOVA00000001 names order INV-7: 30 of 100 VND paid, 70 short"},
			{recon.MatchPartial, 60, "memo code RECOVA00000001 names order INV-7: 60 of 100 VND paid, 40 short"},
			{recon.MatchCaptured, 100, "memo code RECOVA00000001 names order INV-7: 100 of 100 VND paid"},
			{recon.MatchDuplicate, 100, "memo code RECOVA00000001 names order INV-7, which is already captured"}}},
		{"open past the amount is overpaid", recon.OrderAwaitingPayment, 50, []recon.Payment{pay(open, 70)}, []out{
			{recon.MatchOverpaid, 120, "virtual account SBR0000000000003 names order INV-7: 120 VND paid for 100, 20 over"}}},
		{"expired account changes nothing", recon.OrderAwaitingPayment, 50, []recon.Payment{pay(expired, 50), pay(open, 10)}, []out{
			{recon.MatchVAInactive, 50, "virtual account SBR0000000000004 of order INV-7 is expired: nothing was applied"},
			{recon.MatchPartial, 60, "virtual account SBR0000000000003 names order INV-7: 60 of 100 VND paid, 40 short"}}},
		{"cancelled account of a paid order is still inactive", recon.OrderCaptured, 100, []recon.Payment{pay(cancelled, 100)}, []out{
			{recon.MatchVAInactive, 100, "memo code RECOVA00000005 of order INV-7 is cancelled: nothing was applied"}}},
	} {
		o := &recon.Order{InvoiceNumber: "INV-7", PaymentCode: "x", Status: c.status, Amount: 100, PaidAmount: c.paid}
		ms, err := recon.MatchPayments(o, c.payments)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []out
		for _, m := range ms {
			got = append(got, out{m.Outcome, m.PaidTotal, m.Reason})
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
	if _, err := recon.MatchPayments(&recon.Order{Status: recon.OrderAwaitingPayment, Amount: 1}, []recon.Payment{{Amount: 1, Rule: recon.MatchByVA}}); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("rule va without an account: %v", err)
	}
}

// TestSettlePaymentsVA: an account past its expiry counts as expired before
// the maintenance loop expires it; a transfer to an inactive one leaves the
// order unwritten; partial payments are listed for ORDER_PARTIALLY_PAID.
func TestSettlePaymentsVA(t *testing.T) {
	late := &recon.VirtualAccount{Number: "SBR1", Kind: recon.VAKindBank, AmountMode: recon.VAOpen, Status: recon.VAActive, ExpiresAt: vaNow}
	o := &recon.Order{ID: 9, InvoiceNumber: "INV-9", Status: recon.OrderAwaitingPayment, Amount: 100}
	st, err := recon.SettlePayments(o, []recon.Payment{{Amount: 50, Rule: recon.MatchByVA, VA: late, TransactionID: 4}}, vaNow)
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed || st.Decisions[0].Outcome != recon.MatchVAInactive || st.Order.PaidAmount != 0 || late.Status != recon.VAActive || len(st.PartiallyPaid) != 0 {
		t.Errorf("expired by time: %+v, decision %+v", st, st.Decisions[0])
	}
	live := &recon.VirtualAccount{Number: "SBR2", Kind: recon.VAKindBank, AmountMode: recon.VAPartial, Status: recon.VAActive, ExpiresAt: vaNow.Add(time.Minute)}
	st, err = recon.SettlePayments(o, []recon.Payment{
		{Amount: 40, Rule: recon.MatchByVA, VA: live, TransactionID: 5},
		{Amount: 40, Rule: recon.MatchByVA, VA: live, TransactionID: 6},
		{Amount: 20, Rule: recon.MatchByVA, VA: live, TransactionID: 7},
	}, vaNow)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Changed || st.Captured != 2 || st.Order.Status != recon.OrderCaptured || st.Order.PaidTransactionID != 7 ||
		st.Order.PaidAmount != 100 || !cmp.Equal(st.PartiallyPaid, []int{0, 1}) {
		t.Errorf("partial then paid: %+v", st)
	}
}

func TestOrderRoutesVA(t *testing.T) {
	o1 := &recon.Order{ID: 1, PaymentCode: "DH1", VirtualAccount: "V1ACC"}
	o2 := &recon.Order{ID: 2, PaymentCode: "DH2"}
	bank := &recon.VirtualAccount{OrderID: 2, Number: "SBR123", Kind: recon.VAKindBank}
	memo := &recon.VirtualAccount{OrderID: 2, Number: "RECOVA12345678", Kind: recon.VAKindMemo}
	r := recon.NewOrderRoutes([]*recon.Order{o1, o2}, bank, memo)
	for _, c := range []struct {
		sub, code string
		va        *recon.VirtualAccount
	}{
		{"SBR123", "DH1", bank},            // a bank VA before a code
		{"", "RECOVA12345678", memo},       // a memo VA in the memo
		{"SBR123", "RECOVA12345678", bank}, // the bank VA first
		{"RECOVA12345678", "", nil},        // a memo code is no account number
		{"", "SBR123", nil},                // nor a bank number a memo code
		{"V1ACC", "DH2", nil},              // a v1 order's account: Route's
	} {
		va, o := r.RouteVA(c.sub, c.code)
		if va != c.va || (va != nil) != (o == o2) {
			t.Errorf("RouteVA(%q, %q) = %v, %v; want %v", c.sub, c.code, va, o, c.va)
		}
	}
}

// TestMemoVANumbers: memo codes and sandbox numbers have their forms, come
// from the injected randomness, and the extractor of every company finds a
// memo code, codes on or off, before a payment code of a longer prefix run.
func TestMemoVANumbers(t *testing.T) {
	r := bytes.NewReader(bytes.Repeat([]byte{255, 3, 251, 17}, 64))
	n := recon.NewMemoVANumberFrom(r)
	if n != "RECOVA37373737" || !recon.IsMemoVANumber(n) {
		t.Errorf("memo number %q: bytes >= 250 are skipped, others taken mod 10", n)
	}
	sb, err := recon.SandboxVAs{Rand: bytes.NewReader(bytes.Repeat([]byte{9}, 13))}.IssueVA(context.Background(), recon.VARequest{})
	if err != nil || sb != "SBR9999999999999" {
		t.Errorf("sandbox number %q, %v", sb, err)
	}
	for _, s := range []string{"RECOVA1234567", "RECOVA123456789", "RECOVB12345678", "recova12345678"} {
		if recon.IsMemoVANumber(s) {
			t.Errorf("IsMemoVANumber(%q)", s)
		}
	}
	off := &recon.CompanyConfig{Paycode: false, PaymentCodeFormats: []recon.PaymentCodeFormat{{Prefix: "DH", SuffixFrom: 3, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}}}
	on := *off
	on.Paycode = true
	recov := on
	recov.PaymentCodeFormats = []recon.PaymentCodeFormat{{Prefix: "RECOV", SuffixFrom: 1, SuffixTo: 12, CharacterType: recon.NumberAndLetter, IsActive: true}}
	for _, c := range []struct {
		cfg        *recon.CompanyConfig
		memo, want string
	}{
		{off, "thanh toan recova12345678 cam on", "RECOVA12345678"},
		{off, "DH123 paid", ""},
		{&on, "DH123 RECOVA12345678", "DH123"},
		{&on, "RECOVA12345678 DH123", "RECOVA12345678"},
		{&recov, "RECOVA12345678", "RECOVA12345678"},
		{&recov, "RECOVA123456789", "RECOVA123456789"}, // not a memo code: the company's
	} {
		if got := recon.CompanyExtractor(c.cfg).Extract(c.memo); got != c.want {
			t.Errorf("Extract(%q) = %q, want %q", c.memo, got, c.want)
		}
	}
}

func TestOrderInputValidate(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		in    recon.OrderInput
		field string
	}{
		{recon.OrderInput{InvoiceNumber: "INV-1_a", Amount: 1}, ""},
		{recon.OrderInput{InvoiceNumber: "INV-1", Amount: recon.MaxAmount, Description: "Đơn hàng\nhai dòng", ExpiresIn: i(30 * 86400), Buyer: &recon.Buyer{Email: "a@b.vn"}}, ""},
		{recon.OrderInput{Amount: 1}, "order_invoice_number"},
		{recon.OrderInput{InvoiceNumber: "INV 1", Amount: 1}, "order_invoice_number"},
		{recon.OrderInput{InvoiceNumber: strings.Repeat("a", 101), Amount: 1}, "order_invoice_number"},
		{recon.OrderInput{InvoiceNumber: "I", Amount: 0}, "amount"},
		{recon.OrderInput{InvoiceNumber: "I", Amount: recon.MaxAmount + 1}, "amount"},
		{recon.OrderInput{InvoiceNumber: "I", Amount: 1, Description: strings.Repeat("đ", 1001)}, "description"},
		{recon.OrderInput{InvoiceNumber: "I", Amount: 1, CustomerID: "a\x01"}, "customer_id"},
		{recon.OrderInput{InvoiceNumber: "I", Amount: 1, ExpiresIn: i(0)}, "expires_in"},
		{recon.OrderInput{InvoiceNumber: "I", Amount: 1, Buyer: &recon.Buyer{Phone: "1"}}, "buyer.phone"},
	} {
		err := c.in.Validate()
		if c.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.in, err)
			}
			continue
		}
		e, ok := err.(*recon.Error)
		if !ok || e.Code != recon.EINVALID || len(e.Fields[c.field]) == 0 {
			t.Errorf("%+v: %v, want EINVALID naming %s", c.in, err, c.field)
		}
	}
}
