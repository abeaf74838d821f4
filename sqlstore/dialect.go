package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"

	"recon"
)

// dialect is the one list of what differs between the engines: each
// difference is a method, named for what it does, implemented once per
// engine (dialect_sqlite.go, dialect_postgres.go). The store code calls the
// methods and never asks which engine it runs on; everything else, the SQL
// included, is written once.
type dialect interface {
	// name is the engine's name (EngineSQLite, EnginePostgres), which also
	// names its migrations folder.
	name() string
	// configure tunes the connection pool.
	configure(db *sql.DB)
	// goose is the engine's dialect for the migrations.
	goose() goose.Dialect
	// violation classifies a constraint violation.
	violation(err error) violation
	// durability reads how the database makes commits durable (see
	// DB.Durability).
	durability(ctx context.Context, q querier) (setting string, durable bool, err error)
	// writable reports whether the server q reaches takes writes (see
	// DB.Ready): nil, or EUNAVAILABLE.
	writable(ctx context.Context, db *sql.DB) error

	// keyReader reads the authentication's epoch and tenant versions on
	// db's pool, which every request makes (sqlstore/keyread.go).
	keyReader(db *DB) keyReader

	// param is the n-th placeholder of a statement whose placeholders are
	// generated (see "Placeholders" below).
	param(n int) string
	// forUpdate is the clause that locks the rows a SELECT reads until the
	// transaction ends, or "" where the engine locks the whole database.
	forUpdate() string
	// forUpdateOf is forUpdate for the rows of table only, in a SELECT
	// that joins others.
	forUpdateOf(table string) string
	// indexedBy is the clause that makes the query read table t through
	// the named index, or "" where the planner is left to choose.
	indexedBy(index string) string
	// opaque is the placeholder p written so that the planner does not
	// read the value bound to it, for statements whose plan does not
	// depend on it (they name their index): see "Opaque parameters" in
	// docs/design.md.
	opaque(p string) string

	// claimDeliveries is the statement of ClaimDeliveries ($1 lease until,
	// $2 now, $3 n, $4 node), built from claimUnordered, claimOrdered and
	// claimSet; without claimOrdered when ordered is false (no target is
	// ordered: DB.noOrdered).
	claimDeliveries(ordered bool) string
	// recordAttempts runs RecordAttempts on checked outcomes, from
	// recordUpdate and recordInsert, in one transaction.
	recordAttempts(ctx context.Context, db *DB, outcomes []recon.AttemptOutcome) error
	// insertTransactions inserts the rows in tx, skipping any whose
	// reference is already stored, and returns the ids of those it
	// inserted (see DB.insertTransactions).
	insertTransactions(ctx context.Context, db *DB, tx *sql.Tx, companyID int64, rows []insertRow, now time.Time) (map[accountKey]int64, error)
	// oneOf is the condition that an expression is one of n values of the
	// SQL type typ ("text" or "bigint"), whose placeholders start at
	// first, and whether the values are bound as one array rather than
	// one a placeholder (see the function oneOf).
	oneOf(first, n int, typ string) (cond string, array bool)
	// oneOfQuery is the condition that an expression is one of the values
	// the subquery sub returns, written so that the expression's index is
	// probed with each value (lockOrdersQuery).
	oneOfQuery(sub string) string
	// readTogether runs reads in tx in order, on PostgreSQL in one round
	// trip with the writes the connection keeps (see batchRead).
	readTogether(ctx context.Context, db *DB, tx *sql.Tx, reads []batchRead) error
	// dupProbes are the look-ups (dupProbe) of the keys of accounts,
	// sums[i] those of accounts[i], each key plus its account
	// (findDuplicates).
	dupProbes(accounts []int64, sums [][]int64) []probe
	// upsertAmountCounts adds counts[k] to the transaction_amount_counts
	// row of each key, inserting the missing (see DB.addAmountCounts).
	upsertAmountCounts(ctx context.Context, db *DB, tx *sql.Tx, companyID int64, keys []amountKey, counts map[amountKey]int64) error
	// updateOrderPayments writes the payment columns of the orders
	// (writeOrderPayments).
	updateOrderPayments(ctx context.Context, tx *sql.Tx, orders []*recon.Order) error
	// stampChanges moves the tenant's change counter by total, the changes
	// the runs hold, and logs the runs under the numbers it freed, in order
	// (see DB.stampChanges).
	stampChanges(ctx context.Context, db *DB, tx *sql.Tx, companyID int64, runs changeRuns, total int64, now time.Time) error
	// optimizeStatements refresh the planner's statistics (see DB.Optimize),
	// run in order on one connection.
	optimizeStatements() []string
	// analyzeIngested refreshes the statistics of the tables ingestion
	// grows, or is "" where no plan depends on them (see freshStats).
	analyzeIngested() string
	// lockMigrations waits until no other process or goroutine migrates the
	// database and keeps them out until unlock is called (see
	// DB.lockMigrations).
	lockMigrations(ctx context.Context, db *DB) (unlock func(), err error)
	// secureDelete makes what conn deletes or overwrites from now on be
	// erased from the database file, where the engine can, until restore.
	secureDelete(ctx context.Context, conn *sql.Conn) (restore func(), err error)
	// purgeDeleted removes, after a commit, the old versions of table's rows
	// that the engine still keeps in its files (a write-ahead log, dead row
	// versions).
	purgeDeleted(ctx context.Context, conn *sql.Conn, table string) error
}

// Placeholders. The SQL written out by hand numbers its placeholders "$n",
// which both engines read. Statements that generate placeholders in numbers
// that grow with the input (IN lists, multi-row VALUES) take them from
// dialect.param, or params for a run: PostgreSQL's "$n", SQLite's anonymous
// "?". SQLite takes "$n" (and "?n") for a named parameter, and the driver
// looks each one's name up linearly, so a statement with thousands of them
// binds in quadratic time (docs/benchmarks.md); "?" takes the number after
// the largest one so far, so the generated placeholders must come in order
// and after any "$n" of the statement, and each may appear once.
//
// queryArgs builds the statements assembled from optional filters (listings):
// a few parameters, so "$n" costs nothing, and a filter may name its
// parameter more than once (the orders search names it four times), which
// "?" cannot.

// params returns n comma-separated placeholders numbered from first (see
// dialect.param).
func (db *DB) params(first, n int) string { return placeholders(db.d, first, n) }

func placeholders(d dialect, first, n int) string {
	var sb strings.Builder
	for k := 0; k < n; k++ {
		if k > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(d.param(first + k))
	}
	return sb.String()
}

// oneOf appends to args the arguments of the condition that an expression
// is one of values (at least one), and returns the condition: a batch's
// codes are a thousand values, which on PostgreSQL are one array the
// planner does not estimate value by value (dialect.oneOf).
func oneOf[T string | int64](db *DB, args *[]any, values []T) string {
	typ := "text"
	if _, ok := any(values).([]int64); ok {
		typ = "bigint"
	}
	cond, array := db.d.oneOf(len(*args)+1, len(values), typ)
	if array {
		*args = append(*args, values)
		return cond
	}
	for _, v := range values {
		*args = append(*args, v)
	}
	return cond
}

// queryArgs collects the arguments of a statement built piece by piece
// (optional filters): add appends one and returns its placeholder, "$n".
type queryArgs []any

func (a *queryArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// opaqueArgs are queryArgs whose placeholders the planner does not read
// (dialect.opaque), for statements that name their index.
type opaqueArgs struct {
	queryArgs
	d dialect
}

func (a *opaqueArgs) add(v any) string { return a.d.opaque(a.queryArgs.add(v)) }

// list appends the ids and returns their placeholders, comma-separated.
func (a *opaqueArgs) list(ids []int64) string {
	ph := make([]string, len(ids))
	for i, id := range ids {
		ph[i] = a.add(id)
	}
	return strings.Join(ph, ",")
}

// violation is the kind of constraint a statement violated.
type violation int

const (
	noViolation violation = iota
	uniqueViolation
	foreignKeyViolation
)
