package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"recon"
	"recon/api"
	"recon/apiv2"
	"recon/checkout"
	"recon/dashboard"
	"recon/delivery"
	"recon/gateway"
	"recon/hub"
	"recon/invoicelookup"
	"recon/ipn"
	"recon/linking"
	"recon/oauth"
	"recon/orders"
	"recon/statement"
	"recon/web"
)

// routes lists every endpoint of the server on one mux: the whole API at a
// glance. Each surface registers its own routes; what they share (the rate
// limiter, the statement import slots, the services) is made here once.
func (s *Server) routes() *web.Mux {
	cfg, db, auth, clock, log := s.cfg, s.DB, s.Auth, s.clock, s.log
	mode := "production"
	if cfg.Sandbox {
		mode = "sandbox"
	}
	mux := web.NewMux()
	mux.MaxBody = cfg.MaxBody
	web.RegisterHealth(mux, db) // /metrics is on its own listener: metricsServer
	mux.HandleFunc("GET /openapi.json", api.ServeOpenAPI)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		web.WriteJSON(w, http.StatusOK, map[string]any{"name": "recon", "mode": mode, "openapi": "/openapi.json",
			"oauth_metadata": "/.well-known/oauth-authorization-server"})
	})
	auth.Register(mux)
	sandbox := cfg.Sandbox
	limiter := web.NewRateLimiter(cfg.RateLimit, cfg.RateBurst) // one bucket per client or merchant
	uploads := web.NewSlots(cfg.Imports, 0)                     // every statement upload, API and dashboard (docs/statements.md, Limits)
	kick := s.Dispatcher.Kick

	// The services every surface shares (ARCHITECTURE.md, "The dependency rule").
	checkURL := func(raw string) error { return delivery.CheckURL(raw, sandbox, cfg.AllowPrivate) }
	ipns := &ipn.Service{Store: db, CheckURL: checkURL, Blocked: delivery.IsBlocked, Rand: cfg.Rand}
	checkouts := &checkout.Service{Store: db, Clock: clock, Location: cfg.Location, Logger: log, Rand: cfg.Rand,
		Metrics: checkout.NewMetrics(s.Metrics.Registry)}
	// API v2's orders (docs/api-v2.md); its refunds are s.Refunds, with the
	// payout connectors (server.go).
	orderSvc := &orders.Service{Store: db, Clock: clock, Rand: cfg.Rand}
	links := &linking.Service{Store: db, BaseURL: cfg.BaseURL, LinkTTL: cfg.LinkTokenTTL, CheckURL: checkURL, Blocked: delivery.IsBlocked}

	// /api/v1 (docs/api.md); API v2 (docs/api-v2.md) registers beside it.
	(&api.Handler{Store: db, Auth: auth, MaxPrefixLen: cfg.MaxPrefixLen, Location: cfg.Location, Clock: clock, Rand: cfg.Rand,
		Sandbox: sandbox, Kick: kick, Limiter: limiter, Uploads: uploads, Logger: log, VAs: orderSvc,
		PageCacheBytes: cfg.ListingCache}).Register(mux)
	apiv2.New(apiv2.Config{Store: db, Auth: auth, Limiter: limiter, Clock: clock, Rand: cfg.Rand, Location: cfg.Location, Logger: log,
		Orders: orderSvc, Refunds: s.Refunds,
		// The e-invoice API under /v1/invoices (docs/invoices.md, API), its
		// PDFs naming the public lookup page.
		Invoices: s.Invoices, InvoiceLookupURL: strings.TrimRight(cfg.BaseURL, "/") + invoicelookup.Path}).Register(mux)
	// The gateway's /v1 (checkout, orders, IPN settings, listen).
	(&gateway.Handler{Store: db, Checkout: checkouts, IPN: ipns, Sandbox: sandbox, Location: cfg.Location, Clock: clock, Rand: cfg.Rand,
		Logger: log, Limiter: limiter, Listeners: s.Listeners, Headers: delivery.Headers,
	}).Register(mux)
	// The bank-linking hub's /v1 (docs/hub.md).
	(&hub.Handler{Store: db, Auth: auth, Tokens: auth, Links: links, Sandbox: sandbox, Location: cfg.Location, Clock: clock,
		Logger: log, Limiter: limiter}).Register(mux)
	// The public invoice lookup page (docs/invoices.md, "PDF and the lookup
	// page"), limited per remote address.
	(&invoicelookup.Handler{Store: db, Limiter: web.NewRateLimiter(invoicelookup.RateLimit, invoicelookup.RateBurst),
		BaseURL: cfg.BaseURL, Location: cfg.Location, Logger: log}).Register(mux)
	// The merchant dashboard (docs/dashboard.md).
	dash := &dashboard.Handler{Store: db, Passwords: auth, Sandbox: sandbox, Location: cfg.Location, Clock: clock, Rand: cfg.Rand, Logger: log,
		MaxPrefixLen: cfg.MaxPrefixLen, Kick: kick, HashPassword: oauth.HashPassword, Uploads: uploads,
		SessionLimiter:  web.NewRateLimiter(cfg.DashRateLimit, cfg.DashRateBurst),
		AddressLimiter:  web.NewRateLimiter(cfg.DashRateLimit*DashAddressFactor, cfg.DashRateBurst*DashAddressFactor),
		IPN:             ipns,
		Orders:          checkouts,
		Refunds:         s.Refunds,
		Invoices:        s.Invoices,
		V2Orders:        orderSvc,
		ImportStatement: ImportStatement(db, cfg.Location, clock),
		Hub:             links,
		Team:            s.Team,
		RegisterClient: func(ctx context.Context, c *recon.Client, public bool) (string, error) {
			return oauth.RegisterClient(ctx, db, c, public)
		},
	}
	WireStatements(dash, db, cfg.Location, clock, "")
	dash.Register(mux)
	return mux
}

// ImportStatement is the dashboard's statement upload
// (dashboard.Handler.ImportStatement): statement.ImportFile, the import of
// POST /api/v1/bank-accounts/{id}/statements, with its report as package
// dashboard names it.
func ImportStatement(db statement.Store, loc *time.Location, clock recon.Clock) func(ctx context.Context, tenant recon.TenantID, account int64, name string, f io.ReadSeeker) (*dashboard.StatementResult, error) {
	return func(ctx context.Context, tenant recon.TenantID, account int64, name string, f io.ReadSeeker) (*dashboard.StatementResult, error) {
		rep, err := statement.ImportFile(ctx, db, tenant, account, name, f, "auto", statement.Options{Location: loc, Clock: clock}, false)
		if rep == nil {
			return nil, err
		}
		res := &dashboard.StatementResult{Format: string(rep.Format), Imported: rep.Imported, Duplicates: rep.Duplicates, BadRows: rep.SkippedCount,
			OrdersPaid: rep.OrdersPaid, ExceptionsOpened: rep.ExceptionsOpened, From: rep.From, To: rep.To, ImportID: rep.ImportID}
		for _, e := range rep.Skipped {
			res.RowErrors = append(res.RowErrors, e.Error())
			res.RowProblems = append(res.RowProblems, &e)
		}
		return res, err
	}
}
