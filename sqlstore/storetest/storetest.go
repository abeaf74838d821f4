// Package storetest is the conformance suite of recon.Store: every engine's
// tests run it, so that the engines behave the same. It has a file per area
// (delivery.go, order.go, ...); an area's test function lists its subtests,
// each a function named after the one behaviour it checks, run by run on a
// fresh store or a bundle of fixtures built on one. Every subtest opens its
// own store, so areas and subtests run in parallel and never see each
// other's rows.
//
//	storetest.Run(t, func(t *testing.T) recon.Store { return dbtest.OpenStore(t, "sqlite") })
package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"recon"
)

// Open returns a fresh, migrated, empty store that is closed when t ends.
type Open func(t *testing.T) recon.Store

// Run runs the whole suite against stores made by open.
func Run(t *testing.T, open Open) {
	t.Run("Store", func(t *testing.T) { t.Parallel(); testStore(t, open) })
	t.Run("Company", func(t *testing.T) { t.Parallel(); testCompany(t, open) })
	t.Run("CompanyUpdate", func(t *testing.T) { t.Parallel(); testCompanyUpdate(t, open) })
	t.Run("Retention", func(t *testing.T) { t.Parallel(); testRetention(t, open) })
	t.Run("PaymentCodeFormats", func(t *testing.T) { t.Parallel(); testPaymentCodeFormats(t, open) })
	t.Run("User", func(t *testing.T) { t.Parallel(); testUser(t, open) })
	t.Run("Team", func(t *testing.T) { t.Parallel(); testTeam(t, open) })
	t.Run("Client", func(t *testing.T) { t.Parallel(); testClient(t, open) })
	t.Run("TokenSession", func(t *testing.T) { t.Parallel(); testTokenSession(t, open) })
	run(t, "AuthEpoch", func(t *testing.T) *tokenFixture { return newTokenFixture(t, open) }, testAuthEpoch)
	t.Run("BankAccount", func(t *testing.T) { t.Parallel(); testBankAccount(t, open) })
	t.Run("Transactions", func(t *testing.T) { t.Parallel(); testTransactions(t, open) })
	t.Run("BankOrder", func(t *testing.T) { t.Parallel(); testBankOrder(t, open) })
	t.Run("AmountTotals", func(t *testing.T) { t.Parallel(); testAmountTotals(t, open) })
	t.Run("Delivery", func(t *testing.T) { t.Parallel(); testDelivery(t, open) })
	t.Run("DeliveryOrdered", func(t *testing.T) { t.Parallel(); testDeliveryOrdered(t, open) })
	t.Run("Orders", func(t *testing.T) { t.Parallel(); testOrders(t, open) })
	t.Run("Matching", func(t *testing.T) { t.Parallel(); testMatching(t, open) })
	t.Run("VirtualAccounts", func(t *testing.T) { t.Parallel(); testVirtualAccounts(t, open) })
	t.Run("Exceptions", func(t *testing.T) { t.Parallel(); testExceptions(t, open) })
	t.Run("Money", func(t *testing.T) { t.Parallel(); testMoney(t, open) })
	t.Run("Refunds", func(t *testing.T) { t.Parallel(); testRefunds(t, open) })
	t.Run("Invoices", func(t *testing.T) { t.Parallel(); testInvoices(t, open) })
	t.Run("IngestAtomically", func(t *testing.T) { t.Parallel(); testIngestAtomically(t, open) })
	t.Run("TestMode", func(t *testing.T) { t.Parallel(); testTestMode(t, open) })
	t.Run("Hub", func(t *testing.T) { t.Parallel(); testHub(t, open) })
	t.Run("Dashboard", func(t *testing.T) { t.Parallel(); testDashboard(t, open) })
	t.Run("Links", func(t *testing.T) { t.Parallel(); testLinks(t, open) })
	t.Run("Idempotency", func(t *testing.T) { t.Parallel(); testIdempotency(t, open) })
	t.Run("Sync", func(t *testing.T) { t.Parallel(); testSync(t, open) })
	run(t, "StatementMapping", open, testStatementMapping)
	t.Run("Audit", func(t *testing.T) { t.Parallel(); testAudit(t, open) })
	t.Run("Duplicates", func(t *testing.T) { t.Parallel(); testDuplicates(t, open) })
}

// run runs test as the parallel subtest name of t, on a fresh bundle of the
// fixtures it needs from setup (open itself, when a store is all it needs):
// no subtest sees another's rows.
func run[B any](t *testing.T, name string, setup func(t *testing.T) B, test func(t *testing.T, b B)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		test(t, setup(t))
	})
}

func testStore(t *testing.T, open Open) {
	run(t, "Ping", open, testStorePing)
	run(t, "PingAfterClose", open, testStorePingAfterClose)
}

func testStorePing(t *testing.T, s recon.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testStorePingAfterClose(t *testing.T, s recon.Store) {
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Fatal("Ping after Close: got nil error")
	}
}

// equate compares stored values: an empty list equals a nil one, and a
// recon.TenantID by its id and mode.
var equate = cmp.Options{cmpopts.EquateEmpty(), cmp.AllowUnexported(recon.TenantID{})}

// wantCode fails t unless err is a *recon.Error with the code and, when msg
// is not "", the message.
func wantCode(t *testing.T, err error, code, msg string) {
	t.Helper()
	var e *recon.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v, want a *recon.Error with code %q", err, code)
	}
	if e.Code != code {
		t.Fatalf("got code %q (%v), want %q", e.Code, err, code)
	}
	if msg != "" && e.Message != msg {
		t.Fatalf("got message %q, want %q", e.Message, msg)
	}
}

// wantUTC fails t unless the times are in UTC and not zero.
func wantUTC(t *testing.T, what string, times ...time.Time) {
	t.Helper()
	for _, tm := range times {
		if tm.IsZero() || tm.Location() != time.UTC {
			t.Fatalf("%s = %v, want a non-zero UTC time", what, tm)
		}
	}
}

// recent fails t unless tm is within a minute of now: stores stamp creation
// times with their clock, which the suite does not control.
func recent(t *testing.T, what string, tm time.Time) {
	t.Helper()
	wantUTC(t, what, tm)
	if d := time.Since(tm); d < -time.Minute || d > time.Minute {
		t.Fatalf("%s = %v, want about now", what, tm)
	}
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got, equate); d != "" {
		t.Fatalf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// storeAs returns s as a T (an optional part of a store, such as
// recon.DeliveryStore), failing t when s does not implement T.
func storeAs[T any](t *testing.T, s recon.Store) T {
	t.Helper()
	v, ok := s.(T)
	if !ok {
		t.Fatalf("%T does not implement %v", s, reflect.TypeFor[T]())
	}
	return v
}

// newCompany stores a company named after n, with the formats.
func newCompany(t *testing.T, s recon.Store, n int, formats ...recon.PaymentCodeFormat) *recon.Company {
	t.Helper()
	c := &recon.Company{
		FullName:     fmt.Sprintf("Company %d Ltd", n),
		ShortName:    fmt.Sprintf("c%d", n),
		Status:       recon.CompanyActive,
		Subscription: "standard",
		Config:       recon.CompanyConfig{DataStorageDays: 30, PaymentCodeFormats: formats},
	}
	if err := s.CreateCompany(t.Context(), c); err != nil {
		t.Fatalf("CreateCompany: %v", err)
	}
	return c
}

// accountBundle is what many subtests start from: a fresh store, company 1
// and its bank account 111.
type accountBundle struct {
	s recon.Store
	c *recon.Company
	a *recon.BankAccount
}

// withAccount returns the setup of subtests that start from an accountBundle.
func withAccount(open Open) func(t *testing.T) *accountBundle {
	return func(t *testing.T) *accountBundle {
		s := open(t)
		c := newCompany(t, s, 1)
		return &accountBundle{s: s, c: c, a: newAccount(t, s, c.ID, "111")}
	}
}

// newUser stores a member of the company with the e-mail address.
func newUser(t *testing.T, s recon.Store, companyID int64, email string) *recon.User {
	t.Helper()
	u := &recon.User{Company: companyID, Email: email, Role: recon.RoleMember}
	if err := s.CreateUser(t.Context(), u); err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	return u
}

// newClient stores a client of the company.
func newClient(t *testing.T, s recon.Store, companyID int64, id string) *recon.Client {
	t.Helper()
	c := &recon.Client{ID: id, Company: companyID, Name: "client " + id, Scopes: []string{recon.ScopeCompany}}
	if err := s.CreateClient(t.Context(), c); err != nil {
		t.Fatalf("CreateClient: %v", err)
	}
	return c
}

// format returns a valid format with the prefix.
func format(prefix string) recon.PaymentCodeFormat {
	return recon.PaymentCodeFormat{
		Prefix: prefix, SuffixFrom: len(prefix), SuffixTo: len(prefix) + 4,
		CharacterType: recon.NumberOnly, IsActive: !strings.HasPrefix(prefix, "X"),
	}
}
