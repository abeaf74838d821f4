package sqlstore

import (
	"container/list"
	"context"
	"database/sql/driver"
)

// SQLite's prepared statements, kept per connection (docs/design.md,
// "SQLite statements prepared once per connection"). modernc.org/sqlite
// compiles every statement database/sql hands it afresh and throws it away
// after one use: measured from outside, compiling SQL was 43% of the
// server's CPU under 500 single-transfer pushes a second, and most of a
// listing request's. pgx keeps a cache of its own; this is SQLite's.
//
// Each connection keeps up to stmtCacheSize statements by their text, the
// least recently used evicted first. A statement whose rows are still open
// (a query run again while an earlier run of the same text is being read, on
// the same connection) is not shared: the second run compiles a one-off
// statement, as before. SQLite recompiles a kept statement by itself when
// the schema changes under it (sqlite3_prepare_v2).

// stmtCacheSize bounds the statements one connection keeps. The server's
// statements are a few hundred texts at most; texts built for a number of
// values (IN lists, multi-row VALUES) vary, and the bound keeps them from
// growing without end.
const stmtCacheSize = 256

// sqliteConn is what database/sql uses of a modernc.org/sqlite connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// preparedStmt is what a statement of modernc.org/sqlite offers.
type preparedStmt interface {
	driver.Stmt
	driver.StmtQueryContext
	driver.StmtExecContext
}

// stmtCacheConnector opens connections of the wrapped driver that keep their statements.
type stmtCacheConnector struct {
	dsn    string
	driver driver.Driver
}

func (c stmtCacheConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.driver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &cachingConn{sqliteConn: conn.(sqliteConn), stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

func (c stmtCacheConnector) Driver() driver.Driver { return c.driver }

// cachingConn is a connection with its statements; database/sql uses a
// connection from one goroutine at a time, so it needs no lock.
type cachingConn struct {
	sqliteConn
	stmts map[string]*list.Element // of *cachedStmt in lru
	lru   *list.List               // most recently used first
}

type cachedStmt struct {
	query   string
	stmt    preparedStmt
	busy    bool // rows of it are open
	evicted bool // out of the cache: closed when its rows close
}

// stmt returns the connection's statement for query, compiling and keeping it
// the first time, or nil when its kept statement's rows are still open.
func (c *cachingConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if e, ok := c.stmts[query]; ok {
		c.lru.MoveToFront(e)
		if s := e.Value.(*cachedStmt); !s.busy {
			return s, nil
		}
		return nil, nil
	}
	st, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s := &cachedStmt{query: query, stmt: st.(preparedStmt)}
	c.stmts[query] = c.lru.PushFront(s)
	if c.lru.Len() > stmtCacheSize {
		old := c.lru.Remove(c.lru.Back()).(*cachedStmt)
		delete(c.stmts, old.query)
		if old.busy {
			old.evicted = true
		} else {
			old.stmt.Close()
		}
	}
	return s, nil
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := s.stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.busy = true
	return &cachedRows{Rows: rows, s: s}, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	return s.stmt.ExecContext(ctx, args) // runs to completion and resets the statement
}

// Close closes the kept statements, then the connection.
func (c *cachingConn) Close() error {
	for e := c.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*cachedStmt).stmt.Close()
	}
	c.stmts, c.lru = nil, list.New()
	return c.sqliteConn.Close()
}

// cachedRows gives the statement back when its rows close.
type cachedRows struct {
	driver.Rows
	s *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close() // resets the statement for its next use
	r.s.busy = false
	if r.s.evicted {
		if e := r.s.stmt.Close(); err == nil {
			err = e
		}
	}
	return err
}
