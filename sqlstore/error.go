package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"recon"
)

// notFound returns an ENOTFOUND error whose message is safe to show.
func notFound(err error, format string, args ...any) *recon.Error {
	return &recon.Error{Code: recon.ENOTFOUND, Message: fmt.Sprintf(format, args...), Err: err}
}

// conflict returns an ECONFLICT error whose message is safe to show.
func conflict(err error, format string, args ...any) *recon.Error {
	return &recon.Error{Code: recon.ECONFLICT, Message: fmt.Sprintf(format, args...), Err: err}
}

// internal wraps an unexpected driver error. recon.ErrorCode reports it as
// EINTERNAL and recon.ErrorMessage hides its text; unless it means that no
// writable database is reachable right now (see unavailable), when it is
// EUNAVAILABLE with a message saying to retry.
func internal(err error, op string) error {
	return classify(fmt.Errorf("sqlstore: %s: %w", op, err))
}

// Messages of the EUNAVAILABLE errors of a lost primary (docs/design.md,
// Losing the primary).
const (
	msgUnreachable = "the database is not reachable (failover in progress?): retry shortly"
	msgReadOnly    = "the database is read-only at the moment (failover in progress?): retry shortly"
	msgConcurrent  = "the database gave up on this request because of concurrent ones (a deadlock or a serialization failure): retry it"
)

// classify returns err as an EUNAVAILABLE *recon.Error when it is a driver
// error meaning that no writable primary answers right now (see
// unavailable), and err itself otherwise: nil, an error that already
// carries a code, or any other failure. The original error stays in the
// chain (errors.As finds a *pgconn.PgError through it), for the logs.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var re *recon.Error
	if errors.As(err, &re) {
		return err
	}
	switch unavailable(err) {
	case reasonUnreachable:
		return errUnreachable(err)
	case reasonReadOnly:
		return errReadOnly(err)
	case reasonConcurrent:
		// Not ErrUnavailable: the database answers, the loops go on.
		return (&recon.Error{Code: recon.EUNAVAILABLE, Message: msgConcurrent, Err: err}).Saying("db_retry")
	}
	return err
}

// ErrUnavailable is in the chain of every error of a database that takes
// no writes right now (errors.Is), for the loops that pause on it rather
// than on any EUNAVAILABLE (a bank that does not answer is one too).
var ErrUnavailable = errors.New("sqlstore: the database is unavailable")

// errUnreachable is the EUNAVAILABLE error of a database that does not
// answer; the dashboard says it in the reader's language (its key).
func errUnreachable(err error) *recon.Error {
	return (&recon.Error{Code: recon.EUNAVAILABLE, Message: msgUnreachable, Err: unavailableCause(err)}).Saying("db_unavailable")
}

// errReadOnly is the EUNAVAILABLE error of a database that refuses writes.
func errReadOnly(err error) *recon.Error {
	return (&recon.Error{Code: recon.EUNAVAILABLE, Message: msgReadOnly, Err: unavailableCause(err)}).Saying("db_read_only")
}

// unavailableCause is err with ErrUnavailable in its chain.
func unavailableCause(err error) error {
	if err == nil {
		return ErrUnavailable
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// Why a database error means "retry shortly".
const (
	reasonNone        = 0
	reasonUnreachable = 1
	reasonReadOnly    = 2
	// reasonConcurrent: a deadlock or serialization failure, which no code
	// of the store retries; the request may be retried at once.
	reasonConcurrent = 3
)

// PostgreSQL error codes of a server that is going away, not yet there, or
// no longer the primary.
const (
	pgAdminShutdown   = "57P01" // the server is stopping (or the backend was terminated)
	pgCrashShutdown   = "57P02"
	pgCannotConnect   = "57P03" // starting up, shutting down, or in recovery
	pgReadOnlyTx      = "25006" // read_only_sql_transaction: a standby, or a demoted primary
	pgTooManyConns    = "53300"
	pgSerialization   = "40001"
	pgDeadlock        = "40P01"
	pgConnectionClass = "08" // connection exception
)

// unavailable reports why err means that no writable database answers
// right now, reasonNone when it does not: a connection that could not be
// made (pgconn.ConnectError: refused, timed out, the host is a standby
// under target_session_attrs=read-write), a pooled connection that broke
// (network errors, EOF, reset, broken pipe, driver.ErrBadConn), a server
// shutting down or starting up (SQLSTATE class 08, 57P01, 57P02, 57P03, too
// many connections), a read-only server (25006: a standby, a demoted
// primary), or a wait for the database that outlived the request's
// deadline; and, reasonConcurrent, a deadlock or serialization failure
// (40P01, 40001). Errors of the SQL itself (constraints, syntax) are none
// of these; nor is any SQLite error.
func unavailable(err error) int {
	if err == nil {
		return reasonNone
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == pgReadOnlyTx:
			return reasonReadOnly
		case pe.Code == pgSerialization, pe.Code == pgDeadlock:
			return reasonConcurrent
		case strings.HasPrefix(pe.Code, pgConnectionClass),
			pe.Code == pgAdminShutdown, pe.Code == pgCrashShutdown, pe.Code == pgCannotConnect, pe.Code == pgTooManyConns:
			return reasonUnreachable
		}
		return reasonNone
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		if errors.Is(err, pgconn.ErrReadOnlyConnection) || errors.Is(err, pgconn.ErrStandbyConnection) {
			return reasonReadOnly
		}
		return reasonUnreachable
	}
	var ne net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.ETIMEDOUT),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.As(err, &ne),
		// pgconn's own errors of a connection that could not be used
		// (closed, busy after a failure) before anything was sent.
		pgconn.SafeToRetry(err):
		return reasonUnreachable
	}
	return reasonNone
}
