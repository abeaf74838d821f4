// Package dashboard is the merchant dashboard served at /dashboard: a
// server-rendered web UI (html/template, one embedded CSS file, and one
// small script, the statement upload's progress, which no page needs)
// on the same stores and the same access rules (recon.Caller.May) as the
// APIs. People sign in with the accounts of the OAuth login page, through a
// recon.PasswordVerifier (the same password check and throttle); the
// session is a random token in a cookie whose hash is stored
// (recon.DashboardStore). See docs/dashboard.md.
package dashboard

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"recon"
	"recon/checkout"
	"recon/invoices"
	"recon/ipn"
	"recon/linking"
	"recon/orders"
	"recon/refunds"
	"recon/team"
	"recon/web"
)

// Default session lifetimes.
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultMaxAge      = 12 * time.Hour
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/style.css
var styleCSS []byte

// Store is the storage the dashboard needs.
type Store interface {
	healthStore // endpoint health (health.go)
	recon.ExceptionStore
	recon.DeliveryOpsStore
	recon.DashboardStore
	recon.TeamStore
	recon.AuditStore
	recon.AlertStore
	// recon.CompanyStore's:
	Company(ctx context.Context, id int64) (*recon.Company, error)
	ReplacePaymentCodeFormats(ctx context.Context, companyID int64, formats []recon.PaymentCodeFormat) (*recon.CompanyConfig, error)
	UpdateCompany(ctx context.Context, id int64, update func(c *recon.Company) error) (*recon.Company, error)
	// recon.TenantStore's:
	TenantOf(ctx context.Context, companyID int64, live bool) (*recon.Tenant, error)
	TestTenant(ctx context.Context, companyID int64) (*recon.Tenant, error)
	// recon.UserStore's:
	CreateUser(ctx context.Context, u *recon.User) error
	User(ctx context.Context, id int64) (*recon.User, error)
	ChangeUserRole(ctx context.Context, companyID, userID int64, role recon.Role, permissions []string) error
	Users(ctx context.Context, companyID int64, offset, limit int) ([]*recon.User, int64, error)
	// recon.ClientStore's:
	Clients(ctx context.Context, companyID int64, test bool, offset, limit int) ([]*recon.Client, int64, error)
	DeleteClient(ctx context.Context, companyID int64, test bool, id string) error
	// recon.BankAccountStore's:
	BankAccount(ctx context.Context, tenant recon.TenantID, id int64) (*recon.BankAccount, error)
	BankAccounts(ctx context.Context, tenant recon.TenantID) ([]*recon.BankAccount, error)
	// recon.TransactionStore's:
	IngestTransactions(ctx context.Context, tenant recon.TenantID, in []recon.TransactionInput, codes []string) ([]recon.IngestResult, error)
	Transactions(ctx context.Context, tenant recon.TenantID, f recon.TransactionFilter) ([]*recon.Transaction, int64, error)
	Transaction(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Transaction, error)
	BalanceDiscontinuities(ctx context.Context, tenant recon.TenantID) ([]*recon.BalanceDiscontinuity, error)
	// recon.OrderStore's:
	Order(ctx context.Context, tenant recon.TenantID, invoiceNumber string) (*recon.Order, error)
	Orders(ctx context.Context, tenant recon.TenantID, f recon.OrderFilter) ([]*recon.Order, int64, error)
	// OrderByID reads an order by its internal id (a refund's order).
	OrderByID(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Order, error)
	MatchDecisions(ctx context.Context, tenant recon.TenantID, orderID, transactionID int64) ([]*recon.MatchDecision, error)
	Reconciliation(ctx context.Context, tenant recon.TenantID, from, to string) (*recon.ReconciliationReport, error)
	// RefundTotals is the report's refunds (sqlstore.DB.RefundTotals).
	RefundTotals(ctx context.Context, tenant recon.TenantID, from, to string, loc *time.Location) (*recon.RefundTotals, error)
	// The imported statements, their proofs and the report's balances
	// (docs/statements.md, Balance proof; sqlstore.DB's).
	StatementImports(ctx context.Context, tenant recon.TenantID, bankAccountID int64, page, limit int) ([]*recon.StatementImport, int64, error)
	StatementProof(ctx context.Context, tenant recon.TenantID, bankAccountID, id int64) (*recon.StatementProof, error)
	DayBalances(ctx context.Context, tenant recon.TenantID, bankAccountID int64, from, to string) ([]recon.DayBalance, error)
	// recon.MerchantStore's:
	SetMerchant(ctx context.Context, m *recon.Merchant) error
	MerchantOf(ctx context.Context, tenant recon.TenantID) (*recon.Merchant, error)
	// recon.DeliveryStore's:
	Delivery(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Delivery, error)
	Deliveries(ctx context.Context, tenant recon.TenantID, f recon.DeliveryFilter) ([]*recon.Delivery, error)
	DeliveryAttempts(ctx context.Context, deliveryID int64) ([]*recon.DeliveryAttempt, error)
	ReplayDelivery(ctx context.Context, tenant recon.TenantID, id int64, now time.Time) error
	DeliveryTarget(ctx context.Context, companyID int64, kind string) (*recon.Target, error)
	// recon.HubStore's:
	HubCustomer(ctx context.Context, tenant recon.TenantID, xid string) (*recon.HubCustomer, error)
	HubCustomers(ctx context.Context, tenant recon.TenantID, f recon.HubCustomerFilter) ([]*recon.HubCustomer, int64, error)
	HubWebhook(ctx context.Context, tenant recon.TenantID) (*recon.HubWebhook, error)
	HubBranding(ctx context.Context, tenant recon.TenantID) (*recon.HubBranding, error)
	SetHubBranding(ctx context.Context, tenant recon.TenantID, b *recon.HubBranding) error
	// recon.HubAccountStore's:
	HubBankAccounts(ctx context.Context, tenant recon.TenantID, f recon.HubAccountFilter) ([]*recon.LinkedAccount, int64, error)
}

// Handler serves the dashboard. Fill the fields, then call Register.
type Handler struct {
	Store     Store
	Passwords recon.PasswordVerifier
	// Sandbox drops the Secure attribute (and the __Host- prefix) of the
	// cookies, so that the dashboard works on plain http in development.
	Sandbox  bool
	Location *time.Location // business time zone (default UTC)
	Clock    recon.Clock
	// Rand is the randomness of the secrets the settings make (merchant,
	// IPN and webhook) and of the sandbox transfers' references (default
	// crypto/rand).
	Rand   io.Reader
	Logger *slog.Logger
	// Kick, when set, wakes the delivery dispatcher after a replay or a
	// test notification.
	Kick func()
	// IdleTimeout ends a session without requests; MaxAge ends any session.
	IdleTimeout, MaxAge time.Duration

	// Settings, bank accounts and sandbox (settings.go, bank.go,
	// sandbox.go): what they need from other adapters, wired by
	// cmd/recon. A nil one hides its feature.
	//
	// MaxPrefixLen is the server's longest payment-code prefix (default
	// recon.DefaultPrefixMaxLen).
	MaxPrefixLen int
	// HashPassword hashes a new user's password (oauth.HashPassword).
	HashPassword func(password string) (string, error)
	// IPN saves the tenant's IPN target by the rules of PUT /v1/ipn
	// (ipn.Service.Save: a nil SecretKey keeps the stored one, or makes one
	// for SECRET_KEY) and says whether its secret and its signing secret are
	// new (each shown once).
	IPN *ipn.Service
	// ImportStatement imports a statement file into a bank account as
	// POST /api/v1/bank-accounts/{id}/statements does (statement.ImportFile).
	ImportStatement func(ctx context.Context, tenant recon.TenantID, accountID int64, name string, file io.ReadSeeker) (*StatementResult, error)
	// PreviewStatement reads a statement file as ImportStatement would,
	// storing nothing (statement.PreviewFile); nil hides the preview.
	PreviewStatement func(ctx context.Context, tenant recon.TenantID, accountID int64, name string, file io.Reader) (*StatementPreview, error)
	// StatementMapping reads and SaveStatementMapping checks
	// (statement.ValidateMapping) and saves, or with nil removes, a bank
	// account's column mapping (docs/statements.md, Column mappings); nil
	// hides the mapping form.
	StatementMapping     func(ctx context.Context, tenant recon.TenantID, accountID int64) (*recon.StatementMapping, error)
	SaveStatementMapping func(ctx context.Context, tenant recon.TenantID, accountID int64, m *recon.StatementMapping) error
	// TempDir holds the previewed files ("" is the system's).
	TempDir string
	held    heldUploads
	// Uploads are the server's statement import slots, shared with the
	// API's upload (nil: web.NewSlots(0, 0) of the dashboard's own).
	Uploads *web.Slots
	// SessionLimiter limits each signed-in session's requests and
	// AddressLimiter each remote address's, signed in or not (nil: no
	// limit); an expensive search costs SearchCost requests. See
	// docs/dashboard.md, Rate limits.
	SessionLimiter, AddressLimiter *web.RateLimiter
	// Orders cancels and voids the gateway's orders (checkout.Service, as
	// the gateway's order API does), nil without: the actions are hidden.
	Orders *checkout.Service
	// Refunds is API v2's refunds service (refunds.go): the refunds pages,
	// requests, approvals and the approval threshold; nil hides them.
	Refunds *refunds.Service
	// Invoices is the e-invoice service (invoices.go; docs/invoices.md): an
	// order's invoices, the invoice pages and the issue button; nil hides
	// them.
	Invoices *invoices.Service
	// V2Orders is API v2's orders service: an order's v2 fields and its
	// virtual accounts on the order's page; nil hides them.
	V2Orders *orders.Service
	// Hub is the bank-linking hub's service (link tokens, the webhook, the
	// simulation of hub events), nil without one.
	Hub *linking.Service
	// RegisterClient registers an OAuth2 client as `recon client create`
	// does (oauth.RegisterClient) and returns its secret ("" for a public
	// client).
	RegisterClient func(ctx context.Context, c *recon.Client, public bool) (string, error)
	// Team is the team's service (users.go; docs/dashboard.md, Team):
	// invitations, password resets and changes, deactivation; nil hides the
	// team pages.
	Team *team.Service

	pages map[string]*template.Template
	csrf  *http.CrossOriginProtection
}

// Register adds the dashboard's routes to mux.
func (h *Handler) Register(mux *web.Mux) {
	if h.Location == nil {
		h.Location = time.UTC
	}
	if h.Clock == nil {
		h.Clock = recon.SystemClock{}
	}
	if h.Rand == nil {
		h.Rand = rand.Reader
	}
	if h.Logger == nil {
		h.Logger = slog.Default()
	}
	if h.IdleTimeout <= 0 {
		h.IdleTimeout = DefaultIdleTimeout
	}
	if h.MaxAge <= 0 {
		h.MaxAge = DefaultMaxAge
	}
	if h.Uploads == nil {
		h.Uploads = web.NewSlots(0, 0)
	}
	h.pages = sharedPages()
	h.csrf = http.NewCrossOriginProtection()
	mux.Family("/dashboard", h.writeFamilyError)

	mux.Handle("GET /dashboard/static/style.css", h.public(serveCSS))
	mux.Handle("GET /dashboard/signin", h.public(h.signinPage))
	mux.HandleLimited("POST /dashboard/signin", h.public(h.signin), formLimit)
	mux.Handle("GET /dashboard/lang/{lang}", h.public(h.setLang))

	mux.HandleLimited("POST /dashboard/signout", h.form(recon.ActionNone, h.signout), formLimit)
	mux.HandleLimited("POST /dashboard/mode", h.form(recon.ActionNone, h.switchMode), formLimit)
	mux.Handle("GET /dashboard/{$}", h.page(recon.ActionNone, h.home))
	mux.Handle("GET /dashboard/transactions", h.page(recon.ActionReadMoney, h.transactions))
	mux.Handle("GET /dashboard/transactions.csv", h.page(recon.ActionReadMoney, h.exportTransactions))
	mux.Handle("GET /dashboard/transactions/{id}", h.page(recon.ActionReadMoney, h.transaction))
	mux.Handle("GET /dashboard/orders", h.page(recon.ActionReadMoney, h.orders))
	mux.Handle("GET /dashboard/order", h.page(recon.ActionReadMoney, h.order))
	mux.Handle("GET /dashboard/order/void", h.page(recon.ActionManageNotifications, h.confirmVoid))
	mux.Handle("GET /dashboard/order/cancel", h.page(recon.ActionManageNotifications, h.confirmCancel))
	mux.HandleLimited("POST /dashboard/order/void", h.form(recon.ActionManageNotifications, h.voidOrder), formLimit)
	mux.HandleLimited("POST /dashboard/order/cancel", h.form(recon.ActionManageNotifications, h.cancelOrder), formLimit)
	mux.Handle("GET /dashboard/report", h.page(recon.ActionReadMoney, h.report))
	mux.Handle("GET /dashboard/report.csv", h.page(recon.ActionReadMoney, h.reportCSV))
	mux.Handle("GET /dashboard/report-balances.csv", h.page(recon.ActionReadMoney, h.reportBalancesCSV))
	mux.Handle("GET /dashboard/bank-accounts/{id}/statements", h.page(recon.ActionReadMoney, h.statementImports))
	mux.Handle("GET /dashboard/bank-accounts/{id}/statements/{import}", h.page(recon.ActionReadMoney, h.statementProof))
	mux.Handle("GET /dashboard/exceptions", h.page(recon.ActionReadMoney, h.exceptions))
	mux.Handle("GET /dashboard/exceptions/{id}", h.page(recon.ActionReadMoney, h.exception))
	mux.Handle("GET /dashboard/exceptions/bulk", h.page(recon.ActionResolveExceptions, h.confirmBulk))
	mux.HandleLimited("POST /dashboard/exceptions/bulk", h.form(recon.ActionResolveExceptions, h.resolveBulk), formLimit)
	mux.Handle("GET /dashboard/exceptions/{id}/resolve", h.page(recon.ActionResolveExceptions, h.confirmResolveException))
	mux.HandleLimited("POST /dashboard/exceptions/{id}/resolve", h.form(recon.ActionResolveExceptions, h.resolveException), formLimit)
	mux.Handle("GET /dashboard/notifications", h.page(recon.ActionReadMoney, h.notifications))
	mux.Handle("GET /dashboard/notifications/{id}", h.page(recon.ActionReadMoney, h.delivery))
	mux.Handle("GET /dashboard/notifications/{id}/replay", h.page(recon.ActionManageNotifications, h.confirmReplay))
	mux.Handle("GET /dashboard/notifications/replay", h.page(recon.ActionManageNotifications, h.confirmReplayFailed))
	mux.HandleLimited("POST /dashboard/notifications/{id}/replay", h.form(recon.ActionManageNotifications, h.replayDelivery), formLimit)
	mux.HandleLimited("POST /dashboard/notifications/replay", h.form(recon.ActionManageNotifications, h.replayFailed), formLimit)
	h.registerSettings(mux)
	h.registerRefunds(mux)
	h.registerInvoices(mux)
	h.registerFirstrun(mux)
	h.registerLinks(mux)
	h.registerTeam(mux)
	h.registerAudit(mux)
	h.registerAlerts(mux)
}

// formLimit bounds every form body: the largest is the sign-in form.
const formLimit = 16 << 10

func serveCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(styleCSS)
}

// setSecurityHeaders is set on every dashboard answer: only the dashboard's
// own script files may run (no inline script) and reach only the dashboard,
// nothing may frame the pages, forms post only to the dashboard.
func setSecurityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
}

func (h *Handler) now() time.Time { return h.Clock.Now() }

// SearchCost is what a search costs of a rate limit's requests: the
// transactions search (a bounded scan of the filter's rows), its export, and
// the orders' text search.
const SearchCost = 5

// requestCost is the number of requests r counts for.
func requestCost(r *http.Request) int {
	switch r.URL.Path {
	case "/dashboard/transactions":
		if s, err := recon.ParseTransactionSearch(r.URL.Query()); err == nil && s.Searching() {
			return SearchCost
		}
	case "/dashboard/transactions.csv":
		return SearchCost
	case "/dashboard/orders":
		if strings.TrimSpace(r.URL.Query().Get("q")) != "" {
			return SearchCost
		}
	}
	return 1
}

// allowAddress takes r's cost from its remote address's bucket, or answers
// 429 with Retry-After and reports false.
func (h *Handler) allowAddress(w http.ResponseWriter, r *http.Request) bool {
	if h.AddressLimiter.AllowN(w.Header(), "address:"+clientAddress(r), requestCost(r)) {
		return true
	}
	h.tooManyRequests(w, r, nil)
	return false
}

// allowSession takes r's cost from its session's bucket (keyed by the
// token's hash, never the token), or answers 429 and reports false.
func (h *Handler) allowSession(w http.ResponseWriter, r *http.Request, q *request) bool {
	if h.SessionLimiter.AllowN(w.Header(), "session:"+base64.RawURLEncoding.EncodeToString(tokenHash(q.token)), requestCost(r)) {
		return true
	}
	h.tooManyRequests(w, r, q)
	return false
}

// tooManyRequests is the 429 page, in the user's language, saying how long
// to wait (Retry-After, set by the limiter).
func (h *Handler) tooManyRequests(w http.ResponseWriter, r *http.Request, q *request) {
	l := h.langOf(r)
	h.writeErrorPage(w, r, q, http.StatusTooManyRequests, l.T("rate_limited")+" "+l.T("retry_after")+" "+w.Header().Get("Retry-After")+".")
}
