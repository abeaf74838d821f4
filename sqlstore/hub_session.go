package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"recon"
)

// The hosted page's side of link sessions: one step at a time, under the
// token's row lock, through the pure recon.NextLinkSession.

// LinkTokenByHash implements recon.LinkPageStore.
func (db *DB) LinkTokenByHash(ctx context.Context, hash string) (*recon.LinkToken, *recon.LinkSession, error) {
	return db.linkTokenByHash(ctx, db.db, hash)
}

func (db *DB) linkTokenByHash(ctx context.Context, q querier, hash string) (*recon.LinkToken, *recon.LinkSession, error) {
	t, err := scanLinkToken(q.QueryRowContext(ctx, `SELECT `+linkTokenColumns+linkTokenFrom+` WHERE t.token_hash = $1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, notFound(err, "no such link")
	}
	if err != nil {
		return nil, nil, internal(err, "read link token")
	}
	s, err := scanLinkSession(q.QueryRowContext(ctx, `SELECT `+linkSessionColumns+linkSessionFrom+
		` WHERE s.company_id = $1 AND s.link_token_id = $2 AND s.status = $3 ORDER BY s.id DESC LIMIT 1`,
		t.Tenant.ID(), t.ID, recon.LinkSessionOpen))
	if errors.Is(err, sql.ErrNoRows) {
		return t, nil, nil
	}
	if err != nil {
		return nil, nil, internal(err, "read link session")
	}
	return t, s, nil
}

// accountByNumber finds the tenant's account at the bank: its id, xid and
// link state (zero values when there is none).
func accountByNumber(ctx context.Context, q querier, companyID int64, bankName, number string) (id int64, xid, state string, err error) {
	var x, st sql.NullString
	err = q.QueryRowContext(ctx, `SELECT id, xid, link_state FROM bank_accounts WHERE company_id = $1 AND bank_name = $2 AND account_number = $3`,
		companyID, bankName, number).Scan(&id, &x, &st)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", "", nil
	}
	if err != nil {
		return 0, "", "", internal(err, "read bank account")
	}
	return id, x.String, st.String, nil
}

func errAlreadyLinked(brand, number string) error {
	return recon.Errorf(recon.ECONFLICT, "the %s account %s is already linked", brand, number)
}

// StepLinkSession implements recon.LinkPageStore.
func (db *DB) StepLinkSession(ctx context.Context, hash string, st recon.LinkStep) (*recon.LinkToken, *recon.LinkSession, error) {
	now := db.now()
	// A token past its lifetime ends here, exactly once (the sweep's
	// conditional update), before the step: the page never works on with
	// it while the sweep has not come by.
	if t, _, err := db.linkTokenByHash(ctx, db.db, hash); err == nil && t.ExpiredAt(now) {
		if _, err := db.expireLinkToken(ctx, t.Tenant.ID(), t.XID, now); err != nil {
			return nil, nil, err
		}
	}
	var ev *hubEvents
	var outT *recon.LinkToken
	var outS *recon.LinkSession
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		// Steps of one token take turns: the lock orders them, so two tabs
		// cannot both complete the session.
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM hub_link_tokens WHERE token_hash = $1`+db.d.forUpdate(), hash).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(err, "no such link")
		}
		if err != nil {
			return internal(err, "lock link token")
		}
		t, s, err := db.linkTokenByHash(ctx, tx, hash)
		if err != nil {
			return err
		}
		var accountID int64
		if s != nil && t.Purpose == recon.LinkPurposeLink &&
			(st.Kind == recon.StepDetails && st.Challenge != nil || st.Kind == recon.StepLinkOTP && st.OTPOK) {
			number := st.AccountNumber
			if st.Kind == recon.StepLinkOTP {
				number = s.AccountNumber
			}
			var xid, state string
			if accountID, xid, state, err = accountByNumber(ctx, tx, t.Tenant.ID(), st.BrandName, number); err != nil {
				return err
			}
			if state == recon.AccountLinked {
				return errAlreadyLinked(st.BrandName, number)
			}
			st.AccountXID = xid
			if st.AccountXID == "" {
				st.AccountXID = recon.NewXIDFrom(db.rand)
			}
		}
		if st.Kind == recon.StepOpen && s == nil {
			st.NewSessionXID = recon.NewXIDFrom(db.rand)
		}
		out, err := recon.NextLinkSession(t, s, st, now)
		if err != nil {
			return err
		}
		n := out.Session
		switch out.Account {
		case recon.AccountLinked:
			if accountID == 0 {
				err = tx.QueryRowContext(ctx, `
					INSERT INTO bank_accounts (company_id, bank_name, account_number, holder_name, created_at,
						hub_customer_id, xid, link_state, account_type, bank_code, linked_at)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $5) RETURNING id`,
					t.Tenant.ID(), st.BrandName, n.AccountNumber, n.HolderName, now, t.CustomerID, n.BankAccountXID,
					recon.AccountLinked, n.AccountType, n.BankCode).Scan(&accountID)
			} else {
				_, err = tx.ExecContext(ctx, `UPDATE bank_accounts SET holder_name = $1, hub_customer_id = $2, xid = $3, link_state = $4,
					account_type = $5, bank_code = $6, linked_at = $7 WHERE company_id = $8 AND id = $9`,
					n.HolderName, t.CustomerID, n.BankAccountXID, recon.AccountLinked, n.AccountType, n.BankCode, now, t.Tenant.ID(), accountID)
			}
			if err != nil {
				return internal(err, "link bank account")
			}
			n.BankAccountID = accountID
		case recon.AccountUnlinked, recon.AccountInactive:
			if _, err := tx.ExecContext(ctx, `UPDATE bank_accounts SET link_state = $1 WHERE company_id = $2 AND id = $3`,
				out.Account, t.Tenant.ID(), t.BankAccountID); err != nil {
				return internal(err, "unlink bank account")
			}
		}
		var account any
		if n.BankAccountID != 0 {
			account = n.BankAccountID
		}
		var ended any
		if !n.EndedAt.IsZero() {
			ended = n.EndedAt
		}
		if out.NewSession {
			err = tx.QueryRowContext(ctx, `
				INSERT INTO hub_link_sessions (company_id, link_token_id, xid, status, state, bank_account_id, created_at, last_step_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id`,
				n.Tenant.ID(), n.LinkTokenID, n.XID, n.Status, n.State, account, now).Scan(&n.ID)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE hub_link_sessions SET status = $1, state = $2, bank_code = $3, account_type = $4,
				account_number = $5, holder_name = $6, request_ref = $7, otp_attempts = $8, bank_account_id = $9, reason = $10,
				last_step_at = $11, ended_at = $12 WHERE company_id = $13 AND id = $14`,
				n.Status, n.State, n.BankCode, n.AccountType, n.AccountNumber, n.HolderName, n.RequestRef, n.OTPAttempts,
				account, n.Reason, n.LastStepAt, ended, n.Tenant.ID(), n.ID)
		}
		if err != nil {
			return internal(err, "write link session")
		}
		if out.TokenUsed {
			if _, err := tx.ExecContext(ctx, `UPDATE hub_link_tokens SET status = $1, ended_at = $2 WHERE id = $3 AND status = $4`,
				recon.LinkTokenUsed, now, t.ID, recon.LinkTokenActive); err != nil {
				return internal(err, "use link token")
			}
			t.Status, t.EndedAt = recon.LinkTokenUsed, now
		}
		ev = &hubEvents{companyID: t.Tenant.ID(), at: now}
		for _, e := range out.Events {
			ev.add(e.Name, e.Meta)
		}
		outT, outS = t, n
		return ev.flush(ctx, db, tx)
	})
	if err != nil {
		return nil, nil, err
	}
	db.enqueued(ev.enqueued)
	return outT, outS, nil
}

const linkedAccountColumns = `b.id, b.company_id, b.bank_name, b.account_number, b.holder_name, b.created_at,
	COALESCE(b.xid, ''), COALESCE(b.hub_customer_id, 0), COALESCE(c.xid, ''), COALESCE(b.link_state, ''),
	COALESCE(b.account_type, ''), COALESCE(b.bank_code, ''), b.balance, b.linked_at`

const linkedAccountFrom = ` FROM bank_accounts b LEFT JOIN hub_customers c ON c.company_id = b.company_id AND c.id = b.hub_customer_id`

func scanLinkedAccount(s scanner) (*recon.LinkedAccount, error) {
	var a recon.LinkedAccount
	var created, linked anyTime
	if err := s.Scan(&a.ID, &a.CompanyID, &a.BankName, &a.AccountNumber, &a.HolderName, &created, &a.XID, &a.CustomerID,
		&a.CustomerXID, &a.LinkState, &a.AccountType, &a.BankCode, &a.Balance, &linked); err != nil {
		return nil, err
	}
	a.CreatedAt, a.LinkedAt = created.t, linked.t
	return &a, nil
}

// LinkedAccount implements recon.LinkPageStore.
func (db *DB) LinkedAccount(ctx context.Context, tenant recon.TenantID, id int64) (*recon.LinkedAccount, error) {
	companyID := tenant.ID()
	a, err := scanLinkedAccount(db.db.QueryRowContext(ctx, `SELECT `+linkedAccountColumns+linkedAccountFrom+
		` WHERE b.company_id = $1 AND b.id = $2`, companyID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "bank account %d not found", id)
	}
	if err != nil {
		return nil, internal(err, "read bank account")
	}
	return a, nil
}
