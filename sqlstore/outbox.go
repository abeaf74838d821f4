package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"recon"
)

// enqueue writes d into the outbox through q: the transaction of the state
// change that causes the notification, so that both commit or neither. d is
// pending, created at now and due at due (see notifyAt), marked ordered when
// its target is (see claimUnordered); enqueue sets its ID, Status and times.
func (db *DB) enqueue(ctx context.Context, q querier, d *recon.Delivery, now, due time.Time) error {
	now, due = storedTime(now), storedTime(due)
	var args []any
	err := q.QueryRowContext(ctx, enqueueInsert+db.enqueueRow(&args, d, now, due)+` RETURNING id`, args...).Scan(&d.ID)
	if err != nil {
		return internal(err, "enqueue delivery")
	}
	d.Status, d.NextAttemptAt, d.CreatedAt = recon.DeliveryPending, due, now
	return nil
}

// enqueueAll writes deliveries into the outbox as enqueue does, up to
// enqueueChunk in one statement (a batch's IPNs: one round trip on
// PostgreSQL, where one each kept the push waiting), but without their IDs.
func (db *DB) enqueueAll(ctx context.Context, tx *sql.Tx, ds []*recon.Delivery, now, due time.Time) error {
	now, due = storedTime(now), storedTime(due)
	for chunk := range slices.Chunk(ds, enqueueChunk) {
		rows := make([]string, len(chunk))
		var args []any
		for i, d := range chunk {
			rows[i] = db.enqueueRow(&args, d, now, due)
		}
		if _, err := tx.ExecContext(deferrable(ctx), enqueueInsert+strings.Join(rows, ", "), args...); err != nil {
			return internal(err, "enqueue deliveries")
		}
	}
	for _, d := range ds {
		d.Status, d.NextAttemptAt, d.CreatedAt = recon.DeliveryPending, due, now
	}
	return nil
}

// enqueueChunk bounds the rows of one statement of enqueueAll (10
// parameters each).
const enqueueChunk = 100

const enqueueInsert = `INSERT INTO deliveries (company_id, kind, event, payload, status, attempts, next_attempt_at, created_at, order_id, ordered) VALUES `

// enqueueRow returns the VALUES row of d for enqueueInsert and appends its
// arguments to args.
func (db *DB) enqueueRow(args *[]any, d *recon.Delivery, now, due time.Time) string {
	p := strings.Split(db.params(len(*args)+1, 10), ",")
	*args = append(*args, d.CompanyID, d.Kind, d.Event, d.Payload, recon.DeliveryPending, due, now, idArg(d.OrderID), d.CompanyID, d.Kind)
	return "(" + strings.Join(p[:5], ", ") + ", 0, " + strings.Join(p[5:8], ", ") +
		", EXISTS (SELECT 1 FROM delivery_targets t WHERE t.company_id = " + p[8] + " AND t.kind = " + p[9] + " AND t.ordered))"
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

// notifyAt decides, within a state change's transaction, whether the
// tenant's notification of the kind is enqueued, and when it falls due. A
// live tenant's is enqueued only when it has an active target of the kind
// (a merchant without an IPN URL gets none, and nothing piles up), due at
// once. A test tenant's is always enqueued, for `recon listen` (docs/design.md,
// D10): due at once when there is an active target, else held for the
// listeners for recon.ListenerHold, after which the dispatcher finds no
// target and records it dead.
//
// wants, when not nil, filters by the active target's settings (the hub
// webhook's event list, the IPN target's notification types: wantsIPN):
// what an active target does not want is not produced, in either mode.
func notifyAt(ctx context.Context, q querier, companyID int64, kind string, now time.Time, wants func(settings string) (bool, error)) (due time.Time, ok bool, err error) {
	t, err := readTarget(ctx, q, companyID, kind)
	if err != nil {
		return time.Time{}, false, err
	}
	return t.at(now, wants)
}

// target is what notifyAt reads of the tenant and its target of a kind,
// read apart (readTarget) where a transaction reads it before its writes
// (match: the writes then go with the commit, sqlstore/pipeline.go).
type target struct {
	found, test, active bool
	settings            string
}

func readTarget(ctx context.Context, q querier, companyID int64, kind string) (target, error) {
	var r targetRow
	err := q.QueryRowContext(ctx, `SELECT `+targetColumns+`
		FROM companies c LEFT JOIN delivery_targets t ON t.company_id = c.id AND t.kind = $2
		WHERE c.id = $1`, companyID, kind).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return target{}, nil
	}
	if err != nil {
		return target{}, internal(err, "read delivery target")
	}
	return r.target(), nil
}

// targetColumns are what a target is read from: the tenant c and its
// target t of the kind, LEFT JOINed (none is the zero target's columns).
const targetColumns = `c.test_of IS NOT NULL, COALESCE(t.active, false), COALESCE(t.settings, '{}'), COALESCE(t.disabled_by, '')`

// targetRow is targetColumns scanned.
type targetRow struct {
	t          target
	disabledBy string
}

func (r *targetRow) dest() []any { return []any{&r.t.test, &r.t.active, &r.t.settings, &r.disabledBy} }

func (r *targetRow) target() target {
	t := r.t
	t.found = true
	// A target Recon disabled (docs/design.md, D7) still gets its
	// notifications, held for the replay of what it missed: the dispatcher
	// holds them (recon.HeldError) without an attempt.
	t.active = t.active || r.disabledBy == recon.DisabledByRecon
	return t
}

// at is notifyAt's decision for the target t.
func (t target) at(now time.Time, wants func(settings string) (bool, error)) (due time.Time, ok bool, err error) {
	switch {
	case !t.found:
		return time.Time{}, false, nil
	case t.active:
		if wants != nil {
			ok, err = wants(t.settings)
		} else {
			ok = true
		}
		return now, ok, err
	case t.test:
		return now.Add(recon.ListenerHold), true, nil
	}
	return time.Time{}, false, nil
}

// markOrdered sets a delivery's mark from its target's setting where a
// replay makes it pending again: it may have been made before the setting
// changed, and saveTargetOrdered marks only the pending ones.
const markOrdered = `ordered = EXISTS (SELECT 1 FROM delivery_targets t
	WHERE t.company_id = deliveries.company_id AND t.kind = deliveries.kind AND t.ordered)`

// saveTargetOrdered marks the pending deliveries of a company's target of
// kind with the target's ordered setting, in the transaction that saves the
// target (see claimUnordered). A target saved ordered makes this node's
// claims select the ordered targets' heads at once; the other nodes' do
// from their next heartbeat, a second at most (DB.noOrdered), and until
// then leave its deliveries pending: the unordered selection never takes a
// delivery of an ordered target.
func (db *DB) saveTargetOrdered(ctx context.Context, tx *sql.Tx, companyID int64, kind string, ordered bool) error {
	if ordered {
		db.noOrdered.Store(false)
	}
	_, err := tx.ExecContext(ctx, `UPDATE deliveries SET ordered = $3
		WHERE company_id = $1 AND kind = $2 AND status = 'pending' AND ordered <> $3`, companyID, kind, ordered)
	return err
}

// syncOrdered puts right the mark of the pending deliveries of the targets
// saved since since: one enqueued while its target was being saved read the
// setting before the save (see claimUnordered). Each target costs an index
// probe of its pending deliveries.
func syncOrdered(ctx context.Context, tx *sql.Tx, since time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE deliveries SET ordered = NOT ordered
		WHERE status = 'pending' AND (company_id, kind) IN (SELECT company_id, kind FROM delivery_targets WHERE updated_at >= $1)
			AND ordered <> (SELECT t.ordered FROM delivery_targets t WHERE t.company_id = deliveries.company_id AND t.kind = deliveries.kind)`, storedTime(since))
	return err
}
