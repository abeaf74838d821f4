package invoices_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/einvoice"
	"recon/internal/testkit"
	"recon/invoices"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

type fixture struct {
	db         *sqlstore.DB
	clock      *testkit.Clock
	svc        *invoices.Service
	live, test recon.TenantID
	admin      *recon.User
	member     *recon.User
}

var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func newFixture(t *testing.T, engine string) *fixture {
	return fixtureOn(t, dbtest.OpenStore(t, engine))
}

// fixtureOn sets the fixture's company, users and service up on db.
func fixtureOn(t *testing.T, db *sqlstore.DB) *fixture {
	ctx := t.Context()
	c := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
		Config: recon.CompanyConfig{DataStorageDays: 365}}
	if err := db.CreateCompany(ctx, c); err != nil {
		t.Fatal(err)
	}
	up := recon.SellerUpdate{LegalName: ptr("Công ty TNHH Sao Mai"), TaxCode: ptr("0100112437"), Address: ptr("1 Lê Lợi, Quận 1, TP.HCM"),
		InvoiceSeries: ptr("C26TAA")}
	if _, err := db.UpdateCompany(ctx, c.ID, func(u *recon.Company) error { return up.Apply(&u.Config) }); err != nil {
		t.Fatal(err)
	}
	tt, err := db.TestTenant(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, clock: testkit.NewClock(start), live: c.Tenant(), test: tt.ID}
	f.svc = &invoices.Service{Store: db, Clock: f.clock, Test: &invoices.Sandbox{Clock: f.clock, Delay: 10 * time.Second},
		Signer: &einvoice.Signer{Store: db, Clock: f.clock, Original: db.Invoice}}
	f.admin = &recon.User{Company: c.ID, Email: "admin@saomai.vn", Role: recon.RoleAdmin}
	f.member = &recon.User{Company: c.ID, Email: "member@saomai.vn", Role: recon.RoleMember}
	for _, u := range []*recon.User{f.admin, f.member} {
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func ptr[T any](v T) *T { return &v }

func (f *fixture) as(tenant recon.TenantID, u *recon.User) *recon.Caller {
	return &recon.Caller{Tenant: tenant, User: u}
}

func request(taxCode string) invoices.Request {
	return invoices.Request{
		Buyer: recon.Buyer{Name: "Nguyễn Văn A", LegalName: "Công ty Cổ phần Bình Minh", TaxCode: taxCode, Address: "Hà Nội"},
		Items: []recon.InvoiceItem{
			{LineType: recon.LineGoods, ItemName: "Áo thun", Unit: "cái", Quantity: "2", UnitPrice: 50000, VATRate: recon.VAT10},
			{LineType: recon.LineGoods, ItemName: "Sách", Unit: "quyển", Quantity: "1", UnitPrice: 80000, VATRate: recon.VAT5},
		},
	}
}

func wantReason(t *testing.T, what string, err error, code, reason string) {
	t.Helper()
	if recon.ErrorCode(err) != code || recon.ErrorReason(err) != reason {
		t.Fatalf("%s: got %v (reason %q), want %s %q", what, err, recon.ErrorReason(err), code, reason)
	}
}

func TestService(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		t.Run("IssueAndAnswer", func(t *testing.T) { testIssueAndAnswer(t, newFixture(t, engine)) })
		t.Run("SandboxRefuses", func(t *testing.T) { testSandboxRefuses(t, newFixture(t, engine)) })
		t.Run("DraftThenIssue", func(t *testing.T) { testDraftThenIssue(t, newFixture(t, engine)) })
		t.Run("NoProvider", func(t *testing.T) { testNoProvider(t, newFixture(t, engine)) })
		t.Run("Corrections", func(t *testing.T) { testCorrections(t, newFixture(t, engine)) })
		t.Run("Access", func(t *testing.T) { testAccess(t, newFixture(t, engine)) })
		t.Run("SigningFails", func(t *testing.T) { testSigningFails(t, newFixture(t, engine)) })
		t.Run("AutoInvoice", func(t *testing.T) { testAutoInvoice(t, newFixture(t, engine)) })
		t.Run("AutoInvoiceDrains", func(t *testing.T) { testAutoInvoiceDrains(t, newFixture(t, engine)) })
	})
}

func testIssueAndAnswer(t *testing.T, f *fixture) {
	ctx, c := t.Context(), f.as(f.test, f.admin)
	inv, err := f.svc.Create(ctx, c, request("0100109106"))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Status != recon.InvoicePending || inv.Number != 1 || inv.Series != "C26TAA" || inv.TemplateCode != recon.InvoiceTemplateVAT ||
		inv.Seller.TaxCode != "0100112437" || inv.Totals.TotalAmount != 194000 || inv.Totals.VATTotal != 14000 || inv.Totals.TotalInWords == "" ||
		!inv.IssuedDate.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("issued: %+v", inv)
	}
	xml, err := f.svc.XML(ctx, c, inv.ReferenceCode)
	if err != nil || !strings.Contains(string(xml), "<SHDon>1</SHDon>") || !strings.Contains(string(xml), "Signature") {
		t.Fatalf("XML: %v\n%s", err, xml)
	}
	state, got, err := f.svc.Check(ctx, c, inv.TrackingCode)
	if err != nil || state != invoices.CheckPending || got.ReferenceCode != inv.ReferenceCode {
		t.Fatalf("check before the answer: %s, %v", state, err)
	}
	// Not before the moment.
	f.clock.Advance(9 * time.Second)
	if n, err := f.svc.Poll(ctx); err != nil || n != 0 {
		t.Fatalf("poll before the moment: %d, %v", n, err)
	}
	f.clock.Advance(time.Second)
	if n, err := f.svc.Poll(ctx); err != nil || n != 1 {
		t.Fatalf("poll after the moment: %d, %v", n, err)
	}
	if n, err := f.svc.Poll(ctx); err != nil || n != 0 {
		t.Fatalf("second poll: %d, %v", n, err)
	}
	state, got, err = f.svc.Check(ctx, c, inv.TrackingCode)
	if err != nil || state != invoices.CheckSuccess || got.Status != recon.InvoiceIssued || got.CQTCode != invoices.SandboxCQTCode(inv) || len(got.CQTCode) != 34 {
		t.Fatalf("check after: %s %+v %v", state, got, err)
	}
	found, foundXML, err := f.svc.Lookup(ctx, strings.ToLower(inv.LookupCode))
	if err != nil || found.ReferenceCode != inv.ReferenceCode || string(foundXML) != string(xml) {
		t.Fatalf("lookup: %+v, %v", found, err)
	}
	list, total, err := f.svc.List(ctx, c, recon.InvoiceFilter{})
	if err != nil || total != 1 || list[0].ReferenceCode != inv.ReferenceCode {
		t.Fatalf("list: %d, %v", total, err)
	}
	if _, _, err := f.svc.List(ctx, c, recon.InvoiceFilter{PerPage: 101}); recon.ErrorCode(err) != recon.EINVALID {
		t.Fatalf("per_page 101: %v", err)
	}
}

func testSandboxRefuses(t *testing.T, f *fixture) {
	ctx, c := t.Context(), f.as(f.test, f.admin)
	for code, reason := range invoices.SandboxFailures {
		inv, err := f.svc.Create(ctx, c, request(code))
		if err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(10 * time.Second)
		if _, err := f.svc.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		state, got, err := f.svc.Check(ctx, c, inv.TrackingCode)
		if err != nil || state != invoices.CheckFailed || got.FailureReason != reason || got.CQTCode != "" {
			t.Fatalf("tax code %s: %s %+v %v", code, state, got, err)
		}
	}
	// The numbers stay used.
	inv, err := f.svc.Create(ctx, c, request(""))
	if err != nil || inv.Number != int64(len(invoices.SandboxFailures)+1) {
		t.Fatalf("after the refusals: %+v, %v", inv, err)
	}
}

func testDraftThenIssue(t *testing.T, f *fixture) {
	ctx, c := t.Context(), f.as(f.test, f.admin)
	req := request("")
	req.IsDraft = true
	d, err := f.svc.Create(ctx, c, req)
	if err != nil || d.Status != recon.InvoiceDraft || d.Number != 0 || d.Totals.TotalAmount != 194000 {
		t.Fatalf("draft: %+v, %v", d, err)
	}
	if _, err := f.svc.XML(ctx, c, d.ReferenceCode); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("a draft's XML: %v", err)
	}
	if _, _, err := f.svc.Lookup(ctx, d.LookupCode); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("a draft's lookup: %v", err)
	}
	f.clock.Advance(24 * time.Hour)
	inv, err := f.svc.Issue(ctx, c, d.ReferenceCode)
	if err != nil || inv.Status != recon.InvoicePending || inv.Number != 1 || !inv.IssuedDate.Equal(time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("issued: %+v, %v", inv, err)
	}
	_, err = f.svc.Issue(ctx, c, d.ReferenceCode)
	wantReason(t, "issuing twice", err, recon.EUNPROCESSABLE, recon.RuleInvalidState)
}

func testNoProvider(t *testing.T, f *fixture) {
	ctx, c := t.Context(), f.as(f.live, f.admin)
	_, err := f.svc.Create(ctx, c, request(""))
	wantReason(t, "issuing without a provider", err, recon.EUNPROCESSABLE, recon.RuleNoInvoiceProvider)
	if !strings.Contains(recon.ErrorMessage(err), "drafted and exported") {
		t.Errorf("message: %s", recon.ErrorMessage(err))
	}
	req := request("")
	req.IsDraft = true
	d, err := f.svc.Create(ctx, c, req)
	if err != nil {
		t.Fatalf("a draft without a provider: %v", err)
	}
	_, err = f.svc.Issue(ctx, c, d.ReferenceCode)
	wantReason(t, "issuing a draft without a provider", err, recon.EUNPROCESSABLE, recon.RuleNoInvoiceProvider)
	if got, _ := f.svc.Get(ctx, c, d.ReferenceCode); got.Status != recon.InvoiceDraft || got.Number != 0 {
		t.Fatalf("the draft after: %+v", got)
	}
	// No signer: nothing is issued either, a draft still is.
	f.svc.Signer = nil
	_, err = f.svc.Create(ctx, f.as(f.test, f.admin), request(""))
	wantReason(t, "issuing without a signer", err, recon.EUNAVAILABLE, "")
}

func testCorrections(t *testing.T, f *fixture) {
	ctx, c := t.Context(), f.as(f.test, f.admin)
	issued := func() *recon.Invoice {
		inv, err := f.svc.Create(ctx, c, request("0100109106"))
		if err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(10 * time.Second)
		if _, err := f.svc.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		return inv
	}
	orig := issued()
	adj := request("0100109106")
	adj.Items = adj.Items[:1]
	adj.AdjustmentType = recon.AdjustIncrease
	a, err := f.svc.Adjust(ctx, c, orig.ReferenceCode, adj)
	if err != nil || a.Relation != recon.InvoiceRelAdjust || a.OriginalReferenceCode != orig.ReferenceCode || a.Totals.TotalAmount != 110000 {
		t.Fatalf("adjustment: %+v, %v", a, err)
	}
	xml, err := f.svc.XML(ctx, c, a.ReferenceCode)
	if err != nil || !strings.Contains(string(xml), "TTHDLQuan") {
		t.Fatalf("adjustment XML: %v\n%s", err, xml)
	}
	adj.AdjustmentType = "bigger"
	_, err = f.svc.Adjust(ctx, c, orig.ReferenceCode, adj)
	if recon.ErrorCode(err) != recon.EINVALID {
		t.Fatalf("unknown adjustment type: %v", err)
	}
	_, err = f.svc.Cancel(ctx, c, orig.ReferenceCode, "nhầm")
	wantReason(t, "cancelling an adjusted invoice", err, recon.EUNPROCESSABLE, recon.RuleInvoiceAdjustedNoCancel)
	r, err := f.svc.Replace(ctx, c, orig.ReferenceCode, request("0100109106"))
	if err != nil || r.Relation != recon.InvoiceRelReplace {
		t.Fatalf("replacement: %+v, %v", r, err)
	}
	if got, _ := f.svc.Get(ctx, c, orig.ReferenceCode); got.Status != recon.InvoiceReplaced {
		t.Fatalf("original: %s", got.Status)
	}
	_, err = f.svc.Replace(ctx, c, orig.ReferenceCode, request(""))
	wantReason(t, "replacing twice", err, recon.EUNPROCESSABLE, recon.RuleInvoiceAlreadyReplaced)
	draftReq := request("")
	draftReq.IsDraft = true
	if _, err := f.svc.Replace(ctx, c, r.ReferenceCode, draftReq); recon.ErrorCode(err) != recon.EINVALID {
		t.Fatalf("a draft replacement: %v", err)
	}
	other := issued()
	if _, err := f.svc.Cancel(ctx, c, other.ReferenceCode, ""); recon.ErrorCode(err) != recon.EINVALID {
		t.Fatalf("cancel without reason: %v", err)
	}
	cancelled, err := f.svc.Cancel(ctx, c, other.ReferenceCode, "khách hủy đơn")
	if err != nil || cancelled.Status != recon.InvoiceCancelled {
		t.Fatalf("cancel: %+v, %v", cancelled, err)
	}
}

func testAccess(t *testing.T, f *fixture) {
	ctx := t.Context()
	inv, err := f.svc.Create(ctx, f.as(f.test, f.admin), request(""))
	if err != nil {
		t.Fatal(err)
	}
	member := f.as(f.test, f.member)
	if _, err := f.svc.Create(ctx, member, request("")); recon.ErrorCode(err) != recon.EFORBIDDEN {
		t.Fatalf("a member creates: %v", err)
	}
	if _, err := f.svc.Cancel(ctx, member, inv.ReferenceCode, "x"); recon.ErrorCode(err) != recon.EFORBIDDEN {
		t.Fatalf("a member cancels: %v", err)
	}
	// The live tenant does not see the test tenant's invoice.
	live := f.as(f.live, f.admin)
	if _, err := f.svc.Get(ctx, live, inv.ReferenceCode); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("live reads test's: %v", err)
	}
	if _, _, err := f.svc.Check(ctx, live, inv.TrackingCode); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("live checks test's: %v", err)
	}
}

type failingSigner struct{}

func (failingSigner) Sign(context.Context, recon.TenantID, *recon.Invoice) ([]byte, error) {
	return nil, errors.New("the certificate expired")
}

func testSigningFails(t *testing.T, f *fixture) {
	ctx, c := t.Context(), f.as(f.test, f.admin)
	f.svc.Signer = failingSigner{}
	inv, err := f.svc.Create(ctx, c, request(""))
	if err != nil || inv.Status != recon.InvoiceFailed || inv.Number != 1 || !strings.Contains(inv.FailureReason, "could not be sent") {
		t.Fatalf("signing failed: %+v, %v", inv, err)
	}
}

// payOrders makes n orders of the test tenant (auto_invoice off) and pays
// each with a transfer, in one ingestion: n orders on the auto_invoice queue.
func payOrders(t *testing.T, f *fixture, n int) {
	t.Helper()
	ctx := t.Context()
	a := &recon.BankAccount{CompanyID: f.test.ID(), BankName: "Vietcombank", AccountNumber: "0011", HolderName: "SAO MAI"}
	if err := f.db.CreateBankAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	var ins []recon.TransactionInput
	var codes []string
	for i := range n {
		code := fmt.Sprintf("DH%04d", i)
		if err := f.db.CreateOrder(ctx, &recon.Order{CompanyID: f.test.ID(), InvoiceNumber: code, PaymentCode: code, Amount: 1000, BankAccountID: a.ID}); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, recon.TransactionInput{BankAccountID: a.ID, TransactionDate: start, AmountIn: 1000, Content: "thanh toan " + code, ReferenceNumber: "PAY-" + code})
		codes = append(codes, code)
	}
	if _, err := f.db.IngestTransactions(ctx, f.test, ins, codes); err != nil {
		t.Fatal(err)
	}
}

// testAutoInvoiceDrains: one run takes more orders off the queue than one
// read of it holds (MaxAutoBatch), those of a company without auto_invoice
// dropped together.
func testAutoInvoiceDrains(t *testing.T, f *fixture) {
	ctx := t.Context()
	const paid = 2*invoices.MaxAutoBatch + 3
	payOrders(t, f, paid)
	if queued, _, err := f.db.QueuedPaidOrders(ctx, 1000); err != nil || len(queued) != paid {
		t.Fatalf("queued before: %d, %v", len(queued), err)
	}
	if n, err := f.svc.AutoInvoice(ctx); err != nil || n != 0 {
		t.Fatalf("AutoInvoice: %d, %v", n, err)
	}
	if queued, _, err := f.db.QueuedPaidOrders(ctx, 1000); err != nil || len(queued) != 0 {
		t.Fatalf("queued after one run: %d, %v", len(queued), err)
	}
}

func testAutoInvoice(t *testing.T, f *fixture) {
	ctx := t.Context()
	pay := func(tenant recon.TenantID, invoice, code string, amount int64, buyer recon.Buyer) *recon.Order {
		a := &recon.BankAccount{CompanyID: tenant.ID(), BankName: "Vietcombank", AccountNumber: "0011" + code[2:], HolderName: "SAO MAI"}
		if err := f.db.CreateBankAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		o := &recon.Order{CompanyID: tenant.ID(), InvoiceNumber: invoice, PaymentCode: code, Amount: amount, BankAccountID: a.ID, Buyer: buyer}
		if err := f.db.CreateOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		in := recon.TransactionInput{BankAccountID: a.ID, TransactionDate: start, AmountIn: amount, Content: "thanh toan " + code, ReferenceNumber: "PAY-" + invoice}
		if _, err := f.db.IngestTransactions(ctx, tenant, []recon.TransactionInput{in}, []string{code}); err != nil {
			t.Fatal(err)
		}
		return o
	}
	// auto_invoice off: taken off the queue, nothing made.
	pay(f.test, "DH1", "DH0001", 100001, recon.Buyer{})
	if n, err := f.svc.AutoInvoice(ctx); err != nil || n != 0 {
		t.Fatalf("without auto_invoice: %d, %v", n, err)
	}
	up := recon.SellerUpdate{AutoInvoice: ptr(true)}
	if _, err := f.db.UpdateCompany(ctx, f.live.ID(), func(u *recon.Company) error { return up.Apply(&u.Config) }); err != nil {
		t.Fatal(err)
	}
	o2 := pay(f.test, "DH2", "DH0002", 100001, recon.Buyer{Name: "Trần Thị B", TaxCode: "0100109106"})
	o3 := pay(f.live, "DH3", "DH0003", 55000, recon.Buyer{})
	// Paid, then voided before the step: none.
	pay(f.test, "DH4", "DH0004", 70000, recon.Buyer{})
	if _, err := f.db.VoidOrder(ctx, f.test, "DH4", start, func(o *recon.Order) (*recon.Delivery, error) {
		return recon.IPNDelivery(o, recon.IPNTransactionVoid, start)
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.svc.AutoInvoice(ctx); err != nil || n != 2 {
		t.Fatalf("with auto_invoice: %d, %v", n, err)
	}
	if n, err := f.svc.AutoInvoice(ctx); err != nil || n != 0 {
		t.Fatalf("again: %d, %v", n, err)
	}
	list, _, err := f.svc.List(ctx, f.as(f.test, f.admin), recon.InvoiceFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("test tenant's invoices: %d, %v", len(list), err)
	}
	inv := list[0]
	if inv.OrderID != o2.ID || inv.Status != recon.InvoicePending || inv.Totals.TotalAmount != 100001 || inv.Buyer.Name != "Trần Thị B" ||
		inv.Items[0].ItemName != "Đơn hàng DH2" {
		t.Fatalf("o2's invoice: %+v", inv)
	}
	// The live tenant has no provider: a draft, exported but not sent.
	list, _, err = f.svc.List(ctx, f.as(f.live, f.admin), recon.InvoiceFilter{})
	if err != nil || len(list) != 1 || list[0].OrderID != o3.ID || list[0].Status != recon.InvoiceDraft || list[0].Buyer.Name != invoices.WalkInBuyer ||
		list[0].Totals.TotalAmount != 55000 {
		t.Fatalf("live tenant's invoices: %+v, %v", list, err)
	}
}

func TestPriceBeforeVAT(t *testing.T) {
	for _, amount := range []int64{1, 2, 9, 10, 11, 100, 999, 1000, 55000, 100001, 110000, 123456789, 999999999999} {
		for _, rate := range []string{recon.VAT5, recon.VAT8, recon.VAT10} {
			req := invoices.OrderRequest(&recon.Order{ID: 1, InvoiceNumber: "X", Amount: amount}, recon.InvoiceTemplateVAT, rate)
			inv := &recon.Invoice{TemplateCode: recon.InvoiceTemplateVAT, Items: req.Items}
			if err := recon.ComputeInvoice(inv); err != nil {
				t.Fatal(err)
			}
			if d := inv.Totals.TotalAmount - amount; d < -1 || d > 1 {
				t.Errorf("%d at %s%%: total %d", amount, rate, inv.Totals.TotalAmount)
			}
		}
	}
}

// TestPollSendsAnAbandonedInvoice: an invoice numbered by a node that
// stopped before signing and sending it is sent by the next Poll after
// ResendAfter, then answered as any.
func TestPollSendsAnAbandonedInvoice(t *testing.T) {
	f := newFixture(t, "sqlite")
	ctx := t.Context()
	inv := &recon.Invoice{TemplateCode: "1", Series: "C26TAA", IssuedDate: start, Currency: "VND", ExchangeRate: "1", PaymentMethod: "TM/CK",
		Seller: recon.Seller{LegalName: "Công ty TNHH Sao Mai", TaxCode: "0100112437", Address: "1 Lê Lợi"}, Buyer: recon.Buyer{Name: "A"},
		Items: request("").Items}
	if err := recon.ComputeInvoice(inv); err != nil {
		t.Fatal(err)
	}
	stored, err := f.db.CreateInvoice(ctx, f.test, inv, true, invoices.SandboxProvider, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Within ResendAfter it is left to the request sending it; nobody
	// answers an invoice not sent.
	f.clock.Advance(30 * time.Second)
	if n, err := f.svc.Poll(ctx); err != nil || n != 0 {
		t.Fatalf("poll before ResendAfter: %d, %v", n, err)
	}
	if xml, err := f.db.InvoiceXML(ctx, f.test, stored.ReferenceCode); err != nil || xml != nil {
		t.Fatalf("its XML before ResendAfter: %v", err)
	}
	f.clock.Advance(invoices.ResendAfter)
	if n, err := f.svc.Poll(ctx); err != nil || n != 0 {
		t.Fatalf("poll after ResendAfter: %d, %v", n, err)
	}
	if xml, err := f.db.InvoiceXML(ctx, f.test, stored.ReferenceCode); err != nil || xml == nil {
		t.Fatalf("its XML after the resend: %v", err)
	}
	if n, err := f.svc.Poll(ctx); err != nil || n != 1 {
		t.Fatalf("poll after the resend: %d, %v", n, err)
	}
}

// TestAutoInvoiceRunBounded: a run that has made invoices reads the queue
// no more once it has lasted its bound (autoRunFor, here a nanosecond: past
// after the first read), so that the maintenance steps after it are not
// kept waiting; what it left is the next run's.
func TestAutoInvoiceRunBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sqlstore.EngineSQLite)
	ctx := t.Context()
	up := recon.SellerUpdate{AutoInvoice: ptr(true)}
	if _, err := f.db.UpdateCompany(ctx, f.live.ID(), func(u *recon.Company) error { return up.Apply(&u.Config) }); err != nil {
		t.Fatal(err)
	}
	const paid = invoices.MaxAutoBatch + 5
	payOrders(t, f, paid)
	f.svc.SetAutoRunFor(time.Nanosecond)
	for run, want := range []int{invoices.MaxAutoBatch, 5, 0} {
		if n, err := f.svc.AutoInvoice(ctx); err != nil || n != want {
			t.Fatalf("run %d: %d invoices (%v), want %d", run+1, n, err, want)
		}
	}
	if queued, _, err := f.db.QueuedPaidOrders(ctx, 1000); err != nil || len(queued) != 0 {
		t.Fatalf("queued after the runs: %d, %v", len(queued), err)
	}
}

// TestAutoInvoiceDatabaseAway: with the database away, auto_invoice and
// the drop of the orders it makes nothing for return the error and lose
// nothing; every paid order stays queued, and the first run once the
// database is back takes them. PostgreSQL, through a proxy that closes the
// store's connections (dbtest.Outage), as a primary that died.
func TestAutoInvoiceDatabaseAway(t *testing.T) {
	outage, url := dbtest.NewOutage(t, dbtest.NewMigratedURL(t, sqlstore.EnginePostgres))
	f := fixtureOn(t, dbtest.OpenURL(t, url))
	ctx := t.Context()
	payOrders(t, f, 3)
	queued, _, err := f.db.QueuedPaidOrders(ctx, 100)
	if err != nil || len(queued) != 3 {
		t.Fatalf("queued: %d, %v", len(queued), err)
	}
	ids := []int64{queued[0].ID, queued[1].ID, queued[2].ID}

	outage.Cut()
	if n, err := f.svc.AutoInvoice(ctx); err == nil || n != 0 {
		t.Fatalf("AutoInvoice with the database away: %d, %v", n, err)
	}
	if err := f.db.DropQueuedOrders(ctx, f.test, ids); err == nil {
		t.Fatal("DropQueuedOrders with the database away: no error")
	}
	outage.Restore()

	// The pool's connections died with the cut: a statement may meet one
	// before the pool finds it dead, and fail; none is lost for it.
	var after []*recon.Order
	for range 10 {
		if after, _, err = f.db.QueuedPaidOrders(ctx, 100); err == nil {
			break
		}
	}
	if err != nil || len(after) != 3 {
		t.Fatalf("queued once the database is back: %d, %v", len(after), err)
	}
	if n, err := f.svc.AutoInvoice(ctx); err != nil || n != 0 {
		t.Fatalf("AutoInvoice once the database is back: %d, %v", n, err)
	}
	if after, _, err := f.db.QueuedPaidOrders(ctx, 100); err != nil || len(after) != 0 {
		t.Fatalf("queued after the run: %d, %v", len(after), err)
	}
}
