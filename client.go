package recon

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"
)

// OAuth2 scopes (docs/design.md, D9).
const (
	ScopeCompany          = "company"
	ScopeTransactionRead  = "transaction:read"
	ScopeTransactionWrite = "transaction:write"
	ScopeBankAccountRead  = "bank-account:read"
	ScopeWebhookRead      = "webhook:read"
	ScopeWebhookWrite     = "webhook:write"
	ScopeProfile          = "profile"
	ScopeDeliveryRead     = "delivery:read"
	ScopeDeliveryWrite    = "delivery:write"
	ScopeOfflineAccess    = "offline_access"
	// ScopeExceptionWrite resolves exceptions of the queue by hand (reading
	// the queue is transaction:read).
	ScopeExceptionWrite = "exception:write"
	// API v2 (docs/api-v2.md): orders with their virtual accounts, and refunds.
	ScopeOrderRead   = "order:read"
	ScopeOrderWrite  = "order:write"
	ScopeRefundRead  = "refund:read"
	ScopeRefundWrite = "refund:write"
)

// Scopes lists every scope a client may be allowed.
var Scopes = []string{
	ScopeCompany, ScopeTransactionRead, ScopeTransactionWrite, ScopeBankAccountRead,
	ScopeWebhookRead, ScopeWebhookWrite, ScopeProfile, ScopeOfflineAccess,
	ScopeDeliveryRead, ScopeDeliveryWrite, ScopeHub, ScopeExceptionWrite,
	ScopeOrderRead, ScopeOrderWrite, ScopeRefundRead, ScopeRefundWrite,
}

// Client is an OAuth2 client registered for one company.
type Client struct {
	ID string
	// Company is the company's own (live) id; Test says which of its
	// tenants the client's tokens reach.
	Company int64
	Name    string
	// SecretHash is the hex SHA-256 of the client secret. Secrets are 256-bit
	// random values made by the server, so a fast hash is enough; "" marks a
	// public client (PKCE only, no secret).
	SecretHash   string
	Scopes       []string
	RedirectURIs []string
	// Test marks a test-mode client (docs/design.md, D10): its id and secret
	// start with TestClientPrefix, and its tokens reach only the company's
	// test tenant. The client itself belongs to the company, whose users
	// sign in through it.
	Test      bool
	CreatedAt time.Time
}

// Validate checks a new client.
func (c *Client) Validate() error {
	if strings.TrimSpace(c.Name) == "" || len(c.Name) > 255 {
		return FieldError("name", "name is required and must be at most 255 characters")
	}
	if len(c.Scopes) == 0 {
		return FieldError("scopes", "at least one scope is required")
	}
	for _, s := range c.Scopes {
		if !slices.Contains(Scopes, s) {
			return FieldError("scopes", "unknown scope %q (known: %s)", s, strings.Join(Scopes, " "))
		}
	}
	for _, r := range c.RedirectURIs {
		u, err := url.Parse(r)
		if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || (u.Scheme != "https" && u.Scheme != "http") {
			return FieldError("redirect_uri", "redirect_uri %q must be an absolute http(s) URL without a fragment", r)
		}
	}
	return nil
}

// ClientStore stores OAuth2 clients.
type ClientStore interface {
	// CreateClient stores c and sets c.CreatedAt. c.ID is chosen by the caller.
	CreateClient(ctx context.Context, c *Client) error
	// Client returns the client with the given id, or ENOTFOUND.
	Client(ctx context.Context, id string) (*Client, error)
	// Clients lists the company's clients of one mode (test or live),
	// oldest first, from offset, at most limit, with the count of them all.
	Clients(ctx context.Context, companyID int64, test bool, offset, limit int) ([]*Client, int64, error)
	// DeleteClient deletes the company's client of the mode and, with it,
	// every token issued to it (which stop working at once: the deletion
	// moves the authentication epoch). Another company's client, or the
	// other mode's, is ENOTFOUND.
	DeleteClient(ctx context.Context, companyID int64, test bool, id string) error
}
