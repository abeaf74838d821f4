package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"recon"
)

// Reads from a standby (docs/design.md, "Reads from a standby"): with
// WithStandby, the listings a surface marks (recon.Listing) read from a
// second pool on a PostgreSQL streaming standby while the standby is known
// to hold every commit the primary acknowledged up to maxLag ago; otherwise,
// and whenever the standby fails a listing, they read from the primary.
//
// The staleness is measured by positions in the write-ahead log, not by
// now() - pg_last_xact_replay_timestamp(), which grows while the primary is
// idle though the standby lacks nothing: every standbyEvery the checker
// reads the primary's flushed position (pg_current_wal_flush_lsn(), which
// covers every commit acknowledged before the moment it was read) and then
// the standby's replayed position (pg_last_wal_replay_lsn()); the standby
// holds everything the primary had acknowledged at the time of the newest
// sample it has replayed, so its staleness is the time since that sample.
// The samples it has not reached yet are kept, to find when it passes them.
// A standby that does not answer, is not in recovery (promoted, or a
// primary) or whose checks stop is not read from: the staleness of its last
// check grows with the clock.

// standbyMaxSamples bounds the primary's positions kept while the standby
// lags; past it the oldest go, which only makes the measure more cautious
// (the standby is found fresh again at a later sample).
const standbyMaxSamples = 4096

// standbyCheckTimeout bounds each check's two queries.
const standbyCheckTimeout = 5 * time.Second

// WithStandby makes the listings that the surfaces mark (recon.Listing)
// read from the PostgreSQL standby at readURL while it is no more than
// maxLag behind the primary (docs/design.md, "Reads from a standby").
// Open refuses it on SQLite, or with a URL that is not a PostgreSQL one; a
// standby that does not answer at start is only not read from.
func WithStandby(readURL string, maxLag time.Duration) Option {
	return func(db *DB) { db.readURL, db.readMaxLag = readURL, maxLag }
}

// StandbyStatus is what a node knows of its standby.
type StandbyStatus struct {
	// Serving is whether listings read from the standby now.
	Serving bool
	// Staleness is how far behind the primary the standby may be: the
	// time since the newest primary position it has replayed was read;
	// negative when unknown (no check has found it replaying).
	Staleness time.Duration
	// MaxLag is the bound Serving keeps to.
	MaxLag time.Duration
	// Reason says why the standby is not serving ("" when it is).
	Reason string
	// Reads counts the listings the standby answered.
	Reads int64
}

// Standby returns the standby's status; false when the store has none.
func (db *DB) Standby() (StandbyStatus, bool) {
	if db.standby == nil {
		return StandbyStatus{}, false
	}
	return db.standby.status(), true
}

// standby is the second pool of WithStandby and its checker.
type standby struct {
	store  *DB // the standby as a store: the listings run on it
	maxLag time.Duration
	every  time.Duration
	reads  atomic.Int64
	stop   context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	samples  []lsnSample // primary positions the standby has not replayed, oldest first
	caughtUp time.Time   // when the newest position it replayed was read (zero: unknown)
	reason   string      // why it is not known to be caught up
}

// lsnSample is a position of the primary's write-ahead log and when it was read.
type lsnSample struct {
	lsn uint64
	at  time.Time
}

// openStandby opens the pool of WithStandby beside db's, checks the
// standby once and starts the checker.
func (db *DB) openStandby(ctx context.Context) error {
	invalid := func(format string, args ...any) error {
		return recon.FieldError("database_read_url", format, args...)
	}
	if db.d.name() != EnginePostgres {
		return invalid("a read URL (a standby) needs PostgreSQL: the database is %s", db.d.name())
	}
	engine, _, err := parseURL(db.readURL)
	if err != nil || engine != EnginePostgres {
		return invalid("the read URL %q must be a PostgreSQL URL (postgres://... or postgresql://...)", redact(db.readURL))
	}
	if db.readMaxLag <= 0 {
		return invalid("the standby's staleness bound must be positive, not %s", db.readMaxLag)
	}
	pool, _, err := openPostgres(db.readURL, nil)
	if err != nil {
		return invalid("the read URL is not a valid PostgreSQL URL: %v", err)
	}
	db.d.configure(pool)
	s := &standby{
		store:  &DB{db: pool, d: db.d, clock: db.clock, rand: db.rand},
		maxLag: db.readMaxLag,
		every:  max(min(250*time.Millisecond, db.readMaxLag/4), 5*time.Millisecond),
		done:   make(chan struct{}),
		reason: "not checked yet",
	}
	s.check(ctx, db.db)
	runCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go s.run(runCtx, db.db)
	db.standby = s
	return nil
}

// run checks the standby every s.every until ctx ends.
func (s *standby) run(ctx context.Context, primary *sql.DB) {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.check(ctx, primary)
		}
	}
}

// check samples the primary's position, then reads how far the standby
// has replayed. A check cut short by the checker's stop (run's ctx) gives
// no verdict: its failed query says nothing of the standby.
func (s *standby) check(runCtx context.Context, primary *sql.DB) {
	ctx, cancel := context.WithTimeout(runCtx, standbyCheckTimeout)
	defer cancel()
	// The system's monotonic clock, not the business clock (db.clock):
	// replication happens in real time, whatever tests set the date to.
	at := time.Now()
	var flushed string
	sampled := primary.QueryRowContext(ctx, `SELECT pg_current_wal_flush_lsn()::text`).Scan(&flushed) == nil
	recovering, replayed, err := s.replayed(ctx)
	if runCtx.Err() != nil {
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if lsn, ok := parseLSN(flushed); sampled && ok {
		s.samples = append(s.samples, lsnSample{lsn, at})
		if len(s.samples) > standbyMaxSamples {
			s.samples = s.samples[len(s.samples)-standbyMaxSamples:]
		}
	}
	replay, ok := parseLSN(replayed.String)
	switch {
	case err != nil:
		s.caughtUp, s.reason = time.Time{}, "unreachable"
		return
	case !recovering:
		s.caughtUp, s.reason = time.Time{}, "not in recovery"
		return
	case !ok:
		s.caughtUp, s.reason = time.Time{}, "not replaying"
		return
	}
	n := 0 // samples the standby has replayed
	for n < len(s.samples) && s.samples[n].lsn <= replay {
		n++
	}
	if n > 0 {
		if at := s.samples[n-1].at; at.After(s.caughtUp) {
			s.caughtUp = at
		}
		s.samples = append(s.samples[:0], s.samples[n:]...)
	}
	s.reason = ""
	if s.caughtUp.IsZero() {
		s.reason = "behind the primary"
	}
}

// replayed asks the standby whether it is in recovery and how far it has
// replayed. A connection that reached a server not in recovery (a standby
// promoted by a failover) is closed: the next one is made anew through the
// URL's hosts, which with target_session_attrs=prefer-standby finds the
// standby there is now.
func (s *standby) replayed(ctx context.Context) (recovering bool, replayed sql.NullString, err error) {
	conn, err := s.store.db.Conn(ctx)
	if err != nil {
		return false, replayed, err
	}
	defer conn.Close()
	err = conn.QueryRowContext(ctx, `SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text`).Scan(&recovering, &replayed)
	if err == nil && !recovering {
		// database/sql closes a connection whose Raw returns ErrBadConn.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return recovering, replayed, err
}

// fresh reports whether listings may read the standby now.
func (s *standby) fresh() bool { return s.status().Serving }

func (s *standby) status() StandbyStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := StandbyStatus{Staleness: -1, MaxLag: s.maxLag, Reason: s.reason, Reads: s.reads.Load()}
	if !s.caughtUp.IsZero() {
		st.Staleness = time.Since(s.caughtUp)
		st.Serving = st.Staleness <= s.maxLag
		if !st.Serving && st.Reason == "" {
			st.Reason = "behind the primary"
		}
	}
	return st
}

// failed forgets that the standby was caught up, after it failed a
// listing: the next check that finds it replaying serves it again.
func (s *standby) failed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caughtUp, s.reason = time.Time{}, "failed a listing"
}

func (s *standby) close() error {
	s.stop()
	<-s.done
	return s.store.db.Close()
}

// listing runs read, the queries of a listing, on the standby when ctx is
// a listing's (recon.Listing) and the standby is fresh, else on the
// primary; a listing the standby fails with an error that is not the
// caller's (EINTERNAL, EUNAVAILABLE: unreachable, a query cancelled by a
// conflict with recovery) runs again on the primary: the standby never
// makes a listing fail.
func (db *DB) listing(ctx context.Context, read func(db *DB) error) error {
	if s := db.standby; s != nil && recon.IsListing(ctx) && s.fresh() {
		err := read(s.store)
		switch recon.ErrorCode(err) {
		case recon.EINTERNAL, recon.EUNAVAILABLE:
			if ctx.Err() != nil {
				return err
			}
			s.failed()
		default:
			s.reads.Add(1)
			return err
		}
	}
	return read(db)
}

// parseLSN reads a pg_lsn's text, "16/B374D848".
func parseLSN(s string) (uint64, bool) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, false
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err := errors.Join(err1, err2); err != nil {
		return 0, false
	}
	return h<<32 | l, true
}

// String describes the status for the server's log.
func (st StandbyStatus) String() string {
	if st.Serving {
		return fmt.Sprintf("serving, %s behind (bound %s)", st.Staleness.Round(time.Millisecond), st.MaxLag)
	}
	return fmt.Sprintf("not serving: %s (bound %s)", st.Reason, st.MaxLag)
}

// listed runs a listing's read through db.listing.
func listed[T any](ctx context.Context, db *DB, read func(db *DB) (T, error)) (out T, err error) {
	err = db.listing(ctx, func(db *DB) error {
		out, err = read(db)
		return err
	})
	return out, err
}

// listedPage runs a listing's read of a page and its total through db.listing.
func listedPage[T any](ctx context.Context, db *DB, read func(db *DB) ([]T, int64, error)) (page []T, total int64, err error) {
	err = db.listing(ctx, func(db *DB) error {
		page, total, err = read(db)
		return err
	})
	return page, total, err
}
