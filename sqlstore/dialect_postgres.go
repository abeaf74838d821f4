package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"

	"recon"
)

// The PostgreSQL dialect (pgx): a server with row locks, reached over the
// network, so one round trip is worth saving.

type postgresDialect struct{}

func (postgresDialect) name() string { return EnginePostgres }

func (postgresDialect) configure(db *sql.DB) {
	// A bounded pool: under a burst, requests queue for a connection in
	// the process instead of failing on the server's max_connections (100
	// by default, shared by every node). Every connection it opened stays
	// until idle for ConnMaxIdleTime: with fewer idle ones kept (8 before),
	// each burst closed the rest as they came back and opened new ones for
	// the next, a new server process each, whose statements are parsed
	// anew; single-transfer pushes at 500/s met that several times a
	// second (docs/benchmarks.md, "PostgreSQL: a transaction's writes sent
	// together").
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	db.SetConnMaxIdleTime(5 * time.Minute)
}

func (postgresDialect) goose() goose.Dialect { return goose.DialectPostgres }

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

// durability reads synchronous_commit and fsync, which the server never
// changes: a commit is durable unless either is off.
func (postgresDialect) durability(ctx context.Context, q querier) (string, bool, error) {
	var commit, fsync string
	if err := q.QueryRowContext(ctx, `SELECT current_setting('synchronous_commit'), current_setting('fsync')`).Scan(&commit, &fsync); err != nil {
		return "", false, internal(err, "read synchronous_commit")
	}
	return "synchronous_commit=" + commit + " fsync=" + fsync, commit != "off" && fsync == "on", nil
}

// writable asks the server of a pooled connection whether a new
// transaction would be read-only: on a standby (a demoted primary) or with
// default_transaction_read_only on, transaction_read_only is on. Such a
// connection is dropped from the pool (a connection of the session before
// a failover would answer so for ever), so that the next check makes a new
// one, to the writable host of the URL if there is one.
func (postgresDialect) writable(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return errUnreachable(err)
	}
	defer conn.Close()
	var ro string
	if err := conn.QueryRowContext(ctx, `SHOW transaction_read_only`).Scan(&ro); err != nil {
		return errUnreachable(err)
	}
	if ro != "off" {
		// database/sql closes a connection whose Raw returns ErrBadConn.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		return errReadOnly(nil)
	}
	return nil
}

func (postgresDialect) param(n int) string { return "$" + strconv.Itoa(n) }

func (postgresDialect) forUpdate() string { return " FOR UPDATE" }

func (postgresDialect) forUpdateOf(table string) string { return " FOR UPDATE OF " + table }

// keyReader shares round trips between concurrent requests (keyReads), and
// answers from memory while the store holds the key lease.
func (postgresDialect) keyReader(db *DB) keyReader {
	return &keyReads{db: db.db, timeout: keyReadTimeout, lease: db.lease}
}

// indexedBy is empty: PostgreSQL's planner has autovacuum's statistics.
func (postgresDialect) indexedBy(string) string { return "" }

// opaque is p: PostgreSQL plans a prepared statement once for its first
// bindings, or for each (force_custom_plan), without re-parsing it.
func (postgresDialect) opaque(p string) string { return p }

// pgClaimDeliveries chooses the due rows in a materialized CTE FOR UPDATE
// SKIP LOCKED: concurrent claimers take disjoint rows without waiting for
// each other, and the CTE runs exactly once (a subquery under IN could be
// rescanned by some plans and lock more than n rows).
var pgClaimDeliveries, pgClaimUnordered = pgClaim(true), pgClaim(false)

func pgClaim(ordered bool) string {
	ctes := `WITH unordered AS MATERIALIZED (` + claimUnordered(postgresDialect{}.indexedBy) + ` FOR UPDATE SKIP LOCKED)`
	due := `SELECT id, next_attempt_at FROM unordered`
	if ordered {
		ctes += `, ordered AS MATERIALIZED (` + claimOrdered(postgresDialect{}.indexedBy) + ` FOR UPDATE OF d SKIP LOCKED)`
		due += ` UNION ALL SELECT id, next_attempt_at FROM ordered`
	}
	return ctes + `, due AS (SELECT id FROM (` + due + `) x ORDER BY next_attempt_at, id LIMIT $3)
		` + claimSet + ` FROM due WHERE deliveries.id = due.id
		RETURNING deliveries.` + strings.ReplaceAll(deliveryColumns, ", ", ", deliveries.")
}

func (postgresDialect) claimDeliveries(ordered bool) string {
	if ordered {
		return pgClaimDeliveries
	}
	return pgClaimUnordered
}

// recordAttempts is one statement, and so one round trip: unnest arrays
// feed the update and the insert in CTEs.
func (postgresDialect) recordAttempts(ctx context.Context, db *DB, outcomes []recon.AttemptOutcome) error {
	query, args := pgRecordSource(outcomes)
	query += recordDeliveries + `, updated AS (` + recordUpdate + `), streak AS (` + streakOf(outcomes) + `)` + recordInsert
	if _, err := db.db.ExecContext(ctx, query, args...); err != nil {
		return internal(err, "record attempts")
	}
	return nil
}

// pgRecordSource is the CTE v of the outcomes: arrays unnested.
func pgRecordSource(outcomes []recon.AttemptOutcome) (string, []any) {
	n := len(outcomes)
	ids, codes, latencies := make([]int64, n), make([]int64, n), make([]int64, n)
	statuses, errs, urls, responses := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	nexts, ats := make([]*time.Time, n), make([]time.Time, n)
	for i, o := range outcomes {
		a := o.Attempt
		ids[i], codes[i], latencies[i] = a.DeliveryID, int64(a.StatusCode), a.Latency.Microseconds()
		nexts[i], errs[i] = outcomeRow(o)
		statuses[i], urls[i], responses[i], ats[i] = o.Status, cleanText(a.URL), cleanText(a.Response), a.At
	}
	return `
		WITH v AS (
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::text[], $5::timestamptz[],
				$6::text[], $7::bigint[], $8::bigint[], $9::text[])
			AS v(id, status, next, err, at, url, code, latency, response)
		)`, []any{ids, statuses, nexts, errs, ats, urls, codes, latencies, responses}
}

// insertTransactions: one INSERT ... SELECT FROM unnest(arrays) takes the
// whole batch in thirteen parameters, and RETURNING names the rows
// inserted. The rows are inserted in the batch's order (ORDER BY its
// ordinality), so their ids follow it: the bank's order of rows of the same
// date (sqlstore/balance.go). A reference already stored fails the whole
// statement, as SQLite's INSERT OR FAIL does, and none is returned: the
// caller plans again with the stored references (DB.ingestTx). ON CONFLICT DO NOTHING would skip just those
// rows, but its speculative insertion cost every batch 8% of the ingestion
// rate, for a case that is planned again anyway. A push repeating stored
// rows does not get here (findDuplicates finds them first); a stored
// reference on other content does, and leaves an ERROR line in
// PostgreSQL's log (docs/benchmarks.md, "PostgreSQL: the insert without ON
// CONFLICT").
func (postgresDialect) insertTransactions(ctx context.Context, _ *DB, tx *sql.Tx, companyID int64, rows []insertRow, now time.Time) (map[accountKey]int64, error) {
	n := len(rows)
	accounts, dates, ins, outs, accs := make([]int64, n), make([]time.Time, n), make([]int64, n), make([]int64, n), make([]int64, n)
	contents, refs, codes, subs := make([]string, n), make([]string, n), make([]*string, n), make([]*string, n)
	banks := make([]*int64, n) // the bank's balances, NULL when it gave none
	keys := make([]int64, n)
	for i, r := range rows {
		keys[i] = r.dupKey
		banks[i] = r.Accumulated
		accounts[i], dates[i], ins[i], outs[i], accs[i] = r.BankAccountID, recon.WallClock(r.TransactionDate), r.AmountIn, r.AmountOut, r.accumulated
		contents[i], refs[i] = r.Content, r.ReferenceNumber
		if r.code != "" {
			codes[i] = &rows[i].code
		}
		if r.SubAccount != "" {
			subs[i] = &r.SubAccount
		}
	}
	ids := make(map[accountKey]int64, len(rows))
	res, err := tx.QueryContext(ctx, `INSERT INTO `+insertColumns+`
			SELECT $1, a, d, i, o, acc, c, r, code, sub, $2, bank, k
			FROM unnest($3::bigint[], $4::timestamp[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::bigint[])
			     WITH ORDINALITY AS u(a, d, i, o, acc, c, r, code, sub, bank, k, n)
			ORDER BY n
			RETURNING id, bank_account_id, reference_number`,
		companyID, now, accounts, dates, ins, outs, accs, contents, refs, codes, subs, banks, keys)
	if storedReference(err) {
		return ids, nil
	} else if err != nil {
		return ids, internal(err, "insert transactions")
	}
	defer res.Close()
	for res.Next() {
		var id int64
		var k accountKey
		if err := res.Scan(&id, &k.account, &k.ref); err != nil {
			return ids, internal(err, "insert transactions")
		}
		ids[k] = id
	}
	if err := res.Err(); err != nil {
		if storedReference(err) {
			return map[accountKey]int64{}, nil
		}
		return ids, internal(err, "insert transactions")
	}
	return ids, nil
}

// storedReference reports whether err is the refusal of a reference that
// its account already holds: transactions' UNIQUE (bank_account_id,
// reference_number) of migration 00003, under the name PostgreSQL gave it.
func storedReference(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == pgUniqueViolation && e.ConstraintName == "transactions_bank_account_id_reference_number_key"
}

// oneOf: one array, whatever the number of values, so that the statement's
// text does not change with it, handed to the planner as a subquery's
// result: planned for their values (force_custom_plan), a batch's thousand
// codes were each estimated against the column's statistics, 0.6-0.9 ms
// of planning a statement (docs/benchmarks.md, "PostgreSQL: the
// ingestion's round trips").
func (postgresDialect) oneOf(first, _ int, typ string) (string, bool) {
	return pgOneOf(first, typ), true
}

// pgOneOf is oneOf's condition on the array at placeholder first.
func pgOneOf(first int, typ string) string {
	return postgresDialect{}.oneOfQuery("SELECT unnest($" + strconv.Itoa(first) + "::" + typ + "[])")
}

// oneOfQuery: the subquery's values as an array (an InitPlan, run once),
// which an index scan takes as its condition, one probe a value, whatever
// the planner guesses of their number; IN (subquery) would be a join, which
// it may make by reading the whole table.
func (postgresDialect) oneOfQuery(sub string) string { return "= ANY(ARRAY(" + sub + "))" }

// readTogether: in one pipeline (sqlstore/pipeline.go).
func (postgresDialect) readTogether(ctx context.Context, _ *DB, tx *sql.Tx, reads []batchRead) error {
	if len(reads) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, readsTogether, reads)
	return err
}

// dupProbes: one statement for every account and key, two arrays, so
// that a batch's look-up is one round trip whatever it holds; the keys as
// oneOf hands them to the planner (a batch asks thousands).
func (postgresDialect) dupProbes(accounts []int64, sums [][]int64) []probe {
	return []probe{{postgresDupProbe, []any{accounts, slices.Concat(sums...)}}}
}

var postgresDupProbe = dupProbe("= ANY($1::bigint[])", pgOneOf(2, "bigint"))

// upsertAmountCounts: one INSERT ... SELECT FROM unnest(arrays), whatever
// the number of keys, so its text and prepared statement never change. The
// keys are distinct, as ON CONFLICT DO UPDATE requires.
func (postgresDialect) upsertAmountCounts(ctx context.Context, _ *DB, tx *sql.Tx, companyID int64, keys []amountKey, counts map[amountKey]int64) error {
	ins, outs, accounts, ns := make([]int64, len(keys)), make([]int64, len(keys)), make([]int64, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		ins[i], outs[i], accounts[i], ns[i] = k.in, k.out, k.account, counts[k]
	}
	_, err := tx.ExecContext(deferrable(ctx), `INSERT INTO transaction_amount_counts (company_id, amount_in, amount_out, bank_account_id, n)
		SELECT $1, i, o, a, n FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS u(i, o, a, n)
		ON CONFLICT (company_id, amount_in, amount_out, bank_account_id) DO UPDATE SET n = transaction_amount_counts.n + excluded.n`,
		companyID, ins, outs, accounts, ns)
	return err
}

// optimizeStatements: autovacuum keeps the statistics current; an explicit
// ANALYZE only speeds that up after a bulk load.
func (postgresDialect) optimizeStatements() []string { return []string{`ANALYZE`} }

// analyzeIngested also vacuums: on a freshly loaded table the visibility
// map is empty, and every index entry the COUNT(*) of an amount or
// reference filter reads costs a heap visit, until autovacuum gets there.
// On an insert-only table VACUUM reads the pages added since the last and
// sets them all-visible. The two count tables are small and updated in
// place by every batch: their dead row versions go too.
func (postgresDialect) analyzeIngested() string {
	return `VACUUM (ANALYZE) transactions, transaction_day_counts, transaction_amount_counts`
}

// migrationLockID is the advisory lock key of migrations ("recon" in ASCII).
// Advisory locks are per database, so databases on one server do not wait
// for each other.
const migrationLockID int64 = 0x7265636f6e

// lockMigrations takes a session advisory lock, held on a connection set
// aside, which the server releases if the connection dies.
func (postgresDialect) lockMigrations(ctx context.Context, db *DB) (func(), error) {
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLockID); err != nil {
		conn.Close()
		return nil, fmt.Errorf("take the migration lock: %w", err)
	}
	return func() {
		// Should unlocking fail, the lock goes when the connection does.
		conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLockID)
		conn.Close()
	}, nil
}

// secureDelete does nothing: an update or delete leaves the old row version
// in the table's file (see purgeDeleted).
func (postgresDialect) secureDelete(context.Context, *sql.Conn) (func(), error) {
	return func() {}, nil
}

// purgeDeleted rewrites the table into a new file (VACUUM FULL; meant for
// tiny tables), dropping the old row versions, whose space would otherwise
// wait to be reused. Best effort, never an error: WAL segments and backups
// from before keep the old versions anyway.
func (postgresDialect) purgeDeleted(ctx context.Context, conn *sql.Conn, table string) error {
	_, _ = conn.ExecContext(ctx, `VACUUM FULL `+table)
	return nil
}

// stampChanges: one statement, the counter's upsert feeding an INSERT ...
// SELECT FROM unnest(arrays) of the runs; a write nobody reads the answer
// of, so it goes with the commit (deferrable).
func (postgresDialect) stampChanges(ctx context.Context, _ *DB, tx *sql.Tx, companyID int64, runs changeRuns, total int64, now time.Time) error {
	_, err := tx.ExecContext(deferrable(ctx), `
		WITH c AS (`+moveCounter+`)
		INSERT INTO transaction_changes (company_id, seq, transaction_id, kind, created_at, n)
		SELECT $1, c.seq - $2 + u.e, u.id, u.kind, $3, u.n FROM c, unnest($4::bigint[], $5::bigint[], $6::text[], $7::bigint[]) AS u(e, id, kind, n)`,
		companyID, total, now, runs.ends, runs.ids, runs.kinds, runs.ns)
	return err
}

// updateOrderPayments: one UPDATE ... FROM unnest(arrays) for all of them,
// one round trip whatever their number.
func (postgresDialect) updateOrderPayments(ctx context.Context, tx *sql.Tx, orders []*recon.Order) error {
	n := len(orders)
	ids, paid, statuses := make([]int64, n), make([]int64, n), make([]string, n)
	updated, paidAt, txs := make([]time.Time, n), make([]*time.Time, n), make([]*int64, n)
	for i, o := range orders {
		ids[i], paid[i], statuses[i], updated[i] = o.ID, o.PaidAmount, o.Status, o.UpdatedAt
		if !o.PaidAt.IsZero() {
			t := storedTime(o.PaidAt)
			paidAt[i] = &t
		}
		if id := o.PaidTransactionID; id != 0 {
			txs[i] = &id // a copy: the write is deferred, its arguments read when sent
		}
	}
	_, err := tx.ExecContext(deferrable(ctx), `UPDATE orders SET status = v.status, paid_amount = v.paid, updated_at = v.updated,
			paid_at = v.paid_at, paid_transaction_id = v.tx
		FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::timestamptz[], $5::timestamptz[], $6::bigint[])
			AS v(id, status, paid, updated, paid_at, tx)
		WHERE orders.id = v.id`, ids, statuses, paid, updated, paidAt, txs)
	return err
}
