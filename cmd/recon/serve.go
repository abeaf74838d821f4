package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/api"
	"recon/apiv2"
	"recon/checkout"
	"recon/dashboard"
	"recon/delivery"
	"recon/gateway"
	"recon/hub"
	"recon/ipn"
	"recon/linking"
	"recon/oauth"
	"recon/sqlstore"
	"recon/web"
)

type serveConfig struct {
	clock           recon.Clock // business time (nil: the system clock)
	addr            string
	metricsAddr     string // where /metrics is served ("" or "off": nowhere)
	baseURL         string
	demo            bool
	sandbox         bool
	maxPrefixLen    int
	maxBody         int64
	shutdownTimeout time.Duration
	location        *time.Location
	kick            func()             // wakes the dispatcher
	listeners       *gateway.Listeners // wakes and ends the recon listen streams
	allowPrivate    bool
	dispatch        bool
	workers         int
	lease           time.Duration
	sendTimeout     time.Duration
	retryWaits      []time.Duration
	retryMaxAge     time.Duration
	retention       time.Duration
	rateLimit       float64
	rateBurst       int
	dashRateLimit   float64 // per dashboard session; per address dashAddressFactor times more
	imports         int     // statement imports at once (web.Slots)
	dashRateBurst   int
	nodeID          string
	heartbeat       time.Duration
	nodeTimeout     time.Duration
	sqliteSync      string
	linkTokenTTL    time.Duration
}

func newServeCmd(a *app) *cobra.Command {
	cfg := serveConfig{clock: a.clock}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Recon server (all API surfaces on one listener)",
		Long: `Run the Recon server. With no configuration it uses the SQLite file recon.db in
the working directory and listens on 127.0.0.1:8080. Migrations run at start.

The server runs in production mode unless started with --sandbox (--demo
implies it). It stops gracefully on SIGINT or SIGTERM, finishing requests in
flight.`,
		Example: `  recon serve --demo
  recon serve --addr 0.0.0.0:8080 --base-url https://recon.example.vn --database-url postgres://recon@db/recon`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context(), cfg) },
	}
	f := cmd.Flags()
	f.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	f.StringVar(&cfg.metricsAddr, "metrics-addr", "127.0.0.1:9464", `address of the separate listener serving GET /metrics (Prometheus); "off" or "" serves none. Keep it private: the metrics name companies and routes`)
	f.StringVar(&cfg.baseURL, "base-url", "", "external base URL, the OAuth2 issuer (default http://ADDR)")
	f.BoolVar(&cfg.demo, "demo", false, "seed demo data into an empty database and print ready-to-paste curl commands (implies --sandbox)")
	f.BoolVar(&cfg.sandbox, "sandbox", false, "sandbox mode: simulated transfers and plain-http webhook URLs")
	f.IntVar(&cfg.maxPrefixLen, "max-prefix-length", recon.DefaultPrefixMaxLen, "longest payment-code prefix accepted (3 to 5)")
	f.Int64Var(&cfg.maxBody, "max-body-bytes", web.DefaultMaxBody, "largest request body accepted")
	f.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a graceful stop waits for requests in flight")
	f.BoolVar(&cfg.allowPrivate, "allow-private-targets", false, "let IPN and webhook URLs point at loopback and private addresses (tests, self-hosted setups; refused in production mode)")
	f.BoolVar(&cfg.dispatch, "dispatch", true, "send due notifications from this node (several nodes on one PostgreSQL share the work)")
	f.IntVar(&cfg.workers, "dispatch-workers", 16, "concurrent notification sends")
	f.DurationVar(&cfg.sendTimeout, "dispatch-timeout", delivery.DefaultTimeout, "how long a receiver has to answer a notification with a 2xx")
	f.DurationVar(&cfg.lease, "dispatch-lease", 2*time.Minute, "how long a node's claim on a notification lasts at most; a node that stops beating loses its claims sooner (--node-timeout)")
	f.StringVar(&cfg.nodeID, "node-id", "", "this node's name in notification claims and heartbeats; unique among live nodes (default HOSTNAME-RANDOM)")
	f.DurationVar(&cfg.heartbeat, "heartbeat", delivery.DefaultHeartbeat, "how often this node records that it is alive and looks for dead nodes")
	f.DurationVar(&cfg.nodeTimeout, "node-timeout", delivery.DefaultNodeTimeout, "how long without a heartbeat before a node is declared dead and its claimed notifications are sent by the others (at least 3 heartbeats)")
	f.StringVar(&cfg.sqliteSync, "sqlite-synchronous", sqlstore.SQLiteSyncFull, "SQLite only: full syncs every commit to disk (durable on power loss); normal is faster but a power cut may undo the last acknowledged writes")
	f.DurationSliceVar(&cfg.retryWaits, "retry-schedule", nil, "waits between attempts of a failed notification, e.g. 1m,1m,2m,3m,5m,8m,13m (default: that, then widening to daily)")
	f.DurationVar(&cfg.retryMaxAge, "retry-max-age", delivery.DefaultMaxAge, "how long a failed notification is retried before it is dead")
	f.Float64Var(&cfg.rateLimit, "rate-limit", 100, "requests a second each OAuth2 client (and each gateway merchant) may make, after a burst of --rate-burst; 0 turns the limit off")
	f.IntVar(&cfg.rateBurst, "rate-burst", 200, "requests a client may make at once before --rate-limit applies")
	f.IntVar(&cfg.imports, "statement-imports", web.DefaultSlots, "statement files this server process imports at once, the API's and the dashboard's uploads together; one company may take half of them (at least 1); another upload gets 503 with Retry-After")
	f.Float64Var(&cfg.dashRateLimit, "dashboard-rate-limit", 10, fmt.Sprintf("requests a second each dashboard session may make after a burst of --dashboard-rate-burst (each remote address %d times both; a search costs %d); 0 turns the dashboard's limits off", dashAddressFactor, dashboard.SearchCost))
	f.IntVar(&cfg.dashRateBurst, "dashboard-rate-burst", 100, "requests a dashboard session may make at once before --dashboard-rate-limit applies")
	f.DurationVar(&cfg.linkTokenTTL, "link-token-ttl", recon.DefaultLinkTokenTTL, "how long a bank-linking hub link token lives (1m to 24h)")
	f.DurationVar(&cfg.retention, "delivery-retention", 30*24*time.Hour, "how long delivered notifications and their attempts are kept (pending and dead ones are kept until replayed or deleted)")
	return cmd
}

func (a *app) serve(ctx context.Context, cfg serveConfig) error {
	if cfg.maxPrefixLen < recon.DefaultPrefixMaxLen || cfg.maxPrefixLen > recon.PrefixMaxLenCeiling {
		return fmt.Errorf("--max-prefix-length must be from %d to %d", recon.DefaultPrefixMaxLen, recon.PrefixMaxLenCeiling)
	}
	if cfg.linkTokenTTL < time.Minute || cfg.linkTokenTTL > 24*time.Hour {
		return fmt.Errorf("--link-token-ttl must be from 1m to 24h")
	}
	if cfg.retention < time.Hour {
		return fmt.Errorf("--delivery-retention must be at least 1h")
	}
	if err := delivery.CheckLease(cfg.lease, cfg.sendTimeout); err != nil {
		return fmt.Errorf("--dispatch-lease, --dispatch-timeout: %w", err)
	}
	if err := delivery.CheckHeartbeat(cfg.heartbeat, cfg.nodeTimeout); err != nil {
		return fmt.Errorf("--heartbeat, --node-timeout: %w", err)
	}
	if cfg.sqliteSync != sqlstore.SQLiteSyncFull && cfg.sqliteSync != sqlstore.SQLiteSyncNormal {
		return fmt.Errorf("--sqlite-synchronous must be %s or %s", sqlstore.SQLiteSyncFull, sqlstore.SQLiteSyncNormal)
	}
	if cfg.nodeID == "" {
		host, _ := os.Hostname()
		cfg.nodeID = cmp.Or(host, "node") + "-" + rand.Text()[:8]
	}
	if cfg.rateLimit < 0 || cfg.rateLimit > 0 && cfg.rateBurst < 1 {
		return fmt.Errorf("--rate-limit must not be negative, and --rate-burst must be at least 1")
	}
	if cfg.dashRateLimit < 0 || cfg.dashRateLimit > 0 && cfg.dashRateBurst < dashboard.SearchCost {
		return fmt.Errorf("--dashboard-rate-limit must not be negative, and --dashboard-rate-burst must be at least %d (a search's cost)", dashboard.SearchCost)
	}
	if cfg.imports < 1 {
		return fmt.Errorf("--statement-imports must be at least 1")
	}
	if cfg.maxBody < 1024 {
		return fmt.Errorf("--max-body-bytes must be at least 1024")
	}
	if cfg.metricsAddr != "" && cfg.metricsAddr != "off" {
		if _, _, err := net.SplitHostPort(cfg.metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q must be HOST:PORT, or off: %w", cfg.metricsAddr, err)
		}
	}
	log, err := a.logger()
	if err != nil {
		return err
	}
	loc, err := a.location()
	if err != nil {
		return err
	}
	cfg.location = loc
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if cfg.baseURL == "" {
		cfg.baseURL = "http://" + ln.Addr().String()
	}
	db, err := a.openStore(ctx, sqlstore.WithSQLiteSynchronous(cfg.sqliteSync))
	if err != nil {
		return err
	}
	defer db.Close()
	if src, err := a.secretKeySource(db); err == nil { // openStore loaded it from there
		if src.File != "" {
			log.Info("secrets sealed under the key file", "path", src.File)
		} else {
			log.Info("secrets sealed under the key in " + envSecretKey)
		}
	}
	if setting, durable, err := db.Durability(ctx); err != nil {
		return err
	} else if durable {
		log.Info("database durability", "engine", db.Engine(), "setting", setting)
	} else {
		log.Warn("database durability: a power cut may undo acknowledged writes (and their notifications may already be sent)",
			"engine", db.Engine(), "setting", setting)
	}
	metrics := web.NewMetrics()
	auth, err := newOAuthServer(ctx, db, cfg.baseURL, a.clock, log, func(c *oauth.Config) { c.Metrics = oauth.NewMetrics(metrics.Registry) })
	if err != nil {
		return err
	}
	if cfg.demo {
		cfg.sandbox = true
		if err := seedDemo(ctx, a, db, auth, cfg.baseURL, loc); err != nil {
			return fmt.Errorf("seeding demo data: %w", err)
		}
	}
	mode := "production"
	if cfg.sandbox {
		mode = "sandbox"
	}
	if cfg.allowPrivate && !cfg.sandbox {
		return fmt.Errorf("--allow-private-targets is refused in production mode: add --sandbox (or --demo)")
	}

	dispatcher := &delivery.Dispatcher{
		Store:    db,
		Client:   delivery.NewClient(delivery.ClientOptions{AllowPrivate: cfg.allowPrivate, Timeout: cfg.sendTimeout}),
		Logger:   log,
		Metrics:  delivery.NewMetrics(metrics.Registry),
		Workers:  cfg.workers,
		Lease:    cfg.lease,
		Schedule: delivery.Schedule{Waits: cfg.retryWaits, MaxAge: cfg.retryMaxAge},
		NodeID:   cfg.nodeID, Heartbeat: cfg.heartbeat, NodeTimeout: cfg.nodeTimeout,
	}
	cfg.listeners = gateway.NewListeners()
	db.OnEnqueue(func() {
		dispatcher.Kick()
		cfg.listeners.Notify()
	})
	cfg.kick = dispatcher.Kick
	mux := routes(db, auth, metrics, cfg, mode, log)
	srv := &http.Server{
		Handler:           (&web.Middleware{Logger: log, Metrics: metrics}).Wrap(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(cfg.listeners.Stop) // end the recon listen streams
	msrv, mln, err := metricsServer(cfg.metricsAddr, metrics, log)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if msrv != nil {
		defer msrv.Close()
		go func() {
			if err := msrv.Serve(mln); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics listener: %w", err)
			}
		}()
	}
	go maintain(ctx, db, cfg.retention, a.clock, cfg.location, log)
	go sweepHub(ctx, db, a.clock, log)
	var dispatched chan error // nil when this node does not dispatch: never ready
	if cfg.dispatch {
		dispatched = make(chan error, 1)
		go func() { dispatched <- dispatcher.Run(ctx) }()
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
	log.Info("shutting down: finishing requests in flight", "timeout", cfg.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
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

// maintainStore is what maintain needs of the database.
type maintainStore interface {
	DeleteExpiredTokenSessions(ctx context.Context, t time.Time) (int64, error)
	DeleteDeliveredBefore(ctx context.Context, t time.Time) (int64, error)
	DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error)
	ApplyRetention(ctx context.Context, now time.Time) (recon.RetentionResult, error)
	Optimize(ctx context.Context) error
}

// maintain runs, at start and every hour until ctx ends, the database's
// housekeeping: it deletes the token sessions that expired more than a day
// ago, the notifications delivered longer ago than retention, API v2's
// expired idempotency keys (docs/api-v2.md, Idempotency), and each
// company's data older than its data_storage_time (business calendar days in
// loc), and refreshes the planner's statistics. Every node may run it: all of
// it is idempotent.
func maintain(ctx context.Context, db maintainStore, retention time.Duration, clock recon.Clock, loc *time.Location, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := db.DeleteExpiredTokenSessions(ctx, clock.Now().Add(-24*time.Hour))
		if err != nil && ctx.Err() == nil {
			log.Warn("deleting expired tokens", "err", err)
		} else if n > 0 {
			log.Info("deleted expired tokens", "count", n)
		}
		if n, err := db.DeleteDeliveredBefore(ctx, clock.Now().Add(-retention)); err != nil && ctx.Err() == nil {
			log.Warn("deleting old delivered notifications", "err", err)
		} else if n > 0 {
			log.Info("deleted old delivered notifications", "count", n)
		}
		if n, err := db.DeleteExpiredIdempotencyKeys(ctx, clock.Now()); err != nil && ctx.Err() == nil {
			log.Warn("deleting expired idempotency keys", "err", err)
		} else if n > 0 {
			log.Info("deleted expired idempotency keys", "count", n)
		}
		if res, err := db.ApplyRetention(ctx, clock.Now().In(loc)); err != nil && ctx.Err() == nil {
			log.Warn("applying the companies' data retention", "err", err, "transactions", res.Transactions, "deliveries", res.Deliveries, "hub_events", res.HubEvents)
		} else if res != (recon.RetentionResult{}) {
			log.Info("deleted data older than the companies' retention", "transactions", res.Transactions, "deliveries", res.Deliveries, "hub_events", res.HubEvents)
		}
		if err := db.Optimize(ctx); err != nil && ctx.Err() == nil {
			log.Warn("refreshing planner statistics", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// dashAddressFactor is how many sessions' worth of dashboard requests one
// remote address may make: an office behind one address has several users.
const dashAddressFactor = 5

// routes lists every endpoint of the server on one mux: the whole API at a glance.
func routes(db *sqlstore.DB, auth *oauth.Server, metrics *web.Metrics, cfg serveConfig, mode string, log *slog.Logger) *web.Mux {
	mux := web.NewMux()
	mux.MaxBody = cfg.maxBody
	clock := cfg.clock
	if clock == nil {
		clock = recon.SystemClock{}
	}
	web.RegisterHealth(mux, db) // /metrics is on its own listener: metricsServer
	mux.HandleFunc("GET /openapi.json", api.ServeOpenAPI)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		web.WriteJSON(w, http.StatusOK, map[string]any{"name": "recon", "mode": mode, "openapi": "/openapi.json",
			"oauth_metadata": "/.well-known/oauth-authorization-server"})
	})
	auth.Register(mux)
	sandbox := mode == "sandbox"
	limiter := web.NewRateLimiter(cfg.rateLimit, cfg.rateBurst) // one bucket per client or merchant
	uploads := web.NewSlots(cfg.imports, 0)                     // every statement upload, API and dashboard (docs/statements.md, Limits)
	(&api.Handler{Store: db, Auth: auth, MaxPrefixLen: cfg.maxPrefixLen, Location: cfg.location, Clock: clock,
		Sandbox: sandbox, Kick: cfg.kick, Limiter: limiter, Uploads: uploads, Logger: log}).Register(mux)
	apiv2.New(apiv2.Config{Store: db, Auth: auth, Limiter: limiter, Clock: clock, Location: cfg.location, Logger: log}).Register(mux)
	// The services every surface shares (ARCHITECTURE.md, "The dependency rule").
	checkURL := func(raw string) error { return delivery.CheckURL(raw, sandbox, cfg.allowPrivate) }
	ipns := &ipn.Service{Store: db, CheckURL: checkURL, Blocked: delivery.IsBlocked}
	checkouts := &checkout.Service{Store: db, Clock: clock, Location: cfg.location, Logger: log, Metrics: checkout.NewMetrics(metrics.Registry)}
	(&gateway.Handler{Store: db, Checkout: checkouts, IPN: ipns, Sandbox: sandbox, Location: cfg.location, Clock: clock, Logger: log,
		Limiter: limiter, Listeners: cfg.listeners, Headers: delivery.Headers,
	}).Register(mux)
	links := &linking.Service{Store: db, BaseURL: cfg.baseURL, LinkTTL: cfg.linkTokenTTL, CheckURL: checkURL, Blocked: delivery.IsBlocked}
	(&hub.Handler{Store: db, Auth: auth, Tokens: auth, Links: links, Sandbox: sandbox, Location: cfg.location, Clock: clock,
		Logger: log, Limiter: limiter}).Register(mux)
	(&dashboard.Handler{Store: db, Passwords: auth, Sandbox: sandbox, Location: cfg.location, Clock: clock, Logger: log,
		MaxPrefixLen: cfg.maxPrefixLen, Kick: cfg.kick, HashPassword: oauth.HashPassword, Uploads: uploads,
		SessionLimiter: web.NewRateLimiter(cfg.dashRateLimit, cfg.dashRateBurst),
		AddressLimiter: web.NewRateLimiter(cfg.dashRateLimit*dashAddressFactor, cfg.dashRateBurst*dashAddressFactor),
		IPN:            ipns,
		ImportStatement: func(ctx context.Context, tenant recon.TenantID, account int64, name string, f io.ReadSeeker) (*dashboard.StatementResult, error) {
			return importStatement(ctx, db, tenant, account, name, f, cfg.location, clock)
		},
		Hub: links,
		RegisterClient: func(ctx context.Context, c *recon.Client, public bool) (string, error) {
			return oauth.RegisterClient(ctx, db, c, public)
		},
	}).Register(mux)
	return mux
}

// newOAuthServer builds the authorization server on the database's token
// signing key, which the first start generates: the server and the CLI on the
// same database (and every node sharing it) check each other's tokens.
func newOAuthServer(ctx context.Context, db *sqlstore.DB, issuer string, clock recon.Clock, log *slog.Logger, configure ...func(*oauth.Config)) (*oauth.Server, error) {
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
