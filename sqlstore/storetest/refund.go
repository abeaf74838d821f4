package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"recon"
)

// testRefunds checks refunds (docs/api-v2.md, Refunds): the rules with what
// is stored, settlement through every way in, the changes, four eyes, and
// that money never goes wrong under concurrency.
func testRefunds(t *testing.T, open Open) {
	run(t, "ByOrderAndByTransaction", withRefundFixture(open), testRefundsByOrderAndByTransaction)
	run(t, "Rules", withRefundFixture(open), testRefundsRules)
	run(t, "Tenants", withRefundFixture(open), testRefundsTenants)
	run(t, "FourEyes", withRefundFixture(open), testRefundsFourEyes)
	run(t, "Changes", withRefundFixture(open), testRefundsChanges)
	run(t, "Settlement", withRefundFixture(open), testRefundsSettlement)
	run(t, "SettlementByStatement", withRefundFixture(open), testRefundsSettlementByStatement)
	run(t, "List", withRefundFixture(open), testRefundsList)
	run(t, "ResolveExceptionAsRefund", withRefundFixture(open), testRefundsResolveException)
	run(t, "PayoutsDue", withRefundFixture(open), testRefundsPayoutsDue)
	run(t, "RaceForTheLastVND", withRefundFixture(open), testRefundsRaceForTheLastVND)
	run(t, "RaceWithALatePayment", withRefundFixture(open), testRefundsRaceWithALatePayment)
	run(t, "TransferArrivesTwice", withRefundFixture(open), testRefundsTransferArrivesTwice)
	run(t, "CancelRacesTheTransfer", withRefundFixture(open), testRefundsCancelRacesTheTransfer)
	run(t, "Property", withRefundFixture(open), testRefundsProperty)
	run(t, "Totals", withRefundFixture(open), testRefundTotals)
}

var refundReceiver = recon.RefundReceiver{BankBIN: "970436", AccountNumber: "0071000123456", AccountName: "NGUYEN VAN A"}

var refundAt = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// refundFixture is a company with an IPN target that subscribes to the
// refund notifications, two accounts, and a user.
type refundFixture struct {
	s      recon.Store
	c      *recon.Company
	a, b   *recon.BankAccount
	admin  *recon.User
	admin2 *recon.User
}

func withRefundFixture(open Open) func(t *testing.T) *refundFixture {
	return func(t *testing.T) *refundFixture {
		s := open(t)
		c := newCompany(t, s, 1)
		f := &refundFixture{s: s, c: c, a: newAccount(t, s, c.ID, "111"), b: newAccount(t, s, c.ID, "222")}
		if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
			t.Fatal(err)
		}
		subscribe(t, s, c.Tenant(), recon.IPNOrderPaid, recon.IPNRefundSucceeded, recon.IPNRefundFailed)
		f.admin = &recon.User{Company: c.ID, Email: "admin@saomai.vn", Role: recon.RoleAdmin}
		f.admin2 = &recon.User{Company: c.ID, Email: "admin2@saomai.vn", Role: recon.RoleAdmin}
		for _, u := range []*recon.User{f.admin, f.admin2} {
			if err := s.CreateUser(t.Context(), u); err != nil {
				t.Fatal(err)
			}
		}
		return f
	}
}

// subscribe sets the tenant's IPN target's notification types (the
// settings PUT /v1/ipn saves: docs/api-v2.md, Notifications).
func subscribe(t *testing.T, s recon.Store, tenant recon.TenantID, types ...string) {
	t.Helper()
	db := storeAs[interface {
		Exec(ctx context.Context, query string, args ...any) error
	}](t, s)
	settings := `{"notification_types":["` + joinQuoted(types) + `"]}`
	if err := db.Exec(t.Context(), `UPDATE delivery_targets SET settings = $1 WHERE company_id = $2 AND kind = $3`, settings, tenant.ID(), recon.DeliveryIPN); err != nil {
		t.Fatal(err)
	}
}

func joinQuoted(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += `","`
		}
		out += v
	}
	return out
}

func (f *refundFixture) byOrder(o *recon.Order, amount int64) *recon.RefundRequest {
	return &recon.RefundRequest{OrderID: o.ID, Amount: amount, Reason: "hàng trả lại", Receiver: refundReceiver, By: recon.RefundActor{ClientID: "shop-server"}}
}

func (f *refundFixture) byTx(id, amount int64) *recon.RefundRequest {
	return &recon.RefundRequest{TransactionID: id, Amount: amount, Reason: "chuyển nhầm", Receiver: refundReceiver, By: recon.RefundActor{ClientID: "shop-server"}}
}

func (f *refundFixture) create(t *testing.T, in *recon.RefundRequest) *recon.Refund {
	t.Helper()
	r, err := f.s.CreateRefund(t.Context(), f.c.Tenant(), in, refundAt)
	if err != nil {
		t.Fatalf("CreateRefund: %v", err)
	}
	return r
}

// paidOrder is an order paid by transfers of the amounts on account a, one
// a minute from 10:00, and their transaction ids.
func (f *refundFixture) paidOrder(t *testing.T, invoice, code string, amount int64, transfers ...int64) (*recon.Order, []int64) {
	t.Helper()
	o := newOrder(t, f.s, f.c.ID, f.a.ID, invoice, code, amount)
	var ids []int64
	for i, v := range transfers {
		in := tx(f.a.ID, fmt.Sprintf("%s-P%d", invoice, i), fmt.Sprintf("2026-03-01 10:%02d:00", i), v, 0)
		res, err := f.s.IngestTransactions(t.Context(), f.c.Tenant(), []recon.TransactionInput{in}, []string{code})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res[0].ID)
	}
	return f.order(t, o.ID), ids
}

func (f *refundFixture) order(t *testing.T, id int64) *recon.Order {
	t.Helper()
	o, err := orderByID(t, f.s, f.c.Tenant(), id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// orderByID finds an order by id through the listing.
func orderByID(t *testing.T, s recon.Store, tenant recon.TenantID, id int64) (*recon.Order, error) {
	list, _, err := s.Orders(t.Context(), tenant, recon.OrderFilter{Page: 1, PerPage: 100})
	if err != nil {
		return nil, err
	}
	for _, o := range list {
		if o.ID == id {
			return o, nil
		}
	}
	return nil, fmt.Errorf("order %d not found", id)
}

// send ingests the refund's outgoing transfer as a bank feed would, with
// the reference in a memo the bank decorated.
func (f *refundFixture) send(t *testing.T, account int64, ref, reference string, amount int64) (int64, error) {
	t.Helper()
	in := tx(account, ref, "2026-03-02 11:00:00", 0, amount)
	// The bank's own transfer number in the memo (ref): two transfers of
	// one refund are not possible duplicates of each other
	// (docs/statements.md, Possible duplicates).
	in.Content = "MBVCB." + ref + "." + reference + ".hoan tien"
	res, err := f.s.IngestTransactions(t.Context(), f.c.Tenant(), []recon.TransactionInput{in}, []string{""})
	if err != nil {
		return 0, err
	}
	return res[0].ID, nil
}

func (f *refundFixture) refund(t *testing.T, id string) *recon.Refund {
	t.Helper()
	r, err := f.s.Refund(t.Context(), f.c.Tenant(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantRule(t *testing.T, err error, rule, msg string) {
	t.Helper()
	if recon.RefundRule(err) != rule || (msg != "" && recon.ErrorMessage(err) != msg) {
		t.Fatalf("got %v, want rule %s %q", err, rule, msg)
	}
}

func testRefundsByOrderAndByTransaction(t *testing.T, f *refundFixture) {
	o, ids := f.paidOrder(t, "INV-1", "DH70001", 100_000, 40_000, 60_000)
	if o.PaidAmount != 100_000 || o.RefundedAmount != 0 {
		t.Fatalf("order %+v", o)
	}
	// By transaction: the older transfer, part of it.
	r1 := f.create(t, f.byTx(ids[0], 15_000))
	if r1.Status != recon.RefundPending || r1.OrderID != o.ID || r1.TransactionID != ids[0] || r1.BankAccountID != f.a.ID ||
		!recon.ValidXID(r1.ID) || len(r1.Reference) != 12 || r1.Reference[:2] != "HT" {
		t.Fatalf("refund %+v", r1)
	}
	diff(t, "allocations", []recon.RefundAllocation{{TransactionID: ids[0], Amount: 15_000}}, r1.Allocations)
	// By order: everything left, newest transfer first.
	r2 := f.create(t, f.byOrder(o, 0))
	if r2.Amount != 85_000 || r2.TransactionID != 0 || r2.OrderID != o.ID || r2.OrderPublicID != o.PublicID || r1.OrderPublicID != o.PublicID {
		t.Fatalf("refund %+v", r2)
	}
	diff(t, "allocations", []recon.RefundAllocation{{TransactionID: ids[1], Amount: 60_000}, {TransactionID: ids[0], Amount: 25_000}}, r2.Allocations)
	if got := f.order(t, o.ID); got.RefundedAmount != 100_000 {
		t.Fatalf("order refunded %d", got.RefundedAmount)
	}
	for _, q := range []struct{ order, tx, want int64 }{{o.ID, 0, 0}, {0, ids[0], 0}, {0, ids[1], 0}} {
		if n, err := f.s.Refundable(t.Context(), f.c.Tenant(), q.order, q.tx); err != nil || n != q.want {
			t.Fatalf("Refundable(%d, %d) = %d %v", q.order, q.tx, n, err)
		}
	}
	// Read back exactly as created.
	got := f.refund(t, r2.ID)
	wantUTC(t, "created_at", got.CreatedAt, got.UpdatedAt)
	diff(t, "stored refund", r2, got)
	// Cancelling the first frees its 15000 on both routes.
	if _, err := f.s.ChangeRefund(t.Context(), f.c.Tenant(), r1.ID, recon.RefundChange{Event: recon.RefundCancel}, refundAt); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct{ order, tx, want int64 }{{o.ID, 0, 15_000}, {0, ids[0], 15_000}, {0, ids[1], 0}} {
		if n, err := f.s.Refundable(t.Context(), f.c.Tenant(), q.order, q.tx); err != nil || n != q.want {
			t.Fatalf("after cancel: Refundable(%d, %d) = %d %v", q.order, q.tx, n, err)
		}
	}
	// A transfer that paid no order refunds on its own.
	res, err := f.s.IngestTransactions(t.Context(), f.c.Tenant(), []recon.TransactionInput{tx(f.b.ID, "LOOSE", "2026-03-01 12:00:00", 7_000, 0)}, []string{""})
	if err != nil {
		t.Fatal(err)
	}
	r3 := f.create(t, f.byTx(res[0].ID, 0))
	if r3.Amount != 7_000 || r3.OrderID != 0 || r3.BankAccountID != f.b.ID {
		t.Fatalf("loose refund %+v", r3)
	}
}

func testRefundsRules(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, ids := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	unpaid := newOrder(t, f.s, f.c.ID, f.a.ID, "INV-2", "DH70002", 50_000)
	out, err := f.s.IngestTransactions(ctx, tenant, []recon.TransactionInput{tx(f.a.ID, "OUT", "2026-03-01 12:00:00", 0, 5_000)}, []string{""})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.s.CreateRefund(ctx, tenant, f.byOrder(unpaid, 0), refundAt)
	wantRule(t, err, recon.RuleNothingToRefund, "order INV-2 has received no money: there is nothing to refund")
	_, err = f.s.CreateRefund(ctx, tenant, f.byTx(out[0].ID, 0), refundAt)
	wantRule(t, err, recon.RuleNothingToRefund, fmt.Sprintf("transaction %d has received no money: there is nothing to refund", out[0].ID))
	_, err = f.s.CreateRefund(ctx, tenant, f.byOrder(o, 100_001), refundAt)
	wantRule(t, err, recon.RuleAmountExceedsRefundable, "amount 100001 VND exceeds what order INV-1 has left to refund, 100000 VND")
	noReceiver := f.byOrder(o, 0)
	noReceiver.Receiver = recon.RefundReceiver{}
	_, err = f.s.CreateRefund(ctx, tenant, noReceiver, refundAt)
	wantRule(t, err, recon.RuleReceiverRequired, "receiver is required: the bank data of order INV-1 does not say whose account the money came from")
	f.create(t, f.byTx(ids[0], 100_000))
	_, err = f.s.CreateRefund(ctx, tenant, f.byOrder(o, 0), refundAt)
	wantRule(t, err, recon.RuleAlreadyRefunded, "order INV-1 is already refunded: refunds hold everything it received")
	_, err = f.s.CreateRefund(ctx, tenant, f.byTx(ids[0], 1), refundAt)
	wantRule(t, err, recon.RuleAlreadyRefunded, "")
	// Unknown ids, malformed input: nothing stored.
	_, err = f.s.CreateRefund(ctx, tenant, &recon.RefundRequest{OrderID: 999_999, Reason: "x", Receiver: refundReceiver, By: recon.RefundActor{ClientID: "c"}}, refundAt)
	wantCode(t, err, recon.ENOTFOUND, "order 999999 not found")
	_, err = f.s.CreateRefund(ctx, tenant, f.byTx(999_999, 0), refundAt)
	wantCode(t, err, recon.ENOTFOUND, "transaction 999999 not found")
	_, err = f.s.CreateRefund(ctx, tenant, &recon.RefundRequest{OrderID: o.ID, Reason: "", Receiver: refundReceiver, By: recon.RefundActor{ClientID: "c"}}, refundAt)
	wantCode(t, err, recon.EINVALID, "")
	_, err = f.s.Refund(ctx, tenant, "not-an-id")
	wantCode(t, err, recon.ENOTFOUND, "")
	_, err = f.s.Refund(ctx, tenant, recon.NewXID())
	wantCode(t, err, recon.ENOTFOUND, "")
	if list, total, err := f.s.Refunds(ctx, tenant, recon.RefundFilter{}); err != nil || total != 1 || len(list) != 1 {
		t.Fatalf("refunds %d %v", total, err)
	}
}

func testRefundsTenants(t *testing.T, f *refundFixture) {
	ctx := t.Context()
	o, ids := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	r := f.create(t, f.byOrder(o, 10_000))
	other := newCompany(t, f.s, 2)
	test, err := f.s.TestTenant(ctx, f.c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []recon.TenantID{other.Tenant(), test.ID} {
		_, err := f.s.Refund(ctx, tenant, r.ID)
		wantCode(t, err, recon.ENOTFOUND, "")
		_, err = f.s.ChangeRefund(ctx, tenant, r.ID, recon.RefundChange{Event: recon.RefundCancel}, refundAt)
		wantCode(t, err, recon.ENOTFOUND, "")
		_, err = f.s.CreateRefund(ctx, tenant, f.byOrder(o, 1), refundAt)
		wantCode(t, err, recon.ENOTFOUND, "")
		_, err = f.s.CreateRefund(ctx, tenant, f.byTx(ids[0], 1), refundAt)
		wantCode(t, err, recon.ENOTFOUND, "")
		if list, total, err := f.s.Refunds(ctx, tenant, recon.RefundFilter{}); err != nil || total != 0 || len(list) != 0 {
			t.Fatalf("another tenant lists %d refunds %v", total, err)
		}
	}
	// The threshold is the company's, read by its test tenant too.
	if err := f.s.SetRefundApprovalThreshold(ctx, test.ID, 5_000); err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []recon.TenantID{f.c.Tenant(), test.ID} {
		if v, err := f.s.RefundApprovalThreshold(ctx, tenant); err != nil || v != 5_000 {
			t.Fatalf("threshold %d %v", v, err)
		}
	}
	if v, err := f.s.RefundApprovalThreshold(ctx, other.Tenant()); err != nil || v != 0 {
		t.Fatalf("other company's threshold %d %v", v, err)
	}
	wantCode(t, f.s.SetRefundApprovalThreshold(ctx, f.c.Tenant(), -1), recon.EINVALID, "")
}

func testRefundsFourEyes(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, _ := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	if v, err := f.s.RefundApprovalThreshold(ctx, tenant); err != nil || v != 0 {
		t.Fatalf("default threshold %d %v", v, err)
	}
	if err := f.s.SetRefundApprovalThreshold(ctx, tenant, 30_000); err != nil {
		t.Fatal(err)
	}
	below := f.create(t, f.byOrder(o, 29_999))
	in := f.byOrder(o, 30_000)
	in.By = recon.ActorOf(&recon.Caller{ClientID: "dashboard", User: f.admin})
	at := f.create(t, in)
	if below.Status != recon.RefundPending || at.Status != recon.RefundPendingApproval {
		t.Fatalf("statuses %s %s", below.Status, at.Status)
	}
	if got := f.order(t, o.ID); got.RefundedAmount != 59_999 {
		t.Fatalf("waiting for approval holds its amount: refunded %d", got.RefundedAmount)
	}
	// The requester, through another client: refused, nothing changes.
	self := recon.ActorOf(&recon.Caller{ClientID: "cli", User: f.admin})
	_, err := f.s.ChangeRefund(ctx, tenant, at.ID, recon.RefundChange{Event: recon.RefundApprove, By: self}, refundAt)
	wantCode(t, err, recon.EFORBIDDEN, fmt.Sprintf("you requested refund %s: another Admin or SuperAdmin must approve it", at.ID))
	if got := f.refund(t, at.ID); got.Status != recon.RefundPendingApproval || !got.DecidedBy.IsZero() {
		t.Fatalf("after a refused approval: %+v", got)
	}
	other := recon.ActorOf(&recon.Caller{ClientID: "dashboard", User: f.admin2})
	n, err := f.s.ChangeRefund(ctx, tenant, at.ID, recon.RefundChange{Event: recon.RefundApprove, By: other}, refundAt.Add(time.Minute))
	if err != nil || n.Status != recon.RefundPending || n.DecidedBy.UserID != f.admin2.ID || n.DecidedBy.Email != f.admin2.Email {
		t.Fatalf("approve: %+v %v", n, err)
	}
	diff(t, "approved refund", n, f.refund(t, at.ID))
	_, err = f.s.ChangeRefund(ctx, tenant, at.ID, recon.RefundChange{Event: recon.RefundReject, By: other}, refundAt)
	wantRule(t, err, recon.RuleInvalidState, "")
	// A rejection frees the amount.
	in = f.byOrder(o, 40_000)
	in.By = self
	third := f.create(t, in)
	if _, err := f.s.ChangeRefund(ctx, tenant, third.ID, recon.RefundChange{Event: recon.RefundReject, By: other}, refundAt); err != nil {
		t.Fatal(err)
	}
	if got := f.order(t, o.ID); got.RefundedAmount != 59_999 {
		t.Fatalf("after the rejection: refunded %d", got.RefundedAmount)
	}
	if err := f.s.SetRefundApprovalThreshold(ctx, tenant, 0); err != nil {
		t.Fatal(err)
	}
	if r := f.create(t, f.byOrder(o, 40_000)); r.Status != recon.RefundPending {
		t.Fatalf("without a threshold: %s", r.Status)
	}
}

func testRefundsChanges(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, _ := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	r := f.create(t, f.byOrder(o, 30_000))
	sent, err := f.s.ChangeRefund(ctx, tenant, r.ID, recon.RefundChange{Event: recon.RefundSend, Payout: "sandbox"}, refundAt)
	if err != nil || sent.Status != recon.RefundProcessing || sent.Payout != "sandbox" {
		t.Fatalf("send: %+v %v", sent, err)
	}
	_, err = f.s.ChangeRefund(ctx, tenant, r.ID, recon.RefundChange{Event: recon.RefundCancel}, refundAt)
	wantRule(t, err, recon.RuleInvalidState, fmt.Sprintf("refund %s is processing: it cannot cancel (its money is on its way)", r.ID))
	_, err = f.s.ChangeRefund(ctx, tenant, r.ID, recon.RefundChange{Event: recon.RefundSettle, SettledBy: 1}, refundAt)
	wantCode(t, err, recon.EINVALID, "a refund settles when its outgoing transfer is ingested")
	before := countDeliveries(t, f.s, tenant, recon.IPNRefundFailed)
	failed, err := f.s.ChangeRefund(ctx, tenant, r.ID, recon.RefundChange{Event: recon.RefundFail, Reason: "receiving account is closed"}, refundAt)
	if err != nil || failed.Status != recon.RefundFailed || failed.FailureReason != "receiving account is closed" {
		t.Fatalf("fail: %+v %v", failed, err)
	}
	if got := countDeliveries(t, f.s, tenant, recon.IPNRefundFailed); got != before+1 {
		t.Fatalf("%d REFUND_FAILED deliveries, want %d", got, before+1)
	}
	if got := f.order(t, o.ID); got.RefundedAmount != 0 {
		t.Fatalf("a failed refund frees its amount: refunded %d", got.RefundedAmount)
	}
	// A target that does not subscribe gets no REFUND_FAILED.
	subscribe(t, f.s, tenant, recon.IPNOrderPaid)
	r2 := f.create(t, f.byOrder(o, 30_000))
	if _, err := f.s.ChangeRefund(ctx, tenant, r2.ID, recon.RefundChange{Event: recon.RefundSend, Payout: "sandbox"}, refundAt); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.ChangeRefund(ctx, tenant, r2.ID, recon.RefundChange{Event: recon.RefundFail, Reason: "x"}, refundAt); err != nil {
		t.Fatal(err)
	}
	if got := countDeliveries(t, f.s, tenant, recon.IPNRefundFailed); got != before+1 {
		t.Fatalf("an unsubscribed target got REFUND_FAILED: %d", got)
	}
}

func testRefundsSettlement(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, _ := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	r := f.create(t, f.byOrder(o, 30_000))
	// The wrong amount, the wrong account: exceptions, nothing settled.
	short, err := f.send(t, f.a.ID, "OUT-SHORT", r.Reference, 29_999)
	if err != nil {
		t.Fatal(err)
	}
	wrongAcct, err := f.send(t, f.b.ID, "OUT-B", r.Reference, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.refund(t, r.ID); got.Status != recon.RefundPending {
		t.Fatalf("settled by the wrong transfer: %+v", got)
	}
	// The right one settles it, once, with REFUND_SUCCEEDED.
	ok, err := f.send(t, f.a.ID, "OUT-1", r.Reference, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	got := f.refund(t, r.ID)
	if got.Status != recon.RefundSucceeded || got.SettledTransactionID != ok {
		t.Fatalf("after its transfer: %+v", got)
	}
	if n := countDeliveries(t, f.s, tenant, recon.IPNRefundSucceeded); n != 1 {
		t.Fatalf("%d REFUND_SUCCEEDED deliveries", n)
	}
	// The same bank reference again: a duplicate ingestion never stores.
	again, err := f.s.IngestTransactions(ctx, tenant, []recon.TransactionInput{func() recon.TransactionInput {
		in := tx(f.a.ID, "OUT-1", "2026-03-02 11:00:00", 0, 30_000)
		in.Content = "MBVCB.8842." + r.Reference + ".hoan tien"
		return in
	}()}, []string{""})
	if err != nil || !again[0].Duplicate || again[0].ID != ok {
		t.Fatalf("the same transfer again: %+v %v", again, err)
	}
	// A second transfer (another bank reference): money went out twice.
	second, err := f.send(t, f.a.ID, "OUT-2", r.Reference, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.refund(t, r.ID); got.Status != recon.RefundSucceeded || got.SettledTransactionID != ok {
		t.Fatalf("settled twice: %+v", got)
	}
	if n := countDeliveries(t, f.s, tenant, recon.IPNRefundSucceeded); n != 1 {
		t.Fatalf("%d REFUND_SUCCEEDED deliveries after the second transfer", n)
	}
	// A cancelled refund's transfer.
	c := f.create(t, f.byOrder(o, 10_000))
	if _, err := f.s.ChangeRefund(ctx, tenant, c.ID, recon.RefundChange{Event: recon.RefundCancel}, refundAt); err != nil {
		t.Fatal(err)
	}
	late, err := f.send(t, f.a.ID, "OUT-C", c.Reference, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{
		short:     fmt.Sprintf("refund %s is 30000 VND, but the transfer with its reference sent 29999 VND", r.Reference),
		wrongAcct: fmt.Sprintf("refund %s leaves from bank account %d, but the transfer with its reference left bank account %d", r.Reference, f.a.ID, f.b.ID),
		second:    fmt.Sprintf("refund %s was already settled by transaction %d: this second transfer of 30000 VND went out too", r.Reference, ok),
		late:      fmt.Sprintf("refund %s is cancelled, yet 10000 VND went out with its reference", c.Reference),
	}
	for id, reason := range want {
		e, err := f.s.Exception(ctx, tenant, id)
		if err != nil || e.Kind != recon.ExceptionRefundTransfer || e.Reason != reason || e.OrderID != o.ID {
			t.Fatalf("exception of %d: %+v %v, want %q", id, e, err, reason)
		}
	}
	list, _, err := f.s.Exceptions(ctx, tenant, recon.ExceptionFilter{Kind: recon.ExceptionRefundTransfer, Limit: 10})
	if err != nil || len(list) != 4 {
		t.Fatalf("%d refund_transfer exceptions %v", len(list), err)
	}
	// Only ignoring resolves one.
	_, err = f.s.ResolveException(ctx, tenant, second, recon.ResolveInput{Action: recon.ResolveMatch, OrderID: o.ID, Note: "x"}, f.admin, refundAt)
	wantCode(t, err, recon.ECONFLICT, "")
	if _, err := f.s.ResolveException(ctx, tenant, second, recon.ResolveInput{Action: recon.ResolveIgnore, Note: "the bank reversed it"}, f.admin, refundAt); err != nil {
		t.Fatal(err)
	}
	// The order still holds what the succeeded refund sent back.
	if got := f.order(t, o.ID); got.RefundedAmount != 30_000 {
		t.Fatalf("refunded %d", got.RefundedAmount)
	}
	// A memo with no known reference, or an incoming one, is left alone.
	unknown, err := f.send(t, f.a.ID, "OUT-X", "HT0000000000", 5)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.s.Exception(ctx, tenant, unknown)
	wantCode(t, err, recon.ENOTFOUND, "")
}

func testRefundsSettlementByStatement(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, _ := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	full := f.create(t, f.byOrder(o, 0))
	o2, _ := f.paidOrder(t, "INV-2", "DH70002", 50_000, 50_000)
	part := f.create(t, f.byOrder(o2, 20_000))
	// One statement, two batches, both refunds in it, the second twice.
	err := f.s.IngestAtomically(ctx, tenant, func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
		a := tx(f.a.ID, "ST-1", "2026-03-02 08:00:00", 0, 100_000)
		a.Content = "IBFT " + full.Reference
		if _, err := ingest([]recon.TransactionInput{a}, []string{""}); err != nil {
			return err
		}
		b := tx(f.a.ID, "ST-2", "2026-03-02 08:01:00", 0, 20_000)
		b.Content = "hoan " + part.Reference + " don INV-2"
		c := b
		c.ReferenceNumber, c.Content = "ST-3", b.Content+" lan 2" // another memo: not a possible duplicate
		_, err := ingest([]recon.TransactionInput{b, c}, []string{"", ""})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{full.ID, part.ID} {
		if got := f.refund(t, id); got.Status != recon.RefundSucceeded {
			t.Fatalf("after the statement: %+v", got)
		}
	}
	list, _, err := f.s.Exceptions(ctx, tenant, recon.ExceptionFilter{Kind: recon.ExceptionRefundTransfer, Limit: 10})
	if err != nil || len(list) != 1 || list[0].Transaction.ReferenceNumber != "ST-3" {
		t.Fatalf("the second transfer in the same batch: %+v %v", list, err)
	}
}

func testRefundsList(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o1, ids1 := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	o2, _ := f.paidOrder(t, "INV-2", "DH70002", 50_000, 50_000)
	var made []*recon.Refund
	for i, in := range []*recon.RefundRequest{f.byOrder(o1, 10_000), f.byTx(ids1[0], 20_000), f.byOrder(o2, 5_000), f.byOrder(o2, 6_000)} {
		r, err := f.s.CreateRefund(ctx, tenant, in, refundAt.AddDate(0, 0, i))
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, r)
	}
	if _, err := f.s.ChangeRefund(ctx, tenant, made[3].ID, recon.RefundChange{Event: recon.RefundCancel}, refundAt); err != nil {
		t.Fatal(err)
	}
	ids := func(list []*recon.Refund) []string {
		var out []string
		for _, r := range list {
			out = append(out, r.ID)
		}
		return out
	}
	for _, c := range []struct {
		f     recon.RefundFilter
		want  []*recon.Refund
		total int64
	}{
		{recon.RefundFilter{}, []*recon.Refund{made[3], made[2], made[1], made[0]}, 4},
		{recon.RefundFilter{OrderID: o1.ID}, []*recon.Refund{made[1], made[0]}, 2},
		{recon.RefundFilter{TransactionID: ids1[0]}, []*recon.Refund{made[1], made[0]}, 2},
		{recon.RefundFilter{Status: recon.RefundCancelled}, []*recon.Refund{made[3]}, 1},
		{recon.RefundFilter{From: "2026-03-03", To: "2026-03-04"}, []*recon.Refund{made[2], made[1]}, 2},
		{recon.RefundFilter{Page: 2, PerPage: 3}, []*recon.Refund{made[0]}, 4},
	} {
		list, total, err := f.s.Refunds(ctx, tenant, c.f)
		if err != nil || total != c.total || !slices.Equal(ids(list), ids(c.want)) {
			t.Fatalf("%+v: %v (%d) %v, want %v (%d)", c.f, ids(list), total, err, ids(c.want), c.total)
		}
	}
	list, _, _ := f.s.Refunds(ctx, tenant, recon.RefundFilter{OrderID: o1.ID})
	diff(t, "listed refund", f.refund(t, made[0].ID), list[1])
	_, _, err := f.s.Refunds(ctx, tenant, recon.RefundFilter{Status: "lost"})
	wantCode(t, err, recon.EINVALID, "")
	_, _, err = f.s.Refunds(ctx, tenant, recon.RefundFilter{From: "03/03/2026"})
	wantCode(t, err, recon.EINVALID, "")
}

func testRefundsResolveException(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, _ := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	// Two transfers naming the paid order: duplicates, exceptions.
	dup1 := pay(t, f.s, tenant, f.a.ID, "DUP-1", "DH70001", "", 25_000)
	dup2 := pay(t, f.s, tenant, f.a.ID, "DUP-2", "DH70001", "", 15_000)
	u := accountant(t, f.s, f.c.ID)
	res, err := f.s.ResolveException(ctx, tenant, dup1, recon.ResolveInput{Action: recon.ResolveRefund, Note: "paid twice,\nsend it back",
		Receiver: refundReceiver}, u, refundAt)
	if err != nil || res.RefundID == "" {
		t.Fatalf("resolve as refund: %+v %v", res, err)
	}
	r := f.refund(t, res.RefundID)
	if r.Amount != 25_000 || r.TransactionID != dup1 || r.OrderID != 0 || r.Reason != "paid twice, send it back" ||
		r.RequestedBy != (recon.RefundActor{UserID: u.ID, Email: u.Email}) || r.Status != recon.RefundPending {
		t.Fatalf("the resolution's refund: %+v", r)
	}
	e, err := f.s.Exception(ctx, tenant, dup1)
	if err != nil || e.Resolution == nil || e.Resolution.RefundID != r.ID {
		t.Fatalf("resolution read back: %+v %v", e, err)
	}
	// A duplicate paid nothing into the order: the order's refundable stays.
	if got := f.order(t, o.ID); got.RefundedAmount != 0 {
		t.Fatalf("order refunded %d", got.RefundedAmount)
	}
	// Without a receiver: a record that the money went back outside Recon.
	res, err = f.s.ResolveException(ctx, tenant, dup2, recon.ResolveInput{Action: recon.ResolveRefund, Note: "sent back by the bank"}, u, refundAt)
	if err != nil || res.RefundID != "" {
		t.Fatalf("resolve without a receiver: %+v %v", res, err)
	}
	if _, total, _ := f.s.Refunds(ctx, tenant, recon.RefundFilter{}); total != 1 {
		t.Fatalf("%d refunds", total)
	}
	// A refund the rules refuse records no resolution.
	over := pay(t, f.s, tenant, f.a.ID, "DUP-3", "DH70001", "", 5_000)
	_, err = f.s.ResolveException(ctx, tenant, over, recon.ResolveInput{Action: recon.ResolveRefund, Note: "x", Amount: 5_001, Receiver: refundReceiver}, u, refundAt)
	wantRule(t, err, recon.RuleAmountExceedsRefundable, "")
	if e, err := f.s.Exception(ctx, tenant, over); err != nil || e.Resolution != nil {
		t.Fatalf("refused refund resolved the exception: %+v %v", e, err)
	}
}

func testRefundsPayoutsDue(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, _ := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	var sent []string
	for i := range 3 {
		r := f.create(t, f.byOrder(o, 1_000))
		if i == 2 {
			break // stays pending
		}
		if _, err := f.s.ChangeRefund(ctx, tenant, r.ID, recon.RefundChange{Event: recon.RefundSend, Payout: "sandbox"}, refundAt.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, r.ID)
	}
	list, tenants, err := f.s.PayoutsDue(ctx, "sandbox", refundAt, 10)
	if err != nil || len(list) != 1 || list[0].ID != sent[0] || tenants[0] != tenant {
		t.Fatalf("due at the first send: %+v %v %v", list, tenants, err)
	}
	list, _, err = f.s.PayoutsDue(ctx, "sandbox", refundAt.Add(time.Hour), 10)
	if err != nil || len(list) != 2 || list[1].ID != sent[1] {
		t.Fatalf("due later: %+v %v", list, err)
	}
	if list, _, _ := f.s.PayoutsDue(ctx, "bank", refundAt.Add(time.Hour), 10); len(list) != 0 {
		t.Fatalf("another connector's: %+v", list)
	}
}

// race runs fns at once after a start barrier and returns their errors.
func race(fns ...func() error) []error {
	errs := make([]error, len(fns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn()
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

func testRefundsRaceForTheLastVND(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, ids := f.paidOrder(t, "INV-1", "DH70001", 100_000, 40_000, 60_000)
	f.create(t, f.byOrder(o, 99_999)) // leaves 1 VND, on the older transfer
	const n = 8
	var fns []func() error
	for i := range n {
		in := f.byOrder(o, 1)
		if i%2 == 1 {
			in = f.byTx(ids[0], 1)
		}
		fns = append(fns, func() error { _, err := f.s.CreateRefund(ctx, tenant, in, refundAt); return err })
	}
	won := 0
	for _, err := range race(fns...) {
		switch {
		case err == nil:
			won++
		case recon.RefundRule(err) == recon.RuleAlreadyRefunded:
		default:
			t.Errorf("racing refund: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d refunds took the last VND", won)
	}
	checkRefundBooks(t, f, o.ID)
}

func testRefundsRaceWithALatePayment(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	for round := range 4 {
		inv, code := fmt.Sprintf("INV-%d", round), fmt.Sprintf("DH7100%d", round)
		o, _ := f.paidOrder(t, inv, code, 100_000, 40_000)
		var r *recon.Refund
		errs := race(
			func() error {
				in := tx(f.a.ID, inv+"-LATE", "2026-03-01 11:00:00", 60_000, 0)
				_, err := f.s.IngestTransactions(ctx, tenant, []recon.TransactionInput{in}, []string{code})
				return err
			},
			func() (err error) { r, err = f.s.CreateRefund(ctx, tenant, f.byOrder(o, 0), refundAt); return err },
		)
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: %v", round, errs)
		}
		// Before the payment: 40000; after it: everything.
		if r.Amount != 40_000 && r.Amount != 100_000 {
			t.Fatalf("round %d: refund of %d", round, r.Amount)
		}
		got := checkRefundBooks(t, f, o.ID)
		if got.PaidAmount != 100_000 || got.RefundedAmount != r.Amount {
			t.Fatalf("round %d: order %+v, refund %d", round, got, r.Amount)
		}
	}
}

func testRefundsTransferArrivesTwice(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, _ := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	r := f.create(t, f.byOrder(o, 30_000))
	// The same transfer pushed twice at once, and another transfer too.
	send := func(ref string) func() error {
		return func() error { _, err := f.send(t, f.a.ID, ref, r.Reference, 30_000); return err }
	}
	for _, err := range race(send("OUT-1"), send("OUT-1"), send("OUT-2")) {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := f.refund(t, r.ID)
	if got.Status != recon.RefundSucceeded {
		t.Fatalf("refund %+v", got)
	}
	list, _, err := f.s.Exceptions(ctx, tenant, recon.ExceptionFilter{Kind: recon.ExceptionRefundTransfer, Limit: 10})
	if err != nil || len(list) != 1 || list[0].Transaction.ID == got.SettledTransactionID {
		t.Fatalf("exceptions %+v %v", list, err)
	}
	if n := countDeliveries(t, f.s, tenant, recon.IPNRefundSucceeded); n != 1 {
		t.Fatalf("%d REFUND_SUCCEEDED", n)
	}
}

func testRefundsCancelRacesTheTransfer(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	o, _ := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	for round := range 4 {
		r := f.create(t, f.byOrder(o, 10_000))
		var out int64
		errs := race(
			func() error {
				_, err := f.s.ChangeRefund(ctx, tenant, r.ID, recon.RefundChange{Event: recon.RefundCancel}, refundAt)
				return err
			},
			func() (err error) {
				out, err = f.send(t, f.a.ID, fmt.Sprintf("OUT-%d", round), r.Reference, 10_000)
				return err
			},
		)
		if errs[1] != nil {
			t.Fatal(errs[1])
		}
		got := f.refund(t, r.ID)
		_, excErr := f.s.Exception(ctx, tenant, out)
		switch {
		case errs[0] == nil: // cancelled first: the transfer is an exception
			if got.Status != recon.RefundCancelled || excErr != nil {
				t.Fatalf("round %d: cancelled first, yet %+v, exception %v", round, got, excErr)
			}
		case recon.RefundRule(errs[0]) == recon.RuleInvalidState: // settled first
			if got.Status != recon.RefundSucceeded || got.SettledTransactionID != out || excErr == nil {
				t.Fatalf("round %d: settled first, yet %+v, exception %v", round, got, excErr)
			}
		default:
			t.Fatalf("round %d: cancel: %v", round, errs[0])
		}
		checkRefundBooks(t, f, o.ID)
	}
}

// checkRefundBooks checks that every VND of the order is accounted for:
// its paid amount is its paying transfers', its refunded amount what its
// holding refunds hold, no transfer gives more than came in, and what is
// refundable is the rest. It returns the order.
func checkRefundBooks(t *testing.T, f *refundFixture, orderID int64) *recon.Order {
	t.Helper()
	ctx, tenant := t.Context(), f.c.Tenant()
	o := f.order(t, orderID)
	ds, err := f.s.MatchDecisions(ctx, tenant, orderID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var paid int64
	in := map[int64]int64{}
	for _, d := range ds {
		if recon.PaysOrder(d.Outcome) {
			paid += d.Amount
			in[d.TransactionID] = d.Amount
		}
	}
	list, _, err := f.s.Refunds(ctx, tenant, recon.RefundFilter{OrderID: orderID, PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	drawn := map[int64]int64{}
	for _, r := range list {
		var sum int64
		for _, a := range r.Allocations {
			sum += a.Amount
			if recon.RefundHolds(r.Status) {
				drawn[a.TransactionID] += a.Amount
			}
		}
		if sum != r.Amount {
			t.Fatalf("refund %s of %d allocates %d", r.ID, r.Amount, sum)
		}
		if recon.RefundHolds(r.Status) {
			held += r.Amount
		}
	}
	for id, d := range drawn {
		if d > in[id] {
			t.Fatalf("transaction %d: %d refunded of %d", id, d, in[id])
		}
	}
	refundable, err := f.s.Refundable(ctx, tenant, orderID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if o.PaidAmount != paid || o.RefundedAmount != held || held > paid || refundable+held != paid {
		t.Fatalf("order paid %d (transfers %d), refunded %d (refunds hold %d), refundable %d", o.PaidAmount, paid, o.RefundedAmount, held, refundable)
	}
	return o
}

// testRefundsProperty runs a seeded random life of orders: payments (some
// late, to a paid order: overpaid), refunds by order and by transaction,
// approvals, sends, failures, cancellations and outgoing transfers, some
// twice; after each step the books of every order balance
// (checkRefundBooks).
func testRefundsProperty(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	rng := rand.New(rand.NewPCG(13, 2026))
	if err := f.s.SetRefundApprovalThreshold(ctx, tenant, 60); err != nil {
		t.Fatal(err)
	}
	var orders []*recon.Order
	for i := range 3 {
		orders = append(orders, newOrder(t, f.s, f.c.ID, f.a.ID, fmt.Sprintf("P%d", i), fmt.Sprintf("DH7200%d", i), 100))
	}
	var txs []int64
	var refunds []*recon.Refund
	ref := 0
	for step := range 120 {
		o := orders[rng.IntN(len(orders))]
		ref++
		switch rng.IntN(6) {
		case 0, 1: // a payment, on either account
			acct := []int64{f.a.ID, f.b.ID}[rng.IntN(2)]
			in := tx(acct, fmt.Sprintf("PAY%d", ref), fmt.Sprintf("2026-03-01 %02d:%02d:00", 8+rng.IntN(8), rng.IntN(60)), 1+rng.Int64N(70), 0)
			res, err := f.s.IngestTransactions(ctx, tenant, []recon.TransactionInput{in}, []string{o.PaymentCode})
			if err != nil {
				t.Fatal(err)
			}
			txs = append(txs, res[0].ID)
		case 2: // a refund, by order or by one transfer
			in := f.byOrder(o, rng.Int64N(80))
			if len(txs) > 0 && rng.IntN(2) == 0 {
				in = f.byTx(txs[rng.IntN(len(txs))], rng.Int64N(80))
			}
			r, err := f.s.CreateRefund(ctx, tenant, in, refundAt)
			switch rule := recon.RefundRule(err); {
			case err == nil:
				refunds = append(refunds, r)
			case rule == recon.RuleNothingToRefund || rule == recon.RuleAlreadyRefunded || rule == recon.RuleAmountExceedsRefundable:
			default:
				t.Fatalf("step %d: %v", step, err)
			}
		case 3, 4: // a change
			if len(refunds) == 0 {
				continue
			}
			r := refunds[rng.IntN(len(refunds))]
			ch := []recon.RefundChange{{Event: recon.RefundApprove, By: recon.RefundActor{UserID: f.admin.ID, Email: f.admin.Email}},
				{Event: recon.RefundReject, By: recon.RefundActor{UserID: f.admin.ID, Email: f.admin.Email}},
				{Event: recon.RefundCancel}, {Event: recon.RefundSend, Payout: "sandbox"}, {Event: recon.RefundFail, Reason: "refused"}}[rng.IntN(5)]
			_, err := f.s.ChangeRefund(ctx, tenant, r.ID, ch, refundAt)
			if err != nil && recon.RefundRule(err) != recon.RuleInvalidState {
				t.Fatalf("step %d: %s: %v", step, ch.Event, err)
			}
		case 5: // a refund's outgoing transfer, sometimes of the wrong amount
			if len(refunds) == 0 {
				continue
			}
			r := f.refund(t, refunds[rng.IntN(len(refunds))].ID)
			amount := r.Amount
			if rng.IntN(5) == 0 {
				amount++
			}
			if _, err := f.send(t, r.BankAccountID, fmt.Sprintf("OUT%d", ref), r.Reference, amount); err != nil {
				t.Fatal(err)
			}
		}
		for _, o := range orders {
			checkRefundBooks(t, f, o.ID)
		}
	}
	// Every transfer: never more refunded than came in.
	for _, id := range txs {
		if n, err := f.s.Refundable(ctx, tenant, 0, id); err != nil || n < 0 {
			t.Fatalf("transaction %d refundable %d %v", id, n, err)
		}
	}
}
