// Package linking is the service of the bank-linking hub's operations
// (docs/hub.md): making a link token, stepping a link session (what the
// hosted page posts, the bank's answers), saving the hub webhook, and the
// simulation of hub events; with the sandbox banks. The hub's API and
// hosted page (hub), the dashboard, `recon hub link-token create` and
// `recon trigger` call it. It speaks no HTTP (ARCHITECTURE.md, "The
// dependency rule": services).
package linking

import (
	"context"
	"errors"
	"strings"
	"time"

	"recon"
)

// Store is the storage the service needs.
type Store interface {
	// recon.LinkStore's:
	CreateLinkToken(ctx context.Context, t *recon.LinkToken, ttl time.Duration) error
	LinkToken(ctx context.Context, tenant recon.TenantID, xid string) (*recon.LinkToken, []*recon.LinkSession, error)
	RevokeLinkToken(ctx context.Context, tenant recon.TenantID, xid string) (*recon.LinkToken, error)
	// recon.LinkPageStore's:
	LinkTokenByHash(ctx context.Context, hash string) (*recon.LinkToken, *recon.LinkSession, error)
	StepLinkSession(ctx context.Context, hash string, st recon.LinkStep) (*recon.LinkToken, *recon.LinkSession, error)
	LinkedAccount(ctx context.Context, tenant recon.TenantID, id int64) (*recon.LinkedAccount, error)
	// recon.HubStore's:
	CreateHubCustomer(ctx context.Context, c *recon.HubCustomer) error
	HubCustomers(ctx context.Context, tenant recon.TenantID, f recon.HubCustomerFilter) ([]*recon.HubCustomer, int64, error)
	ChangeHubWebhook(ctx context.Context, tenant recon.TenantID, ch recon.HubWebhookChange) (*recon.HubWebhook, bool, error)
	// recon.HubAccountStore's:
	HubBankAccounts(ctx context.Context, tenant recon.TenantID, f recon.HubAccountFilter) ([]*recon.LinkedAccount, int64, error)
	HubBankAccount(ctx context.Context, tenant recon.TenantID, xid string) (*recon.LinkedAccount, error)
}

// Service makes link tokens, steps link sessions, saves the hub webhook and
// simulates hub events.
type Service struct {
	Store Store
	// BaseURL is the external base of hosted_link_url.
	BaseURL string
	// LinkTTL is the lifetime of link tokens (default recon.DefaultLinkTokenTTL).
	LinkTTL time.Duration
	// Banks reaches the real banks; nil when none is configured (none is
	// built: no bank network is reachable), and then only sandbox link
	// tokens (a test tenant's, or any on a --sandbox server) can be made.
	Banks recon.BankConnector
	// CheckURL checks a webhook URL when it is saved (scheme, SSRF ranges,
	// DNS: delivery.CheckURL with the server's sandbox and allow-private
	// settings); nil accepts any absolute http(s) URL. Blocked reports
	// whether its error means "internal address" (BLOCKED_ADDRESS) rather
	// than an invalid URL.
	CheckURL func(raw string) error
	Blocked  func(err error) bool
}

// ErrNoBankConnector is the plain answer of production mode without a real
// bank connector.
var ErrNoBankConnector = recon.Errorf(recon.EUNAVAILABLE, "this server has no connector to real banks: "+
	"only sandbox banks can be linked, with a test-mode credential or on a server started with --sandbox")

// RealBanks returns s.Banks, or ErrNoBankConnector without one.
func (s *Service) RealBanks() (recon.BankConnector, error) {
	if s.Banks == nil {
		return nil, ErrNoBankConnector
	}
	return s.Banks, nil
}

// Connector returns the banks a link token's page offers: the sandbox banks
// for a sandbox token, else the real banks.
func (s *Service) Connector(sandbox bool) (recon.BankConnector, error) {
	if sandbox {
		return Sandbox{}, nil
	}
	return s.RealBanks()
}

// CreateLinkToken checks t (fields, a bank connector for its mode, the
// xids' form), stores it for s.LinkTTL (LINK_TOKEN_CREATED with it) and
// returns the hosted page's address: the one way a link token is made, for
// the API, the dashboard and `recon hub link-token create`.
func (s *Service) CreateLinkToken(ctx context.Context, t *recon.LinkToken) (hostedLinkURL string, err error) {
	if err := t.Validate(); err != nil {
		return "", err
	}
	if !t.Sandbox {
		if _, err := s.RealBanks(); err != nil {
			return "", err
		}
	}
	if !recon.ValidXID(t.CustomerXID) {
		return "", recon.Errorf(recon.ENOTFOUND, "company %s not found", t.CustomerXID)
	}
	if t.BankAccountXID != "" && !recon.ValidXID(t.BankAccountXID) {
		return "", recon.Errorf(recon.ENOTFOUND, "bank account %s not found", t.BankAccountXID)
	}
	if err := s.Store.CreateLinkToken(ctx, t, s.linkTTL()); err != nil {
		return "", err
	}
	return strings.TrimRight(s.BaseURL, "/") + "/link/" + t.Token, nil
}

func (s *Service) linkTTL() time.Duration {
	if s.LinkTTL <= 0 {
		return recon.DefaultLinkTokenTTL
	}
	return s.LinkTTL
}

// SaveWebhook applies a partial change to the tenant's webhook by the rules
// of POST /v1/webhook (the event names, the URL's rules of every target:
// recon.CheckTargetURL with the server's SSRF check) and stores it; created
// tells a new webhook. The hub API and the dashboard's settings both save
// through it. Nothing is stored unless every field is valid.
func (s *Service) SaveWebhook(ctx context.Context, tenant recon.TenantID, ch recon.HubWebhookChange) (wh *recon.HubWebhook, created bool, err error) {
	if ch.AllowEventsSet {
		if _, err := recon.NormalizeAllowEvents(ch.AllowEvents); err != nil {
			var bad *recon.ErrInvalidEvent
			if errors.As(err, &bad) {
				return nil, false, &recon.ReasonError{Err: recon.FieldError("allow_events", "%s", err.Error()), Reason: "INVALID_EVENT"}
			}
			return nil, false, err
		}
	}
	if ch.URL != nil {
		// The rules of every target URL (recon.CheckTargetURL), and not empty.
		if *ch.URL == "" {
			return nil, false, &recon.ReasonError{Err: recon.FieldError("webhook_url", "webhook_url must not be empty"), Reason: "INVALID_URL"}
		}
		if err := recon.CheckTargetURL("webhook_url", *ch.URL, s.CheckURL, s.Blocked); err != nil {
			return nil, false, err
		}
	}
	return s.Store.ChangeHubWebhook(ctx, tenant, ch)
}

// CreateCustomer makes one of the merchant's companies (a hub customer,
// docs/hub.md): fullName (required, unique among the tenant's), shortName
// and status (recon.HubCustomerStatuses), the names trimmed; for POST
// /v1/company/create and the dashboard's hub companies page. Nothing is
// stored when a check fails (recon.HubCustomer.Validate, the store's
// uniqueness: ECONFLICT).
func (s *Service) CreateCustomer(ctx context.Context, tenant recon.TenantID, fullName, shortName, status string) (*recon.HubCustomer, error) {
	hc := &recon.HubCustomer{Tenant: tenant, FullName: strings.TrimSpace(fullName), ShortName: strings.TrimSpace(shortName), Status: status}
	if err := hc.Validate(); err != nil {
		return nil, err
	}
	if err := s.Store.CreateHubCustomer(ctx, hc); err != nil {
		return nil, err
	}
	return hc, nil
}
