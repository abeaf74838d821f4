package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"recon"
)

// The delivery outbox (recon.DeliveryStore). Rows are written by enqueue in
// the transaction of the state change that causes them (outbox.go); the
// dispatchers of every node claim due rows with a lease, send them, and
// record each attempt.

var _ recon.DeliveryStore = (*DB)(nil)

// Listing limits of Deliveries.
const (
	deliveriesDefaultLimit = 50
	deliveriesMaxLimit     = 500
)

const deliveryColumns = `id, company_id, kind, event, payload, status, attempts, next_attempt_at, lease_until, claimed_by, last_error, created_at, delivered_at, order_id`

const selectDelivery = `SELECT ` + deliveryColumns + ` FROM deliveries`

// EnqueueDelivery stores d as pending and due at once, outside any other
// state change. It sets d's ID, Status, NextAttemptAt and CreatedAt.
func (db *DB) EnqueueDelivery(ctx context.Context, d *recon.Delivery) error {
	if err := recon.CheckDeliveryKind("kind", d.Kind); err != nil {
		return err
	}
	if d.Kind == "" {
		return recon.FieldError("kind", "kind is required")
	}
	if d.Event == "" {
		return recon.FieldError("event", "event is required")
	}
	now := db.now()
	err := db.asWriter(ctx, func() error { return db.enqueue(ctx, db.db, d, now, now) })
	if db.d.violation(err) == foreignKeyViolation {
		return notFound(err, "company %d not found", d.CompanyID)
	}
	return err
}

// claimUnordered and claimOrdered select the due deliveries of
// ClaimDeliveries ($2 now, $3 n), and claimSet leases them ($1 lease until,
// $4 node): each engine puts them together in its own statement
// (dialect.claimDeliveries), one statement and so one transaction. indexedBy is the dialect's (SQLite is told the
// partial indexes of the order rules, which it would not choose without
// statistics; the company's kind index would walk its finished deliveries).
//
// Hub events (kind webhook) go out one at a time per tenant, in the order
// they were enqueued: one is not claimed while an earlier one of its tenant
// is due or in flight (index deliveries_pending_group). An earlier event
// that failed and waits for its retry does not hold the later ones back.
//
// An ordered target's deliveries (recon.Target.Ordered; docs/design.md, D7,
// "Ordered targets") are stricter: one is claimed only when it is the
// lowest pending delivery of its company and kind, and none of them is
// claimed under an unexpired lease (deliveries_claimed_group). So one of
// them at most is in flight, and a head that waits for its retry holds the
// others back until it is delivered or dead.
//
// The claim is two selections (claimUnordered, claimOrdered) whose rows
// the dialect puts together, in due order, up to n. The unordered walk
// reads only deliveries not marked ordered (deliveries_due_unordered): the
// deliveries waiting behind an ordered head are not passed over one by one
// at every claim, whatever their number. The ordered selection starts from
// the ordered targets (delivery_targets_ordered) and probes each one's head
// (deliveries_pending_group). deliveries.ordered copies the target's
// setting (enqueue, saveTargetOrdered); a delivery enqueued while its
// target is being saved may carry the old setting for an instant, which
// the heartbeat puts right (syncOrdered), and meanwhile the unordered walk
// still refuses a delivery of an ordered target, and the ordered one takes
// a head whatever its mark.
//
// Under concurrency (PostgreSQL, FOR UPDATE SKIP LOCKED): the only row of
// an ordered target that passes is its head, the same row for every claimer,
// and its row lock lets one claimer take it; a claimer that took its
// snapshot before another's claim or record committed sees the rows as
// they were before, more of them pending, which holds back more, never less
// (a row locked or changed meanwhile is skipped or re-checked on its new
// version). The lease check covers a lower id that commits after a higher
// one was claimed (two enqueuing transactions at once, whose order is the
// ids'): it waits for the one in flight.
func claimUnordered(indexedBy func(string) string) string {
	return `
			SELECT id, next_attempt_at FROM deliveries d` + indexedBy("deliveries_due_unordered") + `
			WHERE status = 'pending' AND NOT ordered AND next_attempt_at <= $2 AND (lease_until IS NULL OR lease_until <= $2)
				AND ` + activeCompany("d.company_id") + `
				AND (kind <> 'webhook' OR NOT EXISTS (
					SELECT 1 FROM deliveries e` + indexedBy("deliveries_pending_group") + `
					WHERE e.company_id = d.company_id AND e.kind = 'webhook' AND e.status = 'pending' AND e.id < d.id
						AND (e.next_attempt_at <= $2 OR e.lease_until > $2)))
				AND NOT EXISTS (SELECT 1 FROM delivery_targets t WHERE t.company_id = d.company_id AND t.kind = d.kind AND t.ordered)
			ORDER BY next_attempt_at, id
			LIMIT $3`
}

// claimOrdered selects the due heads of the ordered targets (see
// claimUnordered). The head's own conditions are on d, status included, so
// that PostgreSQL checks them again on a row another claimer changed after
// this statement's snapshot (a head delivered meanwhile is not taken again).
func claimOrdered(indexedBy func(string) string) string {
	return `
			SELECT d.id, d.next_attempt_at FROM delivery_targets t` + indexedBy("delivery_targets_ordered") + `
			JOIN deliveries d ON d.id = (
				SELECT MIN(e.id) FROM deliveries e` + indexedBy("deliveries_pending_group") + `
				WHERE e.company_id = t.company_id AND e.kind = t.kind AND e.status = 'pending')
			WHERE t.ordered AND d.status = 'pending' AND d.next_attempt_at <= $2 AND (d.lease_until IS NULL OR d.lease_until <= $2)
				AND ` + activeCompany("t.company_id") + `
				AND NOT EXISTS (
					SELECT 1 FROM deliveries e` + indexedBy("deliveries_claimed_group") + `
					WHERE e.company_id = t.company_id AND e.kind = t.kind AND e.claimed_by IS NOT NULL
						AND e.status = 'pending' AND e.lease_until > $2)
			ORDER BY d.next_attempt_at, d.id
			LIMIT $3`
}

// activeCompany is the claim's condition that the company whose id is col
// (or whose test-mode twin it is) is active: correlated, so that it reads the
// companies of the rows it considers by their key. As company_id IN (SELECT
// the active companies), SQLite listed every company at each claim: with
// 10,000 companies, the claims took 72% of the server's CPU and IPNs left a
// minute late (docs/benchmarks.md, "10,000 companies (SQLite, 2026-11-27)").
func activeCompany(col string) string {
	return `EXISTS (SELECT 1 FROM ` + tenantCompany + ` WHERE c.id = ` + col + ` AND p.status = 'active')`
}

const claimSet = `UPDATE deliveries SET lease_until = $1, claimed_by = $4`

// ClaimDeliveries takes up to n due deliveries (pending, next attempt due,
// no lease or a lapsed one, of an active company: an inactive company's
// deliveries wait, pending, until it is active again) in the order they fell
// due, and leases them to node until now+lease. It is one statement, and so
// one transaction (see claimUnordered; an ordered target's one at a time). The claimed rows come back with their new
// LeaseUntil and ClaimedBy, ordered by NextAttemptAt and ID.
func (db *DB) ClaimDeliveries(ctx context.Context, node string, now time.Time, n int, lease time.Duration) ([]*recon.Delivery, error) {
	if n <= 0 {
		return nil, nil
	}
	if lease <= 0 {
		return nil, recon.Errorf(recon.EINVALID, "the lease must be positive")
	}
	if node == "" {
		return nil, recon.FieldError("node", "node is required")
	}
	now = storedTime(now)
	until := storedTime(now.Add(lease))
	var list []*recon.Delivery
	// The statement writes until its rows are read and closed (SQLite
	// commits then), so the turn lasts until scanDeliveries returns.
	err := db.asWriter(ctx, func() error {
		rows, err := db.db.QueryContext(ctx, db.d.claimDeliveries(!db.noOrdered.Load()), until, now, n, node)
		if err == nil {
			list, err = scanDeliveries(rows)
		}
		return internalOrNil(err, "claim deliveries")
	})
	if err != nil {
		return nil, err
	}
	// RETURNING promises no order.
	slices.SortFunc(list, func(a, b *recon.Delivery) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return list, nil
}

// The one statement that records attempts, on both engines: it reads the
// attempts from v (id, status, next, err, at, url, code, latency, response;
// each dialect's recordAttempts builds v) and sets each delivery's state: attempts+1, the
// status, the next attempt time (kept when next is NULL), no claim,
// last_error, and delivered_at when, and only when, the attempt delivered
// it. Only a pending delivery changes: a late result of a node whose claim
// was taken up by another (which may have delivered it meanwhile) is logged
// as an attempt but never moves a delivered or dead delivery back.
const recordUpdate = `
		UPDATE deliveries SET attempts = deliveries.attempts + 1, status = v.status,
			next_attempt_at = COALESCE(v.next, deliveries.next_attempt_at),
			lease_until = NULL, claimed_by = NULL, last_error = v.err,
			delivered_at = CASE WHEN v.status = 'delivered' THEN v.at ELSE deliveries.delivered_at END
		FROM v WHERE deliveries.id = v.id AND deliveries.status = 'pending'`

// recordDeliveries follows v's WITH: vd, the attempts of v whose delivery
// still exists, each with its delivery's company and kind, found by
// primary key. recordInsert and recordStreak read deliveries through it
// only, so the statement reads the attempts' own deliveries and no others;
// a streak that joined deliveries itself walked every delivery of the
// target on PostgreSQL, 7.6 ms at 3,000 (docs/benchmarks.md, "The
// delivery recorder reads its own deliveries only").
const recordDeliveries = `, vd AS (SELECT v.*, d.company_id, d.kind FROM v JOIN deliveries d ON d.id = v.id)`

// recordInsert logs the attempts of vd: every attempt made, also one whose
// result recordUpdate leaves aside, those of deliveries that no longer
// exist left out.
const recordInsert = `
		INSERT INTO delivery_attempts (delivery_id, at, url, status_code, latency_us, response, error)
		SELECT id, at, url, code, latency, response, err FROM vd`

// RecordAttempts records attempts, each with its delivery's new state (see
// recordUpdate), in one transaction. Attempts of deliveries that no longer
// exist are dropped rather than failing the others; an unknown status fails
// the whole call (EINVALID). An attempt's At defaults to now; its ID is not
// set. How the attempts reach the statements is the dialect's
// (recordAttempts): on PostgreSQL one statement, one round trip; on SQLite,
// which runs in process, a VALUES list a chunk at a time.
func (db *DB) RecordAttempts(ctx context.Context, outcomes []recon.AttemptOutcome) error {
	if len(outcomes) == 0 {
		return nil
	}
	now := db.now()
	for _, o := range outcomes {
		if err := recon.CheckDeliveryStatus("status", o.Status); err != nil {
			return err
		}
		if o.Status == "" {
			return recon.FieldError("status", "status is required")
		}
		if o.Attempt.At.IsZero() {
			o.Attempt.At = now
		}
		o.Attempt.At = storedTime(o.Attempt.At)
	}
	return db.d.recordAttempts(ctx, db, outcomes)
}

// outcomeRow is an outcome as the columns of v.
func outcomeRow(o recon.AttemptOutcome) (next *time.Time, err string) {
	if !o.Next.IsZero() {
		t := storedTime(o.Next)
		next = &t
	}
	return next, cleanText(o.Attempt.Error)
}

// BeatDeliveryNode records, in one transaction, that node is alive at now
// (inserting its row when it has none: Joined, and then its own claims are
// released), deletes the other nodes whose heartbeat is older than
// deadBefore, and releases the claims of every node that has no row. The
// heartbeats compare the clocks of different nodes, like the leases: the
// nodes' clocks must agree to well within the dead threshold (NTP does).
//
// The dispatcher claims nothing while its beat runs (delivery's claimMu),
// so the beat's writes whose answer it does not read are deferred
// (sqlstore/pipeline.go): on PostgreSQL the transaction is four round trips,
// BEGIN, the node's own row (which also reads whether a target is ordered,
// DB.noOrdered), the dead nodes' deletion with the release of the claims
// left without a node, and the marks' repair with the COMMIT.
func (db *DB) BeatDeliveryNode(ctx context.Context, node string, now, deadBefore time.Time) (recon.NodeBeat, error) {
	var beat recon.NodeBeat
	if node == "" {
		return beat, recon.FieldError("node", "node is required")
	}
	now, deadBefore = storedTime(now), storedTime(deadBefore)
	var ordered bool // whether a target is ordered
	const anyOrdered = ` RETURNING EXISTS (SELECT 1 FROM delivery_targets WHERE ordered)`
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE delivery_nodes SET heartbeat_at = $1 WHERE id = $2`+anyOrdered, now, node).Scan(&ordered)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			beat.Joined = true
			if err := tx.QueryRowContext(ctx, `INSERT INTO delivery_nodes (id, started_at, heartbeat_at) VALUES ($1, $2, $2)`+anyOrdered,
				node, now).Scan(&ordered); err != nil {
				return err
			}
			if beat.Released, err = releaseClaims(ctx, tx, `claimed_by = $1`, node); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if _, err := tx.ExecContext(deferrable(ctx), `DELETE FROM delivery_nodes WHERE heartbeat_at < $1 AND id <> $2`, deadBefore, node); err != nil {
			return err
		}
		// Claims without a node arise when a node is deleted, and when a
		// node declared dead claims before its next beat joins it again
		// (after a failover: its claim loop resumed first) or a claimer
		// never joined: every beat sweeps them, or one whose node then
		// died would wait for its lease. The search reads the claimed rows
		// only (index deliveries_claimed): a few per node.
		n, err := releaseClaims(ctx, tx, `claimed_by IS NOT NULL AND NOT EXISTS (
			SELECT 1 FROM delivery_nodes WHERE delivery_nodes.id = deliveries.claimed_by)`)
		if err != nil {
			return err
		}
		beat.Released += n
		// A delivery enqueued while its target was being saved (see
		// claimUnordered): a minute is far longer than such a transaction.
		return syncOrdered(deferrable(ctx), tx, now.Add(-time.Minute))
	})
	if err != nil {
		return recon.NodeBeat{}, internal(err, "delivery node heartbeat")
	}
	db.noOrdered.Store(!ordered)
	return beat, nil
}

// LeaveDeliveryNode deletes the node's row and releases its claims, in one
// transaction, and reports how many claims it released.
func (db *DB) LeaveDeliveryNode(ctx context.Context, node string) (int64, error) {
	var released int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM delivery_nodes WHERE id = $1`, node); err != nil {
			return err
		}
		var err error
		released, err = releaseClaims(ctx, tx, `claimed_by = $1`, node)
		return err
	})
	if err != nil {
		return 0, internal(err, "delivery node leave")
	}
	return released, nil
}

// ReleaseDeliveryClaims releases the node's claims on pending deliveries
// other than keep's, and reports how many.
func (db *DB) ReleaseDeliveryClaims(ctx context.Context, node string, keep []int64) (int64, error) {
	if node == "" {
		return 0, recon.FieldError("node", "node is required")
	}
	args := queryArgs{node}
	where := `claimed_by = $1 AND status = 'pending'`
	if len(keep) > 0 {
		ids := make([]string, len(keep))
		for i, id := range keep {
			ids[i] = args.add(id)
		}
		where += ` AND id NOT IN (` + strings.Join(ids, ", ") + `)`
	}
	var released int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		released, err = releaseClaims(ctx, tx, where, args...)
		return err
	})
	if err != nil {
		return 0, internal(err, "release delivery claims")
	}
	return released, nil
}

// releaseClaims ends the claims of the deliveries matching where: due at
// once again (at their next attempt time) for any node.
func releaseClaims(ctx context.Context, tx *sql.Tx, where string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, `UPDATE deliveries SET lease_until = NULL, claimed_by = NULL WHERE `+where, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Delivery returns one of the company's deliveries (any company's when
// companyID is 0), or ENOTFOUND.
func (db *DB) Delivery(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Delivery, error) {
	companyID := tenant.ID()
	query, args := selectDelivery+` WHERE id = $1`, []any{id}
	if companyID != 0 {
		query, args = query+` AND company_id = $2`, append(args, companyID)
	}
	rows, err := db.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, internal(err, "read delivery")
	}
	list, err := scanDeliveries(rows)
	if err != nil {
		return nil, internal(err, "read delivery")
	}
	if len(list) == 0 {
		return nil, notFound(nil, "delivery %d not found", id)
	}
	return list[0], nil
}

// Deliveries lists deliveries newest first: the company's, or every
// company's when companyID is 0. The limit defaults to 50 and is capped at
// 500; an unknown status or kind is EINVALID.
// A listing's (recon.Listing) may read from the standby (WithStandby).
func (db *DB) Deliveries(ctx context.Context, tenant recon.TenantID, f recon.DeliveryFilter) ([]*recon.Delivery, error) {
	return listed(ctx, db, func(db *DB) ([]*recon.Delivery, error) { return db.deliveries(ctx, tenant, f) })
}

// deliveries is Deliveries on one database: the primary or the standby.
func (db *DB) deliveries(ctx context.Context, tenant recon.TenantID, f recon.DeliveryFilter) ([]*recon.Delivery, error) {
	companyID := tenant.ID()
	if err := recon.CheckDeliveryStatus("status", f.Status); err != nil {
		return nil, err
	}
	if err := recon.CheckDeliveryKind("kind", f.Kind); err != nil {
		return nil, err
	}
	var where []string
	var args queryArgs
	if companyID != 0 {
		where = append(where, "company_id = "+args.add(companyID))
	}
	switch {
	case f.Failing && f.Status != "" && f.Status != recon.DeliveryPending:
		return nil, recon.FieldError("status", "failing deliveries are pending; status %s cannot be failing too", f.Status)
	case f.Failing: // the partial index deliveries_failing
		where = append(where, "status = "+args.add(recon.DeliveryPending), "attempts > 0")
	case f.Status != "":
		where = append(where, "status = "+args.add(f.Status))
	}
	if f.Kind != "" {
		where = append(where, "kind = "+args.add(f.Kind))
	}
	if f.BeforeID > 0 {
		where = append(where, "id < "+args.add(f.BeforeID))
	}
	limit := f.Limit
	if limit <= 0 {
		limit = deliveriesDefaultLimit
	}
	limit = min(limit, deliveriesMaxLimit)
	query := selectDelivery
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY id DESC LIMIT ` + args.add(limit)
	rows, err := db.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, internal(err, "list deliveries")
	}
	list, err := scanDeliveries(rows)
	if err != nil {
		return nil, internal(err, "list deliveries")
	}
	return list, nil
}

// DeliveryAttempts lists a delivery's attempts, oldest first; none (an empty
// list) for an unknown delivery. It does not check the tenant: callers read
// the delivery with Delivery first.
func (db *DB) DeliveryAttempts(ctx context.Context, deliveryID int64) ([]*recon.DeliveryAttempt, error) {
	rows, err := db.db.QueryContext(ctx, `
		SELECT id, delivery_id, at, url, status_code, latency_us, response, error
		FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id`, deliveryID)
	if err != nil {
		return nil, internal(err, "list delivery attempts")
	}
	defer rows.Close()
	out := []*recon.DeliveryAttempt{}
	for rows.Next() {
		var a recon.DeliveryAttempt
		var at anyTime
		var latency int64
		if err := rows.Scan(&a.ID, &a.DeliveryID, &at, &a.URL, &a.StatusCode, &latency, &a.Response, &a.Error); err != nil {
			return nil, internal(err, "list delivery attempts")
		}
		a.At, a.Latency = at.t, time.Duration(latency)*time.Microsecond
		out = append(out, &a)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "list delivery attempts")
	}
	return out, nil
}

// ReplayDelivery makes a delivery pending and due at now, whatever its state,
// and drops its claim and delivered_at; its attempts and their count stay.
// companyID 0 replays any company's delivery. ENOTFOUND when the company has
// no such delivery.
func (db *DB) ReplayDelivery(ctx context.Context, tenant recon.TenantID, id int64, now time.Time) error {
	companyID := tenant.ID()
	query := `UPDATE deliveries SET status = $1, next_attempt_at = $2, lease_until = NULL, claimed_by = NULL, delivered_at = NULL, ` + markOrdered + ` WHERE id = $3`
	args := []any{recon.DeliveryPending, storedTime(now), id}
	if companyID != 0 {
		query, args = query+` AND company_id = $4`, append(args, companyID)
	}
	res, err := db.execWrite(ctx, query, args...)
	if err != nil {
		return internal(err, "replay delivery")
	}
	if n, err := res.RowsAffected(); err != nil {
		return internal(err, "replay delivery")
	} else if n == 0 {
		return notFound(nil, "delivery %d not found", id)
	}
	return nil
}

// DeliveryTarget returns where the company's deliveries of the kind go, its
// secrets decrypted and its settings JSON as stored, or ENOTFOUND when none is configured. A target saved
// before signing secrets existed gets one here, on first read (see
// ensureSigningSecret): nothing is ever signed under an empty key.
func (db *DB) DeliveryTarget(ctx context.Context, companyID int64, kind string) (*recon.Target, error) {
	for range 2 {
		var t recon.Target
		var sealed, signing, previous []byte
		var until anyTime
		err := db.db.QueryRowContext(ctx,
			`SELECT url, auth_type, secret, signing_secret, active, settings, disabled_by, ordered`+previousColumns+` FROM delivery_targets WHERE company_id = $1 AND kind = $2`,
			companyID, kind).Scan(&t.URL, &t.AuthType, &sealed, &signing, &t.Active, &t.Settings, &t.DisabledBy, &t.Ordered, &previous, &until)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound(err, "company %d has no %s target", companyID, kind)
		}
		if err != nil {
			return nil, internal(err, "read delivery target")
		}
		if len(sealed) > 0 {
			if t.Secret, err = db.openSecret(ctx, targetBinding("secret", companyID, kind), sealed); err != nil {
				return nil, err
			}
		}
		if len(signing) == 0 {
			carry := ""
			if t.AuthType == recon.AuthSecretKey {
				carry = t.Secret
			}
			if err := db.ensureSigningSecret(ctx, companyID, kind, carry); err != nil {
				return nil, err
			}
			continue
		}
		if t.SigningSecret, err = db.openSecret(ctx, targetBinding("signing_secret", companyID, kind), signing); err != nil {
			return nil, err
		}
		if err := db.openPrevious(ctx, companyID, kind, &t, previous, until); err != nil {
			return nil, err
		}
		return &t, nil
	}
	return nil, internal(fmt.Errorf("company %d's %s target keeps losing its signing secret", companyID, kind), "read delivery target")
}

// DeliveryStats counts deliveries by status (every status is present, zero
// or not), plus "in_flight": pending deliveries under an unexpired lease. It
// reads the whole table; metrics call it every few seconds, not per request.
func (db *DB) DeliveryStats(ctx context.Context) (map[string]int64, error) {
	// Each count is served by a partial index (deliveries_due, deliveries_dead);
	// delivered rows, the bulk of the table, are not counted.
	stats := map[string]int64{recon.DeliveryPending: 0, recon.DeliveryDead: 0, "in_flight": 0}
	var pending, leased, dead int64
	err := db.db.QueryRowContext(ctx, `
		SELECT (SELECT COUNT(*) FROM deliveries WHERE status = 'pending'),
		       (SELECT COUNT(*) FROM deliveries WHERE status = 'pending' AND lease_until > $1),
		       (SELECT COUNT(*) FROM deliveries WHERE status = 'dead')`, db.now()).Scan(&pending, &leased, &dead)
	if err != nil {
		return nil, internal(err, "count deliveries")
	}
	stats[recon.DeliveryPending], stats["in_flight"], stats[recon.DeliveryDead] = pending, leased, dead
	return stats, nil
}

// deleteChunk is how many delivered rows one retention statement deletes.
const deleteChunk = 5000

// DeleteDeliveredBefore deletes the deliveries delivered before t, with their
// attempts, a chunk at a time so that no statement holds the write lock for
// long, and reports how many it deleted. Pending and dead ones are kept.
func (db *DB) DeleteDeliveredBefore(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	for {
		res, err := db.execWrite(ctx, `DELETE FROM deliveries WHERE id IN (
			SELECT id FROM deliveries WHERE status = 'delivered' AND delivered_at < $1 LIMIT $2)`, storedTime(t), deleteChunk)
		if err != nil {
			return total, internal(err, "delete delivered deliveries")
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, internal(err, "delete delivered deliveries")
		}
		total += n
		if n < deleteChunk {
			return total, nil
		}
	}
}

// scanDeliveries reads rows of deliveryColumns and closes them.
func scanDeliveries(rows *sql.Rows) ([]*recon.Delivery, error) {
	defer rows.Close()
	var out []*recon.Delivery
	for rows.Next() {
		var d recon.Delivery
		var next, lease, created, delivered anyTime
		var claimedBy sql.NullString
		var order sql.NullInt64
		if err := rows.Scan(&d.ID, &d.CompanyID, &d.Kind, &d.Event, &d.Payload, &d.Status, &d.Attempts,
			&next, &lease, &claimedBy, &d.LastError, &created, &delivered, &order); err != nil {
			return nil, err
		}
		d.OrderID = order.Int64
		d.NextAttemptAt, d.LeaseUntil, d.CreatedAt, d.DeliveredAt = next.t, lease.t, created.t, delivered.t
		d.ClaimedBy = claimedBy.String
		out = append(out, &d)
	}
	return out, rows.Err()
}

// anyTime scans a nullable time column into a UTC time.Time (zero for NULL).
// SQLite's driver turns the integer microseconds of a TIMESTAMP column into a
// time.Time only where it knows the column's declared type, which a
// RETURNING clause does not tell it: there the integer arrives as is.
type anyTime struct{ t time.Time }

func (a *anyTime) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		a.t = time.Time{}
	case time.Time:
		a.t = v.UTC()
	case int64:
		a.t = time.UnixMicro(v).UTC()
	default:
		return fmt.Errorf("sqlstore: cannot scan %T into a time", v)
	}
	return nil
}

var _ sql.Scanner = (*anyTime)(nil)

// cleanText makes s storable in a text column of both engines: valid UTF-8
// without NUL bytes (PostgreSQL refuses both). Receivers answer anything.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}
