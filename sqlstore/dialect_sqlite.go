package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"recon"
)

// The SQLite dialect (modernc.org/sqlite): an in-process engine with one
// write lock for the whole database, held by a write transaction from
// BEGIN IMMEDIATE on.

type sqliteDialect struct{}

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

func (sqliteDialect) goose() goose.Dialect { return goose.DialectSQLite3 }

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

// durability reads the synchronous setting: FULL or EXTRA sync every commit.
func (sqliteDialect) durability(ctx context.Context, q querier) (string, bool, error) {
	var mode int
	if err := q.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&mode); err != nil {
		return "", false, internal(err, "read synchronous")
	}
	names := map[int]string{0: "off", 1: "normal", 2: "full", 3: "extra"}
	return "synchronous=" + names[mode], mode >= 2, nil
}

// writable is nil: a SQLite file that opened takes writes.
func (sqliteDialect) writable(context.Context, *sql.DB) error { return nil }

// param is the anonymous "?" (see "Placeholders" in dialect.go).
func (sqliteDialect) param(int) string { return "?" }

// forUpdate is empty: a SQLite write transaction holds the database's only
// write lock from BEGIN IMMEDIATE on.
func (sqliteDialect) forUpdate() string { return "" }

func (sqliteDialect) forUpdateOf(string) string { return "" }

func (sqliteDialect) keyReader(db *DB) keyReader {
	return &sqliteKeyReader{db: db.db, wal: db.wal}
}

// indexedBy names the index: SQLite plans with the statistics a connection
// loaded when it opened (or none, before the first ANALYZE on data), and
// without them may walk the company's date index, every row, for a filter a
// unique index answers in a few seeks.
func (sqliteDialect) indexedBy(index string) string { return " INDEXED BY " + index }

// opaque is +p: SQLite re-prepares (parses and plans again) a statement at
// each new binding of a parameter its plan read, an ANALYZE sample's
// column compared with it (STAT4) or a LIMIT; a unary plus makes the
// parameter an expression the planner does not evaluate, and changes
// neither its value nor its affinity (a parameter has none either way).
func (sqliteDialect) opaque(p string) string { return "+" + p }

// sqliteClaimDeliveries: the statement holds the database's only write
// lock, so a plain subquery chooses the due rows.
var sqliteClaimDeliveries, sqliteClaimUnordered = sqliteClaim(true), sqliteClaim(false)

func sqliteClaim(ordered bool) string {
	due := `SELECT * FROM (` + claimUnordered(sqliteDialect{}.indexedBy) + `)`
	if ordered {
		due += ` UNION ALL SELECT * FROM (` + claimOrdered(sqliteDialect{}.indexedBy) + `)`
	}
	return claimSet + ` WHERE id IN (SELECT id FROM (` + due + `
		ORDER BY next_attempt_at, id LIMIT $3)) RETURNING ` + deliveryColumns
}

func (sqliteDialect) claimDeliveries(ordered bool) string {
	if ordered {
		return sqliteClaimDeliveries
	}
	return sqliteClaimUnordered
}

// sqliteRecordChunk bounds the attempts of one statement of recordAttempts
// (9 parameters each, far below SQLite's 32766).
const sqliteRecordChunk = 500

// recordAttempts: SQLite runs in process, so round trips cost nothing; the
// insert and the update read the attempts from a VALUES list, a chunk at a
// time, in one transaction.
func (sqliteDialect) recordAttempts(ctx context.Context, db *DB, outcomes []recon.AttemptOutcome) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(outcomes, sqliteRecordChunk) {
			source, args := sqliteRecordSource(chunk)
			if _, err := tx.ExecContext(ctx, source+recordDeliveries+recordInsert, args...); err != nil {
				return internal(err, "record attempts")
			}
			if _, err := tx.ExecContext(ctx, source+recordUpdate, args...); err != nil {
				return internal(err, "record attempts")
			}
			if _, err := tx.ExecContext(ctx, source+recordDeliveries+streakOf(chunk), args...); err != nil { // endpoint health
				return internal(err, "record attempts")
			}
		}
		return nil
	})
}

// sqliteRecordSource is the CTE v of the outcomes: a VALUES list with
// anonymous placeholders (see "Placeholders" in dialect.go).
func sqliteRecordSource(outcomes []recon.AttemptOutcome) (string, []any) {
	var b strings.Builder
	b.WriteString(`WITH v (id, status, next, err, at, url, code, latency, response) AS (VALUES `)
	args := make([]any, 0, 9*len(outcomes))
	for i, o := range outcomes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
		a := o.Attempt
		next, err := outcomeRow(o)
		var nextArg sql.NullTime
		if next != nil {
			nextArg = sql.NullTime{Time: *next, Valid: true}
		}
		args = append(args, a.DeliveryID, o.Status, nextArg, err, a.At, cleanText(a.URL), a.StatusCode,
			a.Latency.Microseconds(), cleanText(a.Response))
	}
	b.WriteString(")")
	return b.String(), args
}

// insertTransactions: multi-row VALUES without RETURNING (which buffers
// every row), insertChunk rows a statement; the full-size statement is
// prepared once per connection and kept (DB.stmt). The transaction holds
// the database's only write lock and the table has AUTOINCREMENT, so the
// rows of one statement that inserts them all get consecutive ids in VALUES
// order, ending at last_insert_rowid(). When a reference conflicts, fewer
// rows are inserted, and which ones cannot be told: the ids collected so far
// are returned and the caller sees that rows are missing.
func (sqliteDialect) insertTransactions(ctx context.Context, db *DB, tx *sql.Tx, companyID int64, rows []insertRow, now time.Time) (map[accountKey]int64, error) {
	ids := make(map[accountKey]int64, len(rows))
	for start := 0; start < len(rows); start += insertChunk {
		chunk := rows[start:min(start+insertChunk, len(rows))]
		args := make([]any, 0, len(chunk)*13)
		for _, r := range chunk {
			var bank any // the bank's balance, NULL when it gave none
			if r.Accumulated != nil {
				bank = *r.Accumulated
			}
			args = append(args, companyID, r.BankAccountID, recon.WallClock(r.TransactionDate), r.AmountIn, r.AmountOut,
				r.accumulated, r.Content, r.ReferenceNumber, nullString(r.code), nullString(r.SubAccount), now, bank, r.dupKey)
		}
		var res sql.Result
		var err error
		if len(chunk) == insertChunk {
			var stmt *sql.Stmt
			if stmt, err = db.stmt(ctx, tx, sqliteInsertFullChunk); err == nil {
				res, err = stmt.ExecContext(ctx, args...)
			}
		} else {
			res, err = tx.ExecContext(ctx, sqliteInsertTransactions(len(chunk)), args...)
		}
		if err != nil {
			return nil, internal(err, "insert transactions")
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, internal(err, "insert transactions")
		}
		last, err := res.LastInsertId()
		if err != nil {
			return nil, internal(err, "insert transactions")
		}
		if int(n) < len(chunk) {
			return ids, nil
		}
		for i, r := range chunk {
			ids[r.key()] = last - int64(len(chunk)-1-i)
		}
	}
	return ids, nil
}

// sqliteInsertFullChunk inserts insertChunk rows: the statement kept prepared.
var sqliteInsertFullChunk = sqliteInsertTransactions(insertChunk)

// sqliteInsertTransactions is the statement inserting n rows. It cannot
// abort midway, so SQLite keeps no statement journal for it: OR FAIL for the
// NOT NULL columns, and migration 00049's deferred foreign key and CHECKs
// without a function call (docs/design.md, "An insert that cannot abort").
// Any error rolls back the whole transaction, as before.
func sqliteInsertTransactions(n int) string {
	var sb strings.Builder
	sb.WriteString(`INSERT OR FAIL INTO ` + insertColumns + `VALUES `)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?,?,?,?,?,?,?,?,?,?,?,?,?)")
	}
	sb.WriteString(` ON CONFLICT (bank_account_id, reference_number) DO NOTHING`)
	return sb.String()
}

// oneOf: a list of placeholders, one a value. SQLite's planner does not
// estimate them one by one, and a statement costs no round trip.
func (d sqliteDialect) oneOf(first, n int, _ string) (string, bool) {
	return "IN (" + placeholders(d, first, n) + ")", false
}

// oneOfQuery: IN (subquery), whose values SQLite probes the index with,
// one by one.
func (sqliteDialect) oneOfQuery(sub string) string { return "IN (" + sub + ")" }

// readTogether: one after the other; SQLite's reads cost no round trip.
func (sqliteDialect) readTogether(ctx context.Context, db *DB, tx *sql.Tx, reads []batchRead) error {
	for _, r := range reads {
		var rows *sql.Rows
		var err error
		if r.prepared {
			var stmt *sql.Stmt
			if stmt, err = db.stmt(ctx, tx, r.query); err == nil {
				rows, err = stmt.QueryContext(ctx, r.args...)
			}
		} else {
			rows, err = tx.QueryContext(ctx, r.query, r.args...)
		}
		if err == nil {
			err = r.take(rows, rows.Close)
		}
		if err != nil {
			return internal(err, r.what)
		}
	}
	return nil
}

// dupProbes: for each account, IN lists of at most insertChunk keys, each
// padded (a key asked twice is asked once) to one of a few sizes
// (sqliteDupProbeSizes), so that the statements are few and each is
// prepared once per connection. SQLite's look-ups cost no round trip.
func (d sqliteDialect) dupProbes(accounts []int64, sums [][]int64) []probe {
	var probes []probe
	for i, a := range accounts {
		for start := 0; start < len(sums[i]); start += insertChunk {
			chunk := sums[i][start:min(start+insertChunk, len(sums[i]))]
			n := sqliteDupProbeSizes[slices.IndexFunc(sqliteDupProbeSizes, func(n int) bool { return n >= len(chunk) })]
			args := append(make([]any, 0, n+1), a)
			for k := range n {
				args = append(args, chunk[min(k, len(chunk)-1)])
			}
			in, _ := d.oneOf(2, n, "bigint")
			probes = append(probes, probe{dupProbe("= ?", in), args})
		}
	}
	return probes
}

// sqliteDupProbeSizes are the numbers of keys a look-up asks for at once
// (the last is insertChunk).
var sqliteDupProbeSizes = []int{16, 128, insertChunk}

// upsertAmountCounts: multi-row VALUES, insertChunk keys a statement; the
// full-size statement is prepared once per connection and kept (DB.stmt), as
// parsing it costs as much as running it.
func (sqliteDialect) upsertAmountCounts(ctx context.Context, db *DB, tx *sql.Tx, companyID int64, keys []amountKey, counts map[amountKey]int64) error {
	for start := 0; start < len(keys); start += insertChunk {
		chunk := keys[start:min(start+insertChunk, len(keys))]
		args := make([]any, 0, 5*len(chunk))
		for _, k := range chunk {
			args = append(args, companyID, k.in, k.out, k.account, counts[k])
		}
		var err error
		if len(chunk) == insertChunk {
			var stmt *sql.Stmt
			if stmt, err = db.stmt(ctx, tx, sqliteUpsertAmountsFullChunk); err == nil {
				_, err = stmt.ExecContext(ctx, args...)
			}
		} else {
			_, err = tx.ExecContext(ctx, sqliteUpsertAmounts(len(chunk)), args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sqliteUpsertAmountsFullChunk upserts insertChunk keys: the statement kept prepared.
var sqliteUpsertAmountsFullChunk = sqliteUpsertAmounts(insertChunk)

// sqliteUpsertAmounts is the statement upserting n keys.
func sqliteUpsertAmounts(n int) string {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO transaction_amount_counts (company_id, amount_in, amount_out, bank_account_id, n) VALUES `)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?,?,?,?,?)")
	}
	sb.WriteString(` ON CONFLICT (company_id, amount_in, amount_out, bank_account_id) DO UPDATE SET n = transaction_amount_counts.n + excluded.n`)
	return sb.String()
}

// analyzeIngested: the listing names its index (indexedBy), and a
// connection plans with the statistics it loaded when it opened anyway.
func (sqliteDialect) analyzeIngested() string { return "" }

// optimizeStatements: SQLite gathers no statistics by itself; a bounded
// ANALYZE (analysis_limit) takes milliseconds even on millions of rows.
func (sqliteDialect) optimizeStatements() []string {
	return []string{`PRAGMA analysis_limit = 1000`, `ANALYZE`}
}

// lockMigrations takes an exclusive flock of the file PATH-migrate.lock,
// which the kernel releases if the process dies.
func (sqliteDialect) lockMigrations(ctx context.Context, db *DB) (func(), error) {
	return lockFile(ctx, db.path+"-migrate.lock")
}

// secureDelete turns secure_delete on for conn: deleted and overwritten
// content is zeroed in the database file.
func (sqliteDialect) secureDelete(ctx context.Context, conn *sql.Conn) (func(), error) {
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return nil, err
	}
	return func() { conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = OFF`) }, nil
}

// purgeDeleted checkpoints the write-ahead log, which still holds the pages
// as they were, and truncates it. It fails when a reader keeps the
// checkpoint from completing.
func (sqliteDialect) purgeDeleted(ctx context.Context, conn *sql.Conn, table string) error {
	var busy, logPages, done int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done); err != nil || busy != 0 {
		return fmt.Errorf("checkpoint: busy %d: %v", busy, err)
	}
	return nil
}

// stampChanges: the counter's upsert, then the runs in one INSERT ...
// SELECT FROM json_each of [seq, id, kind, n] quadruples, a statement
// prepared once (a batch's added rows are one quadruple).
func (sqliteDialect) stampChanges(ctx context.Context, db *DB, tx *sql.Tx, companyID int64, runs changeRuns, total int64, now time.Time) error {
	var last int64
	if err := tx.QueryRowContext(ctx, moveCounter, companyID, total).Scan(&last); err != nil {
		return err
	}
	var quads strings.Builder
	for i := range runs.ends {
		quads.WriteString(`,[` + strconv.FormatInt(last-total+runs.ends[i], 10) + `,` + strconv.FormatInt(runs.ids[i], 10) +
			`,"` + runs.kinds[i] + `",` + strconv.FormatInt(runs.ns[i], 10) + `]`)
	}
	stmt, err := db.stmt(ctx, tx, sqliteInsertRuns)
	if err == nil {
		_, err = stmt.ExecContext(ctx, companyID, now, "["+quads.String()[1:]+"]")
	}
	return err
}

// sqliteInsertRuns logs the runs of the JSON array $3 for the tenant $1 at
// $2.
const sqliteInsertRuns = `INSERT INTO transaction_changes (company_id, seq, transaction_id, kind, created_at, n)
	SELECT $1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), $2, json_extract(value, '$[3]')
	FROM json_each($3)`

// updateOrderPayments: one statement an order; in process, a statement
// costs no round trip.
func (sqliteDialect) updateOrderPayments(ctx context.Context, tx *sql.Tx, orders []*recon.Order) error {
	for _, o := range orders {
		if _, err := tx.ExecContext(ctx, updateOrderPayment,
			o.Status, o.PaidAmount, o.UpdatedAt, nullTime(o.PaidAt), idArg(o.PaidTransactionID), o.ID); err != nil {
			return err
		}
	}
	return nil
}
