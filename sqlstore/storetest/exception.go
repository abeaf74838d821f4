package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
)

// payAt ingests one incoming transfer dated at the time, with the code.
func payAt(t *testing.T, s recon.Store, tenant recon.TenantID, accountID int64, ref, date, code, sub string, amount int64) int64 {
	t.Helper()
	in := tx(accountID, ref, date, amount, 0)
	in.SubAccount = sub
	res, err := s.IngestTransactions(t.Context(), tenant, []recon.TransactionInput{in}, []string{code})
	if err != nil {
		t.Fatalf("IngestTransactions: %v", err)
	}
	return res[0].ID
}

// listExceptions returns the transaction ids and kinds of the listing.
func listExceptions(t *testing.T, s recon.Store, tenant recon.TenantID, f recon.ExceptionFilter) (string, bool) {
	t.Helper()
	if f.Limit == 0 {
		f.Limit = 50
	}
	list, more, err := s.Exceptions(t.Context(), tenant, f)
	if err != nil {
		t.Fatalf("Exceptions(%+v): %v", f, err)
	}
	var out []string
	for _, e := range list {
		out = append(out, fmt.Sprintf("%s:%s", e.Transaction.ReferenceNumber, e.Kind))
	}
	return strings.Join(out, " "), more
}

// accountant is a user who may resolve exceptions.
func accountant(t *testing.T, s recon.Store, companyID int64) *recon.User {
	t.Helper()
	u := &recon.User{Company: companyID, Email: "ketoan@saomai.vn", Role: recon.RoleAccountant}
	if err := s.CreateUser(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

// exceptionFixture is a tenant with an IPN target, two accounts (orders are
// paid into the first), orders, and one transfer of each kind.
type exceptionFixture struct {
	s                                   recon.Store
	c                                   *recon.Company
	a, other                            *recon.BankAccount
	open, open2, short, paid, cancelled *recon.Order
	tUnmatched, tVA, tNoCode, tUnder    int64
	tOtherPrefix, tDup                  int64
}

func newExceptionFixture(t *testing.T, open Open) *exceptionFixture {
	s := open(t)
	f := &exceptionFixture{s: s, c: newCompany(t, s, 1, format("DH"), format("HD"))}
	c := f.c
	f.a, f.other = newAccount(t, s, c.ID, "111"), newAccount(t, s, c.ID, "222")
	if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	f.open = newOrder(t, s, c.ID, f.a.ID, "OPEN", "DH10001", 150_000)
	f.open2 = newOrder(t, s, c.ID, f.a.ID, "OPEN2", "DH55555", 70_000)
	f.short = newOrder(t, s, c.ID, f.a.ID, "SHORT", "DH10002", 100_000)
	f.paid = newOrder(t, s, c.ID, f.a.ID, "PAID", "DH10003", 100_000)
	f.cancelled = newOrder(t, s, c.ID, f.a.ID, "GONE", "DH10004", 150_000)
	// A new order of the customer of PAID, so a duplicate of PAID suggests it.
	same := &recon.Order{CompanyID: c.ID, InvoiceNumber: "PAID-AGAIN", PaymentCode: "DH20000", Amount: 1_000, BankAccountID: f.a.ID, CustomerID: f.paid.CustomerID}
	if err := s.CreateOrder(t.Context(), same); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelOrder(t.Context(), c.Tenant(), "GONE", time.Now()); err != nil {
		t.Fatal(err)
	}
	payAt(t, s, c.Tenant(), f.a.ID, "MATCHED", "2026-03-01 09:00:00", "DH10003", "", 100_000)           // captures PAID: no exception
	f.tUnmatched = payAt(t, s, c.Tenant(), f.a.ID, "U1", "2026-03-01 10:00:00", "DH10010", "", 150_000) // a typo of DH10001
	f.tVA = payAt(t, s, c.Tenant(), f.other.ID, "U2", "2026-03-02 10:00:00", "", "VA404", 5_000)
	f.tNoCode = payAt(t, s, c.Tenant(), f.a.ID, "U3", "2026-03-03 10:00:00", "", "", 70_000)
	payAt(t, s, c.Tenant(), f.other.ID, "PLAIN", "2026-03-03 11:00:00", "", "", 9_000) // no code, to an account no order names
	f.tUnder = payAt(t, s, c.Tenant(), f.a.ID, "P1", "2026-03-04 10:00:00", "DH10002", "", 40_000)
	f.tOtherPrefix = payAt(t, s, c.Tenant(), f.a.ID, "P2", "2026-03-05 10:00:00", "HD55555", "", 2_000) // OPEN2's digits under another prefix
	f.tDup = payAt(t, s, c.Tenant(), f.a.ID, "P3", "2026-03-06 10:00:00", "DH10003", "", 100_000)
	out := tx(f.a.ID, "OUT", "2026-03-06 11:00:00", 0, 5_000)
	if _, err := s.IngestTransactions(t.Context(), c.Tenant(), []recon.TransactionInput{out}, []string{"DH99999"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// oneWon fails t unless exactly one of concurrent calls succeeded and the
// others were refused as conflicts.
func oneWon(t *testing.T, errs []error) {
	t.Helper()
	won := 0
	for _, err := range errs {
		switch recon.ErrorCode(err) {
		case "":
			won++
		case recon.ECONFLICT:
		default:
			t.Errorf("concurrent resolve: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d resolutions succeeded, want 1 (%v)", won, errs)
	}
}

func testExceptions(t *testing.T, open Open) {
	setup := func(t *testing.T) *exceptionFixture { return newExceptionFixture(t, open) }
	run(t, "Queue", setup, testExceptionsQueue)
	run(t, "NoOrdersNoQueue", withAccount(open), testExceptionsNoOrdersNoQueue)
	run(t, "Suggestions", setup, testExceptionsSuggestions)
	run(t, "Resolve", setup, testExceptionsResolve)
	run(t, "ResolveConcurrently", setup, testExceptionsResolveConcurrently)
	testExceptionsClose(t, setup)
}

func testExceptionsQueue(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	// An overpayment of SHORT's remaining 60,000.
	payAt(t, s, c.Tenant(), f.a.ID, "P4", "2026-03-07 10:00:00", "DH10002", "", 70_000)
	got, more := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{})
	want := "P4:overpaid P3:duplicate P2:unmatched P1:underpaid U3:unmatched U2:unmatched U1:unmatched"
	if got != want || more {
		t.Fatalf("open exceptions\n got %s (more %v)\nwant %s", got, more, want)
	}
	for _, w := range []struct {
		f    recon.ExceptionFilter
		want string
	}{
		{recon.ExceptionFilter{Kind: recon.ExceptionUnmatched}, "P2:unmatched U3:unmatched U2:unmatched U1:unmatched"},
		{recon.ExceptionFilter{Kind: recon.ExceptionDuplicate}, "P3:duplicate"},
		{recon.ExceptionFilter{BankAccountID: f.other.ID}, "U2:unmatched"},
		{recon.ExceptionFilter{FromDate: "2026-03-02", ToDate: "2026-03-04"}, "P1:underpaid U3:unmatched U2:unmatched"},
		{recon.ExceptionFilter{Resolved: true}, ""},
	} {
		if got, _ := listExceptions(t, s, c.Tenant(), w.f); got != w.want {
			t.Errorf("%+v: got %q, want %q", w.f, got, w.want)
		}
	}
	// Keyset pages of 3 across kinds.
	var pages []string
	after := int64(0)
	for {
		list, more, err := s.Exceptions(t.Context(), c.Tenant(), recon.ExceptionFilter{Limit: 3, After: after})
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, e := range list {
			refs = append(refs, e.Transaction.ReferenceNumber)
			after = e.Transaction.ID
		}
		pages = append(pages, strings.Join(refs, ","))
		if !more {
			break
		}
	}
	if got := strings.Join(pages, " | "); got != "P4,P3,P2 | P1,U3,U2 | U1" {
		t.Fatalf("pages: %s", got)
	}
	e, err := s.Exception(t.Context(), c.Tenant(), f.tUnder)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != recon.ExceptionUnderpaid || e.OrderID != f.short.ID || e.Resolution != nil || e.Transaction.AmountIn != 40_000 ||
		e.Reason != "payment code DH10002 names order SHORT: 40000 of 100000 VND paid, 60000 short" {
		t.Fatalf("underpaid exception: %+v", e)
	}
	e, err = s.Exception(t.Context(), c.Tenant(), f.tNoCode)
	if err != nil || e.Reason != recon.NoCodeReason {
		t.Fatalf("no-code exception: %+v %v", e, err)
	}
	e, _ = s.Exception(t.Context(), c.Tenant(), f.tVA)
	if e.Reason != "no order with virtual account VA404" {
		t.Fatalf("VA exception reason %q", e.Reason)
	}
	// Another tenant sees none of it, and cannot page from its ids.
	other := newCompany(t, s, 2)
	if got, _ := listExceptions(t, s, other.Tenant(), recon.ExceptionFilter{}); got != "" {
		t.Fatalf("another tenant lists %q", got)
	}
	_, err = s.Exception(t.Context(), other.Tenant(), f.tUnmatched)
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("transaction %d is not an exception", f.tUnmatched))
	_, _, err = s.Exceptions(t.Context(), other.Tenant(), recon.ExceptionFilter{Limit: 5, After: f.tUnmatched})
	wantCode(t, err, recon.EINVALID, "")
	_, _, err = s.Exceptions(t.Context(), c.Tenant(), recon.ExceptionFilter{Limit: 5, Kind: "weird"})
	wantCode(t, err, recon.EINVALID, "kind must be one of unmatched, underpaid, overpaid, duplicate, refund_transfer, va_inactive, possible_duplicate")
}

func testExceptionsNoOrdersNoQueue(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	// A tenant with no orders takes codes it has nothing to match to:
	// they are not exceptions (and cost ingestion no row).
	payAt(t, s, c.Tenant(), a.ID, "R1", "2026-03-01 10:00:00", "DH12345", "", 1_000)
	payAt(t, s, c.Tenant(), a.ID, "R2", "2026-03-01 10:00:00", "", "", 1_000)
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{}); got != "" {
		t.Fatalf("queued %q", got)
	}
	// Once it has an order, a code naming no order is an exception.
	newOrder(t, s, c.ID, 0, "INV", "DH1", 5)
	payAt(t, s, c.Tenant(), a.ID, "R3", "2026-03-01 10:00:00", "DH12345", "", 1_000)
	payAt(t, s, c.Tenant(), a.ID, "R4", "2026-03-01 10:00:00", "", "", 1_000) // the order names no account
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{}); got != "R3:unmatched" {
		t.Fatalf("queued %q", got)
	}
}

func testExceptionsSuggestions(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	text := func(list []*recon.Suggestion) string {
		var out []string
		for _, g := range list {
			out = append(out, g.Order.InvoiceNumber+"="+strings.Join(g.Reasons, "+"))
		}
		return strings.Join(out, " ")
	}
	read := func(txID int64) *recon.Exception {
		t.Helper()
		e, err := s.Exception(t.Context(), c.Tenant(), txID)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	suggest := func(txID int64) string {
		t.Helper()
		got, err := s.ExceptionSuggestions(t.Context(), c.Tenant(), []*recon.Exception{read(txID)}, c.Config.PaymentCodeFormats)
		if err != nil || len(got) != 1 {
			t.Fatalf("suggestions: %v, %v", got, err)
		}
		return text(got[0])
	}
	// A page at once gives each exception what it gets alone (the
	// statements are per reason, not per exception).
	ids := []int64{f.tUnmatched, f.tNoCode, f.tOtherPrefix, f.tDup, f.tUnder, f.tUnmatched}
	var page []*recon.Exception
	for _, id := range ids {
		page = append(page, read(id))
	}
	all, err := s.ExceptionSuggestions(t.Context(), c.Tenant(), page, c.Config.PaymentCodeFormats)
	if err != nil || len(all) != len(ids) {
		t.Fatalf("a page's suggestions: %v, %v", all, err)
	}
	for i, id := range ids {
		if got, alone := text(all[i]), suggest(id); got != alone {
			t.Errorf("exception %d in a page: %q, alone: %q", id, got, alone)
		}
	}
	// Another tenant's page finds none of this one's orders.
	other := newCompany(t, s, 99, c.Config.PaymentCodeFormats...)
	if got, err := s.ExceptionSuggestions(t.Context(), other.Tenant(), page, c.Config.PaymentCodeFormats); err != nil || text(got[0])+text(got[3]) != "" {
		t.Errorf("another tenant: %v, %v", got, err)
	}
	// DH10010 is DH10001 with two digits swapped; 150,000 is the amount
	// of OPEN and of GONE, which is cancelled.
	if got := suggest(f.tUnmatched); got != "OPEN=same_amount+similar_code" {
		t.Errorf("U1: %s", got)
	}
	if got := suggest(f.tNoCode); got != "OPEN2=same_amount" {
		t.Errorf("U3: %s", got)
	}
	if got := suggest(f.tOtherPrefix); got != "OPEN2=similar_code" {
		t.Errorf("P2: %s", got)
	}
	if got := suggest(f.tDup); got != "PAID-AGAIN=same_customer SHORT=similar_code OPEN=similar_code" {
		t.Errorf("P3: %s", got)
	}
	// An underpaid transfer is applied already: nothing to match.
	if got := suggest(f.tUnder); got != "" {
		t.Errorf("P1: %s", got)
	}
}

func testExceptionsResolve(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	u := accountant(t, s, c.ID)
	now := time.Date(2026, 3, 10, 8, 30, 0, 0, time.UTC)
	ipns := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid)
	resolve := func(txID int64, in recon.ResolveInput) (*recon.ExceptionResolution, error) {
		return s.ResolveException(t.Context(), c.Tenant(), txID, in, u, now)
	}
	// Input and rule failures change nothing.
	for _, w := range []struct {
		tx   int64
		in   recon.ResolveInput
		code string
		msg  string
	}{
		{f.tUnmatched, recon.ResolveInput{Action: "delete", Note: "x"}, recon.EINVALID, "action must be one of match, refund, ignore, write_off, ask_remainder, duplicate, distinct"},
		{f.tUnmatched, recon.ResolveInput{Action: "match", Note: "x"}, recon.EINVALID, "order_id is required to match: the id of an open order"},
		{f.tUnmatched, recon.ResolveInput{Action: "ignore", OrderID: 3, Note: "x"}, recon.EINVALID, "order_id is only for action match, not ignore"},
		{f.tUnmatched, recon.ResolveInput{Action: "ignore", Note: "  "}, recon.EINVALID, "note is required: say why"},
		{f.tUnmatched, recon.ResolveInput{Action: "ignore", Note: strings.Repeat("x", 501)}, recon.EINVALID, "note must be at most 500 bytes, not 501"},
		{f.tUnmatched, recon.ResolveInput{Action: "ignore", Note: "a\x00b"}, recon.EINVALID, "note holds the control character U+0000"},
		{f.tUnmatched, recon.ResolveInput{Action: "match", OrderID: f.paid.ID, Note: "x"}, recon.ECONFLICT, fmt.Sprintf("order %d (PAID) is already paid", f.paid.ID)},
		{f.tUnmatched, recon.ResolveInput{Action: "match", OrderID: f.cancelled.ID, Note: "x"}, recon.ECONFLICT, fmt.Sprintf("order %d (GONE) is cancelled", f.cancelled.ID)},
		{f.tUnmatched, recon.ResolveInput{Action: "match", OrderID: 999_999, Note: "x"}, recon.ENOTFOUND, "order 999999 not found"},
		{f.tUnder, recon.ResolveInput{Action: "match", OrderID: f.open.ID, Note: "x"}, recon.ECONFLICT,
			fmt.Sprintf("transaction %d is already applied to order %d (underpaid): refund or ignore it instead", f.tUnder, f.short.ID)},
		{999_999, recon.ResolveInput{Action: "ignore", Note: "x"}, recon.ENOTFOUND, "transaction 999999 is not an exception"},
	} {
		_, err := resolve(w.tx, w.in)
		wantCode(t, err, w.code, w.msg)
	}
	// An order of another tenant (here: the test tenant) is not found.
	tt, err := s.TestTenant(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	ta := newAccount(t, s, tt.ID.ID(), "111")
	testOrder := newOrder(t, s, tt.ID.ID(), ta.ID, "OPEN", "DH10001", 150_000)
	_, err = resolve(f.tUnmatched, recon.ResolveInput{Action: "match", OrderID: testOrder.ID, Note: "x"})
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("order %d not found", testOrder.ID))
	_, err = s.ResolveException(t.Context(), tt.ID, f.tUnmatched, recon.ResolveInput{Action: "ignore", Note: "x"}, u, now)
	wantCode(t, err, recon.ENOTFOUND, "")
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{Resolved: true}); got != "" {
		t.Fatalf("resolved after failures: %q", got)
	}

	// Match: the order is paid as by an automatic match, with its IPN.
	r, err := resolve(f.tUnmatched, recon.ResolveInput{Action: "match", OrderID: f.open.ID, Note: "  customer typed DH10010 for DH10001 "})
	if err != nil {
		t.Fatal(err)
	}
	want := &recon.ExceptionResolution{ID: r.ID, CompanyID: c.ID, TransactionID: f.tUnmatched, Action: "match", OrderID: f.open.ID,
		Note: "customer typed DH10010 for DH10001", UserID: u.ID, UserEmail: "ketoan@saomai.vn", CreatedAt: now,
		PreviousKind: "unmatched", PreviousReason: "no order with payment code DH10010", OrderStatusBefore: recon.OrderAwaitingPayment, Closes: true,
		Decision: &recon.MatchDecision{CompanyID: c.ID, TransactionID: f.tUnmatched, OrderID: f.open.ID, Outcome: recon.MatchCaptured,
			Rule: recon.MatchByHand, Code: "DH10010", Amount: 150_000, OrderAmount: 150_000, PaidTotal: 150_000,
			Reason: "a match by hand names order OPEN: 150000 of 150000 VND paid", CreatedAt: now}}
	diff(t, "resolution", want, r)
	o, err := s.Order(t.Context(), c.Tenant(), "OPEN")
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != recon.OrderCaptured || o.PaidAmount != 150_000 || o.PaidTransactionID != f.tUnmatched || !o.PaidAt.Equal(now) {
		t.Fatalf("order after the match: %+v", o)
	}
	if n := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid); n != ipns+1 {
		t.Fatalf("%d ORDER_PAID deliveries, want %d", n, ipns+1)
	}
	// Queued for its automatic invoice as a matched one is
	// (docs/invoices.md, From the order).
	if queued, _, err := s.QueuedPaidOrders(t.Context(), 100); err != nil || !slices.ContainsFunc(queued, func(q *recon.Order) bool { return q.ID == f.open.ID }) {
		t.Fatalf("the order paid by hand is not queued for its invoice (%v)", err)
	}
	ds, err := s.MatchDecisions(t.Context(), c.Tenant(), 0, f.tUnmatched)
	if err != nil || len(ds) != 1 || ds[0].Rule != recon.MatchByHand || ds[0].Outcome != recon.MatchCaptured {
		t.Fatalf("decisions of the transfer: %+v %v", ds, err)
	}
	e, err := s.Exception(t.Context(), c.Tenant(), f.tUnmatched)
	if err != nil {
		t.Fatal(err)
	}
	r.Decision = nil // read back without it: the decision is among MatchDecisions
	diff(t, "stored resolution", r, e.Resolution)
	// Twice: one resolution.
	_, err = resolve(f.tUnmatched, recon.ResolveInput{Action: "ignore", Note: "again"})
	wantCode(t, err, recon.ECONFLICT, fmt.Sprintf("transaction %d is already resolved (match by ketoan@saomai.vn at 2026-03-10T08:30:00Z)", f.tUnmatched))

	// A duplicate can be matched to another open order: partly paid.
	r, err = resolve(f.tDup, recon.ResolveInput{Action: "match", OrderID: f.short.ID, Note: "paid the old code for SHORT"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision.Outcome != recon.MatchOverpaid || r.OrderPaidBefore != 40_000 || r.PreviousKind != "duplicate" {
		t.Fatalf("duplicate matched: %+v %+v", r, r.Decision)
	}
	if _, err := resolve(f.tNoCode, recon.ResolveInput{Action: "refund", Note: "sent back on 10/3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := resolve(f.tVA, recon.ResolveInput{Action: "ignore", Note: "bank interest"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{}); got != "P2:unmatched P1:underpaid" {
		t.Fatalf("open after resolving: %q", got)
	}
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{Resolved: true}); got != "P3:duplicate U3:unmatched U2:unmatched U1:unmatched" {
		t.Fatalf("resolved: %q", got)
	}
	if n := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid); n != ipns+2 {
		t.Fatalf("%d ORDER_PAID deliveries, want %d", n, ipns+2)
	}
	// The test tenant's wipe takes its exceptions and resolutions with
	// their transactions; the live tenant's stay.
	tu := payAt(t, s, tt.ID, ta.ID, "T1", "2026-03-01 10:00:00", "DH77777", "", 1_000)
	if _, err := s.ResolveException(t.Context(), tt.ID, tu, recon.ResolveInput{Action: "ignore", Note: "test"}, u, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WipeTestData(t.Context(), c.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.Exception(t.Context(), tt.ID, tu)
	wantCode(t, err, recon.ENOTFOUND, "")
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{Resolved: true}); got != "P3:duplicate U3:unmatched U2:unmatched U1:unmatched" {
		t.Fatalf("resolved after the wipe: %q", got)
	}
}

func testExceptionsResolveConcurrently(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	u := accountant(t, s, c.ID)
	ipns := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid)
	const n = 8
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			in := recon.ResolveInput{Action: "match", OrderID: f.open.ID, Note: fmt.Sprintf("request %d", i)}
			if i%2 == 1 {
				in = recon.ResolveInput{Action: "ignore", Note: fmt.Sprintf("request %d", i)}
			}
			_, errs[i] = s.ResolveException(t.Context(), c.Tenant(), f.tUnmatched, in, u, time.Now())
		}()
	}
	close(start)
	wg.Wait()
	oneWon(t, errs)
	e, err := s.Exception(t.Context(), c.Tenant(), f.tUnmatched)
	if err != nil || e.Resolution == nil {
		t.Fatalf("%+v %v", e, err)
	}
	wantIPN := ipns
	if e.Resolution.Action == recon.ResolveMatch {
		wantIPN++
	}
	if got := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid); got != wantIPN {
		t.Fatalf("%d ORDER_PAID deliveries after the %s, want %d", got, e.Resolution.Action, wantIPN)
	}
	// Matches only: whichever wins, one IPN.
	ds, _ := s.MatchDecisions(t.Context(), c.Tenant(), 0, f.tDup)
	before := len(ds)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.ResolveException(t.Context(), c.Tenant(), f.tDup, recon.ResolveInput{Action: "match", OrderID: f.open2.ID, Note: "dup"}, u, time.Now())
		}()
	}
	wg.Wait()
	oneWon(t, errs)
	ds, _ = s.MatchDecisions(t.Context(), c.Tenant(), 0, f.tDup)
	if len(ds) != before+1 || countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid) != wantIPN+1 {
		t.Fatalf("%d new decisions, want 1 and 1 more IPN", len(ds)-before)
	}
}
