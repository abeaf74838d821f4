package sqlstore

import (
	"context"
	"time"

	"recon"
)

// enqueue writes d into the outbox through q: the transaction of the state
// change that causes the notification, so that both commit or neither. d is
// pending, created at now and due at due (see notifyAt); enqueue sets its
// ID, Status and times.
func (db *DB) enqueue(ctx context.Context, q querier, d *recon.Delivery, now, due time.Time) error {
	now, due = storedTime(now), storedTime(due)
	err := q.QueryRowContext(ctx, `
		INSERT INTO deliveries (company_id, kind, event, payload, status, attempts, next_attempt_at, created_at)
		VALUES ($1, $2, $3, $4, $5, 0, $6, $7) RETURNING id`,
		d.CompanyID, d.Kind, d.Event, d.Payload, recon.DeliveryPending, due, now).Scan(&d.ID)
	if err != nil {
		return internal(err, "enqueue delivery")
	}
	d.Status, d.NextAttemptAt, d.CreatedAt = recon.DeliveryPending, due, now
	return nil
}

// OnEnqueue sets a function called after a state change that enqueued
// deliveries has committed, so that a dispatcher can send them at once
// instead of at its next poll. Set it before the store is used.
func (db *DB) OnEnqueue(fn func()) { db.onEnqueue = fn }

// enqueued runs the enqueue hook when n deliveries may have been enqueued.
func (db *DB) enqueued(n int) {
	if n > 0 && db.onEnqueue != nil {
		db.onEnqueue()
	}
}
