package sqlstore

import (
	"context"
	"time"

	"recon"
)

var _ recon.DeliveryOpsStore = (*DB)(nil)

// failedWhere selects the tenant's deliveries that ReplayFailed replays at
// now: dead, or pending after a failed attempt, unless its claim is live
// (an attempt may be on its way, and replaying it would send it twice).
func failedWhere(args *queryArgs, companyID int64, f recon.FailedFilter, now time.Time) (string, error) {
	if f.Kind != "" {
		if err := recon.CheckDeliveryKind("kind", f.Kind); err != nil {
			return "", err
		}
	}
	where := `company_id = ` + args.add(companyID) + ` AND created_at >= ` + args.add(storedTime(f.Since)) + `
			AND (status = 'dead' OR status = 'pending' AND attempts > 0 AND (lease_until IS NULL OR lease_until <= ` + args.add(now) + `))`
	if f.Kind != "" {
		where += ` AND kind = ` + args.add(f.Kind)
	}
	return where, nil
}

// ReplayFailed implements recon.DeliveryOpsStore.
func (db *DB) ReplayFailed(ctx context.Context, companyID int64, f recon.FailedFilter, now time.Time) (int64, error) {
	now = storedTime(now)
	var args queryArgs
	set := `UPDATE deliveries SET status = 'pending', next_attempt_at = ` + args.add(now) + `, lease_until = NULL, claimed_by = NULL WHERE `
	where, err := failedWhere(&args, companyID, f, now)
	if err != nil {
		return 0, err
	}
	res, err := db.db.ExecContext(ctx, set+where, args...)
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

// CountFailed implements recon.DeliveryOpsStore: at most max rows are read.
func (db *DB) CountFailed(ctx context.Context, companyID int64, f recon.FailedFilter, now time.Time, max int) (int64, error) {
	var args queryArgs
	where, err := failedWhere(&args, companyID, f, storedTime(now))
	if err != nil {
		return 0, err
	}
	var n int64
	err = db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM deliveries WHERE `+where+` LIMIT `+args.add(max)+`) failed`, args...).Scan(&n)
	if err != nil {
		return 0, internal(err, "count failed deliveries")
	}
	return n, nil
}

// DeliveryTargetStats implements recon.DeliveryOpsStore: the deliveries by
// kind and state, then the attempts by kind, then per kind the two latency
// ranks (the company's deliveries since a time are found through the index
// deliveries_company_created).
func (db *DB) DeliveryTargetStats(ctx context.Context, companyID int64, since time.Time) ([]recon.TargetStats, error) {
	since = storedTime(since)
	byKind := map[string]*recon.TargetStats{}
	get := func(kind string) *recon.TargetStats {
		if byKind[kind] == nil {
			byKind[kind] = &recon.TargetStats{Kind: kind}
		}
		return byKind[kind]
	}
	rows, err := db.db.QueryContext(ctx, `SELECT kind, status, attempts > 0, count(*) FROM deliveries
		WHERE company_id = $1 AND created_at >= $2 GROUP BY kind, status, attempts > 0`, companyID, since)
	if err != nil {
		return nil, internal(err, "delivery stats")
	}
	for rows.Next() {
		var kind, status string
		var tried bool
		var n int64
		if err := rows.Scan(&kind, &status, &tried, &n); err != nil {
			rows.Close()
			return nil, internal(err, "delivery stats")
		}
		s := get(kind)
		switch {
		case status == recon.DeliveryDelivered:
			s.Delivered += n
		case status == recon.DeliveryDead:
			s.Dead += n
		case tried:
			s.Failing += n
			s.Pending += n
		default:
			s.Pending += n
		}
	}
	if err := rows.Close(); err != nil {
		return nil, internal(err, "delivery stats")
	}
	const attempts = ` FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
		WHERE d.company_id = $1 AND d.created_at >= $2 AND d.kind = $3`
	var out []recon.TargetStats
	for _, kind := range recon.DeliveryKinds {
		s := byKind[kind]
		if s == nil {
			continue
		}
		if err := db.db.QueryRowContext(ctx, `SELECT count(*), COALESCE(sum(CASE WHEN a.status_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END), 0)`+attempts,
			companyID, since, kind).Scan(&s.Attempts, &s.Succeeded); err != nil {
			return nil, internal(err, "delivery stats")
		}
		for _, p := range []struct {
			q   float64
			dst *time.Duration
		}{{0.50, &s.LatencyP50}, {0.95, &s.LatencyP95}} {
			if s.Attempts == 0 {
				break
			}
			var us int64
			if err := db.db.QueryRowContext(ctx, `SELECT a.latency_us`+attempts+` ORDER BY a.latency_us LIMIT 1 OFFSET $4`,
				companyID, since, kind, int64(p.q*float64(s.Attempts-1))).Scan(&us); err != nil {
				return nil, internal(err, "delivery stats")
			}
			*p.dst = time.Duration(us) * time.Microsecond
		}
		out = append(out, *s)
	}
	return out, nil
}

// SendTestNotification implements recon.DeliveryOpsStore: notifyAt decides,
// as for every notification, without the target's event filter (the test
// is asked for).
func (db *DB) SendTestNotification(ctx context.Context, companyID int64, kind string) (*recon.Delivery, error) {
	now := db.now()
	d, err := recon.TestNotification(companyID, kind, now)
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
	if err := db.enqueue(ctx, db.db, d, now, due); err != nil {
		return nil, err
	}
	db.enqueued(1)
	return d, nil
}
