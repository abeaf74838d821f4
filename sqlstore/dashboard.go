package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"recon"
)

// seenGranularity is how stale a session's last_seen_at may be before a
// request moves it: one write a minute per active session, not one per page.
const seenGranularity = time.Minute

// CreateDashboardSession implements recon.DashboardStore. It also deletes
// the sessions past their absolute end (an index range), so that abandoned
// sessions do not pile up.
func (db *DB) CreateDashboardSession(ctx context.Context, s *recon.DashboardSession, tokenHash []byte) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE expires_at < $1`, s.CreatedAt); err != nil {
			return internal(err, "sweep dashboard sessions")
		}
		err := tx.QueryRowContext(ctx, `
			INSERT INTO dashboard_sessions (token_hash, company_id, user_id, live, created_at, last_seen_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			tokenHash, s.Company, s.UserID, s.Live, s.CreatedAt, s.LastSeenAt, s.ExpiresAt).Scan(&s.ID)
		if db.d.violation(err) == foreignKeyViolation {
			return notFound(err, "user %d of company %d not found", s.UserID, s.Company)
		}
		if err != nil {
			return internal(err, "create dashboard session")
		}
		return nil
	})
}

func errNoSession(err error) error {
	return &recon.Error{Code: recon.EUNAUTHORIZED, Message: "the session has ended; sign in again", Err: err}
}

// DashboardSession implements recon.DashboardStore.
func (db *DB) DashboardSession(ctx context.Context, tokenHash []byte, now time.Time, idle time.Duration) (*recon.DashboardSession, error) {
	var s recon.DashboardSession
	err := db.db.QueryRowContext(ctx, `
		SELECT s.id, s.company_id, s.user_id, s.live, s.created_at, s.last_seen_at, s.expires_at,
			(SELECT COUNT(*) FROM dashboard_session_users su JOIN users u ON u.id = su.user_id
			WHERE su.session_id = s.id AND u.deactivated_at IS NULL)
		FROM dashboard_sessions s WHERE s.token_hash = $1`, tokenHash).
		Scan(&s.ID, &s.Company, &s.UserID, &s.Live, &s.CreatedAt, &s.LastSeenAt, &s.ExpiresAt, &s.Users)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoSession(err)
	}
	if err != nil {
		return nil, internal(err, "read dashboard session")
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = s.CreatedAt.UTC(), s.LastSeenAt.UTC(), s.ExpiresAt.UTC()
	if !now.Before(s.ExpiresAt) || !now.Before(s.LastSeenAt.Add(idle)) {
		if err := db.DeleteDashboardSession(ctx, tokenHash); err != nil {
			return nil, err
		}
		return nil, errNoSession(nil)
	}
	if now.Sub(s.LastSeenAt) >= seenGranularity {
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE dashboard_sessions SET last_seen_at = $1 WHERE id = $2`, now, s.ID)
			return err
		})
		if err != nil {
			return nil, internal(err, "touch dashboard session")
		}
		s.LastSeenAt = now
	}
	return &s, nil
}

// SetDashboardSessionMode implements recon.DashboardStore.
func (db *DB) SetDashboardSessionMode(ctx context.Context, tokenHash []byte, live bool) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE dashboard_sessions SET live = $1 WHERE token_hash = $2`, live, tokenHash)
		if err != nil {
			return internal(err, "switch dashboard session mode")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errNoSession(nil)
		}
		return nil
	})
}

// DeleteDashboardSession implements recon.DashboardStore.
func (db *DB) DeleteDashboardSession(ctx context.Context, tokenHash []byte) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE token_hash = $1`, tokenHash); err != nil {
			return internal(err, "delete dashboard session")
		}
		return nil
	})
}

// maxFlowDays bounds DayFlows: the home screen asks for 31 days at most.
const maxFlowDays = 62

// DayFlows implements recon.DashboardStore from the per-day sums that
// ingestion, matching and retention keep in transaction_day_counts: one row
// per account and day, whatever the number of transactions (migration 00014).
func (db *DB) DayFlows(ctx context.Context, tenant recon.TenantID, from, to string) ([]recon.DayFlow, error) {
	companyID := tenant.ID()
	first, err1 := time.Parse(recon.DateLayout, from)
	last, err2 := time.Parse(recon.DateLayout, to)
	switch {
	case err1 != nil:
		return nil, recon.FieldError("from", "from must be a date in the form YYYY-MM-DD")
	case err2 != nil:
		return nil, recon.FieldError("to", "to must be a date in the form YYYY-MM-DD")
	case last.Before(first) || last.Sub(first) >= maxFlowDays*24*time.Hour:
		return nil, recon.FieldError("to", "to must be from from to %d days after it", maxFlowDays-1)
	}
	// Summed here, saturating (recon.SaturatingAdd): SQL's SUM of the
	// accounts' rows could overflow.
	rows, err := db.db.QueryContext(ctx, `
		SELECT day, in_sum, out_sum, in_n, out_n, matched_sum, matched_n
		FROM transaction_day_counts WHERE company_id = $1 AND day >= $2 AND day <= $3`,
		companyID, dayNumber(first), dayNumber(last))
	if err != nil {
		return nil, internal(err, "sum days")
	}
	defer rows.Close()
	byDay := map[int64]recon.DayFlow{}
	for rows.Next() {
		var day int64
		var f recon.DayFlow
		if err := rows.Scan(&day, &f.In, &f.Out, &f.InCount, &f.OutCount, &f.Matched, &f.MatchedCount); err != nil {
			return nil, internal(err, "sum days")
		}
		byDay[day] = byDay[day].Add(f)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "sum days")
	}
	var out []recon.DayFlow
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		f := byDay[dayNumber(d)]
		f.Day = d.Format(recon.DateLayout)
		out = append(out, f)
	}
	return out, nil
}

// Attention implements recon.DashboardStore. The delivery counts read the
// partial indexes of failing and dead rows, which hold few rows; the open
// exceptions are counted on exceptions_list, at most
// recon.MaxCountedExceptions of them.
func (db *DB) Attention(ctx context.Context, tenant recon.TenantID) (*recon.Attention, error) {
	companyID := tenant.ID()
	var a recon.Attention
	err := db.db.QueryRowContext(ctx, `
		SELECT COUNT(*), COALESCE(SUM(amount - paid_amount), 0) FROM orders
		WHERE company_id = $1 AND status = $2 AND paid_amount > 0`, companyID, recon.OrderAwaitingPayment).
		Scan(&a.UnderpaidOrders, &a.UnderpaidShortfall)
	if err != nil {
		return nil, internal(err, "count underpaid orders")
	}
	err = db.db.QueryRowContext(ctx, `
		SELECT (SELECT COUNT(*) FROM deliveries WHERE company_id = $1 AND status = $2 AND attempts > 0),
		       (SELECT COUNT(*) FROM deliveries WHERE company_id = $1 AND status = $3)`,
		companyID, recon.DeliveryPending, recon.DeliveryDead).Scan(&a.FailingDeliveries, &a.DeadDeliveries)
	if err != nil {
		return nil, internal(err, "count failing deliveries")
	}
	err = db.db.QueryRowContext(ctx, `
		SELECT COUNT(*) FROM (SELECT 1 FROM exceptions WHERE company_id = $1 AND resolved = $2 LIMIT $3) open`,
		companyID, false, recon.MaxCountedExceptions).Scan(&a.OpenExceptions)
	if err != nil {
		return nil, internal(err, "count open exceptions")
	}
	return &a, nil
}

// OrderDeliveries implements recon.DashboardStore: an index range of
// deliveries_order (the order_id the outbox writes with each IPN).
func (db *DB) OrderDeliveries(ctx context.Context, tenant recon.TenantID, o *recon.Order, limit int) ([]*recon.Delivery, error) {
	companyID := tenant.ID()
	rows, err := db.db.QueryContext(ctx, selectDelivery+` WHERE company_id = $1 AND order_id = $2 ORDER BY id LIMIT $3`,
		companyID, o.ID, limit)
	if err != nil {
		return nil, internal(err, "list order deliveries")
	}
	list, err := scanDeliveries(rows)
	if err != nil {
		return nil, internal(err, "list order deliveries")
	}
	if list == nil {
		list = []*recon.Delivery{}
	}
	return list, nil
}
