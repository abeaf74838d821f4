package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"time"

	"recon"
)

// Every authenticated request reads the authentication epoch, and a kept
// caller's its tenant's change version with it, on the primary
// (AuthEpochAndVersion). Concurrent requests share that read the way
// concurrent commits share a flush: a request joins the next read, one
// that has not started yet, so what it learns was read after it came and
// after every write committed before it, as if it had read alone; while a
// read runs, the requests that come gather for the one after it. On
// PostgreSQL a read is a round trip to another process, most of what a
// request answered from kept pages costs; eight requests at once share one
// or two. docs/design.md, "Authentication reads shared".

// maxAuthReadTenants bounds the tenants one read asks for; a request that
// finds the next read full reads alone.
const maxAuthReadTenants = 256

// authReadTimeout bounds a shared read: it does not end with the context
// of the request that happened to start it.
const authReadTimeout = 30 * time.Second

// authReads is the read running and the one gathering.
type authReads struct {
	mu      sync.Mutex
	running bool
	next    *authRead
}

// authRead is one read of the epoch and of the tenants' versions.
type authRead struct {
	tenants  []int64
	done     chan struct{} // closed when the fields below are set
	epoch    int64
	versions map[int64]int64
	err      error
}

// readAuth returns the epoch and, when tenant is not 0, its version, from
// a read started after the call.
func (db *DB) readAuth(ctx context.Context, tenant int64) (epoch, version int64, err error) {
	r := &db.authReads
	r.mu.Lock()
	b := r.next
	if b == nil {
		b = &authRead{done: make(chan struct{})}
		r.next = b
	}
	if tenant != 0 && !slices.Contains(b.tenants, tenant) {
		if len(b.tenants) == maxAuthReadTenants {
			r.mu.Unlock()
			b = &authRead{tenants: []int64{tenant}, done: make(chan struct{})}
			db.runAuthRead(b)
			return b.result(tenant)
		}
		b.tenants = append(b.tenants, tenant)
	}
	if !r.running { // no read runs: this one starts now
		r.running, r.next = true, nil
		r.mu.Unlock()
		db.serveAuthReads(b)
	} else {
		r.mu.Unlock()
	}
	select {
	case <-b.done:
		return b.result(tenant)
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
}

// serveAuthReads runs b, then hands the read gathered meanwhile, if any,
// to a goroutine of its own, so that a request waits for its own read only.
func (db *DB) serveAuthReads(b *authRead) {
	db.runAuthRead(b)
	r := &db.authReads
	r.mu.Lock()
	defer r.mu.Unlock()
	if next := r.next; next != nil {
		r.next = nil
		go db.serveAuthReads(next)
		return
	}
	r.running = false
}

func (b *authRead) result(tenant int64) (epoch, version int64, err error) {
	if b.err != nil {
		return 0, 0, b.err
	}
	return b.epoch, b.versions[tenant], nil
}

// runAuthRead reads the epoch and b's tenants' versions (0 for a tenant
// that never changed: no sync_counters row) in one statement.
func (db *DB) runAuthRead(b *authRead) {
	defer close(b.done)
	ctx, cancel := context.WithTimeout(context.Background(), authReadTimeout)
	defer cancel()
	if len(b.tenants) == 0 {
		b.err = db.db.QueryRowContext(ctx, `SELECT n FROM auth_epoch WHERE id = 1`).Scan(&b.epoch)
		if b.err != nil {
			b.err = internal(b.err, "read the authentication epoch")
		}
		return
	}
	args := make([]any, len(b.tenants))
	for i, t := range b.tenants {
		args[i] = t
	}
	rows, err := db.db.QueryContext(ctx, `SELECT e.n, s.company_id, s.seq FROM auth_epoch e
		LEFT JOIN sync_counters s ON s.company_id IN (`+db.params(1, len(args))+`) WHERE e.id = 1`, args...)
	if err != nil {
		b.err = internal(err, "read the authentication epoch")
		return
	}
	defer rows.Close()
	b.versions = make(map[int64]int64, len(b.tenants))
	found := false
	for rows.Next() {
		var company, seq sql.NullInt64
		if err := rows.Scan(&b.epoch, &company, &seq); err != nil {
			b.err = internal(err, "read the authentication epoch")
			return
		}
		found = true
		if company.Valid {
			b.versions[company.Int64] = seq.Int64
		}
	}
	if err := rows.Err(); err != nil {
		b.err = internal(err, "read the authentication epoch")
	} else if !found {
		b.err = internal(sql.ErrNoRows, "read the authentication epoch")
	}
}

// AuthEpoch implements recon.TokenStore: triggers move the counter
// (migration 00012), so that no writer can forget it. The read is shared
// with concurrent requests' (readAuth).
func (db *DB) AuthEpoch(ctx context.Context) (int64, error) {
	epoch, _, err := db.readAuth(ctx, 0)
	return epoch, err
}

// AuthEpochAndVersion implements recon.TokenStore, on the primary like
// AuthEpoch: the version is the tenant's sync_counters.seq, as
// TransactionsIfChanged reads it.
func (db *DB) AuthEpochAndVersion(ctx context.Context, tenant recon.TenantID) (epoch, version int64, err error) {
	return db.readAuth(ctx, tenant.ID())
}
