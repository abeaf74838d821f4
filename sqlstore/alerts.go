package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"recon"
)

// Alerts (recon.AlertStore, migrations 00035 and 00038).

// alertChatBinding is the cell of a company's sealed chat webhook URL
// (a secret: Telegram's holds the bot token); migration 00038.
func alertChatBinding(companyID int64) sealBinding {
	return sealBinding{table: "alert_settings", column: "chat_url", companyID: companyID}
}

// AlertSettings implements recon.AlertStore.
func (db *DB) AlertSettings(ctx context.Context, company int64) (*recon.AlertSettings, error) {
	s := recon.AlertSettings{Company: company}
	var sealed []byte
	err := db.db.QueryRowContext(ctx, `SELECT failing_attempts, queue_threshold, daily_hour, chat_kind, chat_url_sealed, chat_id
		FROM alert_settings WHERE company_id = $1`, company).Scan(&s.FailingAttempts, &s.QueueThreshold, &s.DailyHour, &s.ChatKind, &sealed, &s.ChatID)
	if errors.Is(err, sql.ErrNoRows) {
		return recon.DefaultAlertSettings(company), nil
	}
	if err != nil {
		return nil, internal(err, "read alert settings")
	}
	if len(sealed) > 0 {
		if s.ChatURL, err = db.openSecret(ctx, alertChatBinding(company), sealed); err != nil {
			return nil, err
		}
	}
	return &s, nil
}

// SetAlertSettings implements recon.AlertStore.
func (db *DB) SetAlertSettings(ctx context.Context, s *recon.AlertSettings) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		// The URL is sealed for its row in the same transaction (under the
		// current key, which a rotation cannot change before it commits);
		// no URL is NULL, not a sealed empty string.
		var sealed any
		if s.ChatURL != "" {
			b, err := db.sealSecret(ctx, tx, alertChatBinding(s.Company), s.ChatURL)
			if err != nil {
				return err
			}
			sealed = b
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO alert_settings (company_id, failing_attempts, queue_threshold, daily_hour, chat_kind, chat_url_sealed, chat_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (company_id) DO UPDATE SET failing_attempts = excluded.failing_attempts, queue_threshold = excluded.queue_threshold,
				daily_hour = excluded.daily_hour, chat_kind = excluded.chat_kind, chat_url_sealed = excluded.chat_url_sealed, chat_id = excluded.chat_id`,
			s.Company, s.FailingAttempts, s.QueueThreshold, s.DailyHour, s.ChatKind, sealed, s.ChatID)
		if db.d.violation(err) == foreignKeyViolation {
			return notFound(err, "company %d not found", s.Company)
		}
		if err != nil {
			return internal(err, "save alert settings")
		}
		return nil
	})
}

// AlertPrefs implements recon.AlertStore.
func (db *DB) AlertPrefs(ctx context.Context, userID int64) (*recon.AlertPrefs, error) {
	p := recon.AlertPrefs{UserID: userID}
	err := db.db.QueryRowContext(ctx, `SELECT failing, queue, daily FROM alert_prefs WHERE user_id = $1`, userID).Scan(&p.Failing, &p.Queue, &p.Daily)
	if errors.Is(err, sql.ErrNoRows) {
		return &recon.AlertPrefs{UserID: userID, Failing: true, Queue: true, Daily: true}, nil
	}
	if err != nil {
		return nil, internal(err, "read alert switches")
	}
	return &p, nil
}

// SetAlertPrefs implements recon.AlertStore.
func (db *DB) SetAlertPrefs(ctx context.Context, p *recon.AlertPrefs) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO alert_prefs (user_id, failing, queue, daily) VALUES ($1, $2, $3, $4)
			ON CONFLICT (user_id) DO UPDATE SET failing = excluded.failing, queue = excluded.queue, daily = excluded.daily`,
			p.UserID, p.Failing, p.Queue, p.Daily)
		if db.d.violation(err) == foreignKeyViolation {
			return notFound(err, "user %d not found", p.UserID)
		}
		if err != nil {
			return internal(err, "save alert switches")
		}
		return nil
	})
}

// ClaimAlert implements recon.AlertStore: the insert claims a new event
// (the unique key makes it once); an existing one is claimed by one
// conditional update, which only one node's statement passes.
func (db *DB) ClaimAlert(ctx context.Context, e *recon.AlertEvent, node string, now time.Time, lease time.Duration) (bool, error) {
	now = storedTime(now)
	until := storedTime(now.Add(lease))
	var claimed bool
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
			INSERT INTO alert_events (company_id, kind, event_key, subject, body, created_at, claimed_by, claimed_until, attempts)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1)
			ON CONFLICT (company_id, kind, event_key) DO NOTHING RETURNING id`,
			e.Tenant.ID(), e.Kind, e.Key, e.Subject, e.Text, now, node, until).Scan(&e.ID)
		if err == nil {
			e.CreatedAt, e.Attempts, claimed = now, 1, true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return internal(err, "record alert")
		}
		err = tx.QueryRowContext(ctx, `
			UPDATE alert_events SET claimed_by = $1, claimed_until = $2, attempts = attempts + 1
			WHERE company_id = $3 AND kind = $4 AND event_key = $5 AND sent_at IS NULL AND claimed_until < $6 AND attempts < $7
			RETURNING id, subject, body, created_at, attempts`,
			node, until, e.Tenant.ID(), e.Kind, e.Key, now, recon.MaxAlertAttempts).Scan(&e.ID, &e.Subject, &e.Text, &e.CreatedAt, &e.Attempts)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // sent, claimed by another node, or given up
		}
		if err != nil {
			return internal(err, "claim alert")
		}
		e.CreatedAt, claimed = e.CreatedAt.UTC(), true
		return nil
	})
	return claimed, err
}

// FinishAlert implements recon.AlertStore.
func (db *DB) FinishAlert(ctx context.Context, id int64, node string, now time.Time, sendErr string) error {
	now = storedTime(now)
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if sendErr == "" {
			_, err = tx.ExecContext(ctx, `UPDATE alert_events SET sent_at = $1, last_error = '' WHERE id = $2 AND claimed_by = $3`, now, id, node)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE alert_events SET claimed_until = $1, last_error = $2 WHERE id = $3 AND claimed_by = $4`,
				now, sendErr, id, node)
		}
		if err != nil {
			return internal(err, "finish alert")
		}
		return nil
	})
}

// AlertEvents implements recon.AlertStore.
func (db *DB) AlertEvents(ctx context.Context, tenant recon.TenantID, limit int) ([]*recon.AlertEvent, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT id, kind, event_key, subject, body, created_at, sent_at, attempts, last_error
		FROM alert_events WHERE company_id = $1 ORDER BY id DESC LIMIT $2`, tenant.ID(), limit)
	return collect(rows, err, "list alerts", func(s scanner) (*recon.AlertEvent, error) {
		e := recon.AlertEvent{Tenant: tenant}
		var sent sql.NullTime
		if err := s.Scan(&e.ID, &e.Kind, &e.Key, &e.Subject, &e.Text, &e.CreatedAt, &sent, &e.Attempts, &e.LastError); err != nil {
			return nil, err
		}
		e.CreatedAt = e.CreatedAt.UTC()
		if sent.Valid {
			e.SentAt = sent.Time.UTC()
		}
		return &e, nil
	})
}

// FailingStreak implements recon.AlertStore: the newest max attempts of the
// tenant's newest deliveries of kind (by the company's delivery index),
// counted while they fail.
func (db *DB) FailingStreak(ctx context.Context, tenant recon.TenantID, kind string, max int) (int, time.Time, error) {
	rows, err := db.db.QueryContext(ctx, `
		SELECT a.status_code, a.at FROM delivery_attempts a
		WHERE a.delivery_id IN (SELECT d.id FROM deliveries d WHERE d.company_id = $1 AND d.kind = $2 AND d.attempts > 0 ORDER BY d.id DESC LIMIT $3)
		ORDER BY a.at DESC, a.id DESC LIMIT $3`, tenant.ID(), kind, max)
	if err != nil {
		return 0, time.Time{}, internal(err, "read failing attempts")
	}
	defer rows.Close()
	var n int
	var newest time.Time
	for rows.Next() {
		var code int64
		var at time.Time
		if err := rows.Scan(&code, &at); err != nil {
			return 0, time.Time{}, internal(err, "read failing attempts")
		}
		if code >= 200 && code <= 299 {
			break
		}
		if n == 0 {
			newest = at.UTC()
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, time.Time{}, internal(err, "read failing attempts")
	}
	return n, newest, nil
}

// AlertCompanies implements recon.AlertStore: one statement, a probe of
// an index per condition and company (deliveries_company_status, or
// deliveries_failing, whose predicate the literals match; the key of
// delivery_targets; exceptions_list; alert_events' unique key).
func (db *DB) AlertCompanies(ctx context.Context, day string, hour int) ([]int64, error) {
	def := recon.DefaultAlertSettings(0)
	rows, err := db.db.QueryContext(ctx, `
		SELECT c.id FROM companies c LEFT JOIN alert_settings s ON s.company_id = c.id
		WHERE c.test_of IS NULL AND c.status = $1 AND (
			EXISTS (SELECT 1 FROM deliveries d WHERE d.company_id = c.id AND d.status = 'pending' AND d.attempts > 0)
			OR EXISTS (SELECT 1 FROM deliveries d WHERE d.company_id = c.id AND d.status = 'dead')
			OR EXISTS (SELECT 1 FROM delivery_targets t WHERE t.company_id = c.id AND t.disabled_by = $2)
			OR EXISTS (SELECT 1 FROM exceptions e WHERE e.company_id = c.id AND e.resolved = $3)
			OR (COALESCE(s.daily_hour, $4) BETWEEN 0 AND $5 AND NOT EXISTS (
				SELECT 1 FROM alert_events a WHERE a.company_id = c.id AND a.kind = $6 AND a.event_key = $7
				AND (a.sent_at IS NOT NULL OR a.attempts >= $8))))
		ORDER BY c.id`,
		recon.CompanyActive, recon.DisabledByRecon, false,
		def.DailyHour, hour, recon.AlertDaily, day, recon.MaxAlertAttempts)
	ids, err := collect(rows, err, "list companies", func(s scanner) (*int64, error) {
		var id int64
		return &id, s.Scan(&id)
	})
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = *id
	}
	return out, err
}
