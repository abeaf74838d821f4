package client

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Token is an OAuth2 token response (RFC 6749 §5.1).
type Token struct {
	AccessToken  string
	TokenType    string
	RefreshToken string // empty for client credentials
	Scope        string // the scopes granted, space-separated
	// Expiry is when the access token stops working, by the client's clock;
	// zero when the server did not say.
	Expiry time.Time
}

// TokenSource hands out a valid access token for each /api/v1 request.
// Implementations must be safe for concurrent use.
type TokenSource interface {
	Token(ctx context.Context) (*Token, error)
}

// StaticToken is a token source of one access token (from `recon token
// issue`, or one obtained elsewhere); it is never refreshed.
func StaticToken(accessToken string) TokenSource {
	return staticToken{&Token{AccessToken: accessToken, TokenType: "Bearer"}}
}

type staticToken struct{ t *Token }

func (s staticToken) Token(context.Context) (*Token, error) { return s.t, nil }

type tokenJSON struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	ExpiresIn    int64  `json:"expires_in"`
}

// tokenRequest posts a grant to /oauth/token with the client's Basic
// credentials. Only the client credentials grant is retried on 5xx: it
// consumes nothing, whereas a refresh token or a code is used up by the
// first attempt that reached the server.
func (c *Client) tokenRequest(ctx context.Context, clientID, clientSecret string, form url.Values) (*Token, error) {
	req := &request{method: "POST", path: "/oauth/token", form: form, idempotent: form.Get("grant_type") == "client_credentials"}
	if clientSecret != "" {
		req.auth, req.user, req.pass = authBasic, clientID, clientSecret
	} else {
		form.Set("client_id", clientID) // a public client
	}
	var out tokenJSON
	if _, err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	if out.AccessToken == "" {
		return nil, errors.New("recon: the token endpoint answered without an access_token")
	}
	t := &Token{AccessToken: out.AccessToken, TokenType: out.TokenType, RefreshToken: out.RefreshToken, Scope: out.Scope}
	if out.ExpiresIn > 0 {
		t.Expiry = c.now().Add(time.Duration(out.ExpiresIn) * time.Second)
	}
	return t, nil
}

// ClientCredentialsToken asks for a token of the client credentials grant:
// a token with no user, acting for the client's company (a bank feed; it
// may push transactions and statements). No scope asks for all the client's.
func (c *Client) ClientCredentialsToken(ctx context.Context, clientID, clientSecret string, scopes ...string) (*Token, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	return c.tokenRequest(ctx, clientID, clientSecret, form)
}

// RefreshToken exchanges a refresh token for new tokens. The server rotates
// refresh tokens: the answer's RefreshToken replaces the one sent, which no
// longer works. clientSecret is empty for a public client.
func (c *Client) RefreshToken(ctx context.Context, clientID, clientSecret, refreshToken string) (*Token, error) {
	return c.tokenRequest(ctx, clientID, clientSecret, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}})
}

// ExchangeCode exchanges an authorization code (authorization code flow
// with PKCE S256) for tokens: verifier is the PKCE code verifier whose
// challenge went to /oauth/authorize, redirectURI the one sent there.
func (c *Client) ExchangeCode(ctx context.Context, clientID, clientSecret, code, verifier, redirectURI string) (*Token, error) {
	return c.tokenRequest(ctx, clientID, clientSecret, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"code_verifier": {verifier}, "redirect_uri": {redirectURI}})
}

// RevokeToken revokes an access or refresh token and every token of its
// grant (RFC 7009). Unknown tokens are not an error.
func (c *Client) RevokeToken(ctx context.Context, clientID, clientSecret, token string) error {
	_, err := c.do(ctx, &request{method: "POST", path: "/oauth/revoke", form: url.Values{"token": {token}},
		auth: authBasic, user: clientID, pass: clientSecret}, nil)
	return err
}

// expiryLeeway is how long before its expiry a token is replaced, so that
// a request never carries a token that expires on the way.
const expiryLeeway = 30 * time.Second

// fresh reports whether t can still be sent at now.
func fresh(t *Token, now time.Time) bool {
	return t != nil && (t.Expiry.IsZero() || now.Add(expiryLeeway).Before(t.Expiry))
}

// ClientCredentials returns a token source of the client credentials grant
// through c: it fetches a token when needed and again shortly before it
// expires. Concurrent callers share one fetch.
func (c *Client) ClientCredentials(clientID, clientSecret string, scopes ...string) TokenSource {
	return &clientCredentials{c: c, id: clientID, secret: clientSecret, scopes: scopes}
}

// WithClientCredentials authenticates /api/v1 requests with tokens of the
// client credentials grant (see Client.ClientCredentials).
func WithClientCredentials(clientID, clientSecret string, scopes ...string) Option {
	return func(c *Client) { c.tokens = c.ClientCredentials(clientID, clientSecret, scopes...) }
}

type clientCredentials struct {
	c          *Client
	id, secret string
	scopes     []string
	mu         sync.Mutex
	tok        *Token
}

func (s *clientCredentials) Token(ctx context.Context) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fresh(s.tok, s.c.now()) {
		return s.tok, nil
	}
	t, err := s.c.ClientCredentialsToken(ctx, s.id, s.secret, s.scopes...)
	if err != nil {
		return nil, err
	}
	s.tok = t
	return t, nil
}

// RefreshTokenSource returns a token source for a user's tokens: it uses
// tok's access token while it is fresh, then refreshes it through c. Each
// refresh rotates the refresh token (the old one stops working), so the
// source keeps the new one and calls onRotate (if not nil) with the new
// tokens, for the application to store; onRotate runs before any caller
// gets the new access token. One refresh runs at a time: concurrent callers
// wait for it and share its result, so a rotation is never raced.
func (c *Client) RefreshTokenSource(clientID, clientSecret string, tok *Token, onRotate func(*Token)) TokenSource {
	return &refreshSource{c: c, id: clientID, secret: clientSecret, tok: tok, onRotate: onRotate}
}

// WithRefreshToken authenticates /api/v1 requests with a user's tokens (see
// Client.RefreshTokenSource).
func WithRefreshToken(clientID, clientSecret string, tok *Token, onRotate func(*Token)) Option {
	return func(c *Client) { c.tokens = c.RefreshTokenSource(clientID, clientSecret, tok, onRotate) }
}

type refreshSource struct {
	c          *Client
	id, secret string
	onRotate   func(*Token)
	mu         sync.Mutex
	tok        *Token
}

func (s *refreshSource) Token(ctx context.Context) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok != nil && s.tok.AccessToken != "" && fresh(s.tok, s.c.now()) {
		return s.tok, nil
	}
	if s.tok == nil || s.tok.RefreshToken == "" {
		return nil, errors.New("recon: the access token expired and there is no refresh token")
	}
	t, err := s.c.RefreshToken(ctx, s.id, s.secret, s.tok.RefreshToken)
	if err != nil {
		return nil, err
	}
	if t.RefreshToken == "" {
		t.RefreshToken = s.tok.RefreshToken // not rotated: keep using it
	}
	s.tok = t
	if s.onRotate != nil {
		s.onRotate(t)
	}
	return t, nil
}
