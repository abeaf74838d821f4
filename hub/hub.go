// Package hub serves the bank-linking hub of docs/design.md, D8 under
// {bankhub_url}/v1: POST /v1/token, the merchant's companies (hub customers),
// link tokens, linked bank accounts and their transactions, the merchant's
// branding, the webhook API of spec §4.4/§4.5 (docs/hub.md, The webhook API),
// and the hosted link page with its sandbox banks.
//
// Errors have the hub's shapes (docs/design.md, D1, D8): {"code":HTTP,
// "message":TEXT[,"errors":{field:TEXT}]} everywhere except /v1/webhook,
// which keeps the spec's envelope {"status","error","messages","data"}.
// The handlers talk to storage only through recon.HubStore; every row they
// read or write is the caller's tenant's (recon.Caller.Tenant).
package hub

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"recon"
	"recon/linking"
	"recon/web"
)

// Store is the storage the hub needs.
type Store interface {
	recon.HubStore
	// AppendAudit records the webhook's changes (docs/dashboard.md, Audit
	// log).
	AppendAudit(ctx context.Context, e *recon.AuditEntry) error
}

// Handler serves the hub routes.
type Handler struct {
	Store Store
	// Auth turns the bearer tokens of the /v1 hub routes into callers.
	Auth recon.Authenticator
	// Tokens issues the tokens of POST /v1/token.
	Tokens recon.HubTokenIssuer
	// Links makes link tokens, reads the hosted page's steps and saves the
	// webhook (package linking), with the banks behind them.
	Links *linking.Service
	// Sandbox is the server's mode (--sandbox): sandbox banks for every
	// tenant, not only test ones.
	Sandbox bool
	// Location is the business time zone of the times shown (default UTC).
	Location *time.Location
	Clock    recon.Clock
	Logger   *slog.Logger
	// Limiter limits each OAuth2 client's requests (nil: no limit).
	Limiter *web.RateLimiter
}

// connector returns the banks a link token's page offers.
func (h *Handler) connector(sandbox bool) (recon.BankConnector, error) {
	return h.Links.Connector(sandbox)
}

// Register adds the hub routes to mux.
func (h *Handler) Register(mux *web.Mux) {
	for _, prefix := range []string{"/v1/token", "/v1/company", "/v1/link-token", "/v1/bank-account", "/v1/transaction", "/v1/merchant-config"} {
		mux.Family(prefix, func(w http.ResponseWriter, _ *http.Request, status int, _, message string) {
			writeHubError(w, status, message, nil)
		})
	}
	mux.Family("/v1/webhook", func(w http.ResponseWriter, _ *http.Request, status int, name, message string) {
		writeEnvelope(w, status, strings.ToUpper(name), nil, []string{message}, nil)
	})
	mux.HandleLimited("POST /v1/token", http.HandlerFunc(h.token), 4096)
	// Each bearer route names its scope and its action where it is
	// registered, as /api/v1's do (docs/hub.md, Access): the token
	// must hold the scope whoever it was issued to (a user's token granted
	// only profile is refused), and its caller may the action
	// (recon.Caller.May).
	route := func(pattern string, fn handlerFunc, scope string, action recon.Action) {
		envelope := strings.Contains(pattern, " /v1/webhook")
		mux.Handle(pattern, h.authed(fn, scope, action, envelope))
	}
	route("POST /v1/company/create", h.createCompany, recon.ScopeHub, recon.ActionHub)
	route("GET /v1/company", h.listCompanies, recon.ScopeHub, recon.ActionHub)
	route("GET /v1/company/{xid}", h.getCompany, recon.ScopeHub, recon.ActionHub)
	route("POST /v1/company/edit/{xid}", h.editCompany, recon.ScopeHub, recon.ActionHub)
	route("GET /v1/company/counter/{xid}", h.companyCounter, recon.ScopeHub, recon.ActionHub)
	route("POST /v1/link-token/create", h.createLinkToken, recon.ScopeHub, recon.ActionHub)
	route("POST /v1/link-token/get", h.getLinkToken, recon.ScopeHub, recon.ActionHub)
	route("POST /v1/link-token/revoke", h.revokeLinkToken, recon.ScopeHub, recon.ActionHub)
	route("GET /v1/bank-account", h.listBankAccounts, recon.ScopeHub, recon.ActionHub)
	route("GET /v1/bank-account/{xid}", h.getBankAccount, recon.ScopeHub, recon.ActionHub)
	route("GET /v1/transaction", h.listTransactions, recon.ScopeHub, recon.ActionHub)
	route("GET /v1/transaction/{id}", h.getTransaction, recon.ScopeHub, recon.ActionHub)
	route("GET /v1/merchant-config", h.getMerchantConfig, recon.ScopeHub, recon.ActionHub)
	route("POST /v1/merchant-config", h.postMerchantConfig, recon.ScopeHub, recon.ActionHub)
	route("GET /v1/webhook", h.getWebhook, recon.ScopeHub, recon.ActionHub)
	route("POST /v1/webhook", h.postWebhook, recon.ScopeHub, recon.ActionHub)
	mux.Family("/link/", func(w http.ResponseWriter, _ *http.Request, status int, _, message string) {
		writeHubError(w, status, message, nil)
	})
	mux.HandleFunc("GET /link/{token}", h.linkPage)
	// Same-origin forms only (the page's own, also inside an iframe).
	mux.HandleLimited("POST /link/{token}", http.NewCrossOriginProtection().Handler(http.HandlerFunc(h.linkPage)), maxPageForm)
}

// Routes are the patterns Register adds that need a bearer token with the
// hub scope and the hub action (every route but POST /v1/token and the
// link page), for tests that walk them.
func Routes() []string {
	return []string{
		"POST /v1/company/create", "GET /v1/company", "GET /v1/company/{xid}", "POST /v1/company/edit/{xid}",
		"GET /v1/company/counter/{xid}", "POST /v1/link-token/create", "POST /v1/link-token/get", "POST /v1/link-token/revoke",
		"GET /v1/bank-account", "GET /v1/bank-account/{xid}", "GET /v1/transaction", "GET /v1/transaction/{id}",
		"GET /v1/merchant-config", "POST /v1/merchant-config", "GET /v1/webhook", "POST /v1/webhook",
	}
}

func (h *Handler) now() time.Time {
	if h.Clock == nil {
		return time.Now()
	}
	return h.Clock.Now()
}

func (h *Handler) location() *time.Location {
	if h.Location == nil {
		return time.UTC
	}
	return h.Location
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

// localTime renders an instant as wall-clock time in the business time zone.
func (h *Handler) localTime(t time.Time) string { return localTime(t, h.location()) }

// localTime renders an instant as wall-clock time in loc.
func localTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format(recon.DateTimeLayout)
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, c *recon.Caller) error

// authed authenticates the bearer token (401 {"code":401,"message":
// "Unauthenticated"} when missing, invalid, expired or revoked), checks
// that it holds scope (403 otherwise, whoever it was issued to), applies the
// client's rate limit, checks the action (recon.Caller.May: an Admin's
// token, or a token with no user that holds the hub scope), then runs fn.
// envelope selects the /v1/webhook error shape.
func (h *Handler) authed(fn handlerFunc, scope string, action recon.Action, envelope bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := h.authenticate(r)
		if err == nil && !c.HasScope(scope) {
			err = recon.Errorf(recon.EFORBIDDEN, "the access token lacks the scope %q", scope)
		}
		if err == nil && !h.Limiter.Allow(w.Header(), "client:"+c.ClientID) {
			err = recon.Errorf(recon.ERATELIMITED, "too many requests from client %s: retry after %s s", c.ClientID, w.Header().Get("Retry-After"))
		}
		if err == nil {
			err = c.Authorize(action)
		}
		if err == nil {
			err = fn(w, r, c)
		}
		if err != nil {
			h.writeError(w, r, err, envelope)
		}
	})
}

func (h *Handler) authenticate(r *http.Request) (*recon.Caller, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, recon.Errorf(recon.EUNAUTHORIZED, "Unauthenticated")
	}
	return h.Auth.Authenticate(r.Context(), token)
}

// hubCodes are the upper-case codes of the webhook envelope (docs/design.md, D1).
var hubCodes = map[string]string{
	recon.EINVALID: "VALIDATION_ERROR", recon.EUNAUTHORIZED: "UNAUTHORIZED", recon.EFORBIDDEN: "FORBIDDEN",
	recon.ENOTFOUND: "NOT_FOUND", recon.ECONFLICT: "CONFLICT", recon.ERATELIMITED: "RATE_LIMITED",
	recon.EUNAVAILABLE: "UNAVAILABLE", recon.EINTERNAL: "INTERNAL_ERROR",
}

// writeError writes err in the hub's shape (or the webhook envelope). A 401
// always reads "Unauthenticated"; internal errors are logged with the
// request id and never shown.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error, envelope bool) {
	code := recon.ErrorCode(err)
	status, _ := web.ErrorStatus(err)
	msg := recon.ErrorMessage(err)
	if status == http.StatusInternalServerError {
		h.logger().ErrorContext(r.Context(), "internal error", "request_id", web.RequestID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	if code == recon.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="recon"`)
		msg = "Unauthenticated"
	}
	web.SetRetryAfter(w.Header(), err)
	var fields map[string][]string
	var re *recon.Error
	if errors.As(err, &re) && code == recon.EINVALID {
		fields = re.Fields
	}
	if envelope {
		name := hubCodes[code]
		if name == "" {
			name = "INTERNAL_ERROR"
		}
		var rerr *recon.ReasonError
		if errors.As(err, &rerr) {
			name = rerr.Reason
		}
		writeEnvelope(w, status, name, nil, []string{msg}, nil)
		return
	}
	writeHubError(w, status, msg, fields)
}

// hubError is the error body of every hub route but /v1/webhook.
type hubError struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Errors  map[string]string `json:"errors,omitempty"`
}

func writeHubError(w http.ResponseWriter, status int, msg string, fields map[string][]string) {
	body := hubError{Code: status, Message: msg}
	if len(fields) > 0 {
		body.Errors = map[string]string{}
		for k, v := range fields {
			body.Errors[k] = strings.Join(v, " ")
		}
	}
	web.WriteJSON(w, status, body)
}

// envelope is the webhook API's body (spec §2.6; docs/hub.md, The webhook API).
type envelope struct {
	Status   int      `json:"status"`
	Error    *string  `json:"error"`
	Messages messages `json:"messages"`
	Data     any      `json:"data"`
}

type messages struct {
	Success []string `json:"success"`
	Error   []string `json:"error"`
}

func writeEnvelope(w http.ResponseWriter, status int, code string, success, errs []string, data any) {
	env := envelope{Status: status, Messages: messages{Success: success, Error: errs}, Data: data}
	if env.Messages.Success == nil {
		env.Messages.Success = []string{}
	}
	if env.Messages.Error == nil {
		env.Messages.Error = []string{}
	}
	if code != "" {
		env.Error = &code
	}
	web.WriteJSON(w, status, env)
}

// pageMeta is the pagination of the hub's lists (as the gateway's order list).
type pageMeta struct {
	PerPage     int   `json:"per_page"`
	Total       int64 `json:"total"`
	HasMore     bool  `json:"has_more"`
	CurrentPage int   `json:"current_page"`
	PageCount   int64 `json:"page_count"`
}

func newPageMeta(page, per int, total int64) pageMeta {
	count := (total + int64(per) - 1) / int64(per)
	return pageMeta{PerPage: per, Total: total, HasMore: int64(page) < count, CurrentPage: page, PageCount: count}
}

// Listing limits.
const (
	defaultPerPage = 20
	maxPerPage     = 100
	maxPage        = 1_000_000
	maxQueryLen    = 255
)

// pageParams reads page and per_page (limit is accepted as per_page's
// alias, as SePay's examples use it).
func pageParams(r *http.Request) (page, per int, err error) {
	q := r.URL.Query()
	page, per = 1, defaultPerPage
	for _, p := range []struct {
		name string
		dst  *int
		max  int
	}{{"page", &page, maxPage}, {"per_page", &per, maxPerPage}, {"limit", &per, maxPerPage}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > p.max {
			return 0, 0, recon.FieldError(p.name, "%s must be an integer from 1 to %d", p.name, p.max)
		}
		*p.dst = n
	}
	return page, per, nil
}

// checkParams refuses query parameters the route does not know, naming them.
func checkParams(r *http.Request, known ...string) error {
	for k := range r.URL.Query() {
		ok := false
		for _, n := range known {
			if k == n {
				ok = true
			}
		}
		if !ok {
			return recon.FieldError(k, "unknown query parameter %q (known: %s)", k, strings.Join(known, ", "))
		}
	}
	return nil
}
