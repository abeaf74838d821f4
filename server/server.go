// Package server is `recon serve` put together: every HTTP surface on one
// mux (Routes), the separate metrics listener, the notification dispatcher
// and the maintenance loops of one node, started and stopped together.
//
// It is the one package besides cmd/recon that imports the adapters and
// services: it composes them. cmd/recon reads the flags, opens the store and
// the listener, builds a Config and calls New and Serve (ARCHITECTURE.md).
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"recon"
	"recon/alerts"
	"recon/delivery"
	"recon/einvoice"
	"recon/gateway"
	"recon/invoices"
	"recon/mail"
	"recon/oauth"
	"recon/refunds"
	"recon/sqlstore"
	"recon/team"
	"recon/web"
)

// Config is what a server is made of besides its store: the settings of
// `recon serve` (each field is one of its flags, named in the comment where
// the name differs), the business time zone, and the injected clock,
// randomness and logger. The zero value of a field is the zero of its flag,
// not the flag's default: cmd/recon fills every one.
type Config struct {
	Clock    recon.Clock    // business time (nil: the system clock)
	Rand     io.Reader      // randomness of business data: payment codes, references, secrets (nil: crypto/rand)
	Logger   *slog.Logger   // nil: discarded
	Location *time.Location // the business time zone (--timezone)

	BaseURL         string        // external base URL, the OAuth2 issuer
	MetricsAddr     string        // where /metrics is served ("" or "off": nowhere)
	Sandbox         bool          // sandbox mode (--sandbox, --demo)
	AllowPrivate    bool          // --allow-private-targets
	MaxPrefixLen    int           // --max-prefix-length
	MaxBody         int64         // --max-body-bytes
	ShutdownTimeout time.Duration // how long a graceful stop waits for requests in flight

	Dispatch    bool            // send due notifications from this node
	Workers     int             // --dispatch-workers
	Lease       time.Duration   // --dispatch-lease
	SendTimeout time.Duration   // --dispatch-timeout
	RetryWaits  []time.Duration // --retry-schedule
	RetryMaxAge time.Duration
	NodeID      string
	Heartbeat   time.Duration
	NodeTimeout time.Duration
	Retention   time.Duration // --delivery-retention

	RateLimit     float64 // per OAuth2 client and gateway merchant
	RateBurst     int
	DashRateLimit float64 // per dashboard session; per address DashAddressFactor times more
	DashRateBurst int
	Imports       int // statement imports at once (web.Slots; --statement-imports)
	ListingCache  int // bytes of encoded transaction pages kept (--listing-cache-mb, in bytes; 0: none)
	LinkTokenTTL  time.Duration
	SweepInterval time.Duration // --sweep-interval (0: SweepInterval)

	// Mail sends the team's invitations and password resets and the alerts
	// (--smtp-url; docs/dashboard.md, Team). nil: no e-mail is sent, and the
	// dashboard shows the links to the Admin instead.
	Mail mail.Sender
}

// DashAddressFactor is how many sessions' worth of dashboard requests one
// remote address may make: an office behind one address has several users.
const DashAddressFactor = 5

// Server is one node of Recon: its store, its authorization server and the
// handlers, dispatcher and loops around them.
type Server struct {
	cfg   Config
	clock recon.Clock
	log   *slog.Logger

	DB         *sqlstore.DB
	Auth       *oauth.Server
	Metrics    *web.Metrics
	Dispatcher *delivery.Dispatcher
	Listeners  *gateway.Listeners // the recon listen streams: woken by the store, ended at shutdown
	// Refunds is the refunds service every surface shares, with its payout
	// connectors: the sandbox's (Payouts) for test tenants; live ones have
	// none, on any server (docs/api-v2.md, How a refund settles).
	Refunds *refunds.Service
	Payouts *refunds.Sandbox
	// Invoices is the e-invoice service every surface shares, with its
	// providers: the sandbox (InvoiceSandbox) for test tenants; live ones
	// have none, on any server (docs/invoices.md, Providers). Its Signer
	// is the XML signer (docs/invoices.md, XML and its signature).
	Invoices       *invoices.Service
	InvoiceSandbox *invoices.Sandbox
	// Mail is Config.Mail: nil when no SMTP server was configured.
	Mail mail.Sender
	// Team is the team's service (invitations, password resets,
	// deactivation; docs/dashboard.md, Team) the dashboard calls.
	Team *team.Service
	// Alerts finds and sends the companies' alerts from the maintenance
	// loop (docs/dashboard.md, Alerts).
	Alerts *alerts.Service
	// Mux is every endpoint (Routes), without the middleware Handler adds.
	Mux *web.Mux
}

// New builds the server on db, which is migrated and holds its secret key:
// the authorization server, the dispatcher, the listeners and every route.
// It makes the store wake the dispatcher and the listeners when it enqueues a
// notification. Nothing is served until Serve.
func New(ctx context.Context, db *sqlstore.DB, cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, clock: cfg.Clock, log: cfg.Logger, DB: db, Metrics: web.NewMetrics(), Mail: cfg.Mail}
	if s.clock == nil {
		s.clock = recon.SystemClock{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if _, ok := db.Standby(); ok {
		s.Metrics.Registry.MustRegister(standbyMetrics(db)...)
	}
	auth, err := NewOAuth(ctx, db, cfg.BaseURL, s.clock, s.log, func(c *oauth.Config) { c.Metrics = oauth.NewMetrics(s.Metrics.Registry) })
	if err != nil {
		return nil, err
	}
	s.Auth = auth
	s.Dispatcher = &delivery.Dispatcher{
		Store:    db,
		Client:   delivery.NewClient(delivery.ClientOptions{AllowPrivate: cfg.AllowPrivate, Timeout: cfg.SendTimeout}),
		Logger:   s.log,
		Metrics:  delivery.NewMetrics(s.Metrics.Registry),
		Workers:  cfg.Workers,
		Lease:    cfg.Lease,
		Schedule: delivery.Schedule{Waits: cfg.RetryWaits, MaxAge: cfg.RetryMaxAge},
		NodeID:   cfg.NodeID, Heartbeat: cfg.Heartbeat, NodeTimeout: cfg.NodeTimeout,
	}
	s.Listeners = gateway.NewListeners()
	db.OnEnqueue(func() {
		s.Dispatcher.Kick()
		s.Listeners.Notify()
	})
	s.Payouts = &refunds.Sandbox{Store: db, Clock: s.clock, Location: cfg.Location}
	s.Refunds = &refunds.Service{Store: db, Clock: s.clock, Location: cfg.Location, Test: s.Payouts}
	s.InvoiceSandbox = &invoices.Sandbox{Clock: s.clock}
	s.Invoices = &invoices.Service{Store: db, Clock: s.clock, Location: cfg.Location, Test: s.InvoiceSandbox,
		Signer: &einvoice.Signer{Store: db, Clock: s.clock, Sandbox: cfg.Sandbox, Original: db.Invoice}}
	s.Team = &team.Service{Store: db, Clock: s.clock, Mail: cfg.Mail, BaseURL: cfg.BaseURL, Hash: oauth.HashPassword,
		Logger: s.log, Location: cfg.Location}
	s.Alerts = &alerts.Service{Store: db, Mail: alertMailer(cfg.Mail), Clock: s.clock, Location: cfg.Location, Node: cfg.NodeID, Logger: s.log,
		Post: chatPoster(s.Dispatcher.Client, s.clock)}
	if s.Alerts.Node == "" {
		s.Alerts.Node = recon.NewSecret()[:12]
	}
	s.Mux = s.routes()
	return s, nil
}

// NewOAuth builds the authorization server on the database's token signing
// key, which the first start generates: the server and the CLI on the same
// database (and every node sharing it) check each other's tokens.
func NewOAuth(ctx context.Context, db *sqlstore.DB, issuer string, clock recon.Clock, log *slog.Logger, configure ...func(*oauth.Config)) (*oauth.Server, error) {
	key, err := db.ServerKey(ctx, "oauth_hmac", 32)
	if err != nil {
		return nil, fmt.Errorf("loading the token signing key: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := oauth.Config{Issuer: issuer, Secret: key, Clock: clock, Logger: log}
	for _, c := range configure {
		c(&cfg)
	}
	return oauth.New(cfg, db)
}

// Handler is the server's whole HTTP surface: Mux behind web.Middleware
// (request id, recovery, access log, metrics).
func (s *Server) Handler() http.Handler {
	return (&web.Middleware{Logger: s.log, Metrics: s.Metrics}).Wrap(s.Mux)
}

// Serve serves on ln, and /metrics on Config.MetricsAddr, runs the
// maintenance loops and, with Config.Dispatch, the dispatcher, until ctx
// ends or one of them fails; then it stops gracefully, finishing requests in
// flight within Config.ShutdownTimeout, and returns once the loops and the
// dispatcher have ended.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	cfg, log := s.cfg, s.log
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnContext:       web.WholeConnContext,
	}
	srv.RegisterOnShutdown(s.Listeners.Stop) // end the recon listen streams
	msrv, mln, err := metricsServer(cfg.MetricsAddr, s.Metrics, log)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(web.WholeListener(ln)) }()
	// The line a newcomer waits for (README, docs/getting-started.md): the
	// address really bound (a port 0 resolved) and the base URL links use.
	log.Info("listening on http://"+ln.Addr().String(), "addr", ln.Addr().String(), "base_url", cfg.BaseURL)
	if msrv != nil {
		defer msrv.Close()
		go func() {
			if err := msrv.Serve(mln); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics listener: %w", err)
			}
		}()
	}
	// The loops and the dispatcher end before Serve returns, on every path:
	// its caller closes the store next (recon serve, the tests), and a step
	// still running would write to a closed database, or into a directory
	// being removed.
	ctx, stop := context.WithCancel(ctx)
	var bg sync.WaitGroup
	defer bg.Wait()
	defer stop()
	for _, l := range s.Loops() {
		bg.Go(func() { l.Run(ctx, s.clock, log) })
	}
	var dispatched chan error // nil when this node does not dispatch: never ready
	if cfg.Dispatch {
		dispatched = make(chan error, 1)
		bg.Go(func() { dispatched <- s.Dispatcher.Run(ctx) })
	}
	var dispatchErr error
	select {
	case err := <-errc:
		return err
	case dispatchErr = <-dispatched:
		// The dispatcher stops by itself only on a misconfiguration: stop serving.
		dispatched = nil
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight", "timeout", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if msrv != nil {
		_ = msrv.Shutdown(sctx)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if dispatched != nil {
		dispatchErr = <-dispatched
	}
	if dispatchErr != nil {
		return fmt.Errorf("delivery dispatcher: %w", dispatchErr)
	}
	log.Info("stopped")
	return nil
}

// metricsServer listens on addr for GET /metrics alone (nil, nil when addr is
// "" or "off"). The metrics name routes, companies and delivery counts, so
// they are not served on the public listener (README, Operations); a
// non-loopback address is accepted, since it was given explicitly, with a
// warning.
func metricsServer(addr string, metrics *web.Metrics, log *slog.Logger) (*http.Server, net.Listener, error) {
	if addr == "" || addr == "off" {
		return nil, nil, nil
	}
	host, _, _ := net.SplitHostPort(addr) // checked with the other flags
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		log.Warn("metrics served beyond this machine: restrict who may reach --metrics-addr", "addr", ln.Addr().String())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler())
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}, ln, nil
}
