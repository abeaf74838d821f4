package recon

import (
	"context"
	"time"
)

// TokenKind is the kind of an OAuth2 grant artefact.
type TokenKind string

// Token kinds.
const (
	TokenAuthorizeCode TokenKind = "authorize_code"
	TokenAccess        TokenKind = "access_token"
	TokenRefresh       TokenKind = "refresh_token"
	TokenPKCE          TokenKind = "pkce"
)

// TokenSession is the stored side of an OAuth2 code or token. The token
// itself is never stored: Signature is its keyed hash (HMAC-SHA512/256 over a
// random 256-bit value), from which the token cannot be recovered.
type TokenSession struct {
	Kind      TokenKind
	Signature string
	// RequestID groups every artefact of one grant (code, access and refresh
	// tokens), so that revoking one revokes its family.
	RequestID string
	ClientID  string
	Company   int64
	// UserID is 0 for a token with no user (client credentials).
	UserID        int64
	Scopes        []string
	GrantedScopes []string
	// Data is the serialised request of the authorization server, opaque to storage.
	Data        []byte
	RequestedAt time.Time
	ExpiresAt   time.Time
	// Active is false once a code was used or a token revoked or rotated.
	Active bool
}

// TokenStore stores OAuth2 token sessions.
type TokenStore interface {
	// CreateTokenSession stores s.
	CreateTokenSession(ctx context.Context, s *TokenSession) error
	// TokenSession returns the session of the given kind and signature, active
	// or not, or ENOTFOUND.
	TokenSession(ctx context.Context, kind TokenKind, signature string) (*TokenSession, error)
	// DeleteTokenSession removes one session; removing a missing one is not an error.
	DeleteTokenSession(ctx context.Context, kind TokenKind, signature string) error
	// DeactivateActiveTokenSession marks one session inactive if it is still
	// active, and reports whether it was: of two concurrent callers, exactly
	// one gets true (a refresh token is used once).
	DeactivateActiveTokenSession(ctx context.Context, kind TokenKind, signature string) (bool, error)
	// DeactivateTokenFamily marks every session of the kind with the request id inactive.
	DeactivateTokenFamily(ctx context.Context, kind TokenKind, requestID string) error
	// DeleteExpiredTokenSessions removes sessions that expired before t and
	// reports how many it removed.
	DeleteExpiredTokenSessions(ctx context.Context, t time.Time) (int64, error)
	// AuthEpoch returns a counter that every change able to refuse an
	// access token accepted before moves, committed with the change: a
	// token session updated or deleted, an OAuth2 client, user or company
	// updated or deleted, by any writer. While it reads the same, a caller
	// authenticated before is still the same caller (except for its
	// token's expiry). A change of a company's payment-code formats moves
	// it too, so that it also covers what a push's extraction reads
	// (Extractors).
	AuthEpoch(ctx context.Context) (int64, error)
	// AuthEpochAndVersion is AuthEpoch and, in the same read of the same
	// database, the tenant's change version (what
	// TransactionStore.TransactionsIfChanged calls the version): an
	// authenticated request learns both for one round trip.
	AuthEpochAndVersion(ctx context.Context, tenant TenantID) (epoch, version int64, err error)
}
