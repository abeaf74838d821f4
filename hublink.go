package recon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"time"
)

// Link token purposes.
const (
	LinkPurposeLink   = "LINK_BANK_ACCOUNT"
	LinkPurposeUnlink = "UNLINK_BANK_ACCOUNT"
)

// Link token statuses: ACTIVE until a session completes with it (USED), the
// merchant revokes it (REVOKED) or its lifetime ends (EXPIRED).
const (
	LinkTokenActive  = "ACTIVE"
	LinkTokenUsed    = "USED"
	LinkTokenRevoked = "REVOKED"
	LinkTokenExpired = "EXPIRED"
)

// Link session statuses: OPEN while the user is on the page, then one end.
const (
	LinkSessionOpen      = "OPEN"
	LinkSessionCompleted = "COMPLETED"
	LinkSessionFailed    = "FAILED"
	LinkSessionAbandoned = "ABANDONED"
	LinkSessionExpired   = "EXPIRED"
	LinkSessionRevoked   = "REVOKED"
)

// Link session states: the step the page shows (the LINK_SESSION_STATE_CHANGED
// states of docs/design.md, D8, plus the first and the unlink's OTP step).
const (
	LinkStateInitialized    = "INITIALIZED"
	LinkStateRequestLink    = "REQUEST_BANK_ACCOUNT_LINK"
	LinkStateConfirmLink    = "CONFIRM_BANK_ACCOUNT_LINK"
	LinkStateFinishedLink   = "FINISHED_BANK_ACCOUNT_LINK"
	LinkStateRequestUnlink  = "REQUEST_BANK_ACCOUNT_UNLINK"
	LinkStateConfirmUnlink  = "CONFIRM_BANK_ACCOUNT_UNLINK"
	LinkStateChooseUnlink   = "CHOOSE_BANK_ACCOUNT_UNLINK"
	LinkStateFinishedUnlink = "FINISHED_BANK_ACCOUNT_UNLINK"
)

// Link states of a linked bank account.
const (
	AccountLinked   = "linked"
	AccountUnlinked = "unlinked"
	AccountInactive = "inactive"
)

// Account types of a linked account.
const (
	AccountIndividual = "individual"
	AccountEnterprise = "enterprise"
)

// Link-token defaults and limits.
const (
	DefaultLinkTokenTTL = 30 * time.Minute
	// LinkSessionIdle is how long a session may go without a step before
	// it is abandoned.
	LinkSessionIdle = 15 * time.Minute
	// MaxOTPAttempts wrong OTPs fail the session.
	MaxOTPAttempts       = 3
	maxRedirectURILength = 2000
)

// LinkToken is a short-lived grant the merchant makes for one customer to
// link (or unlink) one bank account on the hosted page. The token itself is
// a bearer secret in the page's URL; only its hash is stored.
type LinkToken struct {
	ID int64
	// Tenant is the merchant's tenant the token belongs to (a test
	// tenant's for a test credential's token); the store reads its mode
	// from the tenant's row and CreateLinkToken stores Tenant.ID().
	Tenant      TenantID
	CustomerID  int64
	CustomerXID string
	XID         string
	// Token is set only when the token is made (CreateLinkToken).
	Token     string
	TokenHash string
	Purpose   string
	// BankAccountID and BankAccountXID name the account to unlink.
	BankAccountID  int64
	BankAccountXID string
	RedirectURI    string
	IsMobileApp    bool
	Language       string
	// Sandbox: the page offers the sandbox banks (a test tenant, or a
	// server in sandbox mode).
	Sandbox   bool
	Status    string
	CreatedAt time.Time
	ExpiresAt time.Time
	EndedAt   time.Time
}

// ExpiredAt reports whether the token is due to expire at now: still
// ACTIVE, its lifetime over (now at or past ExpiresAt). The store ends such
// a token (EXPIRED) before a step of its page, and its sweep ends every such
// token with the same condition in SQL, so that one node ends it once.
func (t *LinkToken) ExpiredAt(now time.Time) bool {
	return t.Status == LinkTokenActive && !now.Before(t.ExpiresAt)
}

// LinkSession is one visit of the hosted page with a link token: its step,
// what the user entered and the bank returned, and how it ended.
type LinkSession struct {
	ID             int64
	Tenant         TenantID // its token's
	LinkTokenID    int64
	XID            string
	Status         string
	State          string
	BankCode       string
	AccountType    string
	AccountNumber  string
	HolderName     string
	RequestRef     string
	OTPAttempts    int
	BankAccountID  int64
	BankAccountXID string
	Reason         string
	CreatedAt      time.Time
	LastStepAt     time.Time
	EndedAt        time.Time
}

// HashLinkToken is the stored form of a link token: hex SHA-256 (the token
// is 256 random bits, so a fast hash is enough).
func HashLinkToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewLinkToken returns a new link token: "lt_" and 48 random letters and digits.
func NewLinkToken() string { return "lt_" + NewSecret() }

// Validate checks a new link token's request fields (the customer and the
// account are the store's to find).
func (t *LinkToken) Validate() error {
	switch t.Purpose {
	case LinkPurposeLink:
		if t.BankAccountXID != "" {
			return FieldError("bank_account_xid", "bank_account_xid is only for purpose %s", LinkPurposeUnlink)
		}
	case LinkPurposeUnlink:
		if t.BankAccountXID == "" {
			return FieldError("bank_account_xid", "bank_account_xid is required for purpose %s", LinkPurposeUnlink)
		}
	default:
		return FieldError("purpose", "purpose must be %s or %s", LinkPurposeLink, LinkPurposeUnlink)
	}
	if t.Language != "vi" && t.Language != "en" {
		return FieldError("language", "language must be vi or en")
	}
	return CheckRedirectURI(t.RedirectURI, t.IsMobileApp)
}

// CheckRedirectURI checks a completion_redirect_uri: empty, or an absolute
// http(s) URL of at most 2000 characters; a mobile app (is_mobile_app=1) may
// also name its own scheme (myapp://done). Schemes that run code or read
// files (javascript:, data:, vbscript:, file:, blob:) are never accepted.
func CheckRedirectURI(raw string, mobile bool) error {
	if raw == "" {
		return nil
	}
	bad := func() error {
		if mobile {
			return FieldError("completion_redirect_uri", "completion_redirect_uri must be an absolute URL (http, https or the app's own scheme) of at most %d characters", maxRedirectURILength)
		}
		return FieldError("completion_redirect_uri", "completion_redirect_uri must be an absolute http or https URL of at most %d characters", maxRedirectURILength)
	}
	if len(raw) > maxRedirectURILength || strings.TrimSpace(raw) != raw {
		return bad()
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return bad()
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" || u.User != nil {
			return bad()
		}
		return nil
	case "javascript", "data", "vbscript", "file", "blob", "about", "filesystem":
		return bad()
	}
	if !mobile {
		return bad()
	}
	return nil
}

// LinkStore stores link tokens and sessions. Every change enqueues its hub
// events in its own transaction (HubWebhook.Wants decides which).
type LinkStore interface {
	// CreateLinkToken finds the company's customer (t.CustomerXID: ENOTFOUND
	// unless it is the company's; EINVALID unless it is Active) and, for an
	// unlink, its linked account (t.BankAccountXID: ENOTFOUND), stores t
	// with a new XID, Status ACTIVE and ExpiresAt now+ttl, and enqueues
	// LINK_TOKEN_CREATED.
	CreateLinkToken(ctx context.Context, t *LinkToken, ttl time.Duration) error
	// LinkToken returns the company's link token and its sessions (oldest
	// first), or ENOTFOUND.
	LinkToken(ctx context.Context, tenant TenantID, xid string) (*LinkToken, []*LinkSession, error)
	// RevokeLinkToken revokes the company's ACTIVE link token at once, ends
	// its open session (REVOKED) and enqueues LINK_TOKEN_REVOKED; a token
	// that is not active (revoked, used or expired) is ENOTFOUND.
	RevokeLinkToken(ctx context.Context, tenant TenantID, xid string) (*LinkToken, error)
	// ExpireHubLinks ends what time ended by now, each exactly once even
	// with several nodes: ACTIVE tokens past their expiry become EXPIRED
	// (their open session EXPIRED: LINK_SESSION_EXPIRED, then
	// LINK_TOKEN_EXPIRED), and open sessions without a step since
	// now-LinkSessionIdle become ABANDONED (LINK_SESSION_ABANDONED). It
	// reports how many tokens and sessions it ended.
	ExpireHubLinks(ctx context.Context, now time.Time) (tokens, sessions int, err error)
	// HubEventLog returns the company's link token's timeline, oldest
	// first: every hub event it and its sessions made (ENOTFOUND for a
	// token that is not the company's).
	HubEventLog(ctx context.Context, tenant TenantID, linkTokenXID string) ([]*HubEventRecord, error)
}
