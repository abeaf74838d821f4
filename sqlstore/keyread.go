package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// The authentication's key read: every request with a bearer token reads
// the authentication epoch and, for a caller kept in memory, its tenant's
// change version, on the primary (recon.TokenStore). Both must be read
// after the request came, so that a token revoked or a transaction
// committed before it, on any node, is seen (docs/design.md, "Listing
// pages kept encoded").

// keyReader is the engine's way of making that read: tenant's version
// is read only withVersion.
type keyReader interface {
	read(ctx context.Context, tenant int64, withVersion bool) (epoch, version int64, err error)
}

// sqliteKeyReader reads on its own for each request: in-process, a few
// microseconds. The context's cancellation is dropped: a WAL reader never
// waits for the writer, so there is nothing to cancel, and watching the
// context would cost database/sql and the driver a goroutine each per
// query, 7% of page 1's rate (docs/benchmarks.md). With the WAL index
// mapped (walindex.go), a read whose answer is kept under the header the
// index has now is answered from memory.
type sqliteKeyReader struct {
	db  *sql.DB
	wal *walIndex // nil: every read is a statement
	// afterRead, when set (tests), is called after each statement.
	afterRead func()

	kept keptKeys[walHeader]
}

func (r *sqliteKeyReader) read(ctx context.Context, tenant int64, withVersion bool) (epoch, version int64, err error) {
	if r.wal == nil {
		return r.query(ctx, tenant, withVersion)
	}
	before, ok := r.wal.header()
	if ok {
		if epoch, version, hit := r.kept.lookup(before, tenant, withVersion); hit {
			return epoch, version, nil
		}
	}
	if epoch, version, err = r.query(ctx, tenant, withVersion); err != nil {
		return 0, 0, err
	}
	if after, same := r.wal.header(); ok && same && after == before {
		var versions map[int64]int64
		if withVersion {
			versions = map[int64]int64{tenant: version}
		}
		r.kept.keep(before, epoch, versions)
	}
	return epoch, version, nil
}

func (r *sqliteKeyReader) query(ctx context.Context, tenant int64, withVersion bool) (epoch, version int64, err error) {
	ctx = context.WithoutCancel(ctx)
	if withVersion {
		err = r.db.QueryRowContext(ctx, `SELECT n, `+tenantVersion+` FROM auth_epoch WHERE id = 1`, tenant).Scan(&epoch, &version)
	} else {
		err = r.db.QueryRowContext(ctx, `SELECT n FROM auth_epoch WHERE id = 1`).Scan(&epoch)
	}
	if r.afterRead != nil {
		r.afterRead()
	}
	if err != nil {
		return 0, 0, internal(err, "read the authentication epoch")
	}
	return epoch, version, nil
}

// keptKeys is what key reads returned, kept under a stamp that moves
// whenever it may be stale: the key lease's generation (keylease.go), or
// SQLite's WAL-index header (walindex.go). It keeps the epoch and the
// versions of up to keyKept tenants, then forgets them.
type keptKeys[S comparable] struct {
	mu       sync.Mutex
	stamp    S
	hasEpoch bool
	epoch    int64
	versions map[int64]int64
}

// keyKept bounds the tenants whose versions are kept.
const keyKept = 4096

// lookup answers from what is kept under stamp.
func (k *keptKeys[S]) lookup(stamp S, tenant int64, withVersion bool) (epoch, version int64, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.hasEpoch || k.stamp != stamp {
		return 0, 0, false
	}
	if withVersion {
		if version, ok = k.versions[tenant]; !ok {
			return 0, 0, false
		}
	}
	return k.epoch, version, true
}

// keep keeps what a read made under stamp returned: what was kept under
// another stamp is forgotten. A version kept higher stays: a tenant's
// version only grows, and raise may have kept a later one than a read sent
// before it returns.
func (k *keptKeys[S]) keep(stamp S, epoch int64, versions map[int64]int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stamp != stamp || k.versions == nil || len(k.versions)+len(versions) > keyKept {
		k.versions = make(map[int64]int64, len(versions))
		k.stamp = stamp
	}
	k.epoch, k.hasEpoch = epoch, true
	for id, v := range versions {
		k.versions[id] = max(k.versions[id], v)
	}
}

// raise keeps, under stamp, the versions a committed write of this process
// made, for the tenants whose version is kept (keyLease.settle).
func (k *keptKeys[S]) raise(stamp S, versions map[int64]int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stamp != stamp || k.versions == nil {
		return
	}
	for id, v := range versions {
		if kept, ok := k.versions[id]; ok && v > kept {
			k.versions[id] = v
		}
	}
}

// On PostgreSQL the read is a round trip, and concurrent requests share
// them (keyReads): a request waits for the next read to start, never for
// one already on its way, and one statement then reads the epoch and the
// version of every waiting request's tenant, in one snapshot. Each
// request's answer thus comes from a read that began after the request
// did, as a read of its own would. Under load one round trip answers
// several requests (2.6 on average with the benchmark's 8 clients), which
// spares the primary and raised page 1 from 0.22–0.23 to 0.24–0.28 of
// /healthz (docs/design.md, "Concurrent requests share the key read").

// keyReadTimeout bounds one shared read. Its requests stop waiting when
// their own contexts end; the bound frees the requests queued behind a
// read that a dead connection holds (pgUserTimeout ends most of those
// sooner).
const keyReadTimeout = 10 * time.Second

// keyReads coalesces the key reads of concurrent requests on PostgreSQL.
type keyReads struct {
	db *sql.DB

	mu sync.Mutex
	// reading is true while a read is on its way; next collects the
	// requests that came meanwhile (nil: none), for the read after it.
	reading bool
	next    *keyBatch

	// afterRead, when set (tests), is called after each read's statement
	// and before its requests are answered.
	afterRead func()
	// timeout bounds each read: keyReadTimeout, shorter in tests.
	timeout time.Duration
	// lease answers reads from memory while this node holds the key lease
	// (keylease.go), and keeps what each read returns.
	lease *keyLease
}

// keyBatch is the requests one read answers.
type keyBatch struct {
	// versions holds the tenants whose versions are asked for, and after
	// the read their versions.
	versions map[int64]int64
	callers  int           // the requests waiting for it
	done     chan struct{} // closed when the read has answered
	epoch    int64
	err      error
}

// pgKeyRead reads the epoch and the version of each tenant in $1, in one
// snapshot: one row per tenant, or one row with a NULL tenant when there
// is none. The version is tenantVersion's.
const pgKeyRead = `SELECT e.n, t.id, COALESCE(c.seq, 0)
	FROM auth_epoch e
	LEFT JOIN unnest($1::bigint[]) AS t(id) ON true
	LEFT JOIN sync_counters c ON c.company_id = t.id
	WHERE e.id = 1`

// read returns the epoch and, with withVersion, the version of tenant, from
// a read that starts after read is called.
func (r *keyReads) read(ctx context.Context, tenant int64, withVersion bool) (epoch, version int64, err error) {
	if epoch, version, ok := r.lease.lookup(tenant, withVersion); ok {
		return epoch, version, nil
	}
	r.mu.Lock()
	b := r.next
	if b == nil {
		b = &keyBatch{versions: map[int64]int64{}, done: make(chan struct{})}
		r.next = b
	}
	b.callers++
	if withVersion {
		b.versions[tenant] = 0
	}
	if !r.reading {
		r.reading, r.next = true, nil
		go r.run(b)
	}
	r.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	if b.err != nil {
		return 0, 0, b.err
	}
	return b.epoch, b.versions[tenant], nil
}

// run reads b, then the batches that gathered meanwhile, one after the
// other, until none is waiting.
func (r *keyReads) run(b *keyBatch) {
	for b != nil {
		gen := r.lease.gen.Load() // before the read is sent
		if b.epoch, b.err = r.fetch(b.versions); b.err == nil {
			r.lease.kept.keep(gen, b.epoch, b.versions)
		}
		if r.afterRead != nil {
			r.afterRead()
		}
		close(b.done)
		r.mu.Lock()
		b, r.next = r.next, nil
		r.reading = b != nil
		r.mu.Unlock()
	}
}

// fetch reads the epoch and fills versions.
func (r *keyReads) fetch(versions map[int64]int64) (epoch int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	tenants := make([]int64, 0, len(versions))
	for id := range versions {
		tenants = append(tenants, id)
	}
	rows, err := r.db.QueryContext(ctx, pgKeyRead, tenants)
	if err != nil {
		return 0, internal(err, "read the authentication epoch")
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		found = true
		var id sql.NullInt64
		var version int64
		if err := rows.Scan(&epoch, &id, &version); err != nil {
			return 0, internal(err, "read the authentication epoch")
		}
		if id.Valid {
			versions[id.Int64] = version
		}
	}
	if err := rows.Err(); err != nil {
		return 0, internal(err, "read the authentication epoch")
	}
	if !found {
		return 0, internal(sql.ErrNoRows, "read the authentication epoch")
	}
	return epoch, nil
}
