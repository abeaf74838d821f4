// Package api serves the OAuth2-protected REST API under /api/v1 (company,
// and later transactions and bank accounts) with the envelopes of
// docs/design.md, D1: {"status":"success",...} on success and
// {"status":"error","error":CODE,"message":TEXT[,"errors":{...}]} on failure.
package api

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"recon"
	"recon/web"
)

// Store is the storage the API needs.
type Store interface {
	recon.ExceptionStore
	// AppendAudit records the changes of settings and exception decisions
	// (docs/dashboard.md, Audit log).
	AppendAudit(ctx context.Context, e *recon.AuditEntry) error
	// recon.CompanyStore's:
	Company(ctx context.Context, id int64) (*recon.Company, error)
	CompanyAtEpoch(ctx context.Context, id int64) (*recon.Company, int64, error)
	ReplacePaymentCodeFormats(ctx context.Context, companyID int64, formats []recon.PaymentCodeFormat) (*recon.CompanyConfig, error)
	UpdateCompany(ctx context.Context, id int64, update func(c *recon.Company) error) (*recon.Company, error)
	// recon.BankAccountStore's:
	BankAccount(ctx context.Context, tenant recon.TenantID, id int64) (*recon.BankAccount, error)
	BankAccounts(ctx context.Context, tenant recon.TenantID) ([]*recon.BankAccount, error)
	// A bank account's saved statement column mapping (docs/statements.md,
	// Column mappings; sqlstore.DB's).
	StatementMapping(ctx context.Context, tenant recon.TenantID, bankAccountID int64) (*recon.StatementMapping, error)
	SetStatementMapping(ctx context.Context, tenant recon.TenantID, bankAccountID int64, m *recon.StatementMapping) error
	// The imported statements and their proofs, and the reconciliation
	// report's balances (docs/statements.md, Balance proof; sqlstore.DB's).
	StatementImports(ctx context.Context, tenant recon.TenantID, bankAccountID int64, page, limit int) ([]*recon.StatementImport, int64, error)
	StatementProof(ctx context.Context, tenant recon.TenantID, bankAccountID, id int64) (*recon.StatementProof, error)
	DayBalances(ctx context.Context, tenant recon.TenantID, bankAccountID int64, from, to string) ([]recon.DayBalance, error)
	// recon.TransactionStore's:
	IngestTransactions(ctx context.Context, tenant recon.TenantID, in []recon.TransactionInput, codes []string) ([]recon.IngestResult, error)
	IngestAtomically(ctx context.Context, tenant recon.TenantID, fill func(ingest func(in []recon.TransactionInput, codes []string) ([]recon.IngestResult, error)) error) error
	Transactions(ctx context.Context, tenant recon.TenantID, f recon.TransactionFilter) ([]*recon.Transaction, int64, error)
	TransactionsIfChanged(ctx context.Context, tenant recon.TenantID, f recon.TransactionFilter, known int64) ([]*recon.Transaction, int64, int64, error)
	Transaction(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Transaction, error)
	BalanceDiscontinuities(ctx context.Context, tenant recon.TenantID) ([]*recon.BalanceDiscontinuity, error)
	// recon.OrderStore's:
	MatchDecisions(ctx context.Context, tenant recon.TenantID, orderID, transactionID int64) ([]*recon.MatchDecision, error)
	Reconciliation(ctx context.Context, tenant recon.TenantID, from, to string) (*recon.ReconciliationReport, error)
	// RefundTotals is the report's refunds (sqlstore.DB.RefundTotals).
	RefundTotals(ctx context.Context, tenant recon.TenantID, from, to string, loc *time.Location) (*recon.RefundTotals, error)
	// recon.DeliveryStore's:
	Delivery(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Delivery, error)
	Deliveries(ctx context.Context, tenant recon.TenantID, f recon.DeliveryFilter) ([]*recon.Delivery, error)
	DeliveryAttempts(ctx context.Context, deliveryID int64) ([]*recon.DeliveryAttempt, error)
	ReplayDelivery(ctx context.Context, tenant recon.TenantID, id int64, now time.Time) error
	// recon.DeliveryOpsStore's:
	ReplayFailed(ctx context.Context, tenant recon.TenantID, f recon.FailedFilter, now time.Time) (int64, error)
	// ReplayMissed: docs/api.md, Endpoint health.
	ReplayMissed(ctx context.Context, tenant recon.TenantID, kind string, now time.Time) (int64, error)
	DeliveryTargetStats(ctx context.Context, tenant recon.TenantID, since time.Time, max int) ([]recon.TargetStats, error)
	SendTestNotification(ctx context.Context, tenant recon.TenantID, kind string) (*recon.Delivery, error)
}

// Handler serves /api/v1.
type Handler struct {
	Store Store
	Auth  recon.Authenticator
	// MaxPrefixLen is the longest payment-code prefix accepted (default 3, at most 5).
	MaxPrefixLen int
	// Location is the business time zone of transaction dates (default UTC).
	Location *time.Location
	// Sandbox enables the sandbox endpoints (simulated transfers) in live
	// mode; test-mode callers have them on any server.
	Sandbox bool
	// Kick, when set, wakes the delivery dispatcher after a replay.
	Kick func()
	// Limiter limits each OAuth2 client's requests (nil: no limit).
	Limiter *web.RateLimiter
	// Clock dates sandbox transfers, replays and the report's default range
	// (default recon.SystemClock{}).
	Clock  recon.Clock
	Logger *slog.Logger
	// Rand is the randomness of sandbox transfers' references (default
	// crypto/rand).
	Rand io.Reader
	// Uploads are the server's statement import slots, shared with the
	// dashboard's upload (nil: web.NewSlots(0, 0) of the API's own); an
	// upload finding none free is refused with 503 and Retry-After.
	Uploads *web.Slots
	// TempDir is where uploads are spooled ("" is the system's).
	TempDir string
	// VAs adds virtual accounts to orders (API v2's orders service): an
	// exception's ask_remainder needs it (nil: refused, 422).
	VAs recon.VAIssuer
	// PageCacheBytes is the most the encoded pages of GET
	// /api/v1/transactions kept for the next identical request may take
	// (pageCache; 0: none kept).
	PageCacheBytes int

	pages *pageCache
	// extractors spares a push the read of its company while the caller's
	// epoch says nothing it extracts by has changed.
	extractors recon.Extractors
}

// Register adds the API routes to mux.
func (h *Handler) Register(mux *web.Mux) {
	if h.Uploads == nil {
		h.Uploads = web.NewSlots(0, 0)
	}
	h.pages = newPageCache(h.PageCacheBytes)
	mux.Family("/api/", func(w http.ResponseWriter, _ *http.Request, status int, name, message string) {
		web.WriteJSON(w, status, errorBody{Status: "error", Error: name, Message: message})
	})
	// Each route names its scope and the action of docs/design.md, D9 that the
	// caller's role or permissions must allow (recon.Caller.May).
	route := func(pattern string, fn handlerFunc, scope string, action recon.Action) {
		mux.Handle(pattern, h.authed(fn, scope, action))
	}
	route("GET /api/v1/company", h.getCompany, recon.ScopeCompany, recon.ActionManageCompany)
	route("PATCH /api/v1/company", h.patchCompany, recon.ScopeCompany, recon.ActionManageCompany)
	route("PATCH /api/v1/company/configurations", h.patchConfigurations, recon.ScopeCompany, recon.ActionManageCompany)
	route("POST /api/v1/company/try-memo", h.tryMemo, recon.ScopeCompany, recon.ActionManageCompany)
	route("GET /api/v1/transactions", h.listTransactions, recon.ScopeTransactionRead, recon.ActionReadMoney)
	route("POST /api/v1/transactions", h.pushTransactions, recon.ScopeTransactionWrite, recon.ActionWriteTransactions)
	route("GET /api/v1/transactions/{id}", h.showTransaction, recon.ScopeTransactionRead, recon.ActionReadMoney)
	route("GET /api/v1/bank-accounts", h.listBankAccounts, recon.ScopeBankAccountRead, recon.ActionReadMoney)
	route("GET /api/v1/balance-discontinuities", h.listDiscontinuities, recon.ScopeBankAccountRead, recon.ActionReadMoney)
	mux.HandleFile("POST /api/v1/bank-accounts/{id}/statements", // statement files: up to MaxStatementBytes
		h.authed(h.uploadStatement, recon.ScopeTransactionWrite, recon.ActionWriteTransactions), MaxStatementBytes)
	route("GET /api/v1/bank-accounts/{id}/statements", h.listStatementImports, recon.ScopeBankAccountRead, recon.ActionReadMoney)
	route("GET /api/v1/bank-accounts/{id}/statements/{import}", h.showStatementProof, recon.ScopeBankAccountRead, recon.ActionReadMoney)
	route("GET /api/v1/bank-accounts/{id}/statement-mapping", h.getStatementMapping, recon.ScopeBankAccountRead, recon.ActionReadMoney)
	route("PUT /api/v1/bank-accounts/{id}/statement-mapping", h.putStatementMapping, recon.ScopeTransactionWrite, recon.ActionWriteTransactions)
	route("DELETE /api/v1/bank-accounts/{id}/statement-mapping", h.deleteStatementMapping, recon.ScopeTransactionWrite, recon.ActionWriteTransactions)
	route("GET /api/v1/reconciliation", h.reconciliation, recon.ScopeTransactionRead, recon.ActionReadMoney)
	route("GET /api/v1/deliveries", h.listDeliveries, recon.ScopeDeliveryRead, recon.ActionReadMoney)
	route("GET /api/v1/deliveries/{id}", h.showDelivery, recon.ScopeDeliveryRead, recon.ActionReadMoney)
	route("POST /api/v1/deliveries/{id}/replay", h.replayDelivery, recon.ScopeDeliveryWrite, recon.ActionManageNotifications)
	route("POST /api/v1/deliveries/replay", h.replayFailed, recon.ScopeDeliveryWrite, recon.ActionManageNotifications)
	route("GET /api/v1/deliveries/stats", h.deliveryStats, recon.ScopeDeliveryRead, recon.ActionReadMoney)
	route("POST /api/v1/deliveries/test", h.testNotification, recon.ScopeDeliveryWrite, recon.ActionManageNotifications)
	route("GET /api/v1/exceptions", h.listExceptions, recon.ScopeTransactionRead, recon.ActionReadMoney)
	route("GET /api/v1/exceptions/totals", h.exceptionTotals, recon.ScopeTransactionRead, recon.ActionReadMoney)
	route("GET /api/v1/exceptions/{id}", h.showException, recon.ScopeTransactionRead, recon.ActionReadMoney)
	route("POST /api/v1/exceptions/resolve", h.resolveExceptions, recon.ScopeExceptionWrite, recon.ActionResolveExceptions)
	route("POST /api/v1/exceptions/{id}/resolve", h.resolveException, recon.ScopeExceptionWrite, recon.ActionResolveExceptions)
	route("POST /api/v1/sandbox/transfers", h.simulateTransfer, recon.ScopeTransactionWrite, recon.ActionWriteTransactions)
}

func (h *Handler) random() io.Reader {
	if h.Rand == nil {
		return rand.Reader
	}
	return h.Rand
}

func (h *Handler) now() time.Time {
	if h.Clock == nil {
		return time.Now()
	}
	return h.Clock.Now()
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, c *recon.Caller) error

// authed authenticates the bearer token and checks the scope, then the role
// or permission, in the order of docs/design.md, D1: no or bad token → 401,
// missing scope → 403, role or permission missing → 403; the handler
// validates input next.
func (h *Handler) authed(fn handlerFunc, scope string, action recon.Action) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := h.authenticate(r, scope)
		if err == nil && !h.Limiter.Allow(w.Header(), "client:"+c.ClientID) {
			err = recon.Errorf(recon.ERATELIMITED, "too many requests from OAuth2 client %s: retry after %s s", c.ClientID, w.Header().Get("Retry-After"))
		}
		if err == nil {
			err = c.Authorize(action)
		}
		if err == nil {
			err = fn(w, r, c)
		}
		if err != nil {
			h.writeError(w, r, err, scope)
		}
	})
}

func (h *Handler) authenticate(r *http.Request, scope string) (*recon.Caller, error) {
	token, err := web.BearerToken(r)
	if err != nil {
		return nil, err
	}
	c, err := h.Auth.Authenticate(r.Context(), token)
	if err != nil {
		return nil, err
	}
	if !c.HasScope(scope) {
		return nil, web.MissingScope(scope)
	}
	return c, nil
}

// writeError writes the error body of docs/design.md, D1 and, for 401 and 403,
// the RFC 6750 WWW-Authenticate header. Internal errors are logged with the
// request id and never shown.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error, scope string) {
	code := recon.ErrorCode(err)
	status, name := web.ErrorStatus(err)
	web.SetWWWAuthenticate(w.Header(), err)
	web.SetRetryAfter(w.Header(), err)
	if code == recon.EINTERNAL || code == "" {
		h.Logger.ErrorContext(r.Context(), "internal error", "request_id", web.RequestID(r.Context()), "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body := errorBody{Status: "error", Error: name, Message: recon.ErrorMessage(err)}
	var re *recon.Error
	if errors.As(err, &re) && len(re.Fields) > 0 && code == recon.EINVALID {
		body.Errors = re.Fields
	}
	web.WriteJSON(w, status, body)
}

// success and errorBody are the envelopes of docs/design.md, D1, as structs so
// that "status" comes first, as in the spec's examples.
type success struct {
	Status string `json:"status"`
	Data   any    `json:"data"`
}

type errorBody struct {
	Status  string              `json:"status"`
	Error   string              `json:"error"`
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

func ok(data any) success { return success{Status: "success", Data: data} }

// ruleResult is the data of PATCH /api/v1/company/configurations (§4.2).
type ruleResult struct {
	Status  bool   `json:"status"`
	Message string `json:"message,omitempty"`
	Data    any    `json:"data,omitempty"`
}
