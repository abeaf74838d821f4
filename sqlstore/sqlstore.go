// Package sqlstore implements recon.Store on database/sql for two engines:
// SQLite (modernc.org/sqlite, pure Go, the default) and PostgreSQL (pgx).
//
// The SQL is written once where the dialects agree: both engines take $1-style
// placeholders, RETURNING, and the same table and column names. Every place
// where they differ (driver setup, row locks, error codes, generated
// placeholders, the bulk statements of ingestion and deliveries, migration
// locking) is a method of the dialect interface (dialect.go), implemented
// once per engine in dialect_sqlite.go and dialect_postgres.go; the store code
// never asks which engine it runs on. Each engine has its own migrations
// folder (migrations/sqlite, migrations/postgres) with an equivalent schema.
//
// Times are stored in UTC with microsecond precision: timestamptz on
// PostgreSQL, integer Unix microseconds in TIMESTAMP columns on SQLite (the
// driver converts both ways, see sqliteDSN). Lists of scopes and permissions
// are stored space-separated; redirect URIs newline-separated.
package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"

	"recon"
)

// Engines.
const (
	EngineSQLite   = "sqlite"
	EnginePostgres = "postgres"
)

// DefaultSQLitePath is the database file used when the database URL is empty.
const DefaultSQLitePath = "recon.db"

// DB is a database of either engine. It implements recon.Store and is safe for
// concurrent use.
type DB struct {
	db    *sql.DB
	d     dialect
	clock recon.Clock
	rand  io.Reader
	// path is the SQLite database file ("" on PostgreSQL).
	path string
	seal sealer
	// onEnqueue is called after a commit that enqueued deliveries (may be nil).
	onEnqueue func()
	// noOrdered: no delivery target was ordered at this node's last
	// heartbeat, and none has been saved ordered here since; the claims
	// then leave out the ordered targets' selection (ClaimDeliveries).
	noOrdered atomic.Bool
	group     ingestGroup
	stats     freshStats
	// writer, on SQLite, admits one write transaction of this process at a
	// time; nil on PostgreSQL (see inTx).
	writer chan struct{}
	// stmts holds statements prepared once and kept (see stmt).
	stmts sync.Map // query → *sql.Stmt
	// dupWindows holds each tenant's duplicate window as its last batch
	// read it, for the next batch's look-up (ingestTx).
	dupWindows sync.Map // company id → int64 days
	// synchronous is SQLite's synchronous setting (see WithSQLiteSynchronous).
	synchronous string
	// rederiveLimit replaces maxRederive when positive (tests).
	rederiveLimit int
	// readURL and readMaxLag are WithStandby's; standby is its pool and
	// checker (nil without it: every read goes to db).
	readURL    string
	readMaxLag time.Duration
	standby    *standby
	// keys reads the authentication's epoch and tenant versions
	// (sqlstore/keyread.go).
	keys keyReader
	// lease is the key lease's state (PostgreSQL; nil on SQLite), held
	// after HoldKeyLease (sqlstore/keylease.go); pgConfig is the pool's
	// connection configuration, for the lease's own session.
	lease    *keyLease
	pgConfig *pgx.ConnConfig
	// wal is the SQLite file's mapped WAL index (nil: not mapped), by
	// which key reads are answered from memory (sqlstore/walindex.go).
	wal       *walIndex
	stopLease context.CancelFunc
	leaseDone chan struct{}
}

var _ recon.Store = (*DB)(nil)

// Option configures Open.
type Option func(*DB)

// WithClock sets the clock that stamps CreatedAt fields (default: the system clock).
func WithClock(c recon.Clock) Option { return func(db *DB) { db.clock = c } }

// SQLite synchronous settings (WithSQLiteSynchronous).
const (
	// SQLiteSyncFull syncs the write-ahead log at every commit: a commit
	// that returned survives a power cut or an operating-system crash. The
	// default: a payment platform acknowledges only what is durable.
	SQLiteSyncFull = "full"
	// SQLiteSyncNormal syncs only at checkpoints: faster, and safe from a
	// crash of the process, but a power cut or an operating-system crash may
	// undo the last commits, which may already have been acknowledged (and
	// their IPNs sent).
	SQLiteSyncNormal = "normal"
)

// WithSQLiteSynchronous sets SQLite's synchronous setting: SQLiteSyncFull
// (the default) or SQLiteSyncNormal. PostgreSQL ignores it: there the
// server's synchronous_commit decides (see Durability).
func WithSQLiteSynchronous(mode string) Option { return func(db *DB) { db.synchronous = mode } }

// Open opens the database named by databaseURL and checks that it answers. It
// does not migrate: call Migrate. Accepted forms:
//
//	""                       SQLite file recon.db in the working directory
//	sqlite:PATH              SQLite file PATH (also sqlite://PATH)
//	postgres://...           PostgreSQL (also postgresql://...)
func Open(ctx context.Context, databaseURL string, opts ...Option) (*DB, error) {
	engine, target, err := parseURL(databaseURL)
	if err != nil {
		return nil, err
	}
	db := &DB{clock: recon.SystemClock{}, rand: rand.Reader, synchronous: SQLiteSyncFull}
	for _, o := range opts {
		o(db)
	}
	if db.synchronous != SQLiteSyncFull && db.synchronous != SQLiteSyncNormal {
		return nil, recon.FieldError("sqlite_synchronous", "the SQLite synchronous setting must be %s or %s, not %q",
			SQLiteSyncFull, SQLiteSyncNormal, db.synchronous)
	}
	switch engine {
	case EngineSQLite:
		db.d = sqliteDialect{}
		db.path = target
		db.writer = make(chan struct{}, 1)
		db.group.oneLane = true
		createSQLiteFile(target) // mode 0600, before SQLite makes it with the umask's
		db.db = sql.OpenDB(stmtCacheConnector{dsn: sqliteDSN(target, db.synchronous), driver: &sqlite.Driver{}})
	case EnginePostgres:
		db.d = postgresDialect{}
		db.lease = newKeyLease()
		db.db, db.pgConfig, err = openPostgres(target, db.lease)
	}
	if err != nil {
		return nil, &recon.Error{Code: recon.EINVALID, Message: "cannot open the " + engine + " database", Err: err}
	}
	db.d.configure(db.db)
	if err := db.db.PingContext(ctx); err != nil {
		db.db.Close()
		return nil, &recon.Error{Code: recon.EUNAVAILABLE, Message: "cannot connect to the " + engine + " database", Err: err}
	}
	if db.path != "" {
		db.wal = openWALIndex(ctx, sqliteDSN(db.path, db.synchronous), db.path)
	}
	db.keys = db.d.keyReader(db)
	if db.readURL != "" {
		if err := db.openStandby(ctx); err != nil {
			db.db.Close()
			return nil, err
		}
	}
	if db.path != "" {
		// The files of a database from before, or whose -wal and -shm an
		// older version made, are tightened too.
		if err := secureSQLiteFiles(db.path); err != nil {
			db.db.Close()
			return nil, &recon.Error{Code: recon.EINVALID, Message: "the SQLite database's files must be readable by their owner only", Err: err}
		}
	}
	return db, nil
}

// openPostgres returns a pool on the PostgreSQL database at databaseURL,
// configured for a lost primary (configurePostgres), and its connections'
// configuration. With lease, the connections report key changes to it.
func openPostgres(databaseURL string, lease *keyLease) (*sql.DB, *pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, nil, err
	}
	// Tenant-filtered queries over skewed data (one company may hold
	// millions of rows, another ten) plan badly as generic plans, which
	// PostgreSQL switches to after five runs of a prepared statement.
	if _, set := cfg.RuntimeParams["plan_cache_mode"]; !set {
		cfg.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	}
	// Every transaction at READ COMMITTED, whatever the server's default or
	// the URL's options say: the triggers that keep a transaction in its
	// account's company rely on it (migration 00051; docs/design.md, "The
	// account rule once per statement").
	cfg.RuntimeParams["default_transaction_isolation"] = "read committed"
	configurePostgres(cfg, databaseURL)
	if lease != nil {
		lease.configure(cfg)
	}
	return sql.OpenDB(pipelineConnector{stdlib.GetConnector(*cfg), lease}), cfg, nil
}

// acceptedForms is the help text of a database URL error.
const acceptedForms = `accepted forms: "" (SQLite file recon.db in the working directory), ` +
	`"sqlite:PATH" or "sqlite://PATH" (SQLite file), "postgres://..." or "postgresql://..." (PostgreSQL)`

// parseURL returns the engine of a database URL and what its driver opens:
// the file path for SQLite, the URL itself for PostgreSQL.
func parseURL(databaseURL string) (engine, target string, err error) {
	invalid := func(format string, args ...any) error {
		return recon.FieldError("database_url", "%s; %s", fmt.Sprintf(format, args...), acceptedForms)
	}
	switch {
	case databaseURL == "":
		return EngineSQLite, DefaultSQLitePath, nil
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		return EnginePostgres, databaseURL, nil
	case strings.HasPrefix(databaseURL, "sqlite:"):
		path := strings.TrimPrefix(databaseURL, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		switch {
		case path == "":
			return "", "", invalid("database URL %q names no file", databaseURL)
		case path == ":memory:" || strings.HasPrefix(path, "file:"):
			// An in-memory database would be a different empty database on every pooled connection.
			return "", "", invalid("database URL %q must name a file", databaseURL)
		case strings.ContainsAny(path, "?#"):
			return "", "", invalid("database URL %q: the SQLite file name must not contain '?' or '#'", databaseURL)
		}
		return EngineSQLite, path, nil
	}
	return "", "", invalid("unknown database URL %q", redact(databaseURL))
}

// redact hides the password of a URL-like string, for error messages.
func redact(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return s
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return s
}

// Durability describes how the database makes commits durable, for the
// server's start-up log: SQLite's synchronous setting, or PostgreSQL's
// synchronous_commit and fsync (which the server never changes). durable is
// false when a commit that returned may be lost on a power cut.
func (db *DB) Durability(ctx context.Context) (setting string, durable bool, err error) {
	return db.d.durability(ctx, db.db)
}

// Engine returns "sqlite" or "postgres".
func (db *DB) Engine() string { return db.d.name() }

// SQL returns the underlying database handle, for adapters and tools that need raw SQL.
func (db *DB) SQL() *sql.DB { return db.db }

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.db.PingContext(ctx); err != nil {
		return errUnreachable(err)
	}
	return nil
}

// Ready reports whether the database takes writes: it answers (Ping) and,
// on PostgreSQL, the server it answers from is a primary that is not
// read-only (not a standby, not a primary being demoted). /readyz asks it
// (docs/design.md, Losing the primary). EUNAVAILABLE when it does not.
func (db *DB) Ready(ctx context.Context) error {
	if err := db.Ping(ctx); err != nil {
		return err
	}
	return db.d.writable(ctx, db.db)
}

// HoldKeyLease makes the store take the key lease on PostgreSQL whenever no
// other node holds it, until Close, and answer the authentication's key
// read from memory while it holds it (sqlstore/keylease.go; docs/design.md,
// "The key lease"). recon serve calls it on its migrated store; a command
// that runs and exits does not. Problems holding the lease are logged on
// log. On SQLite it does nothing.
func (db *DB) HoldKeyLease(log *slog.Logger) {
	if db.lease == nil || db.stopLease != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	db.stopLease, db.leaseDone = cancel, make(chan struct{})
	go func() {
		defer close(db.leaseDone)
		db.lease.run(ctx, db.pgConfig, log)
	}()
}

// Close releases the database (and the standby's pool, WithStandby),
// letting go of the key lease first.
func (db *DB) Close() error {
	if db.stopLease != nil {
		db.stopLease()
		<-db.leaseDone
	}
	var walErr error
	if db.wal != nil {
		walErr = db.wal.close()
	}
	if db.standby != nil {
		return errors.Join(walErr, db.standby.close(), db.db.Close())
	}
	return errors.Join(walErr, db.db.Close())
}

// now returns the clock's time as it will be stored: UTC, whole microseconds.
func (db *DB) now() time.Time { return storedTime(db.clock.Now()) }

// asWriter runs fn in this process's turn to write on SQLite (at once on
// PostgreSQL). Every write of this process takes its turn here, a
// transaction (inTx) or a single statement (execWrite, scanWrite,
// ClaimDeliveries): SQLite's own wait (busy_timeout) polls with sleeps of up
// to 100 ms, which leave the database idle after each commit (ingestion with
// four concurrent feeds ran at 45,000 tx/s through it, 60,000 through the
// queue) and made a statement that skipped the queue wait tens of
// milliseconds behind the ingestion's commits (the claim of deliveries;
// docs/design.md, "Every SQLite writer of the process in one queue"). Other
// processes (a recon import beside the server) still meet at SQLite's lock.
func (db *DB) asWriter(ctx context.Context, fn func() error) error {
	if db.writer != nil {
		select {
		case db.writer <- struct{}{}:
			defer func() { <-db.writer }()
		case <-ctx.Done():
			return classify(fmt.Errorf("sqlstore: begin: %w", ctx.Err()))
		}
	}
	return fn()
}

// execWrite runs one statement that writes, in its turn (asWriter).
func (db *DB) execWrite(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	err = db.asWriter(ctx, func() error {
		res, err = db.db.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// scanWrite runs one statement that writes and returns a row (RETURNING),
// in its turn (asWriter), and scans the row into dest.
func (db *DB) scanWrite(ctx context.Context, query string, args []any, dest ...any) error {
	return db.asWriter(ctx, func() error { return db.db.QueryRowContext(ctx, query, args...).Scan(dest...) })
}

// inTx runs fn in a transaction and commits it when fn returns nil. On SQLite
// the transaction takes the write lock at BEGIN (see sqliteDSN), so
// transactions that read before they write never fail with "database is
// locked"; the writers of this process queue for it first (asWriter).
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.asWriter(ctx, func() error { return db.runTx(ctx, fn) })
}

// committingKey carries the function runTx calls when its transaction's
// work is done and it is about to commit (onCommitting).
type committingKey struct{}

// onCommitting returns ctx telling runTx to call f before each commit it
// makes, or to call nothing when f is nil. When f fails, runTx rolls the
// transaction back instead and returns f's error.
func onCommitting(ctx context.Context, f func() error) context.Context {
	return context.WithValue(ctx, committingKey{}, f)
}

// runTx is inTx in the writer's turn.
func (db *DB) runTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(fmt.Errorf("sqlstore: begin: %w", err))
	}
	// The audit entry of the change ctx carries (recon.Audited) commits
	// with the change's first transaction.
	entry, written := recon.PendingAudit(ctx)
	err = fn(tx)
	if err == nil && entry != nil {
		err = db.insertAudit(ctx, tx, entry)
	}
	if err != nil {
		// A failed rollback leaves nothing to undo: the connection is discarded.
		_ = tx.Rollback()
		// A driver error fn returned as it was is classified here: a lost
		// primary is EUNAVAILABLE, whichever statement met it.
		return classify(err)
	}
	if f, _ := ctx.Value(committingKey{}).(func() error); f != nil {
		if err := f(); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return classify(fmt.Errorf("sqlstore: commit: %w", err))
	}
	if written != nil {
		written()
	}
	return nil
}

// stmt returns query prepared for tx from a statement kept for the life of
// db: each pooled connection parses it once. Only for the few large
// statements of ingestion, where parsing costs as much as executing.
func (db *DB) stmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	s, ok := db.stmts.Load(query)
	if !ok {
		p, err := db.db.PrepareContext(ctx, query)
		if err != nil {
			return nil, err
		}
		if s, ok = db.stmts.LoadOrStore(query, p); ok {
			p.Close()
		}
	}
	return tx.StmtContext(ctx, s.(*sql.Stmt)), nil
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Optimize refreshes the query planner's statistics. SQLite gathers none by
// itself: without them it may scan the date index for a reference filter
// instead of seeking the unique index. A bounded ANALYZE (analysis_limit)
// takes milliseconds even on millions of rows. PostgreSQL's autovacuum keeps
// statistics current; an explicit ANALYZE only speeds that up after a bulk
// load. recon serve runs it at start and every hour.
func (db *DB) Optimize(ctx context.Context) error {
	return db.asWriter(ctx, func() error { // SQLite's ANALYZE writes its statistics tables
		conn, err := db.db.Conn(ctx)
		if err != nil {
			return internal(err, "optimize")
		}
		defer conn.Close()
		for _, s := range db.d.optimizeStatements() {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				return internal(err, "optimize")
			}
		}
		return nil
	})
}
