package orders_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/orders"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// numbers is a connector issuing the numbers given, in order.
type numbers struct {
	mu   sync.Mutex
	list []string
}

func (n *numbers) IssueVA(context.Context, recon.VARequest) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	v := n.list[0]
	n.list = n.list[1:]
	return v, nil
}

func wantErr(t *testing.T, what string, err error, code, reason, contains string) {
	t.Helper()
	if recon.ErrorCode(err) != code || recon.ErrorReason(err) != reason || !strings.Contains(recon.ErrorMessage(err), contains) {
		t.Fatalf("%s: %v, want %s %s %q", what, err, code, reason, contains)
	}
}

// TestService runs the service against a real database on both engines:
// each step acts on the company as the steps before left it.
func TestService(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		c := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
			Config: recon.CompanyConfig{DataStorageDays: 365}}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		clock := testkit.NewClock(now)
		svc := &orders.Service{Store: db, Clock: clock}
		live := c.Tenant()
		in := recon.OrderInput{InvoiceNumber: "INV-1", Amount: 150_000, Buyer: &recon.Buyer{Name: " A ", Email: "a@example.vn"}}

		_, err := svc.Create(ctx, live, in)
		wantErr(t, "no bank account", err, recon.EUNPROCESSABLE, "no_bank_account", "no bank account")
		bank := &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: "0011223344", HolderName: "SAO MAI"}
		if err := db.CreateBankAccount(ctx, bank); err != nil {
			t.Fatal(err)
		}
		_, err = svc.Create(ctx, live, recon.OrderInput{InvoiceNumber: "INV-1", Amount: 1, BankAccountID: bank.ID + 100})
		wantErr(t, "another account", err, recon.EINVALID, "", "is not a bank account of this company")
		_, err = svc.Create(ctx, live, recon.OrderInput{InvoiceNumber: "bad invoice", Amount: 1})
		wantErr(t, "bad invoice", err, recon.EINVALID, "", "order_invoice_number")

		// A live tenant without a bank connector: a memo account, exact by
		// default, for the whole amount, expiring with the order (24 h).
		v, err := svc.Create(ctx, live, in)
		if err != nil {
			t.Fatal(err)
		}
		o, va := v.Order, v.VAs[0]
		if !recon.ValidXID(o.PublicID) || o.PaymentCode != o.PublicID || o.Buyer.Name != "A" || !o.ExpiresAt.Equal(now.Add(24*time.Hour)) ||
			o.V2Status() != recon.OrderPending || v.Bank.ID != bank.ID {
			t.Fatalf("created %+v", o)
		}
		if va.Kind != recon.VAKindMemo || !recon.IsMemoVANumber(va.Number) || va.AmountMode != recon.VAExact || va.Amount != 150_000 ||
			!va.ExpiresAt.Equal(o.ExpiresAt) || va.HolderName != "SAO MAI" {
			t.Fatalf("first account %+v", va)
		}
		_, err = svc.Create(ctx, live, in)
		wantErr(t, "same invoice", err, recon.ECONFLICT, "", `order_invoice_number "INV-1" already exists`)

		got, err := svc.Get(ctx, live, strings.ToUpper(o.PublicID))
		if err != nil || got.Order.ID != o.ID || len(got.VAs) != 1 || got.VAs[0].Number != va.Number {
			t.Fatalf("Get: %+v %v", got, err)
		}
		test, err := db.TestTenant(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"not-an-id", recon.NewXID()} {
			_, err = svc.Get(ctx, live, id)
			wantErr(t, "unknown id "+id, err, recon.ENOTFOUND, "", "")
		}
		_, err = svc.Get(ctx, test.ID, o.PublicID)
		wantErr(t, "the test tenant", err, recon.ENOTFOUND, "", "")

		// A second account, partial, and cancelling it.
		add, err := svc.AddVA(ctx, live, o.PublicID, recon.VAInput{AmountMode: recon.VAPartial, Amount: ptr(50_000), ExpiresIn: ptr(3600)})
		if err != nil || add.Amount != 50_000 || add.Kind != recon.VAKindMemo || add.Number == va.Number || !add.ExpiresAt.Equal(now.Add(time.Hour)) {
			t.Fatalf("AddVA: %+v %v", add, err)
		}
		_, err = svc.AddVA(ctx, live, o.PublicID, recon.VAInput{AmountMode: "weird"})
		wantErr(t, "unknown mode", err, recon.EINVALID, "", "amount_mode")
		if cancelled, err := svc.CancelVA(ctx, live, o.PublicID, add.Number); err != nil || cancelled.Status != recon.VACancelled {
			t.Fatalf("CancelVA: %+v %v", cancelled, err)
		}
		_, err = svc.CancelVA(ctx, live, o.PublicID, add.Number)
		wantErr(t, "cancel twice", err, recon.EUNPROCESSABLE, recon.ReasonInvalidState, "is cancelled, not active")

		// A v1 checkout order is readable and listed through v2.
		v1 := &recon.Order{CompanyID: c.ID, InvoiceNumber: "V1", PaymentCode: "DH1", Amount: 10, BankAccountID: bank.ID}
		if err := db.CreateOrder(ctx, v1); err != nil {
			t.Fatal(err)
		}
		if got, err := svc.Get(ctx, live, v1.PublicID); err != nil || got.Order.InvoiceNumber != "V1" || len(got.VAs) != 0 {
			t.Fatalf("v1 order: %+v %v", got, err)
		}
		list, total, err := svc.List(ctx, live, recon.OrderFilter{V2Status: recon.OrderPending, Page: 1, PerPage: 10})
		if err != nil || total != 2 || list[0].Order.InvoiceNumber != "V1" || len(list[1].VAs) != 2 {
			t.Fatalf("List: %d %v", total, err)
		}

		// Cancel: the order and its active accounts; then nothing more.
		cancelled, err := svc.Cancel(ctx, live, o.PublicID)
		if err != nil || cancelled.Order.V2Status() != recon.OrderV2Cancelled || cancelled.VAs[0].Status != recon.VACancelled {
			t.Fatalf("Cancel: %+v %v", cancelled, err)
		}
		_, err = svc.Cancel(ctx, live, o.PublicID)
		wantErr(t, "cancel twice", err, recon.EUNPROCESSABLE, recon.ReasonInvalidState, "is cancelled")
		_, err = svc.AddVA(ctx, live, o.PublicID, recon.VAInput{})
		wantErr(t, "add to a cancelled order", err, recon.EUNPROCESSABLE, recon.ReasonInvalidState, "pending or partially paid")

		// The test tenant: the sandbox bank's numbers.
		tb := &recon.BankAccount{CompanyID: test.ID.ID(), BankName: "MBBank", AccountNumber: "999", HolderName: "SAO MAI TEST"}
		if err := db.CreateBankAccount(ctx, tb); err != nil {
			t.Fatal(err)
		}
		tv, err := svc.Create(ctx, test.ID, recon.OrderInput{InvoiceNumber: "INV-1", Amount: 10, VA: recon.VAInput{AmountMode: recon.VAOpen}})
		if err != nil {
			t.Fatal(err)
		}
		if n := tv.VAs[0].Number; tv.VAs[0].Kind != recon.VAKindBank || len(n) != 16 || !strings.HasPrefix(n, "SBR") || tv.VAs[0].Amount != 0 {
			t.Fatalf("sandbox account %+v", tv.VAs[0])
		}
		// A number taken is drawn again.
		conn := &numbers{list: []string{"SBR0000000000001", "SBR0000000000001", "SBR0000000000002"}}
		svc.Connector = func(recon.TenantID, *recon.BankAccount) recon.VAConnector { return conn }
		a, err := svc.Create(ctx, test.ID, recon.OrderInput{InvoiceNumber: "A", Amount: 10})
		if err != nil || a.VAs[0].Number != "SBR0000000000001" {
			t.Fatalf("first: %+v %v", a, err)
		}
		b, err := svc.Create(ctx, test.ID, recon.OrderInput{InvoiceNumber: "B", Amount: 10})
		if err != nil || b.VAs[0].Number != "SBR0000000000002" {
			t.Fatalf("drawn again: %+v %v", b, err)
		}
		if list, total, err := svc.VirtualAccounts(ctx, test.ID, recon.VAFilter{Status: recon.VAActive, Page: 1, PerPage: 2}); err != nil || total != 3 || len(list) != 2 || list[0].Number != "SBR0000000000002" {
			t.Fatalf("VirtualAccounts: %v %d %v", list, total, err)
		}
		_, _, err = svc.VirtualAccounts(ctx, test.ID, recon.VAFilter{Status: "gone"})
		wantErr(t, "unknown status", err, recon.EINVALID, "", "status must be one of")
	})
}

func ptr(n int64) *int64 { return &n }
