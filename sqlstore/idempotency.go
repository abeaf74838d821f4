package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"recon"
)

// ClaimIdempotencyKey implements recon.IdempotencyStore (migration 00024).
// In one database transaction it inserts the key's row as running (ON
// CONFLICT DO NOTHING: of concurrent claims on any node, exactly one
// inserts) or, when the row is there, locks it and reads what it holds: an
// expired key, or a running claim whose lease has passed (its node crashed
// or hung), is taken over; otherwise the state is reported.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, tenant recon.TenantID, c recon.IdempotencyClaim, now time.Time, lease time.Duration) (recon.IdempotencyState, *recon.IdempotentAnswer, error) {
	now = storedTime(now)
	state := recon.IdempotencyClaimed
	var answer *recon.IdempotentAnswer
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			INSERT INTO idempotency_keys (company_id, key, route, body_hash, state, claim, lease_until, created_at, expires_at)
			VALUES ($1, $2, $3, $4, 'running', $5, $6, $7, $8) ON CONFLICT (company_id, key) DO NOTHING`,
			tenant.ID(), c.Key, c.Route, c.BodyHash, c.Token, now.Add(lease), now, now.Add(recon.IdempotencyKeyTTL))
		if err != nil {
			return internal(err, "claim idempotency key")
		}
		if n, err := res.RowsAffected(); err != nil {
			return internal(err, "claim idempotency key")
		} else if n == 1 {
			state = recon.IdempotencyClaimed
			return nil
		}
		var route, hash, st string
		var leaseUntil time.Time
		var expires sql.NullTime
		var status int
		var body []byte
		err = tx.QueryRowContext(ctx, `
			SELECT route, body_hash, state, lease_until, expires_at, status, answer FROM idempotency_keys
			WHERE company_id = $1 AND key = $2`+db.d.forUpdate(), tenant.ID(), c.Key).
			Scan(&route, &hash, &st, &leaseUntil, &expires, &status, &body)
		if errors.Is(err, sql.ErrNoRows) {
			// Deleted (expired) between the insert and the read: as busy
			// as a running claim; the client's retry finds it free.
			state = recon.IdempotencyRunning
			return nil
		}
		if err != nil {
			return internal(err, "read idempotency key")
		}
		switch {
		case expires.Valid && !expires.Time.After(now):
			// Expired, not yet purged: the key is free again.
			_, err = tx.ExecContext(ctx, `
				UPDATE idempotency_keys SET route = $1, body_hash = $2, state = 'running', claim = $3, lease_until = $4,
					status = 0, answer = NULL, created_at = $5, expires_at = $6 WHERE company_id = $7 AND key = $8`,
				c.Route, c.BodyHash, c.Token, now.Add(lease), now, now.Add(recon.IdempotencyKeyTTL), tenant.ID(), c.Key)
			state = recon.IdempotencyClaimed
		case route != c.Route || hash != c.BodyHash:
			state = recon.IdempotencyMismatch
		case st == "done":
			state, answer = recon.IdempotencyDone, &recon.IdempotentAnswer{Status: status, Body: body}
		case leaseUntil.After(now):
			state = recon.IdempotencyRunning
		default:
			// The claimer's lease has passed: its request is taken to
			// have died with its node; this one runs instead.
			_, err = tx.ExecContext(ctx, `UPDATE idempotency_keys SET claim = $1, lease_until = $2 WHERE company_id = $3 AND key = $4`,
				c.Token, now.Add(lease), tenant.ID(), c.Key)
			state = recon.IdempotencyClaimed
		}
		if err != nil {
			return internal(err, "take over idempotency key")
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return state, answer, nil
}

// FinishIdempotencyKey implements recon.IdempotencyStore.
func (db *DB) FinishIdempotencyKey(ctx context.Context, tenant recon.TenantID, c recon.IdempotencyClaim, a recon.IdempotentAnswer, expires *time.Time) error {
	var exp sql.NullTime
	if expires != nil {
		exp = sql.NullTime{Time: storedTime(*expires), Valid: true}
	}
	res, err := db.execWrite(ctx, `
		UPDATE idempotency_keys SET state = 'done', status = $1, answer = $2, expires_at = $3
		WHERE company_id = $4 AND key = $5 AND claim = $6 AND state = 'running'`,
		a.Status, a.Body, exp, tenant.ID(), c.Key, c.Token)
	if err != nil {
		return internal(err, "finish idempotency key")
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return conflict(err, "the idempotency key %q was taken over by another request (its lease of %s had passed)", c.Key, recon.IdempotencyLease)
	}
	return nil
}

// ReleaseIdempotencyKey implements recon.IdempotencyStore.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, tenant recon.TenantID, c recon.IdempotencyClaim) error {
	if _, err := db.execWrite(ctx, `DELETE FROM idempotency_keys WHERE company_id = $1 AND key = $2 AND claim = $3 AND state = 'running'`,
		tenant.ID(), c.Key, c.Token); err != nil {
		return internal(err, "release idempotency key")
	}
	return nil
}

// DeleteExpiredIdempotencyKeys implements recon.IdempotencyStore, in chunks
// (see deleteInChunks).
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	return db.deleteInChunks(ctx, "delete expired idempotency keys", `
		DELETE FROM idempotency_keys WHERE (company_id, key) IN (
			SELECT company_id, key FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2)`, storedTime(now), retentionChunk)
}
