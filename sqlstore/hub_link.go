package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"recon"
)

// Link tokens and their sessions. Every state change enqueues its hub events
// in its own transaction (hubEvents), and the time-driven ends
// (ExpireHubLinks) are conditional updates, so each happens exactly once
// whatever the number of nodes.

const linkTokenColumns = `t.id, t.company_id, (SELECT tc.test_of IS NULL FROM companies tc WHERE tc.id = t.company_id), t.hub_customer_id, c.xid, t.xid, t.token_hash, t.purpose,
	COALESCE(t.bank_account_id, 0), COALESCE(b.xid, ''), t.redirect_uri, t.is_mobile_app, t.language, t.sandbox,
	t.status, t.created_at, t.expires_at, t.ended_at`

const linkTokenFrom = ` FROM hub_link_tokens t
	JOIN hub_customers c ON c.company_id = t.company_id AND c.id = t.hub_customer_id
	LEFT JOIN bank_accounts b ON b.company_id = t.company_id AND b.id = t.bank_account_id`

func scanLinkToken(s scanner) (*recon.LinkToken, error) {
	var t recon.LinkToken
	var created, expires, ended anyTime
	var companyID int64
	var live bool
	if err := s.Scan(&t.ID, &companyID, &live, &t.CustomerID, &t.CustomerXID, &t.XID, &t.TokenHash, &t.Purpose,
		&t.BankAccountID, &t.BankAccountXID, &t.RedirectURI, &t.IsMobileApp, &t.Language, &t.Sandbox,
		&t.Status, &created, &expires, &ended); err != nil {
		return nil, err
	}
	t.Tenant = recon.TenantFromRow(companyID, live)
	t.CreatedAt, t.ExpiresAt, t.EndedAt = created.t, expires.t, ended.t
	return &t, nil
}

const linkSessionColumns = `s.id, s.company_id, (SELECT sc.test_of IS NULL FROM companies sc WHERE sc.id = s.company_id), s.link_token_id, s.xid, s.status, s.state, s.bank_code, s.account_type,
	s.account_number, s.holder_name, s.request_ref, s.otp_attempts, COALESCE(s.bank_account_id, 0), COALESCE(b.xid, ''),
	s.reason, s.created_at, s.last_step_at, s.ended_at`

const linkSessionFrom = ` FROM hub_link_sessions s
	LEFT JOIN bank_accounts b ON b.company_id = s.company_id AND b.id = s.bank_account_id`

func scanLinkSession(s scanner) (*recon.LinkSession, error) {
	var ls recon.LinkSession
	var created, step, ended anyTime
	var companyID int64
	var live bool
	if err := s.Scan(&ls.ID, &companyID, &live, &ls.LinkTokenID, &ls.XID, &ls.Status, &ls.State, &ls.BankCode, &ls.AccountType,
		&ls.AccountNumber, &ls.HolderName, &ls.RequestRef, &ls.OTPAttempts, &ls.BankAccountID, &ls.BankAccountXID,
		&ls.Reason, &created, &step, &ended); err != nil {
		return nil, err
	}
	ls.Tenant = recon.TenantFromRow(companyID, live)
	ls.CreatedAt, ls.LastStepAt, ls.EndedAt = created.t, step.t, ended.t
	return &ls, nil
}

// CreateLinkToken implements recon.LinkStore. It sets t's ID, XID, Token,
// TokenHash, CustomerID, BankAccountID, Status and times.
func (db *DB) CreateLinkToken(ctx context.Context, t *recon.LinkToken, ttl time.Duration) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if ttl <= 0 {
		return recon.Errorf(recon.EINVALID, "the link token lifetime must be positive")
	}
	token := recon.NewLinkToken()
	now := db.now()
	ev := &hubEvents{companyID: t.Tenant.ID(), at: now}
	out := *t
	out.Token, out.TokenHash, out.XID = token, recon.HashLinkToken(token), recon.NewXIDFrom(db.rand)
	out.Status, out.CreatedAt, out.ExpiresAt = recon.LinkTokenActive, now, storedTime(now.Add(ttl))
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		c, err := hubCustomer(ctx, tx, t.Tenant.ID(), t.CustomerXID, "")
		if err != nil {
			return err
		}
		if c.Status != recon.HubCustomerActive {
			return recon.FieldError("company_xid", "company %s is %s: only an Active company may use link tokens", c.XID, c.Status)
		}
		out.CustomerID, out.CustomerXID = c.ID, c.XID
		var bankAccount any
		if t.Purpose == recon.LinkPurposeUnlink {
			var customer sql.NullInt64
			var state sql.NullString
			err := tx.QueryRowContext(ctx, `SELECT id, hub_customer_id, link_state FROM bank_accounts WHERE company_id = $1 AND xid = $2`,
				t.Tenant.ID(), strings.ToLower(t.BankAccountXID)).Scan(&out.BankAccountID, &customer, &state)
			if errors.Is(err, sql.ErrNoRows) || err == nil && customer.Int64 != c.ID {
				return notFound(err, "bank account %s not found for company %s", t.BankAccountXID, c.XID)
			}
			if err != nil {
				return internal(err, "read bank account")
			}
			if state.String != recon.AccountLinked && state.String != recon.AccountInactive {
				return recon.FieldError("bank_account_xid", "bank account %s is not linked", t.BankAccountXID)
			}
			out.BankAccountXID = strings.ToLower(t.BankAccountXID)
			bankAccount = out.BankAccountID
		}
		err = tx.QueryRowContext(ctx, `
			INSERT INTO hub_link_tokens (company_id, hub_customer_id, xid, token_hash, purpose, bank_account_id, redirect_uri,
				is_mobile_app, language, sandbox, status, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
			out.Tenant.ID(), out.CustomerID, out.XID, out.TokenHash, out.Purpose, bankAccount, out.RedirectURI,
			out.IsMobileApp, out.Language, out.Sandbox, out.Status, out.CreatedAt, out.ExpiresAt).Scan(&out.ID)
		if err != nil {
			return internal(err, "create link token")
		}
		ev.add(recon.EventLinkTokenCreated, recon.HubEventMeta{LinkTokenXID: out.XID, Purpose: out.Purpose, BankAccountXID: out.BankAccountXID})
		return ev.flush(ctx, db, tx)
	})
	if err != nil {
		return err
	}
	db.enqueued(ev.enqueued)
	*t = out
	return nil
}

// LinkToken implements recon.LinkStore.
func (db *DB) LinkToken(ctx context.Context, tenant recon.TenantID, xid string) (*recon.LinkToken, []*recon.LinkSession, error) {
	companyID := tenant.ID()
	t, err := scanLinkToken(db.db.QueryRowContext(ctx, `SELECT `+linkTokenColumns+linkTokenFrom+
		` WHERE t.company_id = $1 AND t.xid = $2`, companyID, strings.ToLower(xid)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, notFound(err, "link token %s not found", xid)
	}
	if err != nil {
		return nil, nil, internal(err, "read link token")
	}
	sessions, err := linkSessions(ctx, db.db, t.Tenant.ID(), t.ID)
	if err != nil {
		return nil, nil, err
	}
	return t, sessions, nil
}

func linkSessions(ctx context.Context, q querier, companyID, tokenID int64) ([]*recon.LinkSession, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+linkSessionColumns+linkSessionFrom+
		` WHERE s.company_id = $1 AND s.link_token_id = $2 ORDER BY s.id`, companyID, tokenID)
	out, err := collect(rows, err, "list link sessions", scanLinkSession)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RevokeLinkToken implements recon.LinkStore.
func (db *DB) RevokeLinkToken(ctx context.Context, tenant recon.TenantID, xid string) (*recon.LinkToken, error) {
	companyID := tenant.ID()
	now := db.now()
	ev := &hubEvents{companyID: companyID, at: now}
	var out *recon.LinkToken
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		t, err := scanLinkToken(tx.QueryRowContext(ctx, `SELECT `+linkTokenColumns+linkTokenFrom+
			` WHERE t.company_id = $1 AND t.xid = $2`, companyID, strings.ToLower(xid)))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(err, "link token %s not found", xid)
		}
		if err != nil {
			return internal(err, "read link token")
		}
		// The conditional update is the guard: of a revoke and an expiry or
		// a completion at once, one wins and the other finds it ended.
		res, err := tx.ExecContext(ctx, `UPDATE hub_link_tokens SET status = $1, ended_at = $2 WHERE id = $3 AND status = $4`,
			recon.LinkTokenRevoked, now, t.ID, recon.LinkTokenActive)
		if err != nil {
			return internal(err, "revoke link token")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound(nil, "link token %s is not active (it is %s): there is nothing to revoke", t.XID, strings.ToLower(t.Status))
		}
		t.Status, t.EndedAt = recon.LinkTokenRevoked, now
		sessionXID, err := endOpenSessions(ctx, tx, t, recon.LinkSessionRevoked, "link token revoked", now)
		if err != nil {
			return err
		}
		ev.add(recon.EventLinkTokenRevoked, recon.HubEventMeta{LinkTokenXID: t.XID, LinkSessionXID: sessionXID,
			Purpose: t.Purpose, BankAccountXID: t.BankAccountXID, Reason: "revoked by the merchant"})
		out = t
		return ev.flush(ctx, db, tx)
	})
	if err != nil {
		return nil, err
	}
	db.enqueued(ev.enqueued)
	return out, nil
}

// endOpenSessions ends the token's open session (there is at most one)
// with the status and reason, and returns its xid (nil when none was open).
func endOpenSessions(ctx context.Context, tx *sql.Tx, t *recon.LinkToken, status, reason string, now time.Time) (*string, error) {
	rows, err := tx.QueryContext(ctx, `UPDATE hub_link_sessions SET status = $1, reason = $2, ended_at = $3
		WHERE company_id = $4 AND link_token_id = $5 AND status = $6 RETURNING xid`,
		status, reason, now, t.Tenant.ID(), t.ID, recon.LinkSessionOpen)
	if err != nil {
		return nil, internal(err, "end link sessions")
	}
	defer rows.Close()
	var xid *string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, internal(err, "end link sessions")
		}
		xid = &s
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "end link sessions")
	}
	return xid, nil
}

// expireBatch bounds how many tokens or sessions one ExpireHubLinks pass reads.
const expireBatch = 500

// ExpireHubLinks implements recon.LinkStore. Each token and session ends in
// its own transaction through a conditional update (status still ACTIVE or
// OPEN): of two nodes sweeping at once, exactly one ends it and enqueues its
// events.
func (db *DB) ExpireHubLinks(ctx context.Context, now time.Time) (int, int, error) {
	now = storedTime(now)
	var tokens, sessions int
	for {
		rows, err := db.db.QueryContext(ctx, `SELECT company_id, xid FROM hub_link_tokens
			WHERE status = $1 AND expires_at <= $2 ORDER BY expires_at, id LIMIT $3`, recon.LinkTokenActive, now, expireBatch)
		if err != nil {
			return tokens, sessions, internal(err, "find expired link tokens")
		}
		type key struct {
			company int64
			xid     string
		}
		var due []key
		for rows.Next() {
			var k key
			if err := rows.Scan(&k.company, &k.xid); err != nil {
				rows.Close()
				return tokens, sessions, internal(err, "find expired link tokens")
			}
			due = append(due, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return tokens, sessions, internal(err, "find expired link tokens")
		}
		for _, k := range due {
			ended, err := db.expireLinkToken(ctx, k.company, k.xid, now)
			if err != nil {
				return tokens, sessions, err
			}
			if ended {
				tokens++
			}
		}
		if len(due) < expireBatch {
			break
		}
	}
	idleSince := storedTime(now.Add(-recon.LinkSessionIdle))
	for {
		rows, err := db.db.QueryContext(ctx, `SELECT id FROM hub_link_sessions WHERE status = $1 AND last_step_at <= $2
			ORDER BY last_step_at, id LIMIT $3`, recon.LinkSessionOpen, idleSince, expireBatch)
		if err != nil {
			return tokens, sessions, internal(err, "find abandoned link sessions")
		}
		var due []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return tokens, sessions, internal(err, "find abandoned link sessions")
			}
			due = append(due, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return tokens, sessions, internal(err, "find abandoned link sessions")
		}
		for _, id := range due {
			ended, err := db.abandonLinkSession(ctx, id, idleSince, now)
			if err != nil {
				return tokens, sessions, err
			}
			if ended {
				sessions++
			}
		}
		if len(due) < expireBatch {
			break
		}
	}
	return tokens, sessions, nil
}

func (db *DB) expireLinkToken(ctx context.Context, companyID int64, xid string, now time.Time) (bool, error) {
	ev := &hubEvents{companyID: companyID, at: now}
	ended := false
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE hub_link_tokens SET status = $1, ended_at = $2
			WHERE company_id = $3 AND xid = $4 AND status = $5 AND expires_at <= $2`,
			recon.LinkTokenExpired, now, companyID, xid, recon.LinkTokenActive)
		if err != nil {
			return internal(err, "expire link token")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // another node (or a revoke, or a completion) was first
		}
		ended = true
		t, err := scanLinkToken(tx.QueryRowContext(ctx, `SELECT `+linkTokenColumns+linkTokenFrom+
			` WHERE t.company_id = $1 AND t.xid = $2`, companyID, xid))
		if err != nil {
			return internal(err, "read link token")
		}
		sessionXID, err := endOpenSessions(ctx, tx, t, recon.LinkSessionExpired, "link token expired", now)
		if err != nil {
			return err
		}
		if sessionXID != nil {
			ev.add(recon.EventLinkSessionExpired, recon.HubEventMeta{LinkTokenXID: t.XID, LinkSessionXID: sessionXID,
				Purpose: t.Purpose, Reason: "the link token expired during the session"})
		}
		ev.add(recon.EventLinkTokenExpired, recon.HubEventMeta{LinkTokenXID: t.XID, LinkSessionXID: sessionXID,
			Purpose: t.Purpose, BankAccountXID: t.BankAccountXID, Reason: "the link token's lifetime ended before it was used"})
		return ev.flush(ctx, db, tx)
	})
	if err == nil {
		db.enqueued(ev.enqueued)
	}
	return ended, err
}

func (db *DB) abandonLinkSession(ctx context.Context, id int64, idleSince, now time.Time) (bool, error) {
	ended := false
	var ev *hubEvents
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var companyID int64
		var xid, tokenXID, purpose string
		err := tx.QueryRowContext(ctx, `UPDATE hub_link_sessions SET status = $1, reason = $2, ended_at = $3
			WHERE id = $4 AND status = $5 AND last_step_at <= $6 RETURNING company_id, xid,
			(SELECT t.xid FROM hub_link_tokens t WHERE t.id = hub_link_sessions.link_token_id),
			(SELECT t.purpose FROM hub_link_tokens t WHERE t.id = hub_link_sessions.link_token_id)`,
			recon.LinkSessionAbandoned, "no step for 15 minutes", now, id, recon.LinkSessionOpen, idleSince).
			Scan(&companyID, &xid, &tokenXID, &purpose)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // a step, another node or an end came first
		}
		if err != nil {
			return internal(err, "abandon link session")
		}
		ended = true
		ev = &hubEvents{companyID: companyID, at: now}
		ev.add(recon.EventLinkSessionAbandoned, recon.HubEventMeta{LinkTokenXID: tokenXID, LinkSessionXID: &xid,
			Purpose: purpose, Reason: "no step for 15 minutes"})
		return ev.flush(ctx, db, tx)
	})
	if err == nil && ev != nil {
		db.enqueued(ev.enqueued)
	}
	return ended, err
}
