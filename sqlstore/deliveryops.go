package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"recon"
)

var _ recon.DeliveryOpsStore = (*DB)(nil)

// failedParts are the two selections of the tenant's deliveries that
// ReplayFailed replays at now, each an index range: dead ones
// (deliveries_company_status), and pending ones after a failed attempt
// (deliveries_failing) unless their claim is live (an attempt may be on its
// way, and replaying it would send it twice). Both filter by creation time
// and kind on the range's rows. SQLite is told the indexes (indexedBy): it
// read the tenant's creation-time range instead, every notification since
// the time (142 ms at 333,333, docs/benchmarks.md).
func (db *DB) failedParts(args *queryArgs, companyID int64, f recon.FailedFilter, now time.Time) ([2]string, error) {
	if f.Kind != "" {
		if err := recon.CheckDeliveryKind("kind", f.Kind); err != nil {
			return [2]string{}, err
		}
	}
	common := `company_id = ` + args.add(companyID) + ` AND created_at >= ` + args.add(storedTime(f.Since))
	if f.Kind != "" {
		common += ` AND kind = ` + args.add(f.Kind)
	}
	return [2]string{
		`SELECT id FROM deliveries` + db.d.indexedBy("deliveries_company_status") + ` WHERE ` + common + ` AND status = 'dead'`,
		`SELECT id FROM deliveries` + db.d.indexedBy("deliveries_failing") + ` WHERE ` + common +
			` AND status = 'pending' AND attempts > 0 AND (lease_until IS NULL OR lease_until <= ` + args.add(now) + `)`,
	}, nil
}

// ReplayFailed implements recon.DeliveryOpsStore.
func (db *DB) ReplayFailed(ctx context.Context, tenant recon.TenantID, f recon.FailedFilter, now time.Time) (int64, error) {
	companyID := tenant.ID()
	now = storedTime(now)
	var args queryArgs
	set := `UPDATE deliveries SET status = 'pending', next_attempt_at = ` + args.add(now) + `, lease_until = NULL, claimed_by = NULL, ` + markOrdered + ` WHERE id IN (`
	parts, err := db.failedParts(&args, companyID, f, now)
	if err != nil {
		return 0, err
	}
	res, err := db.execWrite(ctx, set+parts[0]+` UNION ALL `+parts[1]+`)`, args...)
	if err != nil {
		return 0, internal(err, "replay failed deliveries")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, internal(err, "replay failed deliveries")
	}
	if n > 0 {
		db.enqueued(int(n))
	}
	return n, nil
}

// CountFailed implements recon.DeliveryOpsStore: at most max rows of each
// part are read.
func (db *DB) CountFailed(ctx context.Context, tenant recon.TenantID, f recon.FailedFilter, now time.Time, max int) (int64, error) {
	companyID := tenant.ID()
	var args queryArgs
	parts, err := db.failedParts(&args, companyID, f, storedTime(now))
	if err != nil {
		return 0, err
	}
	limit := args.add(max)
	var n int64
	err = db.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM (`+parts[0]+` LIMIT `+limit+`) dead)
		+ (SELECT COUNT(*) FROM (`+parts[1]+` LIMIT `+limit+`) failing)`, args...).Scan(&n)
	if err != nil {
		return 0, internal(err, "count failed deliveries")
	}
	return min(n, int64(max)), nil
}

// DeliveryTargetStats implements recon.DeliveryOpsStore. It reads the
// newest max of the company's deliveries created since a time (through
// deliveries_company_created) with their attempts in one statement, and
// sums them here: the states per kind, the attempts and their successes,
// and the latency ranks (p50, p95: the attempt at rank q*(n-1) in latency
// order).
func (db *DB) DeliveryTargetStats(ctx context.Context, tenant recon.TenantID, since time.Time, max int) ([]recon.TargetStats, error) {
	companyID := tenant.ID()
	if max <= 0 {
		return nil, recon.FieldError("max", "max must be positive")
	}
	var args queryArgs
	picked := `SELECT id, kind, status, attempts FROM deliveries WHERE company_id = ` + args.add(companyID) +
		` AND created_at >= ` + args.add(storedTime(since)) + ` ORDER BY created_at DESC LIMIT ` + args.add(max)
	rows, err := db.db.QueryContext(ctx, `SELECT d.id, d.kind, d.status, d.attempts, a.status_code, a.latency_us
		FROM (`+picked+`) d LEFT JOIN delivery_attempts a ON a.delivery_id = d.id ORDER BY d.id`, args...)
	if err != nil {
		return nil, internal(err, "delivery stats")
	}
	defer rows.Close()
	byKind := map[string]*recon.TargetStats{}
	latencies := map[string][]int64{}
	var last int64
	for rows.Next() {
		var id int64
		var kind, status string
		var tries int
		var code, us sql.NullInt64
		if err := rows.Scan(&id, &kind, &status, &tries, &code, &us); err != nil {
			return nil, internal(err, "delivery stats")
		}
		s := byKind[kind]
		if s == nil {
			s = &recon.TargetStats{Kind: kind}
			byKind[kind] = s
		}
		if id != last { // a delivery's first row (rows come by delivery)
			last = id
			switch {
			case status == recon.DeliveryDelivered:
				s.Delivered++
			case status == recon.DeliveryDead:
				s.Dead++
			case tries > 0:
				s.Failing++
				s.Pending++
			default:
				s.Pending++
			}
		}
		if code.Valid {
			s.Attempts++
			if code.Int64 >= 200 && code.Int64 <= 299 {
				s.Succeeded++
			}
			latencies[kind] = append(latencies[kind], us.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "delivery stats")
	}
	var out []recon.TargetStats
	for _, kind := range recon.DeliveryKinds {
		s := byKind[kind]
		if s == nil {
			continue
		}
		if l := latencies[kind]; len(l) > 0 {
			slices.Sort(l)
			s.LatencyP50 = time.Duration(l[int(0.50*float64(len(l)-1))]) * time.Microsecond
			s.LatencyP95 = time.Duration(l[int(0.95*float64(len(l)-1))]) * time.Microsecond
		}
		out = append(out, *s)
	}
	return out, nil
}

// SendTestNotification implements recon.DeliveryOpsStore: notifyAt decides,
// as for every notification, without the target's event filter (the test
// is asked for).
func (db *DB) SendTestNotification(ctx context.Context, tenant recon.TenantID, kind string) (*recon.Delivery, error) {
	companyID := tenant.ID()
	now := db.now()
	d, err := recon.TestNotification(companyID, kind, now, recon.NewXIDFrom(db.rand))
	if err != nil {
		return nil, err
	}
	due, ok, err := notifyAt(ctx, db.db, companyID, kind, now, nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, recon.Errorf(recon.EINVALID, "there is no active %s target to send a test notification to: set one first", kind)
	}
	if err := db.asWriter(ctx, func() error { return db.enqueue(ctx, db.db, d, now, due) }); err != nil {
		return nil, err
	}
	db.enqueued(1)
	return d, nil
}
