package sqlstore

import (
	"context"
	"math"
	"time"

	"recon"
)

// RefundTotals counts the tenant's refunds created from..to (inclusive
// days in loc, nil UTC) by status, with their amounts (recon.RefundTotals:
// the refunds part of the reconciliation report; docs/dashboard.md,
// Report). Amounts are summed in halves as Reconciliation's.
// A listing's (recon.Listing) may read from the standby (WithStandby).
func (db *DB) RefundTotals(ctx context.Context, tenant recon.TenantID, from, to string, loc *time.Location) (*recon.RefundTotals, error) {
	return listed(ctx, db, func(db *DB) (*recon.RefundTotals, error) { return db.refundTotals(ctx, tenant, from, to, loc) })
}

// refundTotals is RefundTotals on one database: the primary or the standby.
func (db *DB) refundTotals(ctx context.Context, tenant recon.TenantID, from, to string, loc *time.Location) (*recon.RefundTotals, error) {
	if loc == nil {
		loc = time.UTC
	}
	fromT, err := time.ParseInLocation(recon.DateLayout, from, loc)
	if err != nil {
		return nil, recon.FieldError("from_date", "from_date must be a date in the form YYYY-MM-DD")
	}
	toT, err := time.ParseInLocation(recon.DateLayout, to, loc)
	if err != nil {
		return nil, recon.FieldError("to_date", "to_date must be a date in the form YYYY-MM-DD")
	}
	if toT.Before(fromT) {
		return nil, recon.FieldError("from_date", "from_date must not be after to_date")
	}
	out := &recon.RefundTotals{From: from, To: to, Counts: map[string]int64{}, Amounts: map[string]int64{}}
	for _, s := range recon.RefundStatuses {
		out.Counts[s], out.Amounts[s] = 0, 0
	}
	rows, err := db.db.QueryContext(ctx, `SELECT status, COUNT(*), COALESCE(SUM(amount / `+sumSplit+`), 0), COALESCE(SUM(amount % `+sumSplit+`), 0)
		FROM refunds WHERE company_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY status`,
		tenant.ID(), storedTime(fromT), storedTime(toT.AddDate(0, 0, 1)))
	if err != nil {
		return nil, internal(err, "refund totals")
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n, hi, lo int64
		if err := rows.Scan(&s, &n, &hi, &lo); err != nil {
			return nil, internal(err, "refund totals")
		}
		sum, ok := joinSum(hi, lo)
		if !ok {
			return nil, recon.Errorf(recon.EINVALID, "the %s refunds from %s to %s add up to more than %d VND: report on a shorter period", s, from, to, int64(math.MaxInt64))
		}
		out.Counts[s], out.Amounts[s] = n, sum
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "refund totals")
	}
	return out, nil
}
