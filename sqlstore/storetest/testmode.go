package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"recon"
)

// testTenant returns the company's test tenant, failing t on error.
func testTenant(t *testing.T, s recon.Store, companyID int64) *recon.Tenant {
	t.Helper()
	tt, err := s.TestTenant(t.Context(), companyID)
	if err != nil {
		t.Fatalf("TestTenant(%d): %v", companyID, err)
	}
	return tt
}

// testTestMode checks docs/design.md, D10 at the storage level: a company's
// test tenant has the company's settings and none of its data, and the two
// never see or change each other's rows.
func testTestMode(t *testing.T, open Open) {
	run(t, "Tenants", open, testTestModeTenants)
	run(t, "DataNeverCrosses", open, testTestModeDataNeverCrosses)
	run(t, "NotificationsForListeners", open, testTestModeNotificationsForListeners)
	run(t, "ListenSecret", open, testTestModeListenSecret)
	run(t, "Wipe", open, testTestModeWipe)
}

func testTestModeTenants(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1, format("DH")), newCompany(t, s, 2)
	if _, err := s.TenantOf(t.Context(), c.ID, false); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("TenantOf(test) before any test data = %v; want ENOTFOUND", err)
	}
	// Made once, whoever asks first: concurrent calls agree.
	got := make([]*recon.Tenant, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = testTenant(t, s, c.ID) })
	}
	wg.Wait()
	tt := got[0]
	if tt.ID.ID() == c.ID || tt.ID.ID() == other.ID || tt.Company != c.ID || tt.Live() || tt.Status != recon.CompanyActive {
		t.Fatalf("test tenant %+v of company %d", tt, c.ID)
	}
	for _, g := range got {
		diff(t, "concurrent TestTenant", tt, g)
	}
	for _, lookup := range []func() (*recon.Tenant, error){
		func() (*recon.Tenant, error) { return s.Tenant(t.Context(), tt.ID.ID()) },
		func() (*recon.Tenant, error) { return s.TenantOf(t.Context(), c.ID, false) },
	} {
		g, err := lookup()
		if err != nil {
			t.Fatal(err)
		}
		diff(t, "test tenant lookup", tt, g)
	}
	_, err := s.TestTenant(t.Context(), tt.ID.ID())
	wantCode(t, err, recon.EINVALID, fmt.Sprintf("company %d is the test tenant of company %d, not a company", tt.ID.ID(), c.ID))
	_, err = s.TestTenant(t.Context(), other.ID+100)
	wantCode(t, err, recon.ENOTFOUND, "")
	_, err = s.TenantOf(t.Context(), tt.ID.ID(), true)
	wantCode(t, err, recon.ENOTFOUND, "") // a test tenant is no company

	// The company's settings, seen through the test tenant.
	co, err := s.Company(t.Context(), tt.ID.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := *c
	want.ID, want.TestOf = tt.ID.ID(), c.ID
	diff(t, "company seen in test mode", &want, co)
	if co.Livemode() || co.LiveID() != c.ID {
		t.Fatalf("Livemode %v LiveID %d", co.Livemode(), co.LiveID())
	}
	setStatus(t, s, c.ID, recon.CompanyInactive)
	if g, err := s.Tenant(t.Context(), tt.ID.ID()); err != nil || g.Status != recon.CompanyInactive || g.CheckActive() == nil {
		t.Fatalf("test tenant of an inactive company: %+v, %v", g, err)
	}
	// Settings change only in live mode; the list shows companies only.
	_, err = s.UpdateCompany(t.Context(), tt.ID.ID(), func(c *recon.Company) error { return nil })
	wantCode(t, err, recon.EINVALID, fmt.Sprintf("the settings of company %d are shared by its live and test modes: change them in live mode", c.ID))
	_, err = s.ReplacePaymentCodeFormats(t.Context(), tt.ID.ID(), []recon.PaymentCodeFormat{format("XY")})
	wantCode(t, err, recon.EINVALID, fmt.Sprintf("the settings of company %d are shared by its live and test modes: change them in live mode", c.ID))
	// Users and clients belong to the company, never to its test tenant.
	refusal := fmt.Sprintf("%d is the test tenant of company %d: users and OAuth2 clients belong to company %d (a test client is one made with --test)", tt.ID.ID(), c.ID, c.ID)
	wantCode(t, s.CreateUser(t.Context(), &recon.User{Company: tt.ID.ID(), Email: "a@b.vn", Role: recon.RoleMember}), recon.EINVALID, refusal)
	wantCode(t, s.CreateClient(t.Context(), &recon.Client{ID: "x", Company: tt.ID.ID(), Name: "x", Scopes: []string{recon.ScopeCompany}}), recon.EINVALID, refusal)
	_, err = s.TestTenant(t.Context(), tt.ID.ID()) // nor does a test client (CreateClient with Test)
	wantCode(t, err, recon.EINVALID, "")
	list, err := s.Companies(t.Context())
	if err != nil || len(list) != 2 || list[0].ID != c.ID || list[1].ID != other.ID {
		t.Fatalf("Companies = %v, %v; want the two companies", list, err)
	}
}

func testTestModeDataNeverCrosses(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	test := testTenant(t, s, c.ID).ID
	// The same account number, invoice and payment code in both modes.
	liveAcct, testAcct := newAccount(t, s, c.ID, "111"), newAccount(t, s, test.ID(), "111")
	liveOrder := newOrder(t, s, c.ID, liveAcct.ID, "INV-1", "DH10001", 100_000)
	testOrder := newOrder(t, s, test.ID(), testAcct.ID, "INV-1", "DH10001", 100_000)

	// A test transfer pays the test order, never the live one, whichever
	// account it names.
	pay(t, s, test, testAcct.ID, "R1", "DH10001", "", 100_000)
	if _, err := s.IngestTransactions(t.Context(), test, []recon.TransactionInput{tx(liveAcct.ID, "R2", "2026-03-01 10:00:00", 100_000, 0)}, []string{"DH10001"}); recon.ErrorCode(err) == "" {
		t.Fatal("a test ingestion into a live account succeeded")
	}
	if o, _ := s.Order(t.Context(), c.Tenant(), "INV-1"); o.Status != recon.OrderAwaitingPayment || o.ID != liveOrder.ID {
		t.Fatalf("live order after a test payment: %+v", o)
	}
	if o, _ := s.Order(t.Context(), test, "INV-1"); o.Status != recon.OrderCaptured || o.ID != testOrder.ID {
		t.Fatalf("test order after a test payment: %+v", o)
	}
	// Listings, counts and lookups by id stay in their mode.
	listAll(t, s, test, recon.TransactionFilter{}, 1)
	listAll(t, s, c.Tenant(), recon.TransactionFilter{}, 0)
	if _, total, err := s.Orders(t.Context(), c.Tenant(), recon.OrderFilter{Page: 1, PerPage: 10}); err != nil || total != 1 {
		t.Fatalf("live orders: total %d, %v", total, err)
	}
	if _, err := s.BankAccount(t.Context(), c.Tenant(), testAcct.ID); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("live read of the test account: %v", err)
	}
	for _, mode := range []recon.TenantID{c.Tenant(), test} {
		accts, err := s.BankAccounts(t.Context(), mode)
		if err != nil || len(accts) != 1 || accts[0].CompanyID != mode.ID() {
			t.Fatalf("BankAccounts(%d) = %v, %v", mode.ID(), accts, err)
		}
	}
}

func testTestModeNotificationsForListeners(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	test := testTenant(t, s, c.ID).ID
	liveAcct, testAcct := newAccount(t, s, c.ID, "111"), newAccount(t, s, test.ID(), "111")
	newOrder(t, s, c.ID, liveAcct.ID, "INV-1", "DH10001", 100_000)
	newOrder(t, s, test.ID(), testAcct.ID, "INV-1", "DH10001", 100_000)
	before := time.Now().Add(-time.Minute)
	// Without an IPN target, a live capture notifies nobody, a test one
	// is held for the listeners.
	pay(t, s, c.Tenant(), liveAcct.ID, "R1", "DH10001", "", 100_000)
	pay(t, s, test, testAcct.ID, "R1", "DH10001", "", 100_000)
	if n := countDeliveries(t, s, c.Tenant(), ""); n != 0 {
		t.Fatalf("%d live deliveries without a target", n)
	}
	ds := storeAs[recon.DeliveryStore](t, s)
	list, err := ds.Deliveries(t.Context(), test, recon.DeliveryFilter{})
	if err != nil || len(list) != 1 || list[0].Event != recon.IPNOrderPaid {
		t.Fatalf("test deliveries = %v, %v; want one ORDER_PAID", list, err)
	}
	if held := list[0].NextAttemptAt.Sub(list[0].CreatedAt); held != recon.ListenerHold {
		t.Fatalf("held for %v, want %v", held, recon.ListenerHold)
	}
	// Not due for a dispatcher until the hold ends.
	if got, err := ds.ClaimDeliveries(t.Context(), "n1", time.Now().Add(time.Hour), 10, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("claimed %v, %v during the hold", got, err)
	}
	// With an active target, test notifications are due at once.
	if err := s.SetIPN(t.Context(), test, &recon.Target{URL: "https://shop.example.vn/test-ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	newOrder(t, s, test.ID(), testAcct.ID, "INV-2", "DH10002", 5_000)
	pay(t, s, test, testAcct.ID, "R2", "DH10002", "", 5_000)
	list, err = ds.Deliveries(t.Context(), test, recon.DeliveryFilter{})
	if err != nil || len(list) != 2 || !list[0].NextAttemptAt.Equal(list[0].CreatedAt) || list[0].CreatedAt.Before(before) {
		t.Fatalf("test deliveries with a target = %v, %v", list, err)
	}
	if got, err := ds.ClaimDeliveries(t.Context(), "n1", time.Now().Add(time.Minute), 10, time.Minute); err != nil || len(got) != 1 || got[0].ID != list[0].ID {
		t.Fatalf("claimed %v, %v; want the due one", got, err)
	}
}

func testTestModeListenSecret(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	test, otherTest := testTenant(t, s, c.ID).ID, testTenant(t, s, other.ID).ID
	// Made once, whoever asks first; each tenant its own.
	got := make([]string, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			var err error
			if got[i], err = s.ListenSecret(t.Context(), test); err != nil {
				t.Errorf("ListenSecret: %v", err)
			}
		})
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] || len(g) != recon.SecretLen {
			t.Fatalf("listen secrets %q: want one secret of %d characters", got, recon.SecretLen)
		}
	}
	if theirs, err := s.ListenSecret(t.Context(), otherTest); err != nil || theirs == got[0] {
		t.Fatalf("another tenant's listen secret %q, %v", theirs, err)
	}
	// It is no notification target: the tenant still has none.
	ds := storeAs[recon.DeliveryStore](t, s)
	for _, kind := range recon.DeliveryKinds {
		if _, err := ds.DeliveryTarget(t.Context(), test.ID(), kind); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Errorf("%s target after ListenSecret: %v; want none", kind, err)
		}
	}
}

func testTestModeWipe(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	// A company without test data wipes nothing.
	res, err := s.WipeTestData(t.Context(), other.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "empty wipe", &recon.WipeResult{}, res)
	tt := testTenant(t, s, c.ID)
	test, otherTest := tt.ID, testTenant(t, s, other.ID).ID
	for _, tenant := range []recon.TenantID{c.Tenant(), test, otherTest} {
		a := newAccount(t, s, tenant.ID(), "111")
		newAccount(t, s, tenant.ID(), "222")
		newOrder(t, s, tenant.ID(), a.ID, "INV-1", "DH10001", 100_000)
		newOrder(t, s, tenant.ID(), a.ID, "INV-2", "DH10002", 100_000)
		pay(t, s, tenant, a.ID, "R1", "DH10001", "", 100_000)
		ingest(t, s, tenant, oldRows(a.ID, "old", 5))
	}
	if err := s.SetMerchant(t.Context(), &recon.Merchant{Tenant: test, MerchantID: recon.TestMerchantPrefix + "1", SecretKey: "k"}); err != nil {
		t.Fatal(err)
	}
	res, err = s.WipeTestData(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "wipe", &recon.WipeResult{BankAccounts: 2, Transactions: 6, Orders: 2, Deliveries: 1}, res)
	listAll(t, s, test, recon.TransactionFilter{}, 0)
	if accts, _ := s.BankAccounts(t.Context(), test); len(accts) != 0 {
		t.Fatalf("test accounts left: %v", accts)
	}
	// Live data, the other company's test data, the tenant and its
	// credentials stay.
	listAll(t, s, c.Tenant(), recon.TransactionFilter{}, 6)
	listAll(t, s, otherTest, recon.TransactionFilter{}, 6)
	if _, total, _ := s.Orders(t.Context(), c.Tenant(), recon.OrderFilter{Page: 1, PerPage: 10}); total != 2 {
		t.Fatalf("live orders after the wipe: %d", total)
	}
	if m, err := s.MerchantOf(t.Context(), test); err != nil || m.Tenant.Live() {
		t.Fatalf("test merchant after the wipe: %+v, %v", m, err)
	}
	if again, err := s.TestTenant(t.Context(), c.ID); err != nil || again.ID != test {
		t.Fatalf("test tenant after the wipe: %+v, %v", again, err)
	}
	_, err = s.WipeTestData(t.Context(), test.ID())
	wantCode(t, err, recon.EINVALID, fmt.Sprintf("company %d is the test tenant of company %d: name the company", test.ID(), c.ID))
}
