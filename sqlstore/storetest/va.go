package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"recon"
)

// The orders of API v2 and their virtual accounts (docs/api-v2.md, Orders
// and Virtual accounts): storage, matching through them, expiry.
func testVirtualAccounts(t *testing.T, open Open) {
	run(t, "CreateAndRead", withAccount(open), testVACreateAndRead)
	run(t, "NumberConflicts", withAccount(open), testVANumberConflicts)
	run(t, "ExactMode", withAccount(open), testVAExactMode)
	run(t, "PartialMode", withAccount(open), testVAPartialMode)
	run(t, "BeforePaymentCodes", withAccount(open), testVABeforePaymentCodes)
	run(t, "Inactive", withAccount(open), testVAInactive)
	run(t, "AddAndCancel", withAccount(open), testVAAddAndCancel)
	run(t, "Expiry", withAccount(open), testVAExpiry)
	run(t, "ExpiryOnceConcurrently", withAccount(open), testVAExpiryOnceConcurrently)
	run(t, "StatusFilter", withAccount(open), testVAStatusFilter)
}

// newV2Order stores a v2 order of amount expiring in a day (from the real
// clock, which ingestion's matching reads) with its first account.
func newV2Order(t *testing.T, s recon.Store, c *recon.Company, a *recon.BankAccount, invoice string, amount int64, number, kind, mode string) (*recon.Order, *recon.VirtualAccount) {
	t.Helper()
	now := time.Now().UTC()
	o := &recon.Order{CompanyID: c.ID, InvoiceNumber: invoice, PaymentCode: "V2-" + invoice, Amount: amount, BankAccountID: a.ID,
		Buyer: recon.Buyer{Name: "Nguyễn Văn A", Email: "a@example.vn"}, ExpiresAt: now.Add(24 * time.Hour)}
	va, err := recon.PlanVA(o, recon.VAInput{AmountMode: mode}, "CONG TY A", now)
	if err != nil {
		t.Fatal(err)
	}
	va.Number, va.Kind = number, kind
	if err := s.CreateOrderWithVA(t.Context(), o, va); err != nil {
		t.Fatalf("CreateOrderWithVA: %v", err)
	}
	return o, va
}

func orderVAs(t *testing.T, s recon.Store, tenant recon.TenantID, orderID int64) []*recon.VirtualAccount {
	t.Helper()
	m, err := s.OrderVAs(t.Context(), tenant, []int64{orderID})
	if err != nil {
		t.Fatal(err)
	}
	return m[orderID]
}

func reread(t *testing.T, s recon.Store, tenant recon.TenantID, o *recon.Order) *recon.Order {
	t.Helper()
	got, err := s.OrderByPublicID(t.Context(), tenant, o.PublicID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func exceptionKind(t *testing.T, s recon.Store, tenant recon.TenantID, txID int64) string {
	t.Helper()
	e, err := s.Exception(t.Context(), tenant, txID)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return e.Kind
}

func testVACreateAndRead(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	o, va := newV2Order(t, s, c, a, "V-1", 100_000, "SBR0000000000001", recon.VAKindBank, recon.VAExact)
	if !recon.ValidXID(o.PublicID) || va.OrderID != o.ID || va.ID == 0 {
		t.Fatalf("created %+v / %+v", o, va)
	}
	got := reread(t, s, c.Tenant(), o)
	diff(t, "order", o, got)
	if got.V2Status() != recon.OrderPending || got.Buyer.Email != "a@example.vn" {
		t.Errorf("read back %+v", got)
	}
	vas := orderVAs(t, s, c.Tenant(), o.ID)
	if len(vas) != 1 {
		t.Fatalf("%d accounts", len(vas))
	}
	diff(t, "account", va, vas[0])
	// A v1 checkout order has a v2 id too, and is readable by it.
	v1 := newOrder(t, s, c.ID, a.ID, "V1", "DH10001", 5)
	if got := reread(t, s, c.Tenant(), v1); got.InvoiceNumber != "V1" || !got.ExpiresAt.IsZero() || got.V2Status() != recon.OrderPending {
		t.Errorf("v1 order through v2: %+v", got)
	}
	// Another tenant, the test twin included, sees neither.
	for _, other := range []recon.TenantID{newCompany(t, s, 2).Tenant(), testTenant(t, s, c.ID).ID} {
		_, err := s.OrderByPublicID(t.Context(), other, o.PublicID)
		wantCode(t, err, recon.ENOTFOUND, "")
		if m, err := s.OrderVAs(t.Context(), other, []int64{o.ID}); err != nil || len(m[o.ID]) != 0 {
			t.Errorf("another tenant reads the accounts: %v %v", m, err)
		}
		if list, total, err := s.VirtualAccounts(t.Context(), other, recon.VAFilter{Page: 1, PerPage: 10}); err != nil || total != 0 || len(list) != 0 {
			t.Errorf("another tenant lists the accounts: %v %d %v", list, total, err)
		}
		_, err = s.CancelVA(t.Context(), other, o.PublicID, va.Number, time.Now())
		wantCode(t, err, recon.ENOTFOUND, "")
	}
	list, total, err := s.VirtualAccounts(t.Context(), c.Tenant(), recon.VAFilter{Page: 1, PerPage: 10})
	if err != nil || total != 1 || len(list) != 1 || list[0].OrderPublicID != o.PublicID {
		t.Errorf("list: %v %d %v", list, total, err)
	}
}

// A number is used once per tenant, another tenant may hold it; a memo code
// never equals an order's payment code.
func testVANumberConflicts(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	newV2Order(t, s, c, a, "V-1", 10, "SBR0000000000001", recon.VAKindBank, recon.VAExact)
	o := &recon.Order{CompanyID: c.ID, InvoiceNumber: "V-2", PaymentCode: "V2-V-2", Amount: 10, BankAccountID: a.ID}
	va := &recon.VirtualAccount{Number: "SBR0000000000001", Kind: recon.VAKindBank, AmountMode: recon.VAExact, Amount: 10, Status: recon.VAActive,
		BankAccountID: a.ID, ExpiresAt: time.Now().Add(time.Hour), CreatedAt: time.Now(), UpdatedAt: time.Now()}
	err := s.CreateOrderWithVA(t.Context(), o, va)
	wantCode(t, err, recon.ECONFLICT, "virtual account number SBR0000000000001 is already used")
	if _, err := s.Order(t.Context(), c.Tenant(), "V-2"); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("the order of a refused account was stored: %v", err)
	}
	newOrder(t, s, c.ID, a.ID, "V1", "RECOVA12345678", 5)
	o.ID, o.PublicID = 0, ""
	va.Number, va.Kind = "RECOVA12345678", recon.VAKindMemo
	wantCode(t, s.CreateOrderWithVA(t.Context(), o, va), recon.ECONFLICT, "memo code RECOVA12345678 is an order's payment code")
	other := newCompany(t, s, 2)
	newV2Order(t, s, other, newAccount(t, s, other.ID, "222"), "V-1", 10, "SBR0000000000001", recon.VAKindBank, recon.VAExact)
}

// exact: a short transfer is an underpaid exception whose money counts, and
// the order waits (partially paid); the rest pays it and the account is
// paid. ORDER_PARTIALLY_PAID goes only to subscribers: a v1 target gets
// ORDER_PAID alone.
func testVAExactMode(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	o, va := newV2Order(t, s, c, a, "V-1", 100_000, "SBR0000000000001", recon.VAKindBank, recon.VAExact)
	t1 := pay(t, s, c.Tenant(), a.ID, "R1", "", va.Number, 40_000)
	got := reread(t, s, c.Tenant(), o)
	if got.V2Status() != recon.OrderPartiallyPaid || got.PaidAmount != 40_000 {
		t.Fatalf("after a short transfer: %s paid %d", got.V2Status(), got.PaidAmount)
	}
	if k := exceptionKind(t, s, c.Tenant(), t1); k != recon.ExceptionUnderpaid {
		t.Errorf("short transfer to an exact account: exception %q, want underpaid", k)
	}
	t2 := pay(t, s, c.Tenant(), a.ID, "R2", "", va.Number, 60_000)
	got = reread(t, s, c.Tenant(), o)
	if got.V2Status() != recon.OrderPaid || got.PaidAmount != 100_000 || got.PaidTransactionID != t2 {
		t.Fatalf("after the rest: %+v", got)
	}
	if k := exceptionKind(t, s, c.Tenant(), t2); k != "" {
		t.Errorf("the completing transfer is an exception %q", k)
	}
	if vas := orderVAs(t, s, c.Tenant(), o.ID); vas[0].Status != recon.VAPaid {
		t.Errorf("account after payment: %s", vas[0].Status)
	}
	ds, _ := s.MatchDecisions(t.Context(), c.Tenant(), o.ID, 0)
	if len(ds) != 2 || ds[0].Rule != recon.MatchByVA || ds[0].Reason != "virtual account SBR0000000000001 names order V-1: 40000 of 100000 VND paid, 60000 short" {
		t.Errorf("decisions %+v", ds)
	}
	if n := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPartiallyPaid); n != 0 {
		t.Errorf("%d ORDER_PARTIALLY_PAID to a target that did not subscribe", n)
	}
	if n := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid); n != 1 {
		t.Errorf("%d ORDER_PAID, want 1", n)
	}
	// Over: a second order paid with more is overpaid.
	o2, va2 := newV2Order(t, s, c, a, "V-2", 100_000, "SBR0000000000002", recon.VAKindBank, recon.VAExact)
	t3 := pay(t, s, c.Tenant(), a.ID, "R3", "", va2.Number, 120_000)
	if got := reread(t, s, c.Tenant(), o2); got.V2Status() != recon.OrderPaid || got.PaidAmount != 120_000 || exceptionKind(t, s, c.Tenant(), t3) != recon.ExceptionOverpaid {
		t.Errorf("overpaid: %+v", got)
	}
}

// partial (memo code): each transfer adds, no exception, until reached;
// the test tenant without a target holds ORDER_PARTIALLY_PAID for listeners.
func testVAPartialMode(t *testing.T, b *accountBundle) {
	s, c := b.s, b.c
	tt := testTenant(t, s, c.ID).ID
	ta := newAccount(t, s, tt.ID(), "999")
	tc := &recon.Company{ID: tt.ID()}
	o, va := newV2Order(t, s, tc, ta, "V-1", 100_000, "RECOVA00000001", recon.VAKindMemo, recon.VAPartial)
	var ids []int64
	for i, amount := range []int64{30_000, 30_000, 40_000} {
		ids = append(ids, pay(t, s, tt, ta.ID, fmt.Sprintf("R%d", i), va.Number, "", amount))
	}
	got := reread(t, s, tt, o)
	if got.V2Status() != recon.OrderPaid || got.PaidAmount != 100_000 {
		t.Fatalf("after three parts: %+v", got)
	}
	for _, id := range ids {
		if k := exceptionKind(t, s, tt, id); k != "" {
			t.Errorf("a partial payment is an exception %q", k)
		}
	}
	ds, _ := s.MatchDecisions(t.Context(), tt, o.ID, 0)
	if len(ds) != 3 || ds[0].Outcome != recon.MatchPartial || ds[1].Outcome != recon.MatchPartial || ds[2].Outcome != recon.MatchCaptured ||
		ds[0].Reason != "memo code RECOVA00000001 names order V-1: 30000 of 100000 VND paid, 70000 short" {
		t.Errorf("decisions %+v", ds)
	}
	if n := countDeliveries(t, s, tt, recon.IPNOrderPartiallyPaid); n != 2 {
		t.Errorf("%d ORDER_PARTIALLY_PAID held for listeners, want 2", n)
	}
}

// A virtual account comes before a payment code: a transfer to one, whose
// memo carries another order's code, pays the account's order.
func testVABeforePaymentCodes(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	v1 := newOrder(t, s, c.ID, a.ID, "V1", "DH10001", 10)
	o, va := newV2Order(t, s, c, a, "V-1", 10, "SBR0000000000001", recon.VAKindBank, recon.VAOpen)
	pay(t, s, c.Tenant(), a.ID, "R1", "DH10001", va.Number, 10)
	if got := reread(t, s, c.Tenant(), o); got.V2Status() != recon.OrderPaid {
		t.Errorf("the account's order: %s", got.V2Status())
	}
	if got := reread(t, s, c.Tenant(), v1); got.PaidAmount != 0 {
		t.Errorf("the code's order was paid too: %d", got.PaidAmount)
	}
	if vas := orderVAs(t, s, c.Tenant(), o.ID); vas[0].Amount != 0 || vas[0].AmountMode != recon.VAOpen {
		t.Errorf("an open account has no amount: %+v", vas[0])
	}
}

// A transfer to a cancelled or expired account is a va_inactive exception
// and changes no order; a person may still match it by hand.
func testVAInactive(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	o, va := newV2Order(t, s, c, a, "V-1", 100, "SBR0000000000001", recon.VAKindBank, recon.VAExact)
	if _, err := s.CancelVA(t.Context(), c.Tenant(), o.PublicID, va.Number, time.Now()); err != nil {
		t.Fatal(err)
	}
	id := pay(t, s, c.Tenant(), a.ID, "R1", "", va.Number, 100)
	got := reread(t, s, c.Tenant(), o)
	if got.PaidAmount != 0 || got.V2Status() != recon.OrderPending {
		t.Fatalf("a transfer to a cancelled account changed its order: %+v", got)
	}
	e, err := s.Exception(t.Context(), c.Tenant(), id)
	if err != nil || e.Kind != recon.ExceptionVAInactive || e.OrderID != o.ID ||
		e.Reason != "virtual account SBR0000000000001 of order V-1 is cancelled: nothing was applied" || !e.GetsSuggestions() {
		t.Fatalf("exception %+v, %v", e, err)
	}
	list, _, err := s.Exceptions(t.Context(), c.Tenant(), recon.ExceptionFilter{Kind: recon.ExceptionVAInactive, Limit: 10})
	if err != nil || len(list) != 1 {
		t.Errorf("the queue's va_inactive: %v %v", list, err)
	}
	u := newUser(t, s, c.ID, "ops@example.vn")
	res, err := s.ResolveException(t.Context(), c.Tenant(), id, recon.ResolveInput{Action: recon.ResolveMatch, OrderID: o.ID, Note: "late payer"}, u, time.Now())
	if err != nil || res.Decision.Outcome != recon.MatchCaptured {
		t.Fatalf("match by hand: %+v %v", res, err)
	}
}

// Accounts are added only while the order is pending or partially paid;
// cancelling the order cancels its active accounts.
func testVAAddAndCancel(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	o, first := newV2Order(t, s, c, a, "V-1", 100, "SBR0000000000001", recon.VAKindBank, recon.VAExact)
	plan := func(number string) func(o *recon.Order) (*recon.VirtualAccount, error) {
		return func(o *recon.Order) (*recon.VirtualAccount, error) {
			va, err := recon.PlanVA(o, recon.VAInput{AmountMode: recon.VAOpen}, "CONG TY A", time.Now())
			if err == nil {
				va.Number, va.Kind = number, recon.VAKindMemo
			}
			return va, err
		}
	}
	second, err := s.AddVA(t.Context(), c.Tenant(), o.PublicID, plan("RECOVA00000002"))
	if err != nil || second.OrderID != o.ID || second.OrderPublicID != o.PublicID {
		t.Fatalf("AddVA: %+v %v", second, err)
	}
	_, err = s.AddVA(t.Context(), c.Tenant(), o.PublicID, plan(first.Number))
	wantCode(t, err, recon.ECONFLICT, "virtual account number SBR0000000000001 is already used")
	_, err = s.AddVA(t.Context(), newCompany(t, s, 2).Tenant(), o.PublicID, plan("RECOVA00000003"))
	wantCode(t, err, recon.ENOTFOUND, "")
	if _, err := s.CancelVA(t.Context(), c.Tenant(), o.PublicID, first.Number, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = s.CancelVA(t.Context(), c.Tenant(), o.PublicID, first.Number, time.Now())
	wantCode(t, err, recon.EUNPROCESSABLE, "virtual account SBR0000000000001 is cancelled, not active")
	_, err = s.CancelVA(t.Context(), c.Tenant(), o.PublicID, "SBR404", time.Now())
	wantCode(t, err, recon.ENOTFOUND, "")
	if _, err := s.CancelOrder(t.Context(), c.Tenant(), "V-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	vas := orderVAs(t, s, c.Tenant(), o.ID)
	if len(vas) != 2 || vas[0].Status != recon.VACancelled || vas[1].Status != recon.VACancelled {
		t.Fatalf("accounts after the order's cancel: %+v %+v", vas[0], vas[1])
	}
	_, err = s.AddVA(t.Context(), c.Tenant(), o.PublicID, plan("RECOVA00000004"))
	wantCode(t, err, recon.EUNPROCESSABLE, "")
}

// The maintenance loop: a pending order past its expiry expires with its
// accounts (ORDER_EXPIRED held for the test tenant's listeners, none to a
// live target that did not subscribe); a partially paid one keeps its
// status and its accounts expire; an account past its own expiry expires.
func testVAExpiry(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	pending, _ := newV2Order(t, s, c, a, "PENDING", 100, "SBR0000000000001", recon.VAKindBank, recon.VAExact)
	partly, pva := newV2Order(t, s, c, a, "PARTLY", 100, "SBR0000000000002", recon.VAKindBank, recon.VAPartial)
	pay(t, s, c.Tenant(), a.ID, "R1", "", pva.Number, 40)
	tt := testTenant(t, s, c.ID).ID
	testOrder, _ := newV2Order(t, s, &recon.Company{ID: tt.ID()}, newAccount(t, s, tt.ID(), "999"), "TEST", 100, "SBR0000000000001", recon.VAKindBank, recon.VAExact)
	short, sva := newV2Order(t, s, c, a, "SHORT-VA", 100, "RECOVA00000001", recon.VAKindMemo, recon.VAExact)
	second, err := s.AddVA(t.Context(), c.Tenant(), short.PublicID, func(o *recon.Order) (*recon.VirtualAccount, error) {
		va, err := recon.PlanVA(o, recon.VAInput{ExpiresIn: ptr(60)}, "", time.Now())
		if err == nil {
			va.Number, va.Kind = "RECOVA00000002", recon.VAKindMemo
		}
		return va, err
	})
	if err != nil {
		t.Fatal(err)
	}
	// An hour on: only the one-minute account expires.
	notify := func(o *recon.Order) (*recon.Delivery, error) {
		return recon.IPNDelivery(o, recon.IPNOrderExpired, time.Now())
	}
	n, err := s.ExpireOrders(t.Context(), time.Now().Add(time.Hour), notify)
	if err != nil || n != 0 {
		t.Fatalf("an hour on: %d expired, %v", n, err)
	}
	vas := orderVAs(t, s, c.Tenant(), short.ID)
	if vas[0].Number != sva.Number || vas[0].Status != recon.VAActive || vas[1].Number != second.Number || vas[1].Status != recon.VAExpired {
		t.Errorf("accounts an hour on: %+v %+v", vas[0], vas[1])
	}
	// Two days on: every order past its expiry.
	n, err = s.ExpireOrders(t.Context(), time.Now().Add(48*time.Hour), notify)
	if err != nil || n != 3 {
		t.Fatalf("two days on: %d expired, %v; want 3 (PENDING, SHORT-VA, TEST)", n, err)
	}
	for _, w := range []struct {
		tenant recon.TenantID
		o      *recon.Order
		status string
	}{{c.Tenant(), pending, recon.OrderExpired}, {c.Tenant(), partly, recon.OrderPartiallyPaid}, {tt, testOrder, recon.OrderExpired}} {
		got := reread(t, s, w.tenant, w.o)
		if got.V2Status() != w.status || (w.status == recon.OrderExpired) == got.ExpiredAt.IsZero() {
			t.Errorf("%s: %s (expired at %v), want %s", w.o.InvoiceNumber, got.V2Status(), got.ExpiredAt, w.status)
		}
		for _, va := range orderVAs(t, s, w.tenant, w.o.ID) {
			if va.Status != recon.VAExpired {
				t.Errorf("%s: account %s is %s, want expired", w.o.InvoiceNumber, va.Number, va.Status)
			}
		}
	}
	if n := countDeliveries(t, s, c.Tenant(), recon.IPNOrderExpired); n != 0 {
		t.Errorf("%d ORDER_EXPIRED to a live target that did not subscribe", n)
	}
	if n := countDeliveries(t, s, tt, recon.IPNOrderExpired); n != 1 {
		t.Errorf("%d ORDER_EXPIRED held for the test tenant's listeners, want 1", n)
	}
	// Done once: a second run finds nothing.
	if n, err := s.ExpireOrders(t.Context(), time.Now().Add(72*time.Hour), notify); err != nil || n != 0 {
		t.Errorf("again: %d, %v", n, err)
	}
	// A transfer to the expired account of the partly paid order changes nothing.
	id := pay(t, s, c.Tenant(), a.ID, "R2", "", pva.Number, 60)
	if got := reread(t, s, c.Tenant(), partly); got.PaidAmount != 40 || exceptionKind(t, s, c.Tenant(), id) != recon.ExceptionVAInactive {
		t.Errorf("after a transfer to an expired account: %+v", got)
	}
}

// Several nodes expire at the same moment: each order expires once, with
// one notification.
func testVAExpiryOnceConcurrently(t *testing.T, b *accountBundle) {
	s, c := b.s, b.c
	tt := testTenant(t, s, c.ID).ID
	ta := newAccount(t, s, tt.ID(), "999")
	const orders, nodes = 20, 4
	for i := range orders {
		newV2Order(t, s, &recon.Company{ID: tt.ID()}, ta, fmt.Sprintf("O-%d", i), 100, fmt.Sprintf("SBR%013d", i), recon.VAKindBank, recon.VAExact)
	}
	notify := func(o *recon.Order) (*recon.Delivery, error) {
		return recon.IPNDelivery(o, recon.IPNOrderExpired, time.Now())
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	counts := make([]int, nodes)
	errs := make([]error, nodes)
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			counts[i], errs[i] = s.ExpireOrders(t.Context(), time.Now().Add(48*time.Hour), notify)
		}()
	}
	close(start)
	wg.Wait()
	total := 0
	for i := range nodes {
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i, errs[i])
		}
		total += counts[i]
	}
	if total != orders {
		t.Errorf("the nodes expired %d orders together, want %d", total, orders)
	}
	if n := countDeliveries(t, s, tt, recon.IPNOrderExpired); n != orders {
		t.Errorf("%d ORDER_EXPIRED, want one per order (%d)", n, orders)
	}
}

// GET /v2/orders' status filter: each v2 status from the stored state.
func testVAStatusFilter(t *testing.T, b *accountBundle) {
	s, c, a := b.s, b.c, b.a
	newV2Order(t, s, c, a, "PENDING", 100, "SBR0000000000001", recon.VAKindBank, recon.VAExact)
	_, partly := newV2Order(t, s, c, a, "PARTLY", 100, "SBR0000000000002", recon.VAKindBank, recon.VAPartial)
	pay(t, s, c.Tenant(), a.ID, "R1", "", partly.Number, 40)
	_, paid := newV2Order(t, s, c, a, "PAID", 100, "SBR0000000000003", recon.VAKindBank, recon.VAExact)
	pay(t, s, c.Tenant(), a.ID, "R2", "", paid.Number, 100)
	newV2Order(t, s, c, a, "CANCELLED", 100, "SBR0000000000004", recon.VAKindBank, recon.VAExact)
	if _, err := s.CancelOrder(t.Context(), c.Tenant(), "CANCELLED", time.Now()); err != nil {
		t.Fatal(err)
	}
	for status, want := range map[string]string{recon.OrderPending: "PENDING", recon.OrderPartiallyPaid: "PARTLY", recon.OrderPaid: "PAID", recon.OrderV2Cancelled: "CANCELLED"} {
		list, total, err := s.Orders(t.Context(), c.Tenant(), recon.OrderFilter{V2Status: status, Page: 1, PerPage: 10})
		if err != nil || total != 1 || len(list) != 1 || list[0].InvoiceNumber != want {
			t.Errorf("status %s: %v %d %v; want %s", status, list, total, err, want)
		}
	}
	_, _, err := s.Orders(t.Context(), c.Tenant(), recon.OrderFilter{V2Status: "refunded", Page: 1, PerPage: 10})
	wantCode(t, err, recon.EINVALID, "")
}
