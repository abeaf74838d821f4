package refunds_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/refunds"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var receiver = recon.RefundReceiver{BankBIN: "970436", AccountNumber: "0071000123456", AccountName: "NGUYEN VAN A"}

type fixture struct {
	db            *sqlstore.DB
	clock         *testkit.Clock
	svc           *refunds.Service
	sandbox       *refunds.Sandbox
	live, test    recon.TenantID
	admin, admin2 *recon.User
	clerk, member *recon.User
}

func newFixture(t *testing.T, engine string) *fixture {
	return newFixtureOn(t, dbtest.OpenStore(t, engine))
}

func newFixtureOn(t *testing.T, db *sqlstore.DB) *fixture {
	ctx := t.Context()
	c := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
		Config: recon.CompanyConfig{DataStorageDays: 365}}
	if err := db.CreateCompany(ctx, c); err != nil {
		t.Fatal(err)
	}
	tt, err := db.TestTenant(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, clock: testkit.NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)), live: c.Tenant(), test: tt.ID}
	f.sandbox = &refunds.Sandbox{Store: db, Clock: f.clock, Delay: 10 * time.Second}
	f.svc = &refunds.Service{Store: db, Clock: f.clock, Test: f.sandbox}
	for _, u := range []**recon.User{&f.admin, &f.admin2, &f.clerk, &f.member} {
		*u = &recon.User{Company: c.ID, Role: recon.RoleAdmin}
	}
	f.admin.Email, f.admin2.Email = "admin@saomai.vn", "admin2@saomai.vn"
	f.clerk.Email, f.clerk.Role, f.clerk.Permissions = "clerk@saomai.vn", recon.RoleMember, []string{recon.PermCreateRefunds}
	f.member.Email, f.member.Role = "member@saomai.vn", recon.RoleMember
	for _, u := range []*recon.User{f.admin, f.admin2, f.clerk, f.member} {
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) as(tenant recon.TenantID, u *recon.User, client string) *recon.Caller {
	return &recon.Caller{Tenant: tenant, ClientID: client, User: u}
}

// paidOrder makes an order of the tenant paid by one transfer and returns
// it with the paying transaction.
func (f *fixture) paidOrder(t *testing.T, tenant recon.TenantID, invoice, code string, amount int64) (*recon.Order, int64, *recon.BankAccount) {
	ctx := t.Context()
	a := &recon.BankAccount{CompanyID: tenant.ID(), BankName: "Vietcombank", AccountNumber: "0011" + code[2:], HolderName: "SAO MAI"}
	if err := f.db.CreateBankAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	o := &recon.Order{CompanyID: tenant.ID(), InvoiceNumber: invoice, PaymentCode: code, Amount: amount, BankAccountID: a.ID}
	if err := f.db.CreateOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	in := recon.TransactionInput{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), AmountIn: amount,
		Content: "thanh toan " + code, ReferenceNumber: "PAY-" + invoice}
	res, err := f.db.IngestTransactions(ctx, tenant, []recon.TransactionInput{in}, []string{code})
	if err != nil {
		t.Fatal(err)
	}
	return o, res[0].ID, a
}

func wantCode(t *testing.T, err error, code, rule string) {
	t.Helper()
	if recon.ErrorCode(err) != code || recon.ErrorReason(err) != rule {
		t.Fatalf("got %v (%s/%s), want %s/%s", err, recon.ErrorCode(err), recon.ErrorReason(err), code, rule)
	}
}

// TestSandboxPayout: in test mode the sandbox connector takes a refund at
// once and, a moment later by the clock, its outgoing transfer arrives
// through ingestion and settles it; a documented receiver fails instead.
func TestSandboxPayout(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := t.Context()
		f := newFixture(t, engine)
		o, _, a := f.paidOrder(t, f.test, "INV-1", "DH10001", 100_000)
		res, err := f.svc.Request(ctx, f.as(f.test, nil, "shop-server"), recon.RefundRequest{OrderID: o.ID, Amount: 30_000, Reason: "trả hàng", Receiver: receiver})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Refund
		if r.Status != recon.RefundProcessing || r.Payout != refunds.SandboxPayout || res.Instructions != nil || r.RequestedBy.ClientID != "shop-server" {
			t.Fatalf("requested: %+v %+v", r, res.Instructions)
		}
		bad := receiver
		bad.AccountNumber = "000000000002"
		failing, err := f.svc.Request(ctx, f.as(f.test, f.clerk, "dashboard"), recon.RefundRequest{OrderID: o.ID, Amount: 5_000, Reason: "x", Receiver: bad})
		if err != nil {
			t.Fatal(err)
		}
		// Not yet: the moment has not passed.
		f.clock.Advance(9 * time.Second)
		if n, err := f.sandbox.Run(ctx); err != nil || n != 0 {
			t.Fatalf("early run: %d %v", n, err)
		}
		f.clock.Advance(time.Second)
		if n, err := f.sandbox.Run(ctx); err != nil || n != 2 {
			t.Fatalf("run: %d %v", n, err)
		}
		got, err := f.svc.Get(ctx, f.as(f.test, f.admin, "dashboard"), r.ID)
		if err != nil || got.Refund.Status != recon.RefundSucceeded || got.Refund.SettledTransactionID == 0 {
			t.Fatalf("after the moment: %+v %v", got.Refund, err)
		}
		list, _, err := f.db.Transactions(ctx, f.test, recon.TransactionFilter{BankAccountID: a.ID, Page: 1, Limit: 10})
		if err != nil || len(list) != 2 || list[0].AmountOut != 30_000 || list[0].ReferenceNumber != "RF"+r.Reference {
			t.Fatalf("the outgoing transfer: %+v %v", list, err)
		}
		failed, err := f.svc.Get(ctx, f.as(f.test, f.admin, "dashboard"), failing.Refund.ID)
		if err != nil || failed.Refund.Status != recon.RefundFailed || failed.Refund.FailureReason != "the receiving account is closed" {
			t.Fatalf("failing receiver: %+v %v", failed.Refund, err)
		}
		if n, err := f.svc.Refundable(ctx, f.as(f.test, f.admin, "d"), o.ID, 0); err != nil || n != 70_000 {
			t.Fatalf("refundable %d %v", n, err)
		}
		// Run again: nothing more.
		f.clock.Advance(time.Hour)
		if n, err := f.sandbox.Run(ctx); err != nil || n != 0 {
			t.Fatalf("second run: %d %v", n, err)
		}
	})
}

// TestSandboxTwoNodes: two nodes running the sandbox at once send each
// payout once.
func TestSandboxTwoNodes(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := t.Context()
		url := dbtest.NewMigratedURL(t, engine)
		f := newFixtureOn(t, dbtest.OpenURL(t, url))
		o, _, _ := f.paidOrder(t, f.test, "INV-1", "DH10001", 100_000)
		var ids []string
		for range 4 {
			res, err := f.svc.Request(ctx, f.as(f.test, nil, "shop-server"), recon.RefundRequest{OrderID: o.ID, Amount: 10_000, Reason: "x", Receiver: receiver})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Refund.ID)
		}
		f.clock.Advance(time.Minute)
		other := &refunds.Sandbox{Store: dbtest.OpenURL(t, url), Clock: f.clock, Delay: 10 * time.Second}
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, sb := range []*refunds.Sandbox{f.sandbox, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = sb.Run(ctx)
			}()
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
		for _, id := range ids {
			r, err := f.db.Refund(ctx, f.test, id)
			if err != nil || r.Status != recon.RefundSucceeded {
				t.Fatalf("%+v %v", r, err)
			}
		}
		list, _, err := f.db.Exceptions(ctx, f.test, recon.ExceptionFilter{Kind: recon.ExceptionRefundTransfer, Limit: 10})
		if err != nil || len(list) != 0 {
			t.Fatalf("a payout sent twice: %+v %v", list, err)
		}
	})
}

// TestWithoutConnector: a live tenant has no payout connector: the refund
// stays pending and says what to send; the transfer settles it, by
// simulation here as by any way in.
func TestWithoutConnector(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := t.Context()
		f := newFixture(t, engine)
		o, _, a := f.paidOrder(t, f.live, "INV-1", "DH10001", 100_000)
		res, err := f.svc.Request(ctx, f.as(f.live, f.clerk, "dashboard"), recon.RefundRequest{OrderID: o.ID, Reason: "trả hàng", Receiver: receiver})
		if err != nil {
			t.Fatal(err)
		}
		r, in := res.Refund, res.Instructions
		qr, _ := recon.VietQR{BIN: "970436", Account: receiver.AccountNumber, Amount: 100_000, Purpose: r.Reference}.Payload()
		if r.Status != recon.RefundPending || in == nil || in.Amount != 100_000 || in.Memo != r.Reference || in.BankAccountID != a.ID ||
			in.Receiver != receiver || in.QR != qr || r.RequestedBy.UserID != f.clerk.ID {
			t.Fatalf("requested: %+v %+v", r, in)
		}
		f.clock.Advance(time.Hour)
		if n, err := f.sandbox.Run(ctx); err != nil || n != 0 {
			t.Fatalf("the sandbox touched a live refund: %d %v", n, err)
		}
		settled, tx, err := f.svc.SimulateSettlement(ctx, f.live, r.ID)
		if err != nil || settled.Status != recon.RefundSucceeded || settled.SettledTransactionID != tx.ID || tx.Duplicate {
			t.Fatalf("simulated: %+v %+v %v", settled, tx, err)
		}
		_, tx, err = f.svc.SimulateSettlement(ctx, f.live, r.ID)
		if err != nil || !tx.Duplicate {
			t.Fatalf("simulated twice: %+v %v", tx, err)
		}
		if got, _ := f.svc.Get(ctx, f.as(f.live, f.admin, "d"), r.ID); got.Instructions != nil {
			t.Fatalf("instructions for a settled refund: %+v", got.Instructions)
		}
	})
}

// TestFourEyes: a refund at or above the threshold waits; the requester
// never decides it, through whichever client; a client-credentials token
// never does; another Admin does, and the approved refund is dispatched.
func TestFourEyes(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := t.Context()
		f := newFixture(t, engine)
		o, _, _ := f.paidOrder(t, f.test, "INV-1", "DH10001", 100_000)
		wantCode(t, f.svc.SetThreshold(ctx, f.as(f.test, f.clerk, "d"), 50_000), recon.EFORBIDDEN, "")
		if err := f.svc.SetThreshold(ctx, f.as(f.test, f.admin, "d"), 50_000); err != nil {
			t.Fatal(err)
		}
		if v, err := f.svc.Threshold(ctx, f.as(f.live, f.admin, "d")); err != nil || v != 50_000 {
			t.Fatalf("threshold %d %v", v, err)
		}
		res, err := f.svc.Request(ctx, f.as(f.test, f.admin, "dashboard"), recon.RefundRequest{OrderID: o.ID, Amount: 50_000, Reason: "x", Receiver: receiver})
		if err != nil || res.Refund.Status != recon.RefundPendingApproval || res.Instructions != nil {
			t.Fatalf("%+v %v", res, err)
		}
		id := res.Refund.ID
		_, err = f.svc.Approve(ctx, f.as(f.test, f.admin, "cli"), id)
		wantCode(t, err, recon.EFORBIDDEN, "")
		_, err = f.svc.Reject(ctx, f.as(f.test, f.admin, "dashboard"), id)
		wantCode(t, err, recon.EFORBIDDEN, "")
		_, err = f.svc.Approve(ctx, f.as(f.test, nil, "shop-server"), id)
		wantCode(t, err, recon.EFORBIDDEN, "")
		_, err = f.svc.Approve(ctx, f.as(f.test, f.clerk, "dashboard"), id)
		wantCode(t, err, recon.EFORBIDDEN, "")
		got, err := f.svc.Approve(ctx, f.as(f.test, f.admin2, "dashboard"), id)
		if err != nil || got.Refund.Status != recon.RefundProcessing || got.Refund.DecidedBy.UserID != f.admin2.ID {
			t.Fatalf("approved: %+v %v", got, err)
		}
		_, err = f.svc.Cancel(ctx, f.as(f.test, f.admin, "d"), id)
		wantCode(t, err, recon.EUNPROCESSABLE, recon.RuleInvalidState)
		// A member without create_refunds may read, not request.
		_, err = f.svc.Request(ctx, f.as(f.test, f.member, "d"), recon.RefundRequest{OrderID: o.ID, Amount: 1, Reason: "x", Receiver: receiver})
		wantCode(t, err, recon.EFORBIDDEN, "")
		_, err = f.svc.Get(ctx, f.as(f.test, f.member, "d"), id)
		wantCode(t, err, recon.EFORBIDDEN, "")
		f.member.Permissions = []string{recon.PermViewTransactions}
		if list, total, err := f.svc.List(ctx, f.as(f.test, f.member, "d"), recon.RefundFilter{}); err != nil || total != 1 || len(list) != 1 {
			t.Fatalf("list: %d %v", total, err)
		}
		// Cancel a pending one; the live tenant sees none of it.
		f.svc.Test = nil
		res, err = f.svc.Request(ctx, f.as(f.test, nil, "shop-server"), recon.RefundRequest{OrderID: o.ID, Amount: 1_000, Reason: "x", Receiver: receiver})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := f.svc.Cancel(ctx, f.as(f.test, nil, "shop-server"), res.Refund.ID); err != nil || got.Refund.Status != recon.RefundCancelled {
			t.Fatalf("cancel: %+v %v", got, err)
		}
		_, err = f.svc.Get(ctx, f.as(f.live, f.admin, "d"), id)
		wantCode(t, err, recon.ENOTFOUND, "")
	})
}

// TestConnectorRefuses: a connector that refuses a refund fails it.
func TestConnectorRefuses(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := t.Context()
		f := newFixture(t, engine)
		o, _, _ := f.paidOrder(t, f.live, "INV-1", "DH10001", 100_000)
		f.svc.Live = refusing{}
		res, err := f.svc.Request(ctx, f.as(f.live, nil, "shop-server"), recon.RefundRequest{OrderID: o.ID, Amount: 1_000, Reason: "x", Receiver: receiver})
		if err != nil || res.Refund.Status != recon.RefundFailed || res.Refund.FailureReason != "the bank is closed on Sundays" || res.Refund.Payout != "refusing" {
			t.Fatalf("%+v %v", res.Refund, err)
		}
		if n, err := f.svc.Refundable(ctx, f.as(f.live, f.admin, "d"), o.ID, 0); err != nil || n != 100_000 {
			t.Fatalf("refundable %d %v", n, err)
		}
	})
}

type refusing struct{}

func (refusing) Name() string { return "refusing" }
func (refusing) Send(context.Context, recon.TenantID, *recon.Refund) error {
	return recon.Errorf(recon.EUNAVAILABLE, "the bank is closed on Sundays")
}
