package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"recon"
)

// The hub webhook is the company's delivery target of kind
// recon.DeliveryWebhook; its request_content_type and allow_events are the
// row's settings (JSON). Its secret (X-Secret-Key) and its signing secret
// (X-Recon-Signature) are two sealed values, each bound to its column
// (sqlstore/secret.go).

type hubWebhookSettings struct {
	ContentType string   `json:"request_content_type"`
	AllowEvents []string `json:"allow_events"`
}

// HubWebhook implements recon.HubStore.
func (db *DB) HubWebhook(ctx context.Context, tenant recon.TenantID) (*recon.HubWebhook, error) {
	companyID := tenant.ID()
	return db.hubWebhook(ctx, db.db, companyID, "")
}

func (db *DB) hubWebhook(ctx context.Context, q querier, companyID int64, lock string) (*recon.HubWebhook, error) {
	var w recon.HubWebhook
	var sealed, signing, previous []byte
	var until anyTime
	var settings string
	err := q.QueryRowContext(ctx, `SELECT url, auth_type, secret, signing_secret, active, settings, ordered`+previousColumns+` FROM delivery_targets
		WHERE company_id = $1 AND kind = $2`+lock, companyID, recon.DeliveryWebhook).
		Scan(&w.URL, &w.AuthType, &sealed, &signing, &w.Active, &settings, &w.Ordered, &previous, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "no webhook is configured")
	}
	if err != nil {
		return nil, internal(err, "read hub webhook")
	}
	if w.Secret, err = db.openSecret(ctx, targetBinding("secret", companyID, recon.DeliveryWebhook), sealed); err != nil {
		return nil, err
	}
	if len(signing) == 0 {
		// Saved before migration 00005: signed under its secret until now
		// (ensureSigningSecret carries it the same way); the next save
		// stores it.
		w.SigningSecret = w.Secret
	} else if w.SigningSecret, err = db.openSecret(ctx, targetBinding("signing_secret", companyID, recon.DeliveryWebhook), signing); err != nil {
		return nil, err
	}
	if err := db.openPrevious(ctx, companyID, recon.DeliveryWebhook, &w.Target, previous, until); err != nil {
		return nil, err
	}
	s, err := parseHubWebhookSettings(settings)
	if err != nil {
		return nil, err
	}
	w.ContentType, w.AllowEvents = s.ContentType, s.AllowEvents
	return &w, nil
}

func parseHubWebhookSettings(raw string) (hubWebhookSettings, error) {
	s := hubWebhookSettings{ContentType: recon.HubContentType}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return s, internal(err, "read hub webhook settings")
	}
	if s.AllowEvents == nil {
		s.AllowEvents = []string{}
	}
	return s, nil
}

// ChangeHubWebhook implements recon.HubStore.
func (db *DB) ChangeHubWebhook(ctx context.Context, tenant recon.TenantID, c recon.HubWebhookChange) (*recon.HubWebhook, bool, error) {
	companyID := tenant.ID()
	var out *recon.HubWebhook
	var created bool
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := db.hubWebhook(ctx, tx, companyID, db.d.forUpdate())
		if err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
			return err
		}
		created = cur == nil
		w, err := c.Apply(cur, db.rand)
		if err != nil {
			return err
		}
		settings, err := json.Marshal(hubWebhookSettings{ContentType: w.ContentType, AllowEvents: w.AllowEvents})
		if err != nil {
			return internal(err, "write hub webhook settings")
		}
		sealed, err := db.sealSecret(ctx, tx, targetBinding("secret", companyID, recon.DeliveryWebhook), w.Secret)
		if err != nil {
			return err
		}
		sealedSigning, err := db.sealSecret(ctx, tx, targetBinding("signing_secret", companyID, recon.DeliveryWebhook), w.SigningSecret)
		if err != nil {
			return err
		}
		previous, until, err := db.keepPrevious(ctx, tx, companyID, recon.DeliveryWebhook, &w.Target, w.SigningSecret)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO delivery_targets (company_id, kind, url, auth_type, secret, signing_secret, active, settings, updated_at, ordered,
				previous_signing_secret, previous_signing_until)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (company_id, kind) DO UPDATE SET url = excluded.url, auth_type = excluded.auth_type,
				secret = excluded.secret, signing_secret = excluded.signing_secret, active = excluded.active,`+reenableOnSave+`
				settings = excluded.settings, updated_at = excluded.updated_at, ordered = excluded.ordered,
				previous_signing_secret = excluded.previous_signing_secret, previous_signing_until = excluded.previous_signing_until`,
			companyID, recon.DeliveryWebhook, w.URL, w.AuthType, sealed, sealedSigning, w.Active, string(settings), db.now(), w.Ordered, previous, until)
		if db.d.violation(err) == foreignKeyViolation {
			return notFound(err, "company %d not found", companyID)
		}
		if err != nil {
			return internal(err, "save hub webhook")
		}
		if err := db.saveTargetOrdered(ctx, tx, companyID, recon.DeliveryWebhook, w.Ordered); err != nil {
			return internal(err, "save hub webhook")
		}
		out = w
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// hubEventWanted is the one place that decides whether a hub event is
// enqueued: inside the state change's transaction, the company's webhook
// must exist, be active and subscribe to the event at that moment
// (recon.HubWebhook.Wants); in test mode notifyAt also holds it for `recon
// listen` when there is no active webhook. Nothing piles up for a live
// merchant who listens to nothing.
func (db *DB) hubEventWanted(ctx context.Context, q querier, companyID int64, event string, now time.Time) (time.Time, bool, error) {
	return notifyAt(ctx, q, companyID, recon.DeliveryWebhook, now, func(settings string) (bool, error) {
		s, err := parseHubWebhookSettings(settings)
		if err != nil {
			return false, err
		}
		w := recon.HubWebhook{Target: recon.Target{Active: true}, AllowEvents: s.AllowEvents}
		return w.Wants(event), nil
	})
}

// hubEvents collects the events of one state change, in the order they
// happened, and writes the wanted ones into the outbox in its transaction.
type hubEvents struct {
	companyID int64
	at        time.Time
	list      []hubEvent
	enqueued  int
}

type hubEvent struct {
	name string
	meta recon.HubEventMeta
}

func (e *hubEvents) add(name string, meta recon.HubEventMeta) {
	e.list = append(e.list, hubEvent{name, meta})
}

// flush writes every event into the timeline (hub_events) and enqueues the
// wanted ones through q, in order.
func (e *hubEvents) flush(ctx context.Context, db *DB, q querier) error {
	for _, ev := range e.list {
		due, ok, err := db.hubEventWanted(ctx, q, e.companyID, ev.name, e.at)
		if err != nil {
			return err
		}
		var deliveryID sql.NullInt64
		if ok {
			d, err := recon.HubEventDelivery(e.companyID, ev.name, ev.meta, e.at, recon.NewXIDFrom(db.rand))
			if err != nil {
				return internal(err, "make hub event")
			}
			if err := db.enqueue(ctx, q, d, e.at, due); err != nil {
				return err
			}
			deliveryID = sql.NullInt64{Int64: d.ID, Valid: true}
			e.enqueued++
		}
		meta, err := json.Marshal(ev.meta)
		if err != nil {
			return internal(err, "make hub event")
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO hub_events (company_id, link_token_xid, event, metadata, at, delivery_id)
			VALUES ($1, $2, $3, $4, $5, $6)`, e.companyID, ev.meta.LinkTokenXID, ev.name, string(meta), storedTime(e.at), deliveryID); err != nil {
			return internal(err, "log hub event")
		}
	}
	e.list = nil
	return nil
}

// HubEventLog implements recon.LinkStore.
func (db *DB) HubEventLog(ctx context.Context, tenant recon.TenantID, linkTokenXID string) ([]*recon.HubEventRecord, error) {
	companyID := tenant.ID()
	xid := strings.ToLower(linkTokenXID)
	var n int
	if err := db.db.QueryRowContext(ctx, `SELECT count(*) FROM hub_link_tokens WHERE company_id = $1 AND xid = $2`, companyID, xid).Scan(&n); err != nil {
		return nil, internal(err, "read link token")
	}
	if n == 0 {
		return nil, recon.Errorf(recon.ENOTFOUND, "link token %s not found", linkTokenXID)
	}
	rows, err := db.db.QueryContext(ctx, `SELECT id, event, metadata, at, COALESCE(delivery_id, 0) FROM hub_events
		WHERE company_id = $1 AND link_token_xid = $2 ORDER BY id`, companyID, xid)
	return collect(rows, err, "read hub events", func(s scanner) (*recon.HubEventRecord, error) {
		var r recon.HubEventRecord
		var meta string
		var at anyTime
		if err := s.Scan(&r.ID, &r.Event, &meta, &at, &r.DeliveryID); err != nil {
			return nil, err
		}
		r.At = at.t
		return &r, json.Unmarshal([]byte(meta), &r.Metadata)
	})
}
