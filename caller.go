package recon

import (
	"context"
	"slices"
)

// Caller is who is behind an authenticated API request: a company, the OAuth2
// client acting for it, the scopes the token grants and, for tokens issued to
// a person, that user (nil for client-credentials tokens).
type Caller struct {
	// Tenant is the caller's tenant (see TenantID): the company's live one
	// for a live credential, its test twin for a test one.
	Tenant   TenantID
	ClientID string
	Scopes   []string
	User     *User
}

// Livemode reports whether the caller holds a live credential (false for a
// test-mode one).
func (c *Caller) Livemode() bool { return c.Tenant.Live() }

// HasScope reports whether the token grants scope.
func (c *Caller) HasScope(scope string) bool { return slices.Contains(c.Scopes, scope) }

// Authenticator turns a bearer token into a Caller. An invalid, expired or
// revoked token is EUNAUTHORIZED.
type Authenticator interface {
	Authenticate(ctx context.Context, bearerToken string) (*Caller, error)
}
