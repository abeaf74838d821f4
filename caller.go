package recon

import (
	"context"
	"slices"
)

// Caller is who is behind an authenticated API request: a company, the OAuth2
// client acting for it, the scopes the token grants and, for tokens issued to
// a person, that user (nil for client-credentials tokens).
type Caller struct {
	CompanyID int64
	ClientID  string
	Scopes    []string
	User      *User
	Livemode  bool // false for a test-mode credential (its CompanyID is the company's test tenant)
}

// HasScope reports whether the token grants scope.
func (c *Caller) HasScope(scope string) bool { return slices.Contains(c.Scopes, scope) }

// Authenticator turns a bearer token into a Caller. An invalid, expired or
// revoked token is EUNAUTHORIZED.
type Authenticator interface {
	Authenticate(ctx context.Context, bearerToken string) (*Caller, error)
}
