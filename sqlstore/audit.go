package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"recon"
)

// The audit log (recon.AuditStore, migration 00034).

const auditColumns = `a.id, a.company_id, a.created_at, a.actor_user_id, a.actor_email, a.actor_client_id, a.via, a.ip, a.user_agent, a.action, a.object, a.changes`

// AppendAudit implements recon.AuditStore.
func (db *DB) AppendAudit(ctx context.Context, e *recon.AuditEntry) error {
	if err := e.Normalize(); err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *sql.Tx) error { return db.insertAudit(ctx, tx, e) })
}

// insertAudit records e within the write transaction q, its At the store's
// clock when zero.
func (db *DB) insertAudit(ctx context.Context, q querier, e *recon.AuditEntry) error {
	if err := e.Normalize(); err != nil {
		return err
	}
	if e.At.IsZero() {
		e.At = db.now()
	}
	e.At = storedTime(e.At)
	changes := e.Changes
	if changes == nil {
		changes = []recon.AuditChange{}
	}
	js, err := json.Marshal(changes)
	if err != nil {
		return internal(err, "encode audit changes")
	}
	var user sql.NullInt64
	if e.Actor.UserID != 0 {
		user = sql.NullInt64{Int64: e.Actor.UserID, Valid: true}
	}
	err = q.QueryRowContext(ctx, `
		INSERT INTO audit_log (company_id, created_at, actor_user_id, actor_email, actor_client_id, via, ip, user_agent, action, object, changes)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
		e.Tenant.ID(), e.At, user, e.Actor.Email, e.Actor.ClientID, e.Actor.Via, e.Actor.IP, e.Actor.UserAgent, e.Action, e.Object, string(js)).Scan(&e.ID)
	if db.d.violation(err) == foreignKeyViolation {
		return notFound(err, "company %d not found", e.Tenant.ID())
	}
	if err != nil {
		return internal(err, "append audit entry")
	}
	return nil
}

// AuditEntries implements recon.AuditStore.
func (db *DB) AuditEntries(ctx context.Context, tenant recon.TenantID, f recon.AuditFilter) ([]*recon.AuditEntry, int64, error) {
	if err := f.Validate(); err != nil {
		return nil, 0, err
	}
	loc := f.Location
	if loc == nil {
		loc = time.UTC
	}
	t, err := db.Tenant(ctx, tenant.ID())
	if err != nil {
		return nil, 0, err
	}
	live := t.Live()
	where := []string{"a.company_id = $1"}
	args := queryArgs{tenant.ID()}
	if f.Action != "" {
		where = append(where, "a.action = "+args.add(f.Action))
	} else if f.Family != "" {
		// the families' names hold no LIKE wildcard (recon.AuditFamilies)
		where = append(where, "a.action LIKE "+args.add(f.Family+".%"))
	}
	if f.Actor != "" {
		a := args.add(f.Actor)
		where = append(where, "(a.actor_email = "+a+" OR a.actor_client_id = "+a+")")
	}
	scan := func(s scanner) (*recon.AuditEntry, error) {
		var e recon.AuditEntry
		var company int64
		var user sql.NullInt64
		var changes string
		if err := s.Scan(&e.ID, &company, &e.At, &user, &e.Actor.Email, &e.Actor.ClientID, &e.Actor.Via, &e.Actor.IP, &e.Actor.UserAgent,
			&e.Action, &e.Object, &changes); err != nil {
			return nil, err
		}
		e.Tenant, e.At, e.Actor.UserID = recon.TenantFromRow(company, live), e.At.UTC(), user.Int64
		if err := json.Unmarshal([]byte(changes), &e.Changes); err != nil {
			return nil, err
		}
		return &e, nil
	}
	return createdPage(ctx, db, "audit_log", "a", auditColumns, where, &args, f.From, f.To, loc, f.Page, f.PerPage, scan)
}
