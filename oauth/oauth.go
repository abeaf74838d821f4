// Package oauth is Recon's built-in OAuth2 authorization server: the
// authorization code grant with PKCE behind a server-rendered login and
// consent page, refresh tokens with rotation, client credentials, token
// revocation (RFC 7009), introspection (RFC 7662) and server metadata
// (RFC 8414). It also turns bearer tokens into a recon.Caller for the API
// packages (Server.Authenticate) and issues tokens for operators
// (Server.IssueToken).
//
// Protocol handling is github.com/ory/fosite; this package supplies fosite's
// storage on top of recon.ClientStore, recon.UserStore and recon.TokenStore,
// a token strategy that reads the injected clock, and the HTTP handlers.
// Tokens are fosite HMAC tokens, stored only by their signature.
package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"

	"recon"
)

// Default lifetimes.
const (
	DefaultAccessTTL  = time.Hour
	DefaultRefreshTTL = 30 * 24 * time.Hour
	DefaultCodeTTL    = 10 * time.Minute
	// MaxIssuedTokenTTL is the longest lifetime IssueToken accepts.
	MaxIssuedTokenTTL = 24 * time.Hour
)

// Paths of the endpoints, relative to Config.Issuer.
const (
	pathAuthorize  = "/oauth/authorize"
	pathToken      = "/oauth/token"
	pathRevoke     = "/oauth/revoke"
	pathIntrospect = "/oauth/introspect"
	pathMetadata   = "/.well-known/oauth-authorization-server"
)

// maxBodyBytes limits every request body (docs/design.md, D1).
const maxBodyBytes = 1 << 20

// Config configures a Server.
type Config struct {
	// Issuer is the external base URL of the server, e.g. http://127.0.0.1:8080.
	Issuer string
	// Secret is the server key (at least 32 bytes) from which the HMAC key of
	// token signatures is derived. Changing it invalidates every token.
	Secret []byte
	// AccessTTL is the lifetime of access tokens (default 1h).
	AccessTTL time.Duration
	// RefreshTTL is the lifetime of refresh tokens (default 30 days).
	RefreshTTL time.Duration
	// CodeTTL is the lifetime of authorization codes (default 10m).
	CodeTTL time.Duration
	// Clock decides whether codes and tokens have expired (default recon.SystemClock{}).
	Clock recon.Clock
	// Logger receives internal errors and every login attempt (default slog.Default()).
	Logger *slog.Logger
	// PairThrottle, AccountThrottle and AddressThrottle slow down failed
	// logins per account and client address together, per account and per
	// client address (default DefaultPairThrottle, DefaultAccountThrottle and
	// DefaultAddressThrottle). AccountThrottle should never lock
	// (LockAfter 0): see DefaultAccountThrottle.
	PairThrottle, AccountThrottle, AddressThrottle ThrottlePolicy
	// Metrics, when set, counts login lockouts.
	Metrics *Metrics
}

// Store is the storage the authorization server needs.
type Store interface {
	// recon.TenantStore's:
	TenantOf(ctx context.Context, companyID int64, live bool) (*recon.Tenant, error)
	// recon.UserStore's:
	User(ctx context.Context, id int64) (*recon.User, error)
	UserByEmail(ctx context.Context, companyID int64, email string) (*recon.User, error)
	// recon.TeamStore's:
	UsersByEmail(ctx context.Context, email string) ([]*recon.User, error)
	// recon.ClientStore's:
	Client(ctx context.Context, id string) (*recon.Client, error)
	// recon.TokenStore's:
	CreateTokenSession(ctx context.Context, s *recon.TokenSession) error
	TokenSession(ctx context.Context, kind recon.TokenKind, signature string) (*recon.TokenSession, error)
	DeleteTokenSession(ctx context.Context, kind recon.TokenKind, signature string) error
	DeactivateActiveTokenSession(ctx context.Context, kind recon.TokenKind, signature string) (bool, error)
	DeactivateTokenFamily(ctx context.Context, kind recon.TokenKind, requestID string) error
	AuthEpoch(ctx context.Context) (int64, error)
	AuthEpochAndVersion(ctx context.Context, tenant recon.TenantID) (epoch, version int64, err error)
}

// Server is the authorization server. It is safe for concurrent use.
type Server struct {
	cfg      Config
	issuer   string
	store    Store
	storage  *storage
	strategy *strategy
	provider fosite.OAuth2Provider
	csrf     *http.CrossOriginProtection
	pages    *pages
	throttle *throttle
	callers  callerCache
}

// New returns a Server on store.
func New(cfg Config, store Store) (*Server, error) {
	if store == nil {
		return nil, errors.New("oauth: nil store")
	}
	issuer := strings.TrimRight(cfg.Issuer, "/")
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("oauth: issuer %q must be an absolute http(s) URL without query or fragment", cfg.Issuer)
	}
	if len(cfg.Secret) < 32 {
		return nil, fmt.Errorf("oauth: the secret must be at least 32 bytes, got %d", len(cfg.Secret))
	}
	if cfg.AccessTTL == 0 {
		cfg.AccessTTL = DefaultAccessTTL
	}
	if cfg.RefreshTTL == 0 {
		cfg.RefreshTTL = DefaultRefreshTTL
	}
	if cfg.CodeTTL == 0 {
		cfg.CodeTTL = DefaultCodeTTL
	}
	if cfg.AccessTTL < 0 || cfg.RefreshTTL < 0 || cfg.CodeTTL < 0 {
		return nil, errors.New("oauth: token lifetimes must be positive")
	}
	if cfg.Clock == nil {
		cfg.Clock = recon.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PairThrottle == (ThrottlePolicy{}) {
		cfg.PairThrottle = DefaultPairThrottle
	}
	if cfg.AccountThrottle == (ThrottlePolicy{}) {
		cfg.AccountThrottle = DefaultAccountThrottle
	}
	if cfg.AddressThrottle == (ThrottlePolicy{}) {
		cfg.AddressThrottle = DefaultAddressThrottle
	}
	pg, err := newPages()
	if err != nil {
		return nil, err
	}

	fc := &fosite.Config{
		AccessTokenLifespan:   cfg.AccessTTL,
		RefreshTokenLifespan:  cfg.RefreshTTL,
		AuthorizeCodeLifespan: cfg.CodeTTL,
		GlobalSecret:          deriveKey(cfg.Secret),
		// Every field fosite would otherwise fill in lazily is set here, so
		// that the config is never written after New (data races).
		ScopeStrategy:            fosite.ExactScopeStrategy,
		AudienceMatchingStrategy: fosite.DefaultAudienceMatchingStrategy,
		ClientSecretsHasher:      secretHasher{},
		// PKCE with S256 for every client, public or confidential.
		EnforcePKCE:                    true,
		EnforcePKCEForPublicClients:    true,
		EnablePKCEPlainChallengeMethod: false,
		// An empty (non-nil) list: every authorization code exchange gets a
		// refresh token, whatever the scopes.
		RefreshTokenScopes: []string{},
		TokenURL:           issuer + pathToken,
		AccessTokenIssuer:  issuer,
	}
	st := &storage{store: store, codeTTL: cfg.CodeTTL}
	strat := newStrategy(fc, cfg.Clock, cfg.CodeTTL, cfg.AccessTTL, cfg.RefreshTTL)
	provider := compose.Compose(fc, st, strat,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2ClientCredentialsGrantFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2TokenRevocationFactory,
		// PKCE must come after the authorization code handler.
		compose.OAuth2PKCEFactory,
	)
	return &Server{
		cfg:      cfg,
		issuer:   issuer,
		store:    store,
		storage:  st,
		strategy: strat,
		provider: provider,
		csrf:     http.NewCrossOriginProtection(),
		pages:    pg,
		throttle: newThrottle(),
	}, nil
}

// deriveKey turns the server secret into the 32-byte HMAC key fosite uses
// (fosite would silently use only the first 32 bytes of a longer secret).
func deriveKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("recon oauth2 token signatures v1"))
	return m.Sum(nil)
}

// handlers maps each pattern of Routes to its handler.
func (s *Server) handlers() map[string]http.Handler {
	return map[string]http.Handler{
		"GET " + pathAuthorize:      http.HandlerFunc(s.handleAuthorizeGet),
		"POST " + pathAuthorize:     s.csrf.Handler(http.HandlerFunc(s.handleAuthorizePost)),
		"POST " + pathToken:         http.HandlerFunc(s.handleToken),
		"POST " + pathRevoke:        http.HandlerFunc(s.handleRevoke),
		"POST " + pathIntrospect:    http.HandlerFunc(s.handleIntrospect),
		"GET " + pathMetadata:       http.HandlerFunc(s.handleMetadata),
		"GET /oauth" + pathMetadata: http.HandlerFunc(s.handleMetadata),
	}
}

// Register adds the server's routes (see Routes) to mux. Every request
// body is limited to 1 MiB.
func (s *Server) Register(mux interface{ Handle(string, http.Handler) }) {
	h := s.handlers()
	for _, pattern := range Routes() {
		mux.Handle(pattern, limitBody(h[pattern]))
	}
}

// Routes returns the "METHOD /path" patterns Register adds.
func Routes() []string {
	return []string{
		"GET " + pathAuthorize,
		"POST " + pathAuthorize,
		"POST " + pathToken,
		"POST " + pathRevoke,
		"POST " + pathIntrospect,
		"GET " + pathMetadata,
		"GET /oauth" + pathMetadata,
	}
}

func limitBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		h.ServeHTTP(w, r)
	})
}

// metadata is the RFC 8414 document.
type metadata struct {
	Issuer                                 string   `json:"issuer"`
	AuthorizationEndpoint                  string   `json:"authorization_endpoint"`
	TokenEndpoint                          string   `json:"token_endpoint"`
	RevocationEndpoint                     string   `json:"revocation_endpoint"`
	IntrospectionEndpoint                  string   `json:"introspection_endpoint"`
	ScopesSupported                        []string `json:"scopes_supported"`
	ResponseTypesSupported                 []string `json:"response_types_supported"`
	ResponseModesSupported                 []string `json:"response_modes_supported"`
	GrantTypesSupported                    []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported          []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported      []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported []string `json:"revocation_endpoint_auth_methods_supported"`
	IntrospectionEndpointAuthMethods       []string `json:"introspection_endpoint_auth_methods_supported"`
}

func (s *Server) metadata() metadata {
	tokenAuthMethods := []string{"client_secret_basic", "client_secret_post", "none"}
	return metadata{
		Issuer:                                 s.issuer,
		AuthorizationEndpoint:                  s.issuer + pathAuthorize,
		TokenEndpoint:                          s.issuer + pathToken,
		RevocationEndpoint:                     s.issuer + pathRevoke,
		IntrospectionEndpoint:                  s.issuer + pathIntrospect,
		ScopesSupported:                        recon.Scopes,
		ResponseTypesSupported:                 []string{"code"},
		ResponseModesSupported:                 []string{"query"},
		GrantTypesSupported:                    []string{"authorization_code", "refresh_token", "client_credentials"},
		CodeChallengeMethodsSupported:          []string{"S256"},
		TokenEndpointAuthMethodsSupported:      tokenAuthMethods,
		RevocationEndpointAuthMethodsSupported: tokenAuthMethods,
		IntrospectionEndpointAuthMethods:       []string{"client_secret_basic"},
	}
}

func (s *Server) handleMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	writeJSON(w, http.StatusOK, s.metadata())
}

// logError logs an internal error of a request.
func (s *Server) logError(ctx context.Context, msg string, err error) {
	s.cfg.Logger.ErrorContext(ctx, msg, "err", err)
}
