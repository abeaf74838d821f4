package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/dashboard"
	"recon/delivery"
	"recon/mail"
	"recon/server"
	"recon/sqlstore"
	"recon/web"
)

// serveFlags are the flags of recon serve: the server's Config and what
// cmd/recon does itself before it starts the server.
type serveFlags struct {
	server.Config
	addr       string
	demo       bool
	sqliteSync string
	smtpURL    string
	readURL    string
	readMaxLag time.Duration
	// listingCacheMB is --listing-cache-mb, Config.ListingCache in MiB.
	listingCacheMB int
}

func newServeCmd(a *app) *cobra.Command {
	var cfg serveFlags
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
	f.StringVar(&cfg.MetricsAddr, "metrics-addr", "127.0.0.1:9464", `address of the separate listener serving GET /metrics (Prometheus); "off" or "" serves none. Keep it private: the metrics name companies and routes`)
	f.StringVar(&cfg.BaseURL, "base-url", "", "external base URL, the OAuth2 issuer (default http://ADDR)")
	f.BoolVar(&cfg.demo, "demo", false, "seed demo data into an empty database and print ready-to-paste curl commands (implies --sandbox)")
	f.BoolVar(&cfg.Sandbox, "sandbox", false, "sandbox mode: simulated transfers and plain-http webhook URLs")
	f.IntVar(&cfg.MaxPrefixLen, "max-prefix-length", recon.DefaultPrefixMaxLen, "longest payment-code prefix accepted (3 to 5)")
	f.Int64Var(&cfg.MaxBody, "max-body-bytes", web.DefaultMaxBody, "largest request body accepted")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a graceful stop waits for requests in flight")
	f.BoolVar(&cfg.AllowPrivate, "allow-private-targets", false, "let IPN and webhook URLs point at loopback and private addresses (tests, self-hosted setups; refused in production mode)")
	f.BoolVar(&cfg.Dispatch, "dispatch", true, "send due notifications from this node (several nodes on one PostgreSQL share the work)")
	f.IntVar(&cfg.Workers, "dispatch-workers", 16, "concurrent notification sends")
	f.DurationVar(&cfg.SendTimeout, "dispatch-timeout", delivery.DefaultTimeout, "how long a receiver has to answer a notification with a 2xx")
	f.DurationVar(&cfg.Lease, "dispatch-lease", 2*time.Minute, "how long a node's claim on a notification lasts at most; a node that stops beating loses its claims sooner (--node-timeout)")
	f.StringVar(&cfg.NodeID, "node-id", "", "this node's name in notification claims and heartbeats; unique among live nodes (default HOSTNAME-RANDOM)")
	f.DurationVar(&cfg.Heartbeat, "heartbeat", delivery.DefaultHeartbeat, "how often this node records that it is alive and looks for dead nodes")
	f.DurationVar(&cfg.NodeTimeout, "node-timeout", delivery.DefaultNodeTimeout, "how long without a heartbeat before a node is declared dead and its claimed notifications are sent by the others (at least 3 heartbeats)")
	f.StringVar(&cfg.sqliteSync, "sqlite-synchronous", sqlstore.SQLiteSyncFull, "SQLite only: full syncs every commit to disk (durable on power loss); normal is faster but a power cut may undo the last acknowledged writes")
	f.DurationSliceVar(&cfg.RetryWaits, "retry-schedule", nil, "waits between attempts of a failed notification, e.g. 1m,1m,2m,3m,5m,8m,13m (default: that, then widening to daily)")
	f.DurationVar(&cfg.RetryMaxAge, "retry-max-age", delivery.DefaultMaxAge, "how long a failed notification is retried before it is dead")
	f.Float64Var(&cfg.RateLimit, "rate-limit", 100, "requests a second each OAuth2 client (and each gateway merchant) may make, after a burst of --rate-burst; 0 turns the limit off")
	f.IntVar(&cfg.RateBurst, "rate-burst", 200, "requests a client may make at once before --rate-limit applies")
	f.IntVar(&cfg.listingCacheMB, "listing-cache-mb", 32, "MiB of encoded pages of GET /api/v1/transactions this node keeps for the next identical request; each request still reads the company's change counter, so a kept page is served only while nothing it shows has changed (docs/design.md, Listing pages kept encoded); 0 keeps none")
	f.IntVar(&cfg.Imports, "statement-imports", web.DefaultSlots, "statement files this server process imports at once, the API's and the dashboard's uploads together; one company may take half of them (at least 1); another upload gets 503 with Retry-After")
	f.Float64Var(&cfg.DashRateLimit, "dashboard-rate-limit", 10, fmt.Sprintf("requests a second each dashboard session may make after a burst of --dashboard-rate-burst (each remote address %d times both; a search costs %d); 0 turns the dashboard's limits off", server.DashAddressFactor, dashboard.SearchCost))
	f.IntVar(&cfg.DashRateBurst, "dashboard-rate-burst", 100, "requests a dashboard session may make at once before --dashboard-rate-limit applies")
	f.DurationVar(&cfg.LinkTokenTTL, "link-token-ttl", recon.DefaultLinkTokenTTL, "how long a bank-linking hub link token lives (1m to 24h)")
	f.DurationVar(&cfg.SweepInterval, "sweep-interval", server.SweepInterval, "how often this node expires orders and virtual accounts past their expiry and ends expired link tokens and idle link sessions (a node's pass is a few indexed queries; 100ms to 1h)")
	f.StringVar(&cfg.smtpURL, "smtp-url", "", "SMTP server for the team's invitations and password resets and the alerts: smtp://USER:PASS@HOST:PORT?from=ADDR (STARTTLS when offered; &tls=required refuses a server without it) or smtps:// for implicit TLS; user and password URL-encoded. Without it the dashboard shows the links to the Admin instead")
	f.StringVar(&cfg.readURL, "database-read-url", "", "PostgreSQL only: a streaming standby (postgres://...) the listings read from while it is no more than --read-max-lag behind the primary: the list endpoints of the APIs (transactions, orders, refunds, invoices) and the dashboard's transactions, orders, notifications and report pages; the primary otherwise, and always for details and writes (docs/design.md, Reads from a standby)")
	f.DurationVar(&cfg.readMaxLag, "read-max-lag", time.Second, "how far behind the primary the --database-read-url standby may be for the listings to read from it (100ms to 1h); a transfer just stored may be missing from a list that long")
	f.DurationVar(&cfg.Retention, "delivery-retention", 30*24*time.Hour, "how long delivered notifications and their attempts are kept (pending and dead ones are kept until replayed or deleted)")
	return cmd
}

// check refuses flags out of range and fills the node id.
func (cfg *serveFlags) check() error {
	if cfg.MaxPrefixLen < recon.DefaultPrefixMaxLen || cfg.MaxPrefixLen > recon.PrefixMaxLenCeiling {
		return fmt.Errorf("--max-prefix-length must be from %d to %d", recon.DefaultPrefixMaxLen, recon.PrefixMaxLenCeiling)
	}
	if cfg.LinkTokenTTL < time.Minute || cfg.LinkTokenTTL > 24*time.Hour {
		return fmt.Errorf("--link-token-ttl must be from 1m to 24h")
	}
	if cfg.SweepInterval < 100*time.Millisecond || cfg.SweepInterval > time.Hour {
		return fmt.Errorf("--sweep-interval must be from 100ms to 1h")
	}
	if cfg.readURL != "" && (cfg.readMaxLag < 100*time.Millisecond || cfg.readMaxLag > time.Hour) {
		return fmt.Errorf("--read-max-lag must be from 100ms to 1h")
	}
	if cfg.Retention < time.Hour {
		return fmt.Errorf("--delivery-retention must be at least 1h")
	}
	if err := delivery.CheckLease(cfg.Lease, cfg.SendTimeout); err != nil {
		return fmt.Errorf("--dispatch-lease, --dispatch-timeout: %w", err)
	}
	if err := delivery.CheckHeartbeat(cfg.Heartbeat, cfg.NodeTimeout); err != nil {
		return fmt.Errorf("--heartbeat, --node-timeout: %w", err)
	}
	if cfg.sqliteSync != sqlstore.SQLiteSyncFull && cfg.sqliteSync != sqlstore.SQLiteSyncNormal {
		return fmt.Errorf("--sqlite-synchronous must be %s or %s", sqlstore.SQLiteSyncFull, sqlstore.SQLiteSyncNormal)
	}
	if cfg.NodeID == "" {
		host, _ := os.Hostname()
		cfg.NodeID = cmp.Or(host, "node") + "-" + rand.Text()[:8]
	}
	if cfg.RateLimit < 0 || cfg.RateLimit > 0 && cfg.RateBurst < 1 {
		return fmt.Errorf("--rate-limit must not be negative, and --rate-burst must be at least 1")
	}
	if cfg.DashRateLimit < 0 || cfg.DashRateLimit > 0 && cfg.DashRateBurst < dashboard.SearchCost {
		return fmt.Errorf("--dashboard-rate-limit must not be negative, and --dashboard-rate-burst must be at least %d (a search's cost)", dashboard.SearchCost)
	}
	if cfg.Imports < 1 {
		return fmt.Errorf("--statement-imports must be at least 1")
	}
	if cfg.listingCacheMB < 0 || cfg.listingCacheMB > 1<<14 {
		return fmt.Errorf("--listing-cache-mb must be from 0 to %d", 1<<14)
	}
	cfg.ListingCache = cfg.listingCacheMB << 20
	if cfg.MaxBody < 1024 {
		return fmt.Errorf("--max-body-bytes must be at least 1024")
	}
	if cfg.smtpURL != "" {
		m, err := mail.ParseURL(cfg.smtpURL)
		if err != nil {
			return err
		}
		cfg.Mail = m
	}
	if cfg.MetricsAddr != "" && cfg.MetricsAddr != "off" {
		if _, _, err := net.SplitHostPort(cfg.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q must be HOST:PORT, or off: %w", cfg.MetricsAddr, err)
		}
	}
	return nil
}

// serve is recon serve: it checks the flags, opens the listener and the
// store, seeds the demo when asked, and runs the server (package server).
func (a *app) serve(ctx context.Context, cfg serveFlags) error {
	if err := cfg.check(); err != nil {
		return err
	}
	log, err := a.logger()
	if err != nil {
		return err
	}
	loc, err := a.location()
	if err != nil {
		return err
	}
	cfg.Clock, cfg.Rand, cfg.Logger, cfg.Location = a.clock, a.rand, log, loc
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://" + ln.Addr().String()
	}
	opts := []sqlstore.Option{sqlstore.WithSQLiteSynchronous(cfg.sqliteSync)}
	if cfg.readURL != "" {
		opts = append(opts, sqlstore.WithStandby(cfg.readURL, cfg.readMaxLag))
	}
	db, err := a.openStore(ctx, opts...)
	var invalid *recon.Error
	if errors.As(err, &invalid) && invalid.Fields["database_read_url"] != nil {
		return fmt.Errorf("--database-read-url: %s", recon.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	defer db.Close()
	db.HoldKeyLease(log) // PostgreSQL: key reads from memory while no other node writes
	if st, ok := db.Standby(); ok && st.Serving {
		log.Info("listings read from the standby (--database-read-url)", "standby", st.String())
	} else if ok {
		log.Warn("listings read from the primary until the standby (--database-read-url) is fresh", "standby", st.String())
	}
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
	if cfg.demo {
		cfg.Sandbox = true
	}
	if cfg.AllowPrivate && !cfg.Sandbox {
		return fmt.Errorf("--allow-private-targets is refused in production mode: add --sandbox (or --demo)")
	}
	if m, ok := cfg.Mail.(*mail.SMTP); ok {
		log.Info("e-mail sent through SMTP", "addr", m.Addr, "from", m.From)
	} else {
		log.Info("no --smtp-url: invitation and password-reset links are shown to the Admin in the dashboard")
	}
	srv, err := server.New(ctx, db, cfg.Config)
	if err != nil {
		return err
	}
	if cfg.demo {
		if err := seedDemo(ctx, a, db, srv.Auth, cfg.BaseURL, loc); err != nil {
			return fmt.Errorf("seeding demo data: %w", err)
		}
	}
	return srv.Serve(ctx, ln)
}
