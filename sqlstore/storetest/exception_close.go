package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/orders"
)

// Exceptions an accountant can close (issue 22; docs/api.md, Exceptions
// queue): a write-off, an ask for the remainder, the kept history, the
// queue's totals and memo search, and bulk resolution.
func testExceptionsClose(t *testing.T, setup func(t *testing.T) *exceptionFixture) {
	run(t, "WriteOff", setup, testExceptionsWriteOff)
	run(t, "AskRemainder", setup, testExceptionsAskRemainder)
	run(t, "HistoryKeepsUnmatched", setup, testExceptionsHistory)
	run(t, "Totals", setup, testExceptionsTotals)
	run(t, "Bulk", setup, testExceptionsBulk)
	run(t, "WriteOffRacesThePayment", setup, testExceptionsWriteOffConcurrently)
}

// testExceptionsWriteOffConcurrently writes off SHORT's remainder from
// several goroutines while the payer's transfer of that remainder is
// ingested: one write-off at most, and SHORT paid once, with one ORDER_PAID,
// whichever comes first (the transfer after a write-off is a duplicate).
func testExceptionsWriteOffConcurrently(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	u := accountant(t, s, c.ID)
	const n = 6
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = s.ResolveException(t.Context(), c.Tenant(), f.tUnder, recon.ResolveInput{Action: recon.ResolveWriteOff, Note: fmt.Sprintf("request %d", i)}, u, time.Now())
		}()
	}
	var paidBy int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		in := tx(f.a.ID, "REST", "2026-03-08 10:00:00", 60_000, 0)
		res, err := s.IngestTransactions(t.Context(), c.Tenant(), []recon.TransactionInput{in}, []string{"DH10002"})
		if err != nil {
			t.Errorf("the remainder's transfer: %v", err)
			return
		}
		paidBy = res[0].ID
	}()
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch recon.ErrorCode(err) {
		case "":
			won++
		case recon.ECONFLICT:
		default:
			t.Fatalf("concurrent write-off: %v", err)
		}
	}
	o, err := s.Order(t.Context(), c.Tenant(), "SHORT")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := s.OrderDeliveries(t.Context(), c.Tenant(), o, 20)
	if err != nil {
		t.Fatal(err)
	}
	paid := 0
	for _, d := range ds {
		if d.Event == recon.IPNOrderPaid {
			paid++
		}
	}
	if o.Status != recon.OrderCaptured || paid != 1 || won > 1 {
		t.Fatalf("SHORT %s with %d ORDER_PAID after %d write-offs", o.Status, paid, won)
	}
	rest, err := s.Exception(t.Context(), c.Tenant(), paidBy)
	switch {
	case won == 1 && (err != nil || rest.Kind != recon.ExceptionDuplicate || o.PaidAmount != 40_000):
		t.Fatalf("written off first: the transfer %+v %v, the order paid %d", rest, err, o.PaidAmount)
	case won == 0 && (recon.ErrorCode(err) != recon.ENOTFOUND || o.PaidAmount != 100_000):
		t.Fatalf("paid first: the transfer %+v %v, the order paid %d", rest, err, o.PaidAmount)
	}
}

func testExceptionsWriteOff(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	u := accountant(t, s, c.ID)
	now := time.Date(2026, 3, 10, 8, 30, 0, 0, time.UTC)
	ipns := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid)
	for _, w := range []struct {
		tx   int64
		in   recon.ResolveInput
		code string
	}{
		{f.tUnmatched, recon.ResolveInput{Action: recon.ResolveWriteOff, Note: "x"}, recon.ECONFLICT},                 // not underpaid
		{f.tUnder, recon.ResolveInput{Action: recon.ResolveWriteOff, OrderID: f.short.ID, Note: "x"}, recon.EINVALID}, // no order_id
		{f.tUnder, recon.ResolveInput{Action: recon.ResolveWriteOff, Note: ""}, recon.EINVALID},                       // no note
		{f.tUnder, recon.ResolveInput{Action: recon.ResolveAskRemainder, Note: "x"}, recon.EINVALID},                  // no account made
		{f.tUnder, recon.ResolveInput{Action: recon.ResolveWriteOff, Note: "x", Amount: 5}, recon.EINVALID},           // refund's field
	} {
		_, err := s.ResolveException(t.Context(), c.Tenant(), w.tx, w.in, u, now)
		wantCode(t, err, w.code, "")
	}
	// The test tenant (the other mode) does not see it.
	tt, err := s.TestTenant(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.ResolveException(t.Context(), tt.ID, f.tUnder, recon.ResolveInput{Action: recon.ResolveWriteOff, Note: "x"}, u, now)
	wantCode(t, err, recon.ENOTFOUND, "")

	res, err := s.ResolveException(t.Context(), c.Tenant(), f.tUnder, recon.ResolveInput{Action: recon.ResolveWriteOff, Note: "  phí ngân hàng  "}, u, now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Amount != 60_000 || !res.Closes || res.OrderID != f.short.ID || res.OrderPaidBefore != 40_000 || res.Note != "phí ngân hàng" {
		t.Fatalf("write-off: %+v", res)
	}
	o, err := s.Order(t.Context(), c.Tenant(), "SHORT")
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != recon.OrderCaptured || o.PaidAmount != 40_000 || o.PaidTransactionID != f.tUnder || !o.PaidAt.Equal(now) {
		t.Fatalf("written-off order: %+v", o)
	}
	if got := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid); got != ipns+1 {
		t.Fatalf("ORDER_PAID IPNs %d, want %d", got, ipns+1)
	}
	ds, err := s.OrderDeliveries(t.Context(), c.Tenant(), o, 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries of SHORT: %v %v", ds, err)
	}
	var body struct {
		Order struct {
			OrderStatus string `json:"order_status"`
			OrderAmount string `json:"order_amount"`
		} `json:"order"`
		Transaction struct {
			TransactionAmount string `json:"transaction_amount"`
		} `json:"transaction"`
	}
	if err := json.Unmarshal(ds[0].Payload, &body); err != nil {
		t.Fatal(err)
	}
	// What a paid order says: CAPTURED, the order's amount, the money received.
	if body.Order.OrderStatus != recon.OrderCaptured || body.Order.OrderAmount != "100000.00" || body.Transaction.TransactionAmount != "40000.00" {
		t.Fatalf("IPN of the write-off: %s", ds[0].Payload)
	}
	e, err := s.Exception(t.Context(), c.Tenant(), f.tUnder)
	if err != nil {
		t.Fatal(err)
	}
	if e.Resolution == nil || e.Resolution.Action != recon.ResolveWriteOff || e.Resolution.Amount != 60_000 || len(e.Decisions) != 1 {
		t.Fatalf("resolved exception: %+v", e)
	}
	// Once paid there is nothing left to write off: a second one is refused.
	_, err = s.ResolveException(t.Context(), c.Tenant(), f.tUnder, recon.ResolveInput{Action: recon.ResolveWriteOff, Note: "x"}, u, now)
	wantCode(t, err, recon.ECONFLICT, "")
	if got := countDeliveries(t, s, c.Tenant(), recon.IPNOrderPaid); got != ipns+1 {
		t.Fatalf("a refused write-off sent an IPN")
	}
}

func testExceptionsAskRemainder(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	u := accountant(t, s, c.ID)
	now := time.Date(2026, 3, 10, 8, 30, 0, 0, time.UTC)
	vas := &orders.Service{Store: s}
	ask := func(id int64, note string) (*recon.ExceptionResolution, error) {
		return recon.AskRemainder(t.Context(), s, vas, c.Tenant(), id, recon.ResolveInput{Note: note}, u, now)
	}
	_, err := ask(f.tUnmatched, "x")
	wantCode(t, err, recon.ECONFLICT, "")
	_, err = ask(f.tUnder, "")
	wantCode(t, err, recon.EINVALID, "")
	res, err := ask(f.tUnder, "khách thiếu 60.000")
	if err != nil {
		t.Fatal(err)
	}
	if res.Amount != 60_000 || res.Closes || res.VANumber == "" || res.Action != recon.ResolveAskRemainder {
		t.Fatalf("ask: %+v", res)
	}
	e, err := s.Exception(t.Context(), c.Tenant(), f.tUnder)
	if err != nil {
		t.Fatal(err)
	}
	if e.Resolution != nil || len(e.Decisions) != 1 || e.Decisions[0].VANumber != res.VANumber {
		t.Fatalf("after the ask the exception stays open with the decision: %+v", e)
	}
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{Kind: recon.ExceptionUnderpaid}); got != "P1:underpaid" {
		t.Fatalf("open underpaid: %q", got)
	}
	view, err := vas.Get(t.Context(), c.Tenant(), f.short.PublicID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(view.VAs); n != 1 || view.VAs[0].Number != res.VANumber || view.VAs[0].Amount != 60_000 || view.VAs[0].AmountMode != recon.VAExact {
		t.Fatalf("the order's accounts: %+v", view.VAs)
	}
	// The payer pays the remainder through it: the order is paid.
	payAt(t, s, c.Tenant(), f.a.ID, "P9", "2026-03-11 10:00:00", res.VANumber, "", 60_000)
	if o, err := s.Order(t.Context(), c.Tenant(), "SHORT"); err != nil || o.Status != recon.OrderCaptured || o.PaidAmount != 100_000 {
		t.Fatalf("after the remainder: %+v %v", o, err)
	}
	// Nothing is left to ask for or write off; ignoring closes it, and both
	// decisions stay.
	_, err = ask(f.tUnder, "again")
	wantCode(t, err, recon.ECONFLICT, "")
	if _, err := s.ResolveException(t.Context(), c.Tenant(), f.tUnder, recon.ResolveInput{Action: recon.ResolveIgnore, Note: "đã trả đủ"}, u, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	e, err = s.Exception(t.Context(), c.Tenant(), f.tUnder)
	if err != nil {
		t.Fatal(err)
	}
	if e.Resolution == nil || e.Resolution.Action != recon.ResolveIgnore || len(e.Decisions) != 2 ||
		e.Decisions[0].Action != recon.ResolveAskRemainder || e.Decisions[1].Action != recon.ResolveIgnore {
		t.Fatalf("history after closing: %+v", e.Decisions)
	}
}

func testExceptionsHistory(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	u := accountant(t, s, c.ID)
	now := time.Now().UTC().Truncate(time.Second).Add(time.Minute)
	if _, err := s.ResolveException(t.Context(), c.Tenant(), f.tUnmatched, recon.ResolveInput{Action: recon.ResolveMatch, OrderID: f.open.ID, Note: "gõ nhầm mã"}, u, now); err != nil {
		t.Fatal(err)
	}
	e, err := s.Exception(t.Context(), c.Tenant(), f.tUnmatched)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := s.MatchDecisions(t.Context(), c.Tenant(), 0, f.tUnmatched)
	if err != nil {
		t.Fatal(err)
	}
	h := recon.ExceptionHistory(e, ds)
	var got []string
	for _, x := range h {
		switch {
		case x.Queued:
			got = append(got, "queued:"+x.Kind+":"+x.Reason)
		case x.Decision != nil:
			got = append(got, "decision:"+x.Decision.Outcome+":"+x.Decision.Rule)
		default:
			got = append(got, "person:"+x.Resolution.Action+":"+x.Resolution.UserEmail+":"+x.Resolution.Note)
		}
	}
	want := []string{"queued:unmatched:no order with payment code DH10010", "decision:matched:manual", "person:match:ketoan@saomai.vn:gõ nhầm mã"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("history\n got %q\nwant %q", got, want)
	}
}

func testExceptionsTotals(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	tot, err := s.ExceptionTotals(t.Context(), c.Tenant(), recon.ExceptionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// unmatched: U1 150,000 + U2 5,000 + U3 70,000 + P2 2,000; underpaid P1
	// 40,000; duplicate P3 100,000.
	want := &recon.ExceptionTotals{Kinds: []recon.ExceptionTotal{
		{Kind: recon.ExceptionUnmatched, Count: 4, Amount: 227_000},
		{Kind: recon.ExceptionUnderpaid, Count: 1, Amount: 40_000},
		{Kind: recon.ExceptionDuplicate, Count: 1, Amount: 100_000},
	}, All: recon.ExceptionTotal{Count: 6, Amount: 367_000}}
	diff(t, "open totals", want, tot)
	tot, err = s.ExceptionTotals(t.Context(), c.Tenant(), recon.ExceptionFilter{Kind: recon.ExceptionUnmatched, BankAccountID: f.a.ID})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "unmatched into a", &recon.ExceptionTotals{Kinds: []recon.ExceptionTotal{{Kind: recon.ExceptionUnmatched, Count: 3, Amount: 222_000}},
		All: recon.ExceptionTotal{Count: 3, Amount: 222_000}}, tot)
	// Memo search: the listing and the totals, without case or diacritics.
	for _, memo := range []string{"u1", "CHUYỂN TIỀN U1", "chuyen tien u1"} {
		if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{Memo: memo}); got != "U1:unmatched" {
			t.Errorf("memo %q lists %q", memo, got)
		}
	}
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{Memo: "%"}); got != "" {
		t.Errorf("memo %% lists %q: LIKE's wildcards are escaped", got)
	}
	tot, err = s.ExceptionTotals(t.Context(), c.Tenant(), recon.ExceptionFilter{Memo: "chuyen tien p"})
	if err != nil {
		t.Fatal(err)
	}
	if tot.All.Count != 3 || tot.All.Amount != 142_000 {
		t.Fatalf("totals of memo 'chuyen tien p': %+v", tot.All)
	}
	// Another tenant, and the other mode, count none of it.
	other := newCompany(t, s, 2)
	tt, err := s.TestTenant(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []recon.TenantID{other.Tenant(), tt.ID} {
		tot, err := s.ExceptionTotals(t.Context(), tenant, recon.ExceptionFilter{})
		if err != nil || tot.All.Count != 0 || len(tot.Kinds) != 0 {
			t.Fatalf("another tenant's totals: %+v %v", tot, err)
		}
	}
	_, err = s.ExceptionTotals(t.Context(), c.Tenant(), recon.ExceptionFilter{Kind: "weird"})
	wantCode(t, err, recon.EINVALID, "")
}

func testExceptionsBulk(t *testing.T, f *exceptionFixture) {
	s, c := f.s, f.c
	u := accountant(t, s, c.ID)
	now := time.Date(2026, 3, 10, 8, 30, 0, 0, time.UTC)
	in := recon.ResolveInput{Action: recon.ResolveIgnore, Note: "lãi tiền gửi"}
	for _, bad := range []struct {
		ids []int64
		in  recon.ResolveInput
	}{
		{nil, in},
		{[]int64{f.tVA, f.tVA}, in},
		{[]int64{f.tVA}, recon.ResolveInput{Action: recon.ResolveMatch, OrderID: f.open.ID, Note: "x"}},
		{[]int64{f.tVA}, recon.ResolveInput{Action: recon.ResolveIgnore}},
		{make([]int64, recon.MaxBulkResolve+1), in},
	} {
		_, err := recon.ResolveEach(t.Context(), s, c.Tenant(), bad.ids, bad.in, u, now, nil)
		wantCode(t, err, recon.EINVALID, "")
	}
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{Resolved: true}); got != "" {
		t.Fatalf("refused bulk input resolved %q", got)
	}
	out, err := recon.ResolveEach(t.Context(), s, c.Tenant(), []int64{f.tVA, f.tNoCode, f.tOtherPrefix}, in, u, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, r := range out {
		if r.Err != nil || r.Resolution == nil || r.Resolution.TransactionID != r.TransactionID || seen[r.Resolution.ID] {
			t.Fatalf("bulk result %+v", r)
		}
		seen[r.Resolution.ID] = true
	}
	if got, _ := listExceptions(t, s, c.Tenant(), recon.ExceptionFilter{Resolved: true}); got != "P2:unmatched U3:unmatched U2:unmatched" {
		t.Fatalf("resolved: %q", got)
	}
	// One already resolved among others: refused alone.
	out, err = recon.ResolveEach(t.Context(), s, c.Tenant(), []int64{f.tUnmatched, f.tVA}, in, u, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Err != nil || recon.ErrorCode(out[1].Err) != recon.ECONFLICT {
		t.Fatalf("bulk with a resolved one: %+v", out)
	}
	// Another tenant's ids are not found, one by one.
	other := newCompany(t, s, 2)
	out, err = recon.ResolveEach(t.Context(), s, other.Tenant(), []int64{f.tDup}, in, u, now, nil)
	if err != nil || recon.ErrorCode(out[0].Err) != recon.ENOTFOUND {
		t.Fatalf("another tenant's bulk: %+v %v", out, err)
	}
}
