// Package apiv2 serves API v2 under /v2 (docs/api-v2.md), and the e-invoice API under /v1/invoices (docs/invoices.md, API), beside /api/v1 on
// the same web.Mux: bearer tokens of Recon's authorization server, the v2
// envelope, a rate limit per OAuth2 client, idempotency keys on POSTs, and
// the routes of each area.
//
// # Adding routes
//
// An area keeps its routes in its own file (orders.go, refunds.go) as a
// method that registers them, one line per route naming the method and
// pattern, the handler, the scope, the action of docs/design.md, D9 that the
// caller's role must allow, and whether a POST takes an idempotency key:
//
//	func (h *Handler) orderRoutes(r *routes) {
//		r.add("POST /v2/orders", h.createOrder, recon.ScopeOrderWrite, recon.ActionWriteOrders, KeyOptional)
//		r.add("GET /v2/orders/{id}", h.showOrder, recon.ScopeOrderRead, recon.ActionReadOrders, NoKey)
//	}
//
// and adds the call to Register's list. A handler gets the request and the
// authenticated caller, and returns an *Answer (ok, created, paged) or an
// error: a *recon.Error, whose Code picks the status and whose Reason the
// error_code (recon.RuleError("invalid_state", ...) is a 422 invalid_state;
// see errors.go). Bodies are decoded with decode (strict: unknown fields,
// wrong types and oversized bodies are 400s naming the field); lists read
// their page with pageOf. Before the handler runs, authed has checked the
// token (401), the rate limit (429), the scope and the role (403), and the
// idempotency key (idempotency.go). Add the area's store methods to Store
// (store.go), each route to the OpenAPI document (a file of its own in
// openapi/, see openapi.go; TestEveryRouteDocumented fails until it is
// there), and TestEveryRouteChecksScopeAndRole walks the new routes by
// itself.
package apiv2

import (
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"recon"
	"recon/invoices"
	"recon/orders"
	"recon/refunds"
	"recon/web"
)

// Config is what a Handler needs.
type Config struct {
	Store Store
	Auth  recon.Authenticator
	// Limiter limits each OAuth2 client's requests (nil: no limit). recon
	// serve gives API v1 and v2 the same one: a client has one bucket.
	Limiter *web.RateLimiter
	// Clock is business time: idempotency keys' leases and expiries
	// (default recon.SystemClock{}).
	Clock recon.Clock
	// Rand is the randomness of business data (ids of resources v2 makes;
	// default crypto/rand).
	Rand   io.Reader
	Logger *slog.Logger
	// Location is the business time zone of transaction dates (default UTC).
	Location *time.Location
	// Orders is the service of orders and virtual accounts (default: one
	// over Store, Clock and Rand).
	Orders *orders.Service
	// Refunds is the refunds service, with the payout connectors (nil: one
	// over Store, with none).
	Refunds *refunds.Service
	// Invoices is the e-invoice service, with its providers and signer
	// (nil: one over Store when it is an invoices.Store, with neither:
	// drafts only; docs/invoices.md, API).
	Invoices *invoices.Service
	// InvoiceLookupURL is the public lookup page's URL an invoice's PDF
	// prints ("" prints the lookup code only).
	InvoiceLookupURL string
}

// Handler serves /v2.
type Handler struct {
	cfg    Config
	routes []Route
}

// New returns a Handler of cfg, with its defaults filled in.
func New(cfg Config) *Handler {
	if cfg.Clock == nil {
		cfg.Clock = recon.SystemClock{}
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.Orders == nil {
		cfg.Orders = &orders.Service{Store: cfg.Store, Clock: cfg.Clock, Rand: cfg.Rand}
	}
	return &Handler{cfg: cfg}
}

// Register adds the /v2 routes to mux, and the document describing them
// (GET /v2/openapi.json, no token needed).
func (h *Handler) Register(mux *web.Mux) { h.register(mux, h.areas()...) }

// register adds the routes of areas.
func (h *Handler) register(mux *web.Mux, areas ...func(*routes)) {
	mux.Family("/v2/", func(w http.ResponseWriter, _ *http.Request, status int, name, message string) {
		writeJSON(w, status, errorBody{Status: "error", ErrorCode: name, Message: message})
	})
	for _, prefix := range invoiceFamilies {
		mux.Family(prefix, func(w http.ResponseWriter, _ *http.Request, status int, name, message string) {
			writeJSON(w, status, errorBody{Status: "error", ErrorCode: name, Message: message})
		})
	}
	mux.HandleFunc("GET /v2/openapi.json", ServeOpenAPI)
	r := &routes{h: h, mux: mux}
	// One call per area; each area's routes are in its own file.
	for _, area := range areas {
		area(r)
	}
	h.routes = r.list
}

// areas are the functions registering each area's routes, in order.
func (h *Handler) areas() []func(*routes) {
	return []func(*routes){h.transactionRoutes, h.orderRoutes, h.refundRoutes, h.invoiceRoutes}
}

// Idempotency says what a route does with X-Idempotency-Key
// (docs/api-v2.md, Idempotency).
type Idempotency int

const (
	// NoKey: the route reads (GET); a key sent is ignored. A POST may not
	// be registered with it: every v2 POST accepts a key.
	NoKey Idempotency = iota
	// KeyOptional: a request with a key runs once per key; one without
	// runs every time.
	KeyOptional
	// KeyRequired: a request without a key is refused with 422
	// idempotency_key_required (refunds).
	KeyRequired
)

// Route is a registered route: what TestEveryRouteChecksScopeAndRole and
// the OpenAPI test walk.
type Route struct {
	Pattern     string // "METHOD /v2/path"
	Scope       string
	Action      recon.Action
	Idempotency Idempotency
}

// Routes returns the routes Register added, in order.
func (h *Handler) Routes() []Route { return append([]Route(nil), h.routes...) }

// handlerFunc serves an authenticated, authorized request: it returns the
// answer, or an error that authed writes in the envelope.
type handlerFunc func(r *http.Request, c *recon.Caller) (*Answer, error)

// routes collects an area's routes as Register adds them.
type routes struct {
	h    *Handler
	mux  *web.Mux
	list []Route
}

// add registers one route: pattern ("METHOD /v2/..."), its handler, the
// scope the token must carry, the action the caller's role must allow, and
// its idempotency. It panics on a POST registered with NoKey.
func (r *routes) add(pattern string, fn handlerFunc, scope string, action recon.Action, idem Idempotency) {
	method, _, _ := strings.Cut(pattern, " ")
	if method == http.MethodPost && idem == NoKey {
		panic("apiv2: every v2 POST accepts an idempotency key: register " + pattern + " with KeyOptional or KeyRequired")
	}
	rt := Route{Pattern: pattern, Scope: scope, Action: action, Idempotency: idem}
	r.list = append(r.list, rt)
	r.mux.Handle(pattern, r.h.authed(rt, fn))
}

// Answer is what a handler returns: the status (default 200) and the data
// and meta of the success envelope.
type Answer struct {
	Status int
	Data   any
	Meta   any // nil: {}
	// KeepKey makes the request's idempotency key live as long as the
	// resource the request made (a refund's), instead of
	// recon.IdempotencyKeyTTL.
	KeepKey bool
	// Raw, when not nil, is written as it is (a GET's file: an invoice's
	// XML or PDF) with ContentType, and Filename as its attachment name.
	Raw         []byte
	ContentType string
	Filename    string
}

// ok is a 200 answer of data.
func ok(data any) *Answer { return &Answer{Status: http.StatusOK, Data: data} }

// created is a 201 answer of data, the resource made.
func created(data any) *Answer { return &Answer{Status: http.StatusCreated, Data: data} }

// success is the envelope of a success (docs/api-v2.md, Envelope and
// errors), a struct so that "status" comes first.
type success struct {
	Status string `json:"status"`
	Data   any    `json:"data"`
	Meta   any    `json:"meta"`
}

// authed authenticates the bearer token, takes a request from the client's
// bucket, checks the scope and the role, then the idempotency key, and runs
// fn: 401, 429, 403 and 403 in that order, so that every authenticated
// answer carries the rate-limit headers.
func (h *Handler) authed(rt Route, fn handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := h.authenticate(r)
		if err == nil && !h.cfg.Limiter.Allow(w.Header(), "client:"+c.ClientID) {
			err = recon.Errorf(recon.ERATELIMITED, "too many requests from OAuth2 client %s: retry after %s s", c.ClientID, w.Header().Get("Retry-After"))
		}
		if err == nil && !c.HasScope(rt.Scope) {
			err = web.MissingScope(rt.Scope)
		}
		if err == nil {
			err = c.Authorize(rt.Action)
		}
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		if rt.Idempotency == NoKey {
			h.run(w, r, c, fn)
			return
		}
		h.idempotent(w, r, c, rt, fn)
	})
}

// run calls fn and writes what it returns.
func (h *Handler) run(w http.ResponseWriter, r *http.Request, c *recon.Caller, fn handlerFunc) {
	a, err := fn(r, c)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if a.Raw != nil {
		w.Header().Set("Content-Type", a.ContentType)
		if a.Filename != "" {
			w.Header().Set("Content-Disposition", `attachment; filename="`+a.Filename+`"`)
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(a.status())
		_, _ = w.Write(a.Raw)
		return
	}
	writeJSON(w, a.status(), a.envelope())
}

func (a *Answer) status() int {
	if a.Status == 0 {
		return http.StatusOK
	}
	return a.Status
}

func (a *Answer) envelope() success {
	meta := a.Meta
	if meta == nil {
		meta = struct{}{}
	}
	return success{Status: "success", Data: a.Data, Meta: meta}
}

func (h *Handler) authenticate(r *http.Request) (*recon.Caller, error) {
	token, err := web.BearerToken(r)
	if err != nil {
		return nil, err
	}
	return h.cfg.Auth.Authenticate(r.Context(), token)
}

// now is business time.
func (h *Handler) now() time.Time { return h.cfg.Clock.Now() }
