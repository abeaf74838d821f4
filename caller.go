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

	// version is the tenant's change version read together with the
	// authentication, plus one: 0 when it was not read; epoch likewise
	// holds the authentication epoch.
	version, epoch int64
}

// SetTenantVersion records the tenant's change version (TokenStore's
// AuthEpochAndVersion) as read on the primary while authenticating this
// request, after every write committed before the request came.
func (c *Caller) SetTenantVersion(v int64) { c.version = v + 1 }

// TenantVersion returns what SetTenantVersion recorded, and false when the
// authentication did not read it.
func (c *Caller) TenantVersion() (int64, bool) { return c.version - 1, c.version != 0 }

// SetEpoch records the authentication epoch (TokenStore.AuthEpoch) as read
// on the primary while authenticating this request, after every write
// committed before the request came.
func (c *Caller) SetEpoch(e int64) { c.epoch = e + 1 }

// Epoch returns what SetEpoch recorded, and false when the authentication
// did not read it.
func (c *Caller) Epoch() (int64, bool) { return c.epoch - 1, c.epoch != 0 }

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
