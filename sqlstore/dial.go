package sqlstore

import (
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// What a node does when its PostgreSQL primary dies or is demoted
// (docs/design.md, Losing the primary): no wait on the database is
// unbounded, and no pooled connection to a server that can no longer take
// writes is used twice.
const (
	// pgConnectTimeout bounds each attempt at a connection (per host of a
	// multi-host URL) when the URL sets no connect_timeout.
	pgConnectTimeout = 5 * time.Second
	// pgKeepAlive*: an idle connection whose host is gone is found dead
	// within pgKeepAliveIdle + pgKeepAliveCount × pgKeepAliveInterval (11 s).
	pgKeepAliveIdle     = 5 * time.Second
	pgKeepAliveInterval = 2 * time.Second
	pgKeepAliveCount    = 3
	// pgUserTimeout (TCP_USER_TIMEOUT, Linux) drops a connection whose sent
	// data has gone unacknowledged that long: a query sent to a host that
	// died ends with an error then instead of after the kernel's
	// retransmissions (about 15 minutes).
	pgUserTimeout = 10 * time.Second
)

// configurePostgres sets the defaults of a lost primary on cfg, as parsed
// from databaseURL: connect_timeout unless the URL sets it, TCP keepalives
// and TCP_USER_TIMEOUT on every connection, and connections that met a
// read-only server (SQLSTATE 25006) or a fatal error closed, so that the
// pool discards them (pgx's database/sql driver reports a closed
// connection as driver.ErrBadConn) and the next connection is made anew,
// to the writable host when the URL says target_session_attrs=read-write.
func configurePostgres(cfg *pgx.ConnConfig, databaseURL string) {
	timeout := cfg.ConnectTimeout
	if !strings.Contains(databaseURL, "connect_timeout") {
		timeout = pgConnectTimeout
		cfg.ConnectTimeout = timeout
	}
	d := &net.Dialer{
		Timeout: timeout,
		KeepAliveConfig: net.KeepAliveConfig{
			Enable: true, Idle: pgKeepAliveIdle, Interval: pgKeepAliveInterval, Count: pgKeepAliveCount,
		},
		Control: func(network, _ string, c syscall.RawConn) error {
			if strings.HasPrefix(network, "tcp") {
				_ = c.Control(func(fd uintptr) { setUserTimeout(fd, pgUserTimeout) })
			}
			return nil
		},
	}
	cfg.DialFunc = d.DialContext
	cfg.OnPgError = keepConnection
}

// keepConnection is pgconn's OnPgError: false closes the connection. pgx
// closes on a FATAL error by default; a read-only server's refusal (25006:
// the primary was demoted, or the connection reached a standby) closes it
// too, since every later write on it would fail the same way.
func keepConnection(_ *pgconn.PgConn, e *pgconn.PgError) bool {
	if strings.EqualFold(e.Severity, "FATAL") || strings.EqualFold(e.Severity, "PANIC") {
		return false
	}
	r := unavailable(e)
	return r != reasonUnreachable && r != reasonReadOnly
}
