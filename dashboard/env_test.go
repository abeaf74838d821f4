package dashboard_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"recon"
	"recon/checkout"
	"recon/dashboard"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/ipn"
	"recon/linking"
	"recon/oauth"
	"recon/orders"
	"recon/refunds"
	"recon/server"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
	"recon/team"
	"recon/web"
)

// The dashboard's tests run it as `recon serve --sandbox
// --allow-private-targets` does (server/routes.go), less what they do not
// reach: a dashboard.Handler on a real database of each engine, signing in
// through the authorization server's password check (oauth.Server: the
// login page's check and throttle), behind the server's middleware, on a
// loopback port, with a delivery dispatcher sending the notifications to
// loopback receivers; their data is written through the store.

const dashPassword = "correct horse battery"

// htmlMemo is what a payer may write in a memo; the dashboard must show it as text.
const htmlMemo = `<script>alert("memo")</script><img src=x onerror=alert(1)>`

// dashEnv is a dashboard server and its database. newDashEnv fills it with
// one company (live and test data), a second company, and users of every
// role with a password.
type dashEnv struct {
	base    string
	db      *sqlstore.DB
	loc     *time.Location
	live    *tenant
	test    *tenant
	other   *tenant
	paidTx  string // id of the live transfer that paid INV-PAID
	testTx  string // id of a test-mode transfer
	otherTx string // id of the other company's transfer
	userIDs map[string]string
	rc      *testkit.Receiver // the IPN endpoint of both companies
	codes   *rand.Rand        // of payment codes, spread as the gateway's random ones
	auth    *oauth.Server     // the password check's authorization server
	team    *team.Service     // the team's service (users.go), without SMTP unless a test gives one
}

// tenant is a company's live or test data: the company's id as the
// sign-in form takes it, the tenant's own id and its bank account.
type tenant struct {
	company       string
	id            recon.TenantID
	account       int64
	signingSecret string // of the company's IPN target
	merchantID    string // the gateway's credentials, when made (newSettingsEnv)
	secret        string
}

// newServer starts the dashboard on a fresh database of the engine. It has
// no rate limits: the tests make searches in bursts no person makes (the
// limits have their own test, TestDashboardRateLimit). configure changes
// the handler before it is registered.
func newServer(t *testing.T, engine string, configure ...func(*dashboard.Handler)) *dashEnv {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Ho_Chi_Minh") // recon serve's default --timezone
	if err != nil {
		t.Fatal(err)
	}
	e := &dashEnv{db: dbtest.OpenStore(t, engine), loc: loc, userIDs: map[string]string{}, codes: rand.New(rand.NewPCG(1, 2))}
	log := slog.New(slog.DiscardHandler)
	dispatcher := &delivery.Dispatcher{Store: e.db, Client: delivery.NewClient(delivery.ClientOptions{AllowPrivate: true}), Logger: log}
	e.db.OnEnqueue(dispatcher.Kick)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dispatcher.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("dispatcher: %v", err)
		}
	})
	mux := web.NewMux()
	srv := httptest.NewServer((&web.Middleware{Logger: log}).Wrap(mux))
	t.Cleanup(srv.Close)
	e.base = srv.URL
	auth, err := oauth.New(oauth.Config{Issuer: srv.URL, Secret: []byte("0123456789abcdef0123456789abcdef"), Clock: recon.SystemClock{}, Logger: log}, e.db)
	if err != nil {
		t.Fatal(err)
	}
	// Sandbox, as `recon serve --sandbox --allow-private-targets`: cookies
	// without Secure on http, notification URLs on loopback.
	checkURL := func(raw string) error { return delivery.CheckURL(raw, true, true) }
	h := &dashboard.Handler{Store: e.db, Passwords: auth, Sandbox: true, Location: loc, Clock: recon.SystemClock{}, Logger: log,
		HashPassword: fastHash, Kick: dispatcher.Kick, // the server gives oauth.HashPassword (cost 12)
		// The services and adapters server/routes.go gives it.
		Orders:          &checkout.Service{Store: e.db, Clock: recon.SystemClock{}, Location: loc, Logger: log},
		Refunds:         &refunds.Service{Store: e.db, Clock: recon.SystemClock{}, Location: loc},
		V2Orders:        &orders.Service{Store: e.db, Clock: recon.SystemClock{}},
		IPN:             &ipn.Service{Store: e.db, CheckURL: checkURL, Blocked: delivery.IsBlocked},
		Hub:             &linking.Service{Store: e.db, BaseURL: srv.URL, CheckURL: checkURL, Blocked: delivery.IsBlocked},
		ImportStatement: server.ImportStatement(e.db, loc, recon.SystemClock{}),
		// No SMTP: the links are shown to the Admin (team_test.go sets Mail).
		Team: &team.Service{Store: e.db, Clock: recon.SystemClock{}, BaseURL: srv.URL, Hash: fastHash, Location: loc, Logger: log},
		RegisterClient: func(ctx context.Context, c *recon.Client, public bool) (string, error) {
			return oauth.RegisterClient(ctx, e.db, c, public)
		},
	}
	server.WireStatements(h, e.db, loc, recon.SystemClock{}, t.TempDir())
	e.auth, e.team = auth, h.Team
	for _, c := range configure {
		c(h)
	}
	h.Register(mux)
	return e
}

// newDashEnv is newServer with its data: in the live company a paid order,
// an open order whose description holds HTML, a transfer whose memo holds
// HTML; a transfer of its test mode; another company with a transfer and an
// order. Both companies' IPNs go to one receiver.
func newDashEnv(t *testing.T, engine string, configure ...func(*dashboard.Handler)) *dashEnv {
	t.Helper()
	e := newServer(t, engine, configure...)
	e.rc = testkit.NewReceiver(t)
	e.live = e.newCompany(t, e.rc.URL+"/ipn")
	for _, u := range []struct {
		email string
		role  recon.Role
		perms []string
	}{
		{"boss@saomai.vn", recon.RoleAdmin, nil}, {"ketoan@saomai.vn", recon.RoleAccountant, []string{recon.PermViewTransactions}}, {"nhanvien@saomai.vn", recon.RoleMember, nil},
	} {
		e.userIDs[u.email] = fmt.Sprint(e.dashUser(t, e.live, u.email, u.role, u.perms...))
	}
	code := e.checkout(t, e.live, "INV-PAID", 150000, "Thanh toán đơn hàng INV-PAID")
	e.paidTx = e.pay(t, e.live, code, 150000)
	e.checkout(t, e.live, "INV-OPEN", 90000, `<b onmouseover="x()">Đơn "mở" & </b>`)
	e.transfer(t, e.live, 12345, htmlMemo)
	e.test = e.testModeOf(t, e.live)
	e.testTx = e.transfer(t, e.test, 777, "TEST-ONLY MEMO")
	e.other = e.newCompany(t, e.rc.URL+"/ipn2")
	e.checkout(t, e.other, "INV-OTHER", 5000, "Thanh toán đơn hàng INV-OTHER")
	e.otherTx = e.transfer(t, e.other, 5000, "OTHER COMPANY")
	return e
}

// newCompany stores an active company taking payment codes DH + 6 to 10
// digits, with a bank account and an IPN target at ipnURL (SECRET_KEY), and
// returns its live tenant.
func (e *dashEnv) newCompany(t *testing.T, ipnURL string) *tenant {
	t.Helper()
	ctx := context.Background()
	co := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive, Config: recon.CompanyConfig{Paycode: true}}
	if err := e.db.CreateCompany(ctx, co); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ReplacePaymentCodeFormats(ctx, co.ID, []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 6, SuffixTo: 10, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
		t.Fatal(err)
	}
	ipn := &recon.Target{URL: ipnURL, AuthType: recon.AuthSecretKey, Secret: "ipn-secret-0123456789", Active: true}
	if err := e.db.SetIPN(ctx, co.Tenant(), ipn); err != nil {
		t.Fatal(err)
	}
	m := &tenant{company: fmt.Sprint(co.ID), id: co.Tenant(), signingSecret: ipn.SigningSecret}
	m.account = e.bankAccount(t, co.ID)
	return m
}

// testModeOf returns the company's test tenant, with its own bank account.
func (e *dashEnv) testModeOf(t *testing.T, live *tenant) *tenant {
	t.Helper()
	tn, err := e.db.TestTenant(context.Background(), live.id.ID())
	if err != nil {
		t.Fatal(err)
	}
	return &tenant{company: live.company, id: tn.ID, account: e.bankAccount(t, tn.ID.ID())}
}

func (e *dashEnv) bankAccount(t *testing.T, tenant int64) int64 {
	t.Helper()
	a := &recon.BankAccount{CompanyID: tenant, BankName: "Vietcombank", AccountNumber: "0071000123456", HolderName: "CONG TY TNHH SAO MAI"}
	if err := e.db.CreateBankAccount(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// dashUser stores a user of the company with dashPassword hashed at
// bcrypt's lowest cost (what `recon user create --password` stores costs
// cost 12, seconds under the race detector, per sign-in), and returns its id.
func (e *dashEnv) dashUser(t *testing.T, m *tenant, email string, role recon.Role, perms ...string) int64 {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(dashPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	u := &recon.User{Company: m.id.ID(), Email: email, Role: role, Permissions: perms, PasswordHash: string(h)}
	if err := e.db.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// fastHash is oauth.HashPassword at bcrypt's lowest cost (see dashUser).
func fastHash(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	return string(h), err
}

// checkout stores an order awaiting payment into the tenant's account, as
// the gateway's checkout does, and returns its payment code.
func (e *dashEnv) checkout(t *testing.T, m *tenant, invoice string, amount int64, description string) string {
	t.Helper()
	o := &recon.Order{CompanyID: m.id.ID(), InvoiceNumber: invoice, CustomerID: "KH001", Amount: amount, Currency: "VND",
		Description: description, PaymentCode: fmt.Sprintf("DH%08d", e.codes.IntN(100_000_000)), BankAccountID: m.account,
		SuccessURL: "https://shop.example.vn/ok", ErrorURL: "https://shop.example.vn/err", CancelURL: "https://shop.example.vn/cancel"}
	if err := e.db.CreateOrder(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o.PaymentCode
}

// transfer ingests a transfer into the tenant's account, as a sandbox
// transfer does (POST /api/v1/sandbox/transfers), and returns its id.
func (e *dashEnv) transfer(t *testing.T, m *tenant, amount int64, memo string) string {
	t.Helper()
	now := time.Now()
	res, err := recon.Ingest(context.Background(), e.db, m.id, now, []recon.TransactionInput{{
		BankAccountID: m.account, TransactionDate: now.In(e.loc), AmountIn: amount, Content: memo, ReferenceNumber: recon.SimulatedReference()}})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(res[0].ID)
}

// pay plays the payer: a transfer with the code in the memo. It returns the
// transfer's id.
func (e *dashEnv) pay(t *testing.T, m *tenant, code string, amount int64) string {
	t.Helper()
	return e.transfer(t, m, amount, "NGUYEN VAN A chuyen tien "+code)
}

// orderStatus returns the status of the tenant's order.
func (e *dashEnv) orderStatus(t *testing.T, m *tenant, invoice string) string {
	t.Helper()
	o, err := e.db.Order(context.Background(), m.id, invoice)
	if err != nil {
		t.Fatal(err)
	}
	return o.Status
}

// browser is a browser of the server, with no session.
func (e *dashEnv) browser(t *testing.T) *testkit.Browser { return testkit.NewBrowser(t, e.base) }

// signedIn is a browser signed in to the live company as email.
func (e *dashEnv) signedIn(t *testing.T, email string) *testkit.Browser {
	t.Helper()
	return e.browser(t).SignedIn(e.live.company, email, dashPassword)
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func parseID(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

func sha256Sum(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
