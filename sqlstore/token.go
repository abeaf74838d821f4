package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"recon"
)

// CreateTokenSession stores s. Its times are stored in UTC to the
// microsecond. A session of the same kind and signature is ECONFLICT; an
// unknown client or user, or one of another company, is ENOTFOUND.
func (db *DB) CreateTokenSession(ctx context.Context, s *recon.TokenSession) error {
	scopes, err := joinList("scopes", s.Scopes)
	if err != nil {
		return err
	}
	granted, err := joinList("granted_scopes", s.GrantedScopes)
	if err != nil {
		return err
	}
	data := s.Data
	if data == nil {
		data = []byte{}
	}
	_, err = db.execWrite(ctx, `
		INSERT INTO oauth_tokens (kind, signature, request_id, client_id, company_id, user_id,
			scopes, granted_scopes, data, requested_at, expires_at, active)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		string(s.Kind), s.Signature, s.RequestID, s.ClientID, s.Company, idArg(s.UserID),
		scopes, granted, data, storedTime(s.RequestedAt), storedTime(s.ExpiresAt), s.Active)
	switch db.d.violation(err) {
	case uniqueViolation:
		return conflict(err, "the %s session already exists", s.Kind)
	case foreignKeyViolation:
		return notFound(err, "client %q or user %d not found in company %d", s.ClientID, s.UserID, s.Company)
	}
	if err != nil {
		return internal(err, "create token session")
	}
	return nil
}

// TokenSession returns the session of the kind and signature, active or not, or ENOTFOUND.
func (db *DB) TokenSession(ctx context.Context, kind recon.TokenKind, signature string) (*recon.TokenSession, error) {
	var (
		s               recon.TokenSession
		userID          sql.NullInt64
		scopes, granted string
	)
	err := db.db.QueryRowContext(ctx, `
		SELECT kind, signature, request_id, client_id, company_id, user_id, scopes, granted_scopes,
			data, requested_at, expires_at, active
		FROM oauth_tokens WHERE kind = $1 AND signature = $2`, string(kind), signature,
	).Scan(&s.Kind, &s.Signature, &s.RequestID, &s.ClientID, &s.Company, &userID, &scopes, &granted,
		&s.Data, &s.RequestedAt, &s.ExpiresAt, &s.Active)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "%s not found", kind)
	}
	if err != nil {
		return nil, internal(err, "read token session")
	}
	s.UserID = userID.Int64
	s.Scopes, s.GrantedScopes = splitList(scopes), splitList(granted)
	if len(s.Data) == 0 {
		s.Data = nil
	}
	s.RequestedAt, s.ExpiresAt = s.RequestedAt.UTC(), s.ExpiresAt.UTC()
	return &s, nil
}

// DeleteTokenSession removes one session; removing a missing one is not an error.
func (db *DB) DeleteTokenSession(ctx context.Context, kind recon.TokenKind, signature string) error {
	_, err := db.execWrite(ctx, `DELETE FROM oauth_tokens WHERE kind = $1 AND signature = $2`, string(kind), signature)
	if err != nil {
		return internal(err, "delete token session")
	}
	return nil
}

// DeactivateActiveTokenSession implements recon.TokenStore: one conditional
// UPDATE, so that concurrent callers cannot both see the session active.
func (db *DB) DeactivateActiveTokenSession(ctx context.Context, kind recon.TokenKind, signature string) (bool, error) {
	res, err := db.execWrite(ctx, `UPDATE oauth_tokens SET active = $1 WHERE kind = $2 AND signature = $3 AND active = $4`,
		false, string(kind), signature, true)
	if err != nil {
		return false, internal(err, "deactivate token session")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, internal(err, "deactivate token session")
	}
	return n == 1, nil
}

// DeactivateTokenFamily marks every session of the kind with the request id
// inactive. A family with no sessions is not an error.
func (db *DB) DeactivateTokenFamily(ctx context.Context, kind recon.TokenKind, requestID string) error {
	_, err := db.execWrite(ctx, `UPDATE oauth_tokens SET active = $1 WHERE kind = $2 AND request_id = $3`,
		false, string(kind), requestID)
	if err != nil {
		return internal(err, "deactivate token family")
	}
	return nil
}

// DeleteExpiredTokenSessions removes sessions that expired before t and
// reports how many it removed.
func (db *DB) DeleteExpiredTokenSessions(ctx context.Context, t time.Time) (int64, error) {
	res, err := db.execWrite(ctx, `DELETE FROM oauth_tokens WHERE expires_at < $1`, storedTime(t))
	if err != nil {
		return 0, internal(err, "delete expired token sessions")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, internal(err, "delete expired token sessions")
	}
	return n, nil
}

// AuthEpochAndVersion implements recon.TokenStore, on the primary like
// AuthEpoch: the version is tenantVersion, as TransactionsIfChanged reads
// it.
func (db *DB) AuthEpochAndVersion(ctx context.Context, tenant recon.TenantID) (epoch, version int64, err error) {
	return db.keys.read(ctx, tenant.ID(), true)
}

// AuthEpoch implements recon.TokenStore: triggers move the counter
// (migration 00012), so that no writer can forget it.
func (db *DB) AuthEpoch(ctx context.Context) (int64, error) {
	epoch, _, err := db.keys.read(ctx, 0, false)
	return epoch, err
}
