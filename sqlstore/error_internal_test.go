package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"recon"
)

// TestClassifyDatabaseErrors: the errors of a lost or demoted primary are
// EUNAVAILABLE with a message saying to retry and ErrUnavailable in their
// chain (docs/design.md, Losing the primary); a deadlock is EUNAVAILABLE
// without it; the SQL's own errors stay internal, and errors that carry a
// code keep it.
func TestClassifyDatabaseErrors(t *testing.T) {
	pg := func(code, severity string) error {
		return &pgconn.PgError{Code: code, Severity: severity, Message: "server says " + code}
	}
	opErr := func(err error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}
	}
	for _, tt := range []struct {
		name    string
		err     error
		code    string // of internal(err)
		message string
		paused  bool // ErrUnavailable in the chain: the loops pause
	}{
		{"connection failure 08006", pg("08006", "FATAL"), recon.EUNAVAILABLE, msgUnreachable, true},
		{"cannot establish 08001", pg("08001", "FATAL"), recon.EUNAVAILABLE, msgUnreachable, true},
		{"protocol violation 08P01", pg("08P01", "ERROR"), recon.EUNAVAILABLE, msgUnreachable, true},
		{"admin shutdown 57P01", pg("57P01", "FATAL"), recon.EUNAVAILABLE, msgUnreachable, true},
		{"crash shutdown 57P02", pg("57P02", "FATAL"), recon.EUNAVAILABLE, msgUnreachable, true},
		{"cannot connect now 57P03", pg("57P03", "FATAL"), recon.EUNAVAILABLE, msgUnreachable, true},
		{"too many connections 53300", pg("53300", "FATAL"), recon.EUNAVAILABLE, msgUnreachable, true},
		{"read-only transaction 25006", pg("25006", "ERROR"), recon.EUNAVAILABLE, msgReadOnly, true},
		{"serialization failure 40001", pg("40001", "ERROR"), recon.EUNAVAILABLE, msgConcurrent, false},
		{"deadlock 40P01", pg("40P01", "ERROR"), recon.EUNAVAILABLE, msgConcurrent, false},
		{"unique violation 23505", pg("23505", "ERROR"), recon.EINTERNAL, "", false},
		{"undefined table 42P01", pg("42P01", "ERROR"), recon.EINTERNAL, "", false},
		{"invalid text 22P02", pg("22P02", "ERROR"), recon.EINTERNAL, "", false},
		{"query canceled 57014", pg("57014", "ERROR"), recon.EINTERNAL, "", false},
		{"connect refused", &pgconn.ConnectError{Config: &pgconn.Config{}}, recon.EUNAVAILABLE, msgUnreachable, true},
		{"driver.ErrBadConn", driver.ErrBadConn, recon.EUNAVAILABLE, msgUnreachable, true},
		{"EOF on a pooled connection", fmt.Errorf("receive message: %w", io.EOF), recon.EUNAVAILABLE, msgUnreachable, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, recon.EUNAVAILABLE, msgUnreachable, true},
		{"connection reset", opErr(syscall.ECONNRESET), recon.EUNAVAILABLE, msgUnreachable, true},
		{"broken pipe", opErr(syscall.EPIPE), recon.EUNAVAILABLE, msgUnreachable, true},
		{"connection refused", syscall.ECONNREFUSED, recon.EUNAVAILABLE, msgUnreachable, true},
		{"no route to host", opErr(syscall.EHOSTUNREACH), recon.EUNAVAILABLE, msgUnreachable, true},
		{"a deadline while waiting for the pool", context.DeadlineExceeded, recon.EUNAVAILABLE, msgUnreachable, true},
		{"no rows", sql.ErrNoRows, recon.EINTERNAL, "", false},
		{"a closed database handle", sql.ErrConnDone, recon.EINTERNAL, "", false},
		{"any other error", errors.New("sqlite: disk I/O error"), recon.EINTERNAL, "", false},
		{"a coded error is kept", conflict(pg("25006", "ERROR"), "taken"), recon.ECONFLICT, "taken", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := internal(tt.err, "list things")
			if got := recon.ErrorCode(err); got != tt.code {
				t.Fatalf("code %q, want %q (%v)", got, tt.code, err)
			}
			if tt.message != "" && recon.ErrorMessage(err) != tt.message {
				t.Errorf("message %q, want %q", recon.ErrorMessage(err), tt.message)
			}
			if got := errors.Is(err, ErrUnavailable); got != tt.paused {
				t.Errorf("errors.Is(err, ErrUnavailable) = %v, want %v", got, tt.paused)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the driver's error left the chain: %v", err)
			}
			// The transaction helper classifies what fn returned as it was.
			if got := recon.ErrorCode(classify(tt.err)); got != tt.code {
				t.Errorf("classify: code %q, want %q", got, tt.code)
			}
			if tt.code == recon.EUNAVAILABLE && recon.ErrorSay(err) == nil {
				t.Errorf("no catalogue key for the dashboard")
			}
		})
	}
	if classify(nil) != nil {
		t.Error("classify(nil) is not nil")
	}
}

// TestKeepConnection: pgx closes a connection that met a fatal error or a
// read-only server's refusal, so that the pool makes a new one (to the new
// primary); any other error keeps it.
func TestKeepConnection(t *testing.T) {
	for _, tt := range []struct {
		code, severity string
		keep           bool
	}{
		{"25006", "ERROR", false},
		{"57P01", "FATAL", false},
		{"08006", "ERROR", false},
		{"28P01", "FATAL", false},
		{"40P01", "ERROR", true},
		{"23505", "ERROR", true},
		{"42601", "ERROR", true},
	} {
		if got := keepConnection(nil, &pgconn.PgError{Code: tt.code, Severity: tt.severity}); got != tt.keep {
			t.Errorf("%s %s: keep %v, want %v", tt.severity, tt.code, got, tt.keep)
		}
	}
}

// TestPostgresConnectionDefaults: a URL without connect_timeout gets 5 s,
// one with it keeps its own; every configuration gets the dialer with
// keepalives and the OnPgError that closes stale connections.
func TestPostgresConnectionDefaults(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want string
	}{
		{"postgres://u@127.0.0.1:5432/db", "5s"},
		{"postgres://u@127.0.0.1:5432/db?connect_timeout=2", "2s"},
		{"postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write", "5s"},
	} {
		cfg, err := pgx.ParseConfig(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		configurePostgres(cfg, tt.url)
		if got := cfg.ConnectTimeout.String(); got != tt.want {
			t.Errorf("%s: connect timeout %s, want %s", tt.url, got, tt.want)
		}
		if cfg.DialFunc == nil || cfg.OnPgError == nil {
			t.Errorf("%s: no dialer or OnPgError", tt.url)
		}
		if cfg.OnPgError(nil, &pgconn.PgError{Code: "25006", Severity: "ERROR"}) {
			t.Errorf("%s: a read-only refusal keeps the connection", tt.url)
		}
	}
}
