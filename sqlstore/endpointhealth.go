package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"recon"
)

// Endpoint health (docs/design.md, D7; migration 00040): the failure streak
// of each delivery target (failing_since), kept with the attempts in
// RecordAttempts' transaction; the maintenance step that disables a target
// whose every attempt failed for 3 days (once across nodes: a conditional
// update of the target's row), holding its deliveries (dead with
// recon.HeldError, never attempted while it is disabled) and telling the
// company's other targets (ENDPOINT_DISABLED) and the audit log in the same
// transaction; re-enabling and the replay of what it missed.

// streakNext is the new failing_since of a target from its stored one and
// s, the batch's figures for it: ok, its newest success in the batch, and
// fail, its first failure (after ok, when there is one). A success resets
// the streak to the failures after it, unless a later failure, recorded
// first by another node, already started a newer streak.
const streakNext = `CASE WHEN s.ok IS NULL THEN COALESCE(delivery_targets.failing_since, s.fail)
	WHEN delivery_targets.failing_since IS NOT NULL AND delivery_targets.failing_since > s.ok THEN delivery_targets.failing_since
	ELSE s.fail END`

// recordStreak updates the streak of the targets of the attempts in vd (the
// recorded attempts, see recordUpdate and recordDeliveries), in the same
// statement (PostgreSQL, a CTE) or transaction (SQLite) as the attempts: an
// attempt made (a URL) without a 2xx is a failure, a delivered one a
// success. Attempts made without a request (no active target, held) do not
// count. Only the rows whose streak changes are written, so a steady target
// costs no write.
const recordStreak = `
		UPDATE delivery_targets SET failing_since = ` + streakNext + `
		FROM (SELECT g.company_id, g.kind, g.ok, CASE WHEN g.ok IS NULL THEN g.fail ELSE
				(SELECT MIN(v2.at) FROM vd v2
				 WHERE v2.company_id = g.company_id AND v2.kind = g.kind AND v2.status <> 'delivered' AND v2.url <> '' AND v2.at > g.ok)
				END AS fail
			FROM (SELECT company_id, kind,
					MAX(CASE WHEN status = 'delivered' THEN at END) AS ok,
					MIN(CASE WHEN status <> 'delivered' AND url <> '' THEN at END) AS fail
				FROM vd
				GROUP BY company_id, kind) g) s
		WHERE delivery_targets.company_id = s.company_id AND delivery_targets.kind = s.kind
			AND (` + streakNext + `) IS DISTINCT FROM delivery_targets.failing_since`

// recordStreakDelivered is recordStreak for attempts that all delivered:
// with no failure (fail is NULL), streakNext ends a streak that started at
// or before the target's newest success, and keeps one started after it
// (by another node). The same writes, planned in about half the time of
// recordStreak on PostgreSQL (docs/benchmarks.md), and the attempts'
// record is the dispatcher's most frequent statement.
const recordStreakDelivered = `
		UPDATE delivery_targets SET failing_since = NULL
		FROM (SELECT company_id, kind, MAX(at) AS ok FROM vd GROUP BY company_id, kind) s
		WHERE delivery_targets.company_id = s.company_id AND delivery_targets.kind = s.kind
			AND delivery_targets.failing_since <= s.ok`

// streakOf is the statement that updates the streaks for outcomes.
func streakOf(outcomes []recon.AttemptOutcome) string {
	for _, o := range outcomes {
		if o.Status != recon.DeliveryDelivered {
			return recordStreak
		}
	}
	return recordStreakDelivered
}

// reenableOnSave are the SET clauses of a target's save (setTarget,
// ChangeHubWebhook): saving it active re-enables a target Recon disabled and
// starts its streak anew; saving it inactive keeps Recon's mark (the
// merchant may change a disabled target's settings without losing why).
const reenableOnSave = `
				disabled_by = CASE WHEN excluded.active THEN '' ELSE delivery_targets.disabled_by END,
				disabled_at = CASE WHEN excluded.active THEN NULL ELSE delivery_targets.disabled_at END,
				disabled_why = CASE WHEN excluded.active THEN '' ELSE delivery_targets.disabled_why END,
				failing_since = CASE WHEN excluded.active AND NOT delivery_targets.active THEN NULL ELSE delivery_targets.failing_since END,`

// DisableFailingTargets disables, at now (in the business time zone: the
// ENDPOINT_DISABLED bodies' times), every active target of an active company
// that recon.ShouldDisableTarget says must be, each in its own transaction
// and once across nodes, and returns those this call disabled.
func (db *DB) DisableFailingTargets(ctx context.Context, now time.Time) ([]*recon.TargetHealth, error) {
	cutoff := storedTime(now.Add(-recon.EndpointDisableAfter))
	rows, err := db.db.QueryContext(ctx, `
		SELECT t.company_id, c.test_of IS NULL, t.kind, t.url, t.failing_since
		FROM delivery_targets t JOIN companies c ON c.id = t.company_id
		JOIN companies p ON p.id = COALESCE(c.test_of, c.id)
		WHERE t.active AND t.failing_since IS NOT NULL AND t.failing_since <= $1 AND p.status = 'active'
			AND t.kind IN ('ipn', 'webhook', 'hub_ipn')
		ORDER BY t.company_id, t.kind`, cutoff)
	candidates, err := collect(rows, err, "read failing targets", func(s scanner) (*recon.TargetHealth, error) {
		var h recon.TargetHealth
		var id int64
		var live bool
		var since anyTime
		if err := s.Scan(&id, &live, &h.Kind, &h.URL, &since); err != nil {
			return nil, err
		}
		h.Tenant, h.FailingSince, h.Active = recon.TenantFromRow(id, live), since.t, true
		return &h, nil
	})
	if err != nil {
		return nil, err
	}
	var out []*recon.TargetHealth
	var errs []error
	for _, h := range candidates {
		if !recon.ShouldDisableTarget(h.Active, h.FailingSince, now) {
			continue
		}
		ok, n, err := db.disableTarget(ctx, h, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		db.enqueued(n)
		if ok {
			out = append(out, h)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return out, errors.Join(errs...)
}

// disableTarget disables h's target in one transaction when it is still
// active on the same streak (another node may have done it, or a success
// reset it, since it was read): it reports whether it did, and how many
// notifications it enqueued.
func (db *DB) disableTarget(ctx context.Context, h *recon.TargetHealth, now time.Time) (bool, int, error) {
	company := h.Tenant.ID()
	since := storedTime(h.FailingSince)
	var done bool
	var enqueued int
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		done, enqueued = false, 0
		err := tx.QueryRowContext(ctx, `
			SELECT a.error FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
			WHERE d.company_id = $1 AND d.kind = $2 AND a.url <> '' AND a.error <> '' AND a.at >= $3
			ORDER BY a.at DESC, a.id DESC LIMIT 1`, company, h.Kind, since).Scan(&h.LastError)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		h.Active, h.DisabledBy, h.DisabledAt = false, recon.DisabledByRecon, storedTime(now)
		h.DisabledWhy = recon.DisableReason(h.FailingSince, h.LastError)
		res, err := tx.ExecContext(ctx, `
			UPDATE delivery_targets SET active = false, disabled_by = $1, disabled_at = $2, disabled_why = $3
			WHERE company_id = $4 AND kind = $5 AND active AND failing_since = $6`,
			h.DisabledBy, h.DisabledAt, cleanText(h.DisabledWhy), company, h.Kind, since)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // another node's, or no longer failing
		}
		done = true
		// What it missed: the deliveries waiting, and those that died
		// failing since the streak began.
		res, err = tx.ExecContext(ctx, `
			UPDATE deliveries SET status = 'dead', last_error = $1, lease_until = NULL, claimed_by = NULL
			WHERE company_id = $2 AND kind = $3 AND (status = 'pending' OR (status = 'dead' AND EXISTS (
				SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = deliveries.id AND a.at >= $4)))`,
			recon.HeldError, company, h.Kind, since)
		if err != nil {
			return err
		}
		if h.Held, err = res.RowsAffected(); err != nil {
			return err
		}
		if err := db.insertAudit(ctx, tx, &recon.AuditEntry{
			Tenant: h.Tenant, At: now, Actor: recon.AuditActor{Via: recon.AuditViaRecon},
			Action: recon.AuditTargetDisabled, Object: h.Kind + " " + recon.TargetHost(h.URL),
			Changes: []recon.AuditChange{{Field: "active", Before: "true", After: "false"},
				{Field: "disabled_by", After: recon.DisabledByRecon}, {Field: "why", After: h.DisabledWhy}},
		}); err != nil {
			return err
		}
		// ENDPOINT_DISABLED to the company's other active targets of the
		// mode: the hub webhook always, the IPN target when it subscribes.
		trows, err := tx.QueryContext(ctx, `SELECT kind, settings FROM delivery_targets
			WHERE company_id = $1 AND kind <> $2 AND active AND kind IN ('ipn', 'webhook') ORDER BY kind`, company, h.Kind)
		type other struct{ kind, settings string }
		others, err := collect(trows, err, "read the other targets", func(s scanner) (*other, error) {
			var o other
			return &o, s.Scan(&o.kind, &o.settings)
		})
		if err != nil {
			return err
		}
		for _, o := range others {
			if o.kind == recon.DeliveryIPN {
				if wants, err := recon.IPNWants(o.settings, recon.IPNEndpointDisabled); err != nil || !wants {
					continue // unreadable settings want nothing, as notifyAt's wantsIPN
				}
			}
			d, err := recon.EndpointDisabledDelivery(company, o.kind, h, now, recon.NewXIDFrom(db.rand))
			if err != nil {
				return err
			}
			if err := db.enqueue(ctx, tx, d, now, now); err != nil {
				return err
			}
			enqueued++
		}
		return nil
	})
	if err != nil {
		return false, 0, internal(err, "disable a failing target")
	}
	return done, enqueued, nil
}

// TargetHealths returns the health of each of the tenant's targets (ipn,
// webhook, hub_ipn: those it has), with the count of held notifications.
func (db *DB) TargetHealths(ctx context.Context, tenant recon.TenantID) ([]*recon.TargetHealth, error) {
	rows, err := db.db.QueryContext(ctx, `
		SELECT t.kind, t.url, t.active, t.failing_since, t.disabled_by, t.disabled_at, t.disabled_why,
			(SELECT COUNT(*) FROM deliveries d WHERE d.company_id = t.company_id AND d.kind = t.kind AND d.status = 'dead' AND d.last_error = $2)
		FROM delivery_targets t WHERE t.company_id = $1 AND t.kind IN ('ipn', 'webhook', 'hub_ipn') ORDER BY t.kind`,
		tenant.ID(), recon.HeldError)
	return collect(rows, err, "read target health", func(s scanner) (*recon.TargetHealth, error) {
		h := recon.TargetHealth{Tenant: tenant}
		var since, at anyTime
		if err := s.Scan(&h.Kind, &h.URL, &h.Active, &since, &h.DisabledBy, &at, &h.DisabledWhy, &h.Held); err != nil {
			return nil, err
		}
		h.FailingSince, h.DisabledAt = since.t, at.t
		return &h, nil
	})
}

// TargetHealth returns the health of the tenant's target of kind, or
// ENOTFOUND.
func (db *DB) TargetHealth(ctx context.Context, tenant recon.TenantID, kind string) (*recon.TargetHealth, error) {
	if err := recon.CheckTargetKind(kind); err != nil {
		return nil, err
	}
	list, err := db.TargetHealths(ctx, tenant)
	if err != nil {
		return nil, err
	}
	for _, h := range list {
		if h.Kind == kind {
			return h, nil
		}
	}
	return nil, notFound(nil, "no %s target is configured", kind)
}

// EnableTarget makes the tenant's target of kind active again, Recon's mark
// and its streak cleared, and with replay makes what it missed due again
// (ReplayMissed), in one transaction; it returns how many it replayed.
// ENOTFOUND when the tenant has no such target.
func (db *DB) EnableTarget(ctx context.Context, tenant recon.TenantID, kind string, replay bool, now time.Time) (int64, error) {
	if err := recon.CheckTargetKind(kind); err != nil {
		return 0, err
	}
	var n int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			UPDATE delivery_targets SET active = true, disabled_by = '', disabled_at = NULL, disabled_why = '', failing_since = NULL,
				updated_at = $3
			WHERE company_id = $1 AND kind = $2`, tenant.ID(), kind, db.now())
		if err != nil {
			return internal(err, "enable target")
		}
		if c, err := res.RowsAffected(); err != nil {
			return internal(err, "enable target")
		} else if c == 0 {
			return notFound(nil, "no %s target is configured", kind)
		}
		if replay {
			n, err = replayMissed(ctx, tx, tenant, kind, now)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	db.enqueued(int(n))
	return n, nil
}

// ReplayMissed makes the deliveries held while the tenant's target of kind
// was disabled (recon.HeldError) due at now, in their original order (the
// claim takes equal due times by id), and returns how many. ENOTFOUND
// without such a target; ECONFLICT while it is inactive (re-enable it
// first: they would be held again).
func (db *DB) ReplayMissed(ctx context.Context, tenant recon.TenantID, kind string, now time.Time) (int64, error) {
	if err := recon.CheckTargetKind(kind); err != nil {
		return 0, err
	}
	var n int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var active bool
		err := tx.QueryRowContext(ctx, `SELECT active FROM delivery_targets WHERE company_id = $1 AND kind = $2`+db.d.forUpdate(),
			tenant.ID(), kind).Scan(&active)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(err, "no %s target is configured", kind)
		}
		if err != nil {
			return internal(err, "replay missed deliveries")
		}
		if !active {
			return recon.Errorf(recon.ECONFLICT, "the %s target is not active: re-enable it first", kind)
		}
		n, err = replayMissed(ctx, tx, tenant, kind, now)
		return err
	})
	if err != nil {
		return 0, err
	}
	db.enqueued(int(n))
	return n, nil
}

func replayMissed(ctx context.Context, tx *sql.Tx, tenant recon.TenantID, kind string, now time.Time) (int64, error) {
	res, err := tx.ExecContext(ctx, `
		UPDATE deliveries SET status = 'pending', next_attempt_at = $1, lease_until = NULL, claimed_by = NULL, last_error = '', `+markOrdered+`
		WHERE company_id = $2 AND kind = $3 AND status = 'dead' AND last_error = $4`,
		storedTime(now), tenant.ID(), kind, recon.HeldError)
	if err != nil {
		return 0, internal(err, "replay missed deliveries")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, internal(err, "replay missed deliveries")
	}
	return n, nil
}
