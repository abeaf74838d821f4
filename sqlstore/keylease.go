package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The key lease (PostgreSQL; migration 00054, docs/design.md, "The key
// lease").
//
// Every request with a bearer token reads the authentication epoch and its
// tenant's change version on the primary (keyread.go), so that a revocation
// or a write committed before it, by any node or process, is in its answer.
// On PostgreSQL that read is a round trip, and it held page 1 of the listing
// to a quarter of /healthz's rate. A node holding the key lease answers it
// from memory instead, and the guarantee stays whole:
//
//   - No other session changes auth_epoch or sync_counters while the lease
//     is held: the statements that do wait on an advisory lock the holder
//     keeps, until the holder, which looks for such waiters every
//     keyLeasePoll, lets go. The holder forgets what it kept before it lets
//     go.
//   - The holder's own connections are told by a notice when their
//     statement changed a key; once their transaction has ended, before
//     database/sql hands the connection back and so before the request that
//     wrote is answered, everything kept is forgotten (keyLease.changed).
//   - The holder trusts its memory only for keyLeaseTrust after sending its
//     last successful check: the lock is its session's, and a session that
//     ends (the server restarted, the connection was killed, idle for
//     keyLeaseIdle) releases it. A writer that then finds the holder still
//     named waits twice keyLeaseTrust before it changes anything.
//
// A node that is not the only writer pays at most one keyLeasePoll of wait
// on a write every keyLeaseCooldown; a node that is, none.

const (
	// keyLeasePoll is how often the holder checks its lock and looks for
	// waiting writers: a writer of another session waits about this long.
	keyLeasePoll = 25 * time.Millisecond
	// keyLeaseTrust is how long after sending a successful check the
	// holder answers from memory. Migration 00054's writer waits twice
	// this after a holder's session ended without letting go.
	keyLeaseTrust = 250 * time.Millisecond
	// keyLeaseIdle ends the holder's session on the server when it has not
	// checked for this long (idle_session_timeout), releasing the lock of a
	// holder that hangs or that the network cut off.
	keyLeaseIdle = "2s"
	// keyLeaseCooldown is how long a holder that let go for a writer waits
	// before it takes the lease again.
	keyLeaseCooldown = 5 * time.Second
)

// The advisory lock keys of migration 00054: held by the holder ("reconl"),
// and ordering holder changes against writes ("reconh").
const (
	keyLeaseLock  int64 = 0x7265636f6e6c
	keyLeaseOrder int64 = 0x7265636f6e68
)

// pgLockNotAvailable is lock_timeout's SQLSTATE.
const pgLockNotAvailable = "55P03"

// keyChangedNotice is the notice migration 00054's trigger raises on every
// statement that changes the epoch or deletes a version; keyChangedData
// marks, in the connection's CustomData, that its transaction raised it.
// versionNotice starts the one migration 00055's trigger raises for each
// version written ("recon: version changed <company_id> <seq>"), which
// versionsData collects (map[int64]int64, the highest seq of each tenant).
const (
	keyChangedNotice = "recon: key changed"
	keyChangedData   = "recon.keyChanged"
	versionNotice    = "recon: version changed "
	versionsData     = "recon.versions"
)

// keyLease is one store's side of the lease: its node id, what it keeps,
// and, when run, the session that holds the lease.
type keyLease struct {
	// node is this store's id, which its connections carry in the setting
	// recon.node and which the holder writes in key_lease.holder.
	node string
	// gen moves whenever what is kept may be stale: a key changed on one of
	// this store's connections, the lease was taken, let go or lost.
	gen atomic.Uint64
	// trustedUntil is when the holder stops answering from memory, in
	// nanoseconds since start (the monotonic clock); 0 when not held.
	trustedUntil atomic.Int64
	start        time.Time

	kept keptKeys[uint64] // under gen

	// cooldown is keyLeaseCooldown, shorter in tests; takes counts the
	// times the lease was taken.
	cooldown time.Duration
	takes    atomic.Int64
}

func newKeyLease() *keyLease {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return &keyLease{node: hex.EncodeToString(b), start: time.Now(), cooldown: keyLeaseCooldown}
}

// configure makes the pool's connections carry the node id and report the
// key changes of their transactions.
func (l *keyLease) configure(cfg *pgx.ConnConfig) {
	cfg.RuntimeParams["recon.node"] = l.node
	// The notice must reach the client whatever the server's default.
	cfg.RuntimeParams["client_min_messages"] = "notice"
	cfg.OnNotice = func(c *pgconn.PgConn, n *pgconn.Notice) {
		cd := c.CustomData()
		if tenant, seq, ok := parseVersionNotice(n.Message); ok {
			vs, _ := cd[versionsData].(map[int64]int64)
			if vs == nil {
				vs = map[int64]int64{}
				cd[versionsData] = vs
			}
			vs[tenant] = max(vs[tenant], seq)
		} else if n.Message == keyChangedNotice {
			cd[keyChangedData] = true
		}
	}
}

// parseVersionNotice reads migration 00055's notice.
func parseVersionNotice(msg string) (tenant, seq int64, ok bool) {
	rest, found := strings.CutPrefix(msg, versionNotice)
	if !found {
		return 0, 0, false
	}
	t, q, found := strings.Cut(rest, " ")
	if !found {
		return 0, 0, false
	}
	tenant, err1 := strconv.ParseInt(t, 10, 64)
	seq, err2 := strconv.ParseInt(q, 10, 64)
	return tenant, seq, err1 == nil && err2 == nil
}

// settle is called when a connection's transaction or statement has ended,
// committed saying whether it is known to have committed. A key changed
// makes what is kept forgotten. Versions written are kept, raised to what
// the transaction wrote, when it committed: the holder's connections are
// the only writers while it holds the lease, and a tenant's version only
// grows, so the highest committed is the one a read would find. Written by
// a transaction that did not commit, or by a statement outside one (whose
// end is not told here), they make what is kept forgotten too.
func (l *keyLease) settle(c *pgconn.PgConn, committed bool) {
	cd := c.CustomData()
	vs, _ := cd[versionsData].(map[int64]int64)
	changed := cd[keyChangedData] != nil
	delete(cd, keyChangedData)
	delete(cd, versionsData)
	switch {
	case changed || (vs != nil && !committed):
		l.changed()
	case vs != nil:
		l.kept.raise(l.gen.Load(), vs)
	}
}

func (l *keyLease) changed() { l.gen.Add(1) }

func (l *keyLease) now() int64 { return int64(time.Since(l.start)) }

func (l *keyLease) trusted() bool { return l.now() < l.trustedUntil.Load() }

// lookup answers a key read from memory while the lease is held and nothing
// kept is stale.
func (l *keyLease) lookup(tenant int64, withVersion bool) (epoch, version int64, ok bool) {
	if !l.trusted() {
		return 0, 0, false
	}
	return l.kept.lookup(l.gen.Load(), tenant, withVersion)
}

// untrust stops answering from memory and forgets what is kept: before the
// lease is let go, or once it is lost.
func (l *keyLease) untrust() {
	l.trustedUntil.Store(0)
	l.changed()
}

// run takes the lease and holds it until ctx ends, letting go for writers
// of other sessions and taking it again after keyLeaseCooldown. cfg is the
// pool's connection configuration.
func (l *keyLease) run(ctx context.Context, cfg *pgx.ConnConfig, log *slog.Logger) {
	cfg = cfg.Copy()
	cfg.RuntimeParams["idle_session_timeout"] = keyLeaseIdle
	cfg.RuntimeParams["application_name"] = "recon key lease"
	cfg.OnNotice = nil
	last := ""
	for {
		wait, err := l.hold(ctx, cfg)
		if ctx.Err() != nil {
			return
		}
		// Each new problem once: a server that refuses the lease's session
		// (idle_session_timeout needs PostgreSQL 14) refuses it every time.
		switch {
		case err == nil:
			last = ""
		case err.Error() != last:
			log.Warn("key lease: requests read the primary until it is held again", "err", err)
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// hold connects, takes the lease if it is free and holds it until a writer
// waits, the session fails or ctx ends. It returns how long to wait before
// trying again.
func (l *keyLease) hold(ctx context.Context, cfg *pgx.ConnConfig) (time.Duration, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return l.cooldown, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	sent := l.now()
	tctx, cancel := statementContext(ctx)
	held, err := l.take(tctx, conn)
	cancel()
	if err != nil || !held {
		return l.cooldown, err
	}
	l.takes.Add(1)
	l.changed() // nothing read before the lease was taken is kept
	l.trustedUntil.Store(sent + int64(keyLeaseTrust))
	defer l.untrust() // first, when hold returns: before the session ends
	tick := time.NewTicker(keyLeasePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.letGo(conn)
			return 0, nil
		case <-tick.C:
		}
		sent := l.now()
		var waiting, mine int
		qctx, cancel := statementContext(ctx)
		err := conn.QueryRow(qctx, `SELECT count(*) FILTER (WHERE NOT granted), count(*) FILTER (WHERE granted AND pid = pg_backend_pid())
			FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objid = $2 AND objsubid = 1`,
			uint32(keyLeaseLock>>32), uint32(keyLeaseLock&0xffffffff)).Scan(&waiting, &mine)
		cancel()
		if err != nil || mine == 0 {
			return time.Second, err
		}
		if waiting > 0 {
			l.letGo(conn)
			return l.cooldown, nil
		}
		l.trustedUntil.Store(sent + int64(keyLeaseTrust))
	}
}

// statementContext bounds a statement on the lease's session without
// ending it when ctx ends: pgx closes a session whose statement is
// cancelled, and a holder closed mid-check would then leave its name in
// key_lease.holder for the next writer to wait out. The loop in hold sees
// ctx end after the statement and lets go.
func statementContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), time.Second)
}

// take takes the lease if no other session holds it or writes a key: with
// the order lock held exclusively, no statement changing a key is under
// way, and none starts until this node is named holder.
func (l *keyLease) take(ctx context.Context, conn *pgx.Conn) (bool, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var held bool
	// Short: while this waits, writers queue behind it.
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '100ms'`); err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, keyLeaseOrder); err != nil {
		var e *pgconn.PgError
		if errors.As(err, &e) && e.Code == pgLockNotAvailable {
			return false, nil // writers under way: not free now
		}
		return false, err
	}
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, keyLeaseLock).Scan(&held); err != nil || !held {
		return false, err
	}
	if _, err := tx.Exec(ctx, `UPDATE key_lease SET holder = $1 WHERE id = 1`, l.node); err != nil {
		return false, err
	}
	return true, tx.Commit(ctx)
}

// letGo stops trusting memory, then clears the holder's name and releases
// the lock, so that the writers waiting go on at once. If either fails, the
// session's end releases the lock, and the writers wait as for a holder
// that ended.
func (l *keyLease) letGo(conn *pgx.Conn) {
	l.untrust()
	ctx, cancel := statementContext(context.Background())
	defer cancel()
	if _, err := conn.Exec(ctx, `UPDATE key_lease SET holder = NULL WHERE id = 1 AND holder = $1`, l.node); err != nil {
		return
	}
	_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, keyLeaseLock)
}
