package sqlstore

import (
	"context"
	"database/sql"
	"io/fs"
	"strconv"
	"time"

	"github.com/pressly/goose/v3"
)

// MigrateTo moves the schema to version, down or up (tests of a migration's
// own work, such as a backfill).
func (db *DB) MigrateTo(ctx context.Context, version int64) error {
	fsys, err := fs.Sub(migrations, "migrations/"+db.d.name())
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(db.d.goose(), db.db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return err
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return err
	}
	if version < current {
		_, err = p.DownTo(ctx, version)
	} else {
		_, err = p.UpTo(ctx, version)
	}
	return err
}

// Exec runs a statement on the database (tests only).
func (db *DB) Exec(ctx context.Context, query string, args ...any) error {
	_, err := db.db.ExecContext(ctx, query, args...)
	return err
}

// SetRederiveLimit bounds the stored rows one batch may re-derive (tests
// of the bound; maxRederive otherwise).
func (db *DB) SetRederiveLimit(n int) { db.rederiveLimit = n }

// StopStandbyChecks stops the checker of WithStandby's standby: the store
// goes on counting the standby as its last check found it (tests of a
// listing that meets a standby the checker has not found dead yet).
func (db *DB) StopStandbyChecks() {
	db.standby.stop()
	<-db.standby.done
}

// AfterKeyRead makes each key read's statement call f after it: on
// PostgreSQL before the shared read answers its requests (keyReads).
func (db *DB) AfterKeyRead(f func()) {
	switch r := db.keys.(type) {
	case *keyReads:
		r.afterRead = f
	case *sqliteKeyReader:
		r.afterRead = f
	}
}

// WALIndexMapped reports whether key reads are answered from the mapped
// WAL index (SQLite).
func (db *DB) WALIndexMapped() bool { return db.wal != nil }

// SetKeyReadTimeout bounds each shared key read by d instead of
// keyReadTimeout (PostgreSQL: keyReads).
func (db *DB) SetKeyReadTimeout(d time.Duration) { db.keys.(*keyReads).timeout = d }

// KeyReadWaiters returns how many requests wait for the next shared key
// read, behind the one on its way (PostgreSQL: keyReads).
func (db *DB) KeyReadWaiters() int {
	r := db.keys.(*keyReads)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == nil {
		return 0
	}
	return r.next.callers
}

// Pool is the store's connection pool (tests of the deferred writes of a
// PostgreSQL transaction: pipeline.go).
func (db *DB) Pool() *sql.DB { return db.db }

// Deferrable is deferrable: ctx marking a write whose answer its caller
// does not read.
func Deferrable(ctx context.Context) context.Context { return deferrable(ctx) }

// DupProbe is the first look-up of an account's keys of possible
// duplicates, each key plus the account (dialect.dupProbes).
func (db *DB) DupProbe(account int64, keys []int64) (string, []any) {
	sums := make([]int64, len(keys))
	for i, k := range keys {
		sums[i] = k + account
	}
	q := db.d.dupProbes([]int64{account}, [][]int64{sums})[0]
	return q.query, q.args
}

// LockOrdersQuery is the statement reading (and on PostgreSQL locking) the
// orders a batch names by payment code or virtual account, and its
// arguments.
func (db *DB) LockOrdersQuery(companyID int64, codes, vas []string) (string, []any) {
	return db.lockOrdersQuery(companyID, codes, vas)
}

// KeyLeaseTrusted reports whether the store holds the key lease and answers
// key reads from memory now (PostgreSQL).
func (db *DB) KeyLeaseTrusted() bool { return db.lease.trusted() }

// SetKeyLeaseCooldown replaces keyLeaseCooldown, before HoldKeyLease.
func (db *DB) SetKeyLeaseCooldown(d time.Duration) { db.lease.cooldown = d }

// KeyLeaseTakes counts the times the store took the key lease.
func (db *DB) KeyLeaseTakes() int64 { return db.lease.takes.Load() }

// ReadTogether runs queries in tx as reads sent together (readTogether),
// each read's rows its first column as text.
func (db *DB) ReadTogether(ctx context.Context, tx *sql.Tx, queries ...string) ([][]string, error) {
	out := make([][]string, len(queries))
	reads := make([]batchRead, len(queries))
	for i, q := range queries {
		reads[i] = batchRead{what: "read " + strconv.Itoa(i), query: q, scan: func(rows rowScanner) error {
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					return err
				}
				out[i] = append(out[i], s)
			}
			return nil
		}}
	}
	return out, db.d.readTogether(ctx, db, tx, reads)
}

// LaneQueued is how many ingestion calls of the company wait in its lanes.
func (db *DB) LaneQueued(companyID int64) int {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	n := 0
	for _, l := range db.group.lanes[companyID] {
		n += len(l.queue)
	}
	return n
}

// LogChanges logs the changes (ids[i], kinds[i]) of the company as a
// writing transaction does (tests of the change log's runs).
func (db *DB) LogChanges(ctx context.Context, companyID int64, ids []int64, kinds []string) error {
	var set changeSet
	for i := range ids {
		set.add(kinds[i], ids[i])
	}
	return db.inTx(ctx, func(tx *sql.Tx) error { return db.stampChanges(ctx, tx, companyID, set, db.now()) })
}
