package sqlstore

import (
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect holds what differs between the engines. Everything else, the SQL
// included, is shared.
type dialect interface {
	name() string
	// configure tunes the connection pool.
	configure(db *sql.DB)
	// forUpdate is the clause that locks the rows a SELECT reads until the
	// transaction ends, or "" where the engine locks the whole database.
	forUpdate() string
	// indexedBy is the clause that makes the query read table t through
	// the named index, or "" where the planner is left to choose.
	indexedBy(index string) string
	// param is the n-th placeholder of a statement whose placeholders come
	// in order. Both engines read "$n", but SQLite takes "$n" (and "?n") for
	// a named parameter, and the driver looks each one's name up linearly:
	// a statement with thousands of them binds in quadratic time. SQLite's
	// anonymous "?" is numbered in order of appearance. Statements with many
	// parameters use this hook.
	param(n int) string
	// violation classifies a constraint violation.
	violation(err error) violation
	goose() goose.Dialect
}

// queryArgs collects the arguments of a statement built piece by piece
// (optional filters): add appends one and returns its placeholder. These
// statements have few parameters, so "$n", which both engines read, serves;
// statements with hundreds use dialect.param.
type queryArgs []any

func (a *queryArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// violation is the kind of constraint a statement violated.
type violation int

const (
	noViolation violation = iota
	uniqueViolation
	foreignKeyViolation
)

// sqliteBusyTimeout is how long a SQLite statement waits for another
// connection or process to release the write lock.
const sqliteBusyTimeout = 10 * time.Second

// sqliteDSN returns the modernc.org/sqlite DSN of a database file. Every
// pooled connection runs the pragmas when it opens:
//   - WAL lets readers work while one writer writes;
//   - synchronous=FULL (the default, see SQLiteSynchronous) syncs the WAL at
//     every commit, so a commit that returned survives a power cut;
//     NORMAL syncs only at checkpoints and may lose the last commits;
//   - busy_timeout makes a writer wait for the lock instead of failing;
//   - foreign_keys enforces the schema's references (off by default in SQLite);
//   - temp_store=MEMORY keeps statement journals (written by every multi-row
//     INSERT into a table with unique indexes) off the disk;
//   - cache_size=64 MiB per connection keeps the hot index pages of a large
//     transactions table in memory;
//   - wal_autocheckpoint=10000 pages (40 MiB of WAL) checkpoints a tenth as
//     often as the default, so a hot index page is copied back once for many
//     batches that changed it.
//
// _txlock=immediate makes BEGIN take the write lock at once: a deferred
// transaction that reads and then writes cannot wait for the lock (SQLite
// reports "database is locked" at once to avoid a deadlock), an immediate
// one waits up to busy_timeout like any other writer.
//
// time.Time arguments are stored as integer Unix microseconds and integers
// in TIMESTAMP/DATE columns are read back as UTC time.Time, so times compare
// as numbers and round-trip with PostgreSQL's precision.
func sqliteDSN(path, synchronous string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "cache_size(-65536)")
	q.Add("_pragma", "wal_autocheckpoint(10000)")
	q.Set("_txlock", "immediate")
	q.Set("_time_integer_format", "unix_micro")
	q.Set("_inttotime", "1")
	return path + "?" + q.Encode()
}

type sqliteDialect struct{}

func (sqliteDialect) name() string { return EngineSQLite }

func (sqliteDialect) configure(db *sql.DB) {
	// Opening a connection runs the pragmas; keep enough of them around.
	// A connection plans with the statistics it loaded when it opened
	// (another connection's ANALYZE does not reach it): renewing
	// connections hourly, as often as recon serve runs Optimize, bounds how
	// stale they get.
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	db.SetConnMaxLifetime(time.Hour)
}

// forUpdate is empty: a SQLite write transaction holds the database's only
// write lock from BEGIN IMMEDIATE on.
func (sqliteDialect) forUpdate() string { return "" }

// indexedBy names the index: SQLite plans with the statistics a connection
// loaded when it opened (or none, before the first ANALYZE on data), and
// without them may walk the company's date index, every row, for a filter a
// unique index answers in a few seeks.
func (sqliteDialect) indexedBy(index string) string { return " INDEXED BY " + index }

func (sqliteDialect) violation(err error) violation {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return noViolation
	}
	switch e.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return uniqueViolation
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return foreignKeyViolation
	}
	return noViolation
}

func (sqliteDialect) goose() goose.Dialect { return goose.DialectSQLite3 }

func (sqliteDialect) param(int) string { return "?" }

type postgresDialect struct{}

func (postgresDialect) name() string { return EnginePostgres }

func (postgresDialect) configure(db *sql.DB) {
	// A bounded pool: under a burst, requests queue for a connection in
	// the process instead of failing on the server's max_connections (100
	// by default, shared by every node).
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
}

func (postgresDialect) forUpdate() string { return " FOR UPDATE" }

// indexedBy is empty: PostgreSQL's planner has autovacuum's statistics.
func (postgresDialect) indexedBy(string) string { return "" }

// PostgreSQL error codes (SQLSTATE class 23, integrity constraint violation).
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
)

func (postgresDialect) violation(err error) violation {
	var e *pgconn.PgError
	if !errors.As(err, &e) {
		return noViolation
	}
	switch e.Code {
	case pgUniqueViolation:
		return uniqueViolation
	case pgForeignKeyViolation:
		return foreignKeyViolation
	}
	return noViolation
}

func (postgresDialect) goose() goose.Dialect { return goose.DialectPostgres }

func (postgresDialect) param(n int) string { return "$" + strconv.Itoa(n) }
