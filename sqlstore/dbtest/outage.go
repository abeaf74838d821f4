package dbtest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"recon/sqlstore"
)

// Outage stands between a store and its PostgreSQL database, so that a test
// can take the database away from a running server and give it back, as a
// node sees a primary die and a failover end (docs/design.md, Losing the
// primary), without stopping the server other tests share: a loopback TCP
// proxy to the database's server.
//
//   - Cut closes every connection made through it, as a server that died
//     (the store reads EOF or a reset), and refuses new ones (accepted and
//     closed at once) until Restore;
//   - Stall keeps the connections open but passes nothing either way, and
//     new connections hang, as a host that vanished without a reset, until
//     Restore or Cut.
//
// SetReadOnly makes the database itself refuse writes, as a demoted primary.
type Outage struct {
	t      testing.TB
	ln     net.Listener
	target string // host:port of the server

	mu      sync.Mutex
	cut     bool
	stalled bool
	resumed chan struct{} // closed when a stall ends
	conns   map[net.Conn]struct{}
}

// NewOutage starts a proxy in front of the PostgreSQL database at
// databaseURL (a URL of NewURL or the server's) and returns it with the URL
// to connect through it. It is closed when the test ends.
func NewOutage(t testing.TB, databaseURL string) (*Outage, string) {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil || !strings.HasPrefix(u.Scheme, "postgres") || u.Host == "" {
		t.Fatalf("dbtest: NewOutage wants a postgres:// URL with a host, not %q", databaseURL)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &Outage{t: t, ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}, resumed: make(chan struct{})}
	close(o.resumed)
	go o.serve()
	t.Cleanup(func() {
		ln.Close()
		o.Cut()
	})
	proxied := *u
	proxied.Host = ln.Addr().String()
	return o, proxied.String()
}

// Cut closes every connection through the proxy and refuses new ones until
// Restore.
func (o *Outage) Cut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cut = true
	o.resumeLocked()
	for c := range o.conns {
		c.Close()
	}
	clear(o.conns)
}

// Stall stops passing bytes on every connection, open or new, until Restore
// or Cut.
func (o *Outage) Stall() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.stalled {
		o.stalled, o.resumed = true, make(chan struct{})
	}
}

// Restore lets connections through again.
func (o *Outage) Restore() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cut = false
	o.resumeLocked()
}

func (o *Outage) resumeLocked() {
	if o.stalled {
		o.stalled = false
		close(o.resumed)
	}
}

func (o *Outage) serve() {
	for {
		c, err := o.ln.Accept()
		if err != nil {
			return
		}
		o.mu.Lock()
		if o.cut {
			o.mu.Unlock()
			c.Close()
			continue
		}
		o.conns[c] = struct{}{}
		o.mu.Unlock()
		go o.relay(c)
	}
}

func (o *Outage) relay(c net.Conn) {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s, err := d.DialContext(ctx, "tcp", o.target)
	cancel()
	if err != nil {
		o.drop(c)
		return
	}
	o.mu.Lock()
	if _, open := o.conns[c]; !open {
		o.mu.Unlock()
		s.Close()
		return
	}
	o.conns[s] = struct{}{}
	o.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { o.pipe(s, c); done <- struct{}{} }()
	go func() { o.pipe(c, s); done <- struct{}{} }()
	<-done
	o.drop(c)
	o.drop(s)
}

// pipe copies from src to dst, holding what it read while the proxy is
// stalled.
func (o *Outage) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			o.mu.Lock()
			resumed := o.resumed
			o.mu.Unlock()
			<-resumed
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				o.t.Logf("dbtest: outage proxy: %v", err)
			}
			return
		}
	}
}

func (o *Outage) drop(c net.Conn) {
	o.mu.Lock()
	delete(o.conns, c)
	o.mu.Unlock()
	c.Close()
}

// SetReadOnly makes the PostgreSQL database at databaseURL refuse writes
// (on) or take them again (off), as a primary demoted to a standby and one
// promoted: with on, the database's sessions are ended (the store's pooled
// connections meet 57P01, as when a demoted server restarts) and every new
// session is read-only (default_transaction_read_only), so writes fail with
// 25006 and reads answer; with off, new sessions take writes, and sessions
// made while it was on stay read-only until the store drops them.
func SetReadOnly(t testing.TB, databaseURL string, on bool) {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if !strings.HasPrefix(name, databasePrefix) {
		t.Fatalf("dbtest: SetReadOnly changes only the databases of this test process, not %q", name)
	}
	admin, _ := server.serverFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stmt := "ALTER DATABASE " + name + " RESET default_transaction_read_only"
	if on {
		stmt = "ALTER DATABASE " + name + " SET default_transaction_read_only = on"
	}
	if _, err := admin.ExecContext(ctx, stmt); err != nil {
		t.Fatalf("dbtest: %s: %v", stmt, err)
	}
	if on {
		if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name); err != nil {
			t.Fatalf("dbtest: end the sessions of %s: %v", name, err)
		}
	}
}

// OpenOutageStore opens a fresh, migrated PostgreSQL database, as
// OpenStore(t, "postgres"), through an Outage. It returns the store, the
// outage and the database's own URL (for SetReadOnly, or a second store
// that bypasses the outage).
func OpenOutageStore(t testing.TB) (*sqlstore.DB, *Outage, string) {
	t.Helper()
	template, err := server.migratedTemplate(t)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	direct := server.newDatabase(t, template)
	o, proxied := NewOutage(t, direct)
	return OpenURL(t, proxied), o, direct
}
