package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Deferred writes (PostgreSQL; docs/design.md, "A transaction's writes sent
// together").
//
// An ingest transaction makes many writes whose answer nobody reads: the
// accounts' balances, the day and amount counts, the orders' new state,
// the match decisions, the IPNs' outbox rows, the change log. Each is a
// round trip to PostgreSQL, and on a loaded machine a round trip costs
// more than the statement: the push of a single transfer waited on two
// dozen of them. A write made with a deferrable context is therefore not
// sent at once: the connection keeps it, and sends every write it keeps,
// in order, in one pipeline (pgx.Batch) ahead of the transaction's next
// statement, or with its COMMIT. A reader in the transaction thus always
// sees the writes made before it; only the round trips are fewer.
//
// A deferred write's arguments are encoded when it is sent: they must be
// values, or pointers to nothing the caller goes on changing.
//
// The price is where a deferred write's failure shows: at the statement
// that sends it (its error names the write: "deferred UPDATE …") or at the
// commit, which then fails, so nothing of the transaction is stored. A
// write whose error or rows affected its caller acts on (a conflict to
// recover from, a row that must exist) is never deferred. Outside a
// transaction, and on SQLite (no round trips), a deferrable write runs at
// once.

// Reads sent together (PostgreSQL; docs/design.md, "A transaction's reads
// sent together").
//
// A transaction whose next reads do not depend on each other's answers (an
// ingestion's accounts, locked, its duplicate look-up and the orders its
// batch names, locked) hands them to readTogether as batchReads: on
// PostgreSQL the connection sends the writes it keeps and the reads in one
// pipeline, one round trip, and gives each read's rows to its scan in
// order; on SQLite (no round trips) they run one after the other. PostgreSQL runs them in order too, each seeing
// what the ones before it wrote or locked. database/sql has no way to ask
// this of a driver, so the reads travel as the argument of an ExecContext
// whose text is readsTogether, which only a pipelineConn takes.

// batchRead is one read of readTogether: its statement and arguments, and
// scan, which reads its rows (the values scan takes are those of
// database/sql's Scan: the sql.Scanner types, basic types and pointers).
// An error of either is EINTERNAL naming what.
type batchRead struct {
	what  string
	query string
	args  []any
	scan  func(rows rowScanner) error
	// prepared: the statement is one of a few texts, worth keeping
	// prepared on SQLite (DB.stmt); pgx keeps every statement prepared.
	prepared bool
}

// take scans rows with r.scan and closes them (close), returning the
// scan's error, else the close's, else the rows' own.
func (r batchRead) take(rows rowScanner, close func() error) error {
	err := r.scan(rows)
	if cerr := close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rows.Err()
	}
	return err
}

// rowScanner is the rows of a batchRead: *sql.Rows, or pgx's rows.
type rowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// readsTogether is the text of the ExecContext that carries a
// []batchRead to a pipelineConn.
const readsTogether = "-- sqlstore: reads sent together"

// readAll sends the kept writes and reads in one pipeline and scans each
// read's rows.
func (c *pipelineConn) readAll(ctx context.Context, reads []batchRead) error {
	ws := c.pending
	c.pending = nil
	b := &pgx.Batch{}
	for _, w := range ws {
		b.Queue(w.query, w.args...)
	}
	for _, r := range reads {
		b.Queue(r.query, r.args...)
	}
	br := c.stdConn.Conn().SendBatch(ctx, b)
	for _, w := range ws {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return classify(fmt.Errorf("sqlstore: deferred %s: %w", statementName(w.query), err))
		}
	}
	for _, r := range reads {
		rows, err := br.Query()
		if err == nil {
			err = r.take(rows, func() error { rows.Close(); return nil })
		}
		if err != nil {
			_ = br.Close()
			return internal(err, r.what)
		}
	}
	return internalOrNil(br.Close(), reads[len(reads)-1].what)
}

// deferrableKey marks a context whose write may be deferred.
type deferrableKey struct{}

// deferrable returns ctx marking the write made with it as one whose
// answer the caller does not read: on PostgreSQL, within a transaction, it
// is sent with the transaction's next statement or its commit.
func deferrable(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferrableKey{}, true)
}

func isDeferrable(ctx context.Context) bool {
	v, _ := ctx.Value(deferrableKey{}).(bool)
	return v
}

// pipelineConnector makes the pool's connections pipelineConns; lease, when
// not nil, learns of the key changes of their transactions.
type pipelineConnector struct {
	driver.Connector
	lease *keyLease
}

func (c pipelineConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pipelineConn{stdConn: conn.(*stdlib.Conn), lease: c.lease}, nil
}

// pipelineConn is pgx's database/sql connection keeping the deferrable
// writes of its transaction until its next statement. database/sql uses a
// connection from one goroutine at a time: no lock is needed. The
// connection is embedded under an alias so that its Conn method (pgx's own
// connection, for a caller of sql.Conn.Raw) is not hidden by a field of
// that name.
type pipelineConn struct {
	*stdConn
	inTx    bool
	pending []pendingWrite
	lease   *keyLease
	// committed: the last transaction's COMMIT succeeded (for the key
	// lease, until the connection is next handed back).
	committed bool
}

// IsValid is called by database/sql whenever the connection goes back to
// the pool: after a statement outside a transaction, or after a
// transaction's commit or rollback, and before its caller goes on. That is
// where the key lease learns that a key changed (keylease.go).
func (c *pipelineConn) IsValid() bool {
	if c.lease != nil {
		c.lease.settle(c.stdConn.Conn().PgConn(), c.committed)
	}
	c.committed = false
	return true
}

// Close, for a connection that database/sql discards instead: a transaction
// whose end is unknown may have changed a key.
func (c *pipelineConn) Close() error {
	c.IsValid()
	return c.stdConn.Close()
}

type stdConn = stdlib.Conn

type pendingWrite struct {
	query string
	args  []any
}

// Begin and Prepare are the driver's context-free forms; database/sql
// calls the context ones, but neither may bypass the pending writes.
func (c *pipelineConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *pipelineConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *pipelineConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.stdConn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.inTx = true
	return &pipelineTx{Tx: tx, c: c, ctx: ctx}, nil
}

func (c *pipelineConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if query == readsTogether {
		return driver.RowsAffected(0), c.readAll(ctx, args[0].Value.([]batchRead))
	}
	if c.inTx && isDeferrable(ctx) {
		c.pending = append(c.pending, pendingWrite{query, values(args)})
		return deferredResult{}, nil
	}
	if len(c.pending) == 0 {
		return c.stdConn.ExecContext(ctx, query, args)
	}
	// The kept writes and this one in one round trip.
	tag, err := c.send(ctx, &pendingWrite{query, values(args)})
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

func (c *pipelineConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	return c.stdConn.QueryContext(ctx, query, args)
}

func (c *pipelineConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	s, err := c.stdConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &pipelineStmt{Stmt: s.(*stdlib.Stmt), c: c}, nil
}

// flush sends the kept writes, if any.
func (c *pipelineConn) flush(ctx context.Context) error {
	if len(c.pending) == 0 {
		return nil
	}
	_, err := c.send(ctx, nil)
	return err
}

// send sends the kept writes and then last, when not nil, in one pipeline,
// and returns last's command tag. The first write that fails ends it: its
// error names it, and PostgreSQL skips the rest (the transaction is
// aborted, so the caller's error rolls it back).
func (c *pipelineConn) send(ctx context.Context, last *pendingWrite) (pgconn.CommandTag, error) {
	ws := c.pending
	c.pending = nil
	if last != nil {
		ws = append(ws, *last)
	}
	b := &pgx.Batch{}
	for _, w := range ws {
		b.Queue(w.query, w.args...)
	}
	br := c.stdConn.Conn().SendBatch(ctx, b)
	var tag pgconn.CommandTag
	for i, w := range ws {
		var err error
		if tag, err = br.Exec(); err != nil {
			_ = br.Close()
			if last != nil && i == len(ws)-1 {
				return tag, err // last's own, as its caller would have had it
			}
			return tag, fmt.Errorf("sqlstore: deferred %s: %w", statementName(w.query), err)
		}
	}
	return tag, br.Close()
}

// statementName is the first words of query, for an error naming it.
func statementName(query string) string {
	s := strings.Join(strings.Fields(query), " ")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

// deferredResult is the result of a write not yet sent: its caller does
// not read it (deferrable).
type deferredResult struct{}

var errDeferred = errors.New("sqlstore: a deferred write has no result")

func (deferredResult) LastInsertId() (int64, error) { return 0, errDeferred }
func (deferredResult) RowsAffected() (int64, error) { return 0, errDeferred }

// pipelineTx commits with the writes its connection kept: one round trip.
type pipelineTx struct {
	driver.Tx
	c   *pipelineConn
	ctx context.Context
}

func (t *pipelineTx) Commit() error {
	c := t.c
	c.inTx = false
	if len(c.pending) == 0 {
		err := t.Tx.Commit()
		c.committed = err == nil
		return err
	}
	tag, err := c.send(t.ctx, &pendingWrite{query: "COMMIT"})
	if err == nil && tag.String() != "COMMIT" {
		// PostgreSQL answers ROLLBACK to the COMMIT of a failed transaction.
		err = pgx.ErrTxCommitRollback
	}
	if err != nil && c.stdConn.Conn().PgConn().TxStatus() != 'I' {
		// The pipeline stopped before its COMMIT: end the transaction, or
		// the pool discards the connection (stdlib's ResetSession).
		_, _ = c.stdConn.Conn().Exec(t.ctx, "ROLLBACK")
	}
	c.committed = err == nil
	return err
}

func (t *pipelineTx) Rollback() error {
	t.c.inTx, t.c.pending = false, nil
	return t.Tx.Rollback()
}

// pipelineStmt is a prepared statement of a pipelineConn: it too runs
// after the kept writes.
type pipelineStmt struct {
	*stdlib.Stmt
	c *pipelineConn
}

func (s *pipelineStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.c.flush(ctx); err != nil {
		return nil, err
	}
	return s.Stmt.ExecContext(ctx, args)
}

func (s *pipelineStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.c.flush(ctx); err != nil {
		return nil, err
	}
	return s.Stmt.QueryContext(ctx, args)
}
