package sqlstore

import (
	"context"
	"sync"
	"time"
)

// analyzeMinRows is the fewest rows ingested that refresh the statistics.
const analyzeMinRows = 5000

// freshStats keeps the planner's statistics of the ingestion's tables
// current as they grow, where the engine plans by statistics (PostgreSQL;
// SQLite's listing names its index). Right after a bulk load, statistics
// taken on a nearly empty table make plans that read the whole account's or
// company's rows (measured from outside: bank_account_id and page=500 at
// 14–30 req/s for the minute or two before autovacuum analysed the table).
// So once this process has ingested as many rows as the table had at the
// last refresh it made (at least analyzeMinRows), it runs the dialect's
// refresh (VACUUM (ANALYZE) on PostgreSQL) in the background, one at a time:
// a table that grows from nothing to N rows is refreshed about
// log2(N/5000) times, each ANALYZE a fixed-size sample (tens of
// milliseconds) and each VACUUM reading the pages added since the last, and
// no listing after a load waits for autovacuum.
// The count is this process's own, kept in memory: cheap, and each node of
// several analyses for what it wrote.
type freshStats struct {
	mu       sync.Mutex
	inserted int64 // rows ingested since the last refresh
	base     int64 // rows ingested up to the last refresh
	running  bool
}

// noteIngested counts n rows ingested (called before the commit: a batch
// that rolls back only brings the next refresh forward).
func (db *DB) noteIngested(n int) {
	db.stats.mu.Lock()
	db.stats.inserted += int64(n)
	db.stats.mu.Unlock()
}

// analyzeIfDue starts a refresh when enough rows arrived since the last.
// Call it after a commit.
func (db *DB) analyzeIfDue() {
	stmt := db.d.analyzeIngested()
	if stmt == "" {
		return
	}
	s := &db.stats
	s.mu.Lock()
	due := !s.running && s.inserted >= max(analyzeMinRows, s.base)
	grew := s.inserted
	if due {
		s.running, s.inserted = true, 0
	}
	s.mu.Unlock()
	if !due {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := db.db.ExecContext(ctx, stmt)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.running = false
		if err != nil {
			s.inserted += grew // try again after the next batch
		} else {
			s.base += grew
		}
	}()
}
