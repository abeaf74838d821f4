package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/ory/fosite"

	"recon"
)

// client adapts a recon.Client to fosite.Client.
type client struct{ c *recon.Client }

var _ fosite.Client = client{}

func (c client) GetID() string             { return c.c.ID }
func (c client) GetHashedSecret() []byte   { return []byte(c.c.SecretHash) }
func (c client) GetRedirectURIs() []string { return c.c.RedirectURIs }
func (c client) GetScopes() fosite.Arguments {
	return fosite.Arguments(c.c.Scopes)
}
func (c client) IsPublic() bool                     { return c.c.SecretHash == "" }
func (c client) GetAudience() fosite.Arguments      { return nil }
func (c client) GetResponseTypes() fosite.Arguments { return fosite.Arguments{"code"} }

// GetGrantTypes: public clients (no secret) cannot use client credentials.
func (c client) GetGrantTypes() fosite.Arguments {
	if c.IsPublic() {
		return fosite.Arguments{"authorization_code", "refresh_token"}
	}
	return fosite.Arguments{"authorization_code", "refresh_token", "client_credentials"}
}

// session is the fosite session of every code and token: who the grant is
// for, in domain terms, so that Authenticate needs no string parsing.
type session struct {
	ExpiresAt map[fosite.TokenType]time.Time `json:"expires_at"`
	// Subject is "user:<id>" for a user's grant, "client:<client id>" for client credentials.
	Subject string `json:"subject"`
	Company int64  `json:"company_id"`
	// UserID is 0 for client-credentials grants.
	UserID   int64  `json:"user_id"`
	ClientID string `json:"client_id"`
	// Test is true for a grant of a test-mode client: its tokens reach the
	// company's test tenant (docs/design.md, D10).
	Test bool `json:"test,omitempty"`
}

var _ fosite.Session = (*session)(nil)

func userSession(c *recon.Client, userID int64) *session {
	return &session{Subject: fmt.Sprintf("user:%d", userID), Company: c.Company, UserID: userID, ClientID: c.ID, Test: c.Test}
}

func clientSession(c *recon.Client) *session {
	return &session{Subject: "client:" + c.ID, Company: c.Company, ClientID: c.ID, Test: c.Test}
}

func (s *session) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.ExpiresAt == nil {
		s.ExpiresAt = make(map[fosite.TokenType]time.Time)
	}
	s.ExpiresAt[key] = exp
}

func (s *session) GetExpiresAt(key fosite.TokenType) time.Time {
	if s == nil {
		return time.Time{}
	}
	return s.ExpiresAt[key]
}

func (s *session) GetUsername() string { return "" }

func (s *session) GetSubject() string {
	if s == nil {
		return ""
	}
	return s.Subject
}

func (s *session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	c.ExpiresAt = maps.Clone(s.ExpiresAt)
	return &c
}

// storedRequest is what TokenSession.Data holds: everything needed to
// rebuild the fosite.Requester except the client, which is loaded fresh.
type storedRequest struct {
	ID                string     `json:"id"`
	RequestedAt       time.Time  `json:"requested_at"`
	ClientID          string     `json:"client_id"`
	RequestedScope    []string   `json:"requested_scope"`
	GrantedScope      []string   `json:"granted_scope"`
	RequestedAudience []string   `json:"requested_audience,omitempty"`
	GrantedAudience   []string   `json:"granted_audience,omitempty"`
	Form              url.Values `json:"form"`
	Session           *session   `json:"session"`
}

// storage implements the fosite storage interfaces on the Store.
//
// recon.TokenStore has no transactions, so fosite runs its multi-step
// writes (code exchange, refresh rotation) without one.
type storage struct {
	store   Store
	codeTTL time.Duration
	clients clientCache
}

// clientCache keeps the clients GetClient read for as long as the store's
// authentication epoch (recon.TokenStore.AuthEpoch) stays where it was when
// they were read, as callerCache keeps callers: revoking a client (deleting
// it, recon.ClientStore.DeleteClient) moves the epoch in the transaction
// that deletes it, so the next request on every node reads the client again
// and finds it gone: the token endpoint answers invalid_client at once, not a
// token insert that fails on the deleted client (docs/api.md, OAuth2).
type clientCache struct {
	mu      sync.Mutex
	epoch   int64
	entries map[string]*recon.Client
}

const clientCacheLimit = 10_000

// get returns the client of id when it was stored under epoch, or under
// any epoch when anyEpoch is set.
func (c *clientCache) get(id string, epoch int64, anyEpoch bool) (*recon.Client, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch && !anyEpoch {
		return nil, false
	}
	rc, ok := c.entries[id]
	return rc, ok
}

// put keeps rc, read after epoch was read. A put under an older epoch than
// the cache's is dropped; a newer one empties the cache first.
func (c *clientCache) put(id string, epoch int64, rc *recon.Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch < c.epoch {
		return
	}
	if epoch > c.epoch || c.entries == nil || len(c.entries) >= clientCacheLimit {
		c.epoch, c.entries = epoch, map[string]*recon.Client{}
	}
	c.entries[id] = rc
}

// epochKey carries an authentication epoch already read for the request
// (Authenticate reads it before its lookups), so that GetClient does not
// read it again.
type epochKey struct{}

func withEpoch(ctx context.Context, epoch int64) context.Context {
	return context.WithValue(ctx, epochKey{}, epoch)
}

// GetClient implements fosite.ClientManager: the client, from the cache when
// the authentication epoch has not moved since it was read. When the epoch
// cannot be read (the database is failing) a cached client is used all the
// same, so that the authorization endpoint can still send server_error to
// the client's redirect URI: nothing is issued without the database, and a
// token insert for a client deleted meanwhile is refused (storage.create).
func (s *storage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	epoch, ok := ctx.Value(epochKey{}).(int64)
	var epochErr error
	if !ok {
		epoch, epochErr = s.store.AuthEpoch(ctx)
	}
	if c, ok := s.clients.get(id, epoch, epochErr != nil); ok {
		return client{c}, nil
	}
	if epochErr != nil {
		return nil, epochErr
	}
	c, err := s.store.Client(ctx, id)
	if err != nil {
		return nil, storeError(err)
	}
	s.clients.put(id, epoch, c)
	return client{c}, nil
}

// errJWTAssertion: client authentication by JWT assertion is not offered;
// fosite does not reach these methods for our clients, which are not
// OpenID Connect clients, but refuse anyway.
var errJWTAssertion = errors.New("oauth: JWT client assertions are not supported")

// ClientAssertionJWTValid implements fosite.ClientManager.
func (s *storage) ClientAssertionJWTValid(context.Context, string) error { return errJWTAssertion }

// SetClientAssertionJWT implements fosite.ClientManager.
func (s *storage) SetClientAssertionJWT(context.Context, string, time.Time) error {
	return errJWTAssertion
}

// storeError maps a store error to what fosite expects: ErrNotFound for a
// missing row, the error itself (a server error for fosite) otherwise.
func storeError(err error) error {
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return fmt.Errorf("%w: %w", fosite.ErrNotFound, err)
	}
	return err
}

func (s *storage) create(ctx context.Context, kind recon.TokenKind, signature string, req fosite.Requester) error {
	sess, ok := req.GetSession().(*session)
	if !ok || sess == nil {
		return fmt.Errorf("oauth: unexpected session type %T", req.GetSession())
	}
	if kind == recon.TokenAuthorizeCode {
		// fosite dates the code's expiry by time.Now; the handler dated
		// the request by the server's clock, which decides instead.
		sess.SetExpiresAt(fosite.AuthorizeCode, req.GetRequestedAt().Add(s.codeTTL))
	}
	sr := storedRequest{
		ID:                req.GetID(),
		RequestedAt:       req.GetRequestedAt().UTC(),
		ClientID:          req.GetClient().GetID(),
		RequestedScope:    slices.Clone([]string(req.GetRequestedScopes())),
		GrantedScope:      slices.Clone([]string(req.GetGrantedScopes())),
		RequestedAudience: req.GetRequestedAudience(),
		GrantedAudience:   req.GetGrantedAudience(),
		Form:              req.GetRequestForm(),
		Session:           sess,
	}
	data, err := json.Marshal(sr)
	if err != nil {
		return fmt.Errorf("oauth: encode request: %w", err)
	}
	exp := sess.GetExpiresAt(expiryKey(kind))
	if exp.IsZero() {
		// fosite sets the expiry of everything it stores.
		return fmt.Errorf("oauth: %s of request %s has no expiry", kind, sr.ID)
	}
	ts := &recon.TokenSession{
		Kind:          kind,
		Signature:     signature,
		RequestID:     sr.ID,
		ClientID:      sr.ClientID,
		Company:       sess.Company,
		UserID:        sess.UserID,
		Scopes:        nonNil(sr.RequestedScope),
		GrantedScopes: nonNil(sr.GrantedScope),
		Data:          data,
		RequestedAt:   sr.RequestedAt,
		ExpiresAt:     exp.UTC(),
		Active:        true,
	}
	err = s.store.CreateTokenSession(ctx, ts)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		// The client or the user was deleted since the request read them
		// (a client revoked from the dashboard mid-request): an OAuth2
		// refusal, not a server error; for the client, the very answer an
		// unknown client gets, which tells nothing about its secret.
		if _, cerr := s.store.Client(ctx, ts.ClientID); recon.ErrorCode(cerr) == recon.ENOTFOUND {
			return fosite.ErrInvalidClient.WithWrap(err)
		}
		return fosite.ErrInvalidGrant.WithHint("The user of this grant no longer exists.").WithWrap(err)
	}
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// expiryKey is the session expiry that applies to a stored kind: a PKCE
// session lives as long as its authorization code.
func expiryKey(kind recon.TokenKind) fosite.TokenType {
	switch kind {
	case recon.TokenAccess:
		return fosite.AccessToken
	case recon.TokenRefresh:
		return fosite.RefreshToken
	default:
		return fosite.AuthorizeCode
	}
}

// get loads a session and rebuilds its request. An inactive session is
// returned with inactiveErr.
//
// Like Ory Hydra's store, get decodes the stored session into the session
// fosite passes in (into) and returns a request that holds that very
// session: fosite checks the expiry of an authorization code on the session
// it passed, before it adopts the stored request. Decoding merges expiry
// times into the existing map, which keeps those fosite set earlier in the
// same request.
func (s *storage) get(ctx context.Context, kind recon.TokenKind, signature string, into fosite.Session, inactiveErr error) (fosite.Requester, error) {
	ts, err := s.store.TokenSession(ctx, kind, signature)
	if err != nil {
		return nil, storeError(err)
	}
	req, err := s.rebuild(ctx, ts, into)
	if err != nil {
		return nil, err
	}
	if !ts.Active {
		return req, inactiveErr
	}
	return req, nil
}

func (s *storage) rebuild(ctx context.Context, ts *recon.TokenSession, into fosite.Session) (*fosite.Request, error) {
	sess, ok := into.(*session)
	if !ok || sess == nil {
		sess = new(session)
	}
	sr := storedRequest{Session: sess}
	if err := json.Unmarshal(ts.Data, &sr); err != nil {
		return nil, fmt.Errorf("oauth: decode stored request %s: %w", ts.RequestID, err)
	}
	if sr.Session != sess {
		return nil, fmt.Errorf("oauth: stored request %s has no session", ts.RequestID)
	}
	c, err := s.GetClient(ctx, sr.ClientID)
	if err != nil {
		return nil, err
	}
	if sr.Form == nil {
		sr.Form = url.Values{}
	}
	return &fosite.Request{
		ID:                sr.ID,
		RequestedAt:       sr.RequestedAt,
		Client:            c,
		RequestedScope:    nonNil(sr.RequestedScope),
		GrantedScope:      nonNil(sr.GrantedScope),
		RequestedAudience: nonNil(sr.RequestedAudience),
		GrantedAudience:   nonNil(sr.GrantedAudience),
		Form:              sr.Form,
		Session:           sess,
	}, nil
}

// CreateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
func (s *storage) CreateAuthorizeCodeSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, recon.TokenAuthorizeCode, signature, req)
}

// GetAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
func (s *storage) GetAuthorizeCodeSession(ctx context.Context, signature string, into fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, recon.TokenAuthorizeCode, signature, into, fosite.ErrInvalidatedAuthorizeCode)
}

// InvalidateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage: a
// code is used once, also when two exchanges of it race (the loser is
// refused with invalid_grant, see writeAccessError).
func (s *storage) InvalidateAuthorizeCodeSession(ctx context.Context, signature string) error {
	spent, err := s.store.DeactivateActiveTokenSession(ctx, recon.TokenAuthorizeCode, signature)
	if err != nil {
		return err
	}
	if !spent {
		return fosite.ErrInvalidatedAuthorizeCode
	}
	return nil
}

// CreatePKCERequestSession implements pkce.PKCERequestStorage.
func (s *storage) CreatePKCERequestSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, recon.TokenPKCE, signature, req)
}

// GetPKCERequestSession implements pkce.PKCERequestStorage. fosite reads
// only the form and client of the result, so the session it passes (the
// grant's, by then carrying the new tokens' expiry) is left alone.
func (s *storage) GetPKCERequestSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, recon.TokenPKCE, signature, nil, fosite.ErrNotFound)
}

// DeletePKCERequestSession implements pkce.PKCERequestStorage.
func (s *storage) DeletePKCERequestSession(ctx context.Context, signature string) error {
	return s.store.DeleteTokenSession(ctx, recon.TokenPKCE, signature)
}

// CreateAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *storage) CreateAccessTokenSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, recon.TokenAccess, signature, req)
}

// GetAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *storage) GetAccessTokenSession(ctx context.Context, signature string, into fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, recon.TokenAccess, signature, into, fosite.ErrInactiveToken)
}

// DeleteAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *storage) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	return s.store.DeleteTokenSession(ctx, recon.TokenAccess, signature)
}

// CreateRefreshTokenSession implements oauth2.RefreshTokenStorage. The
// access token signature is not needed: tokens of one grant share the request id.
func (s *storage) CreateRefreshTokenSession(ctx context.Context, signature, _ string, req fosite.Requester) error {
	return s.create(ctx, recon.TokenRefresh, signature, req)
}

// GetRefreshTokenSession implements oauth2.RefreshTokenStorage. A used or
// revoked refresh token comes back with fosite.ErrInactiveToken and its
// request, which fosite needs to revoke the grant on reuse.
func (s *storage) GetRefreshTokenSession(ctx context.Context, signature string, into fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, recon.TokenRefresh, signature, into, fosite.ErrInactiveToken)
}

// DeleteRefreshTokenSession implements oauth2.RefreshTokenStorage.
func (s *storage) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	return s.store.DeleteTokenSession(ctx, recon.TokenRefresh, signature)
}

// RotateRefreshToken implements oauth2.RefreshTokenStorage: the refresh
// token used is spent, once (of two concurrent refreshes with one token, the
// second fails), and the grant's earlier refresh and access tokens are
// inactive.
func (s *storage) RotateRefreshToken(ctx context.Context, requestID, signature string) error {
	spent, err := s.store.DeactivateActiveTokenSession(ctx, recon.TokenRefresh, signature)
	if err != nil {
		return err
	}
	if !spent {
		return fosite.ErrInactiveToken
	}
	if err := s.RevokeRefreshToken(ctx, requestID); err != nil {
		return err
	}
	return s.RevokeAccessToken(ctx, requestID)
}

// RevokeRefreshToken implements oauth2.TokenRevocationStorage.
func (s *storage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.store.DeactivateTokenFamily(ctx, recon.TokenRefresh, requestID)
}

// RevokeAccessToken implements oauth2.TokenRevocationStorage.
func (s *storage) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.store.DeactivateTokenFamily(ctx, recon.TokenAccess, requestID)
}
