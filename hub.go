package recon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The bank-linking hub (docs/design.md, D8). Its merchant is a Recon company
// (the tenant, Caller.Tenant); the merchant's own customers, which the hub
// API calls "companies", are HubCustomers here, so that they are never
// confused with the tenant. Every hub row is keyed by the tenant's company
// id: a test-mode credential's tenant is the company's test twin, so tenant
// isolation is also mode isolation.

// ScopeHub lets an OAuth2 client use the hub API (/v1/token and the /v1 hub routes).
const ScopeHub = "hub"

// ActionHub uses the bank-linking hub: its companies, link tokens, linked
// accounts and webhook. Admins may; a token with no user (a client's
// client-credentials or /v1/token token) may when it holds ScopeHub.
const ActionHub Action = "use the bank-linking hub"

// Hub customer statuses (the hub API's company status). Only an active
// customer may start a link.
const (
	HubCustomerActive    = "Active"
	HubCustomerPending   = "Pending"
	HubCustomerSuspended = "Suspended"
)

// HubCustomerStatuses lists the statuses in the order the API documents them.
var HubCustomerStatuses = []string{HubCustomerActive, HubCustomerPending, HubCustomerSuspended}

// MaxHubCustomerName bounds full_name (SePay documents 200 characters).
const MaxHubCustomerName = 200

// HubCustomer is a merchant's customer in the hub: a sub-tenant of the
// merchant's tenant Tenant (a test tenant's for a test credential's; the
// store reads the mode from the tenant's row and CreateHubCustomer stores
// Tenant.ID()), identified on the wire by XID (a UUID) and shown as a
// "company".
type HubCustomer struct {
	ID        int64
	Tenant    TenantID
	XID       string
	FullName  string
	ShortName string
	Status    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Validate checks a customer before it is stored, new or edited.
func (c *HubCustomer) Validate() error {
	switch {
	case strings.TrimSpace(c.FullName) == "":
		return FieldError("full_name", "full_name is required")
	case utf8.RuneCountInString(c.FullName) > MaxHubCustomerName:
		return FieldError("full_name", "full_name must be at most %d characters", MaxHubCustomerName)
	case utf8.RuneCountInString(c.ShortName) > 64:
		return FieldError("short_name", "short_name must be at most 64 characters")
	case !slices.Contains(HubCustomerStatuses, c.Status):
		return FieldError("status", "status must be one of %s", strings.Join(HubCustomerStatuses, ", "))
	}
	return nil
}

// HubCustomerFilter selects a page of customers, newest first.
type HubCustomerFilter struct {
	Status  string // "" for any
	Q       string // case-insensitive substring of full_name
	Page    int    // from 1
	PerPage int
	// Ascending sorts oldest first (sort[created_at]=asc).
	Ascending bool
}

// HubCounter counts a customer's transactions per day (GET /v1/company/counter).
type HubCounter struct {
	// BankAccounts counts the customer's linked accounts (any link state).
	BankAccounts int64
	Days         []HubCounterDay
	Total        HubCounterDay
}

// HubCounterDay is one day of a HubCounter (Date is "" in the total):
// transactions, of which money in and money out.
type HubCounterDay struct {
	Date                  string
	Transactions, In, Out int64
}

// NewXID returns a random (version 4) UUID in its canonical text form, the
// identity of every hub object on the wire.
func NewXID() string { return NewXIDFrom(rand.Reader) }

// NewXIDFrom is NewXID reading its randomness from random (the store's
// injected source; tests pass a fixed one). random must not fail:
// crypto/rand.Reader never does.
func NewXIDFrom(random io.Reader) string {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		panic(err) // crypto/rand.Read never returns an error (Go 1.24)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// ValidXID reports whether s is a UUID in canonical lower- or upper-case text
// form. Handlers check it before asking the store, so that a malformed id is
// a clear 404 without a query.
func ValidXID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// Hub events (spec §6.1; docs/hub.md, Events; docs/design.md, D8).
const (
	EventLinkTokenCreated          = "LINK_TOKEN_CREATED"
	EventLinkTokenRevoked          = "LINK_TOKEN_REVOKED"
	EventLinkTokenExpired          = "LINK_TOKEN_EXPIRED"
	EventLinkSessionInitialized    = "LINK_SESSION_INITIALIZED"
	EventLinkSessionReinitialized  = "LINK_SESSION_REINITIALIZED"
	EventLinkSessionStateChanged   = "LINK_SESSION_STATE_CHANGED"
	EventLinkSessionCompleted      = "LINK_SESSION_COMPLETED"
	EventLinkSessionFailed         = "LINK_SESSION_FAILED"
	EventLinkSessionAbandoned      = "LINK_SESSION_ABANDONED"
	EventLinkSessionExpired        = "LINK_SESSION_EXPIRED"
	EventBankAccountLinked         = "BANK_ACCOUNT_LINKED"
	EventBankAccountUnlinked       = "BANK_ACCOUNT_UNLINKED"
	EventBankAccountInactivated    = "BANK_ACCOUNT_INACTIVATED"
	eventBankAccountInactivedAlias = "BANK_ACCOUNT_INACTIVED"
)

// HubEvents lists the 13 events in the order of spec §6.1 (docs/hub.md,
// Events).
var HubEvents = []string{
	EventLinkTokenCreated, EventLinkTokenRevoked, EventLinkTokenExpired,
	EventLinkSessionInitialized, EventLinkSessionReinitialized, EventLinkSessionStateChanged,
	EventLinkSessionCompleted, EventLinkSessionFailed, EventLinkSessionAbandoned, EventLinkSessionExpired,
	EventBankAccountLinked, EventBankAccountUnlinked, EventBankAccountInactivated,
}

// ErrInvalidEvent is the error of an allow_events entry outside the 13
// names; hub.webhook answers it as 400 INVALID_EVENT.
type ErrInvalidEvent struct{ Name string }

func (e *ErrInvalidEvent) Error() string {
	return fmt.Sprintf("allow_events: %q is not a hub event (known: * or %s)", e.Name, strings.Join(HubEvents, ", "))
}

// NormalizeAllowEvents checks an allow_events list and returns it as stored:
// nil and [] both subscribe to nothing (an empty list); ["*"] (alone or with
// names) to all; BANK_ACCOUNT_INACTIVED (the spelling of SePay's event page)
// is stored as BANK_ACCOUNT_INACTIVATED; duplicates are dropped. Any other
// name is an *ErrInvalidEvent naming the first bad one.
func NormalizeAllowEvents(in []string) ([]string, error) {
	out := []string{}
	for _, e := range in {
		name := e
		if name == eventBankAccountInactivedAlias {
			name = EventBankAccountInactivated
		}
		if name != "*" && !slices.Contains(HubEvents, name) {
			return nil, &ErrInvalidEvent{Name: e}
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if slices.Contains(out, "*") {
		return []string{"*"}, nil
	}
	return out, nil
}

// HubWebhook is the merchant's one hub webhook (spec §2.6; docs/hub.md, The
// webhook API): a delivery target of kind DeliveryWebhook and its event filter.
// Like an IPN target it has two secrets: Secret, sent as X-Secret-Key with
// SECRET_KEY, and SigningSecret, the key of X-Recon-Signature, which is never
// sent (a receiver, or anyone who sees a request, cannot forge a notification
// with what the request carries).
type HubWebhook struct {
	Target
	ContentType string
	AllowEvents []string
}

// Wants reports whether the webhook takes the event now: active and
// subscribed to it (or to "*").
func (w *HubWebhook) Wants(event string) bool {
	return w != nil && w.Active && (slices.Contains(w.AllowEvents, "*") || slices.Contains(w.AllowEvents, event))
}

// HubWebhookChange is a partial update of the webhook (POST /v1/webhook):
// a nil field keeps the stored value. AllowEventsSet with AllowEvents nil is
// an explicit null: no events.
type HubWebhookChange struct {
	URL            *string
	AuthType       *string
	Secret         *string
	Active         *bool
	ContentType    *string
	AllowEvents    []string
	AllowEventsSet bool
	// RotateSigningSecret replaces the signing secret (a new webhook gets
	// one anyway).
	RotateSigningSecret bool
	// Ordered sets Target.Ordered (nil keeps it; false for a new webhook).
	Ordered *bool
}

// HubContentType is the one request_content_type the hub sends.
const HubContentType = "application/json"

// Apply returns cur changed by c, or the new webhook when cur is nil: then
// webhook_url is required, auth_type defaults to SECRET_KEY, active to 1,
// allow_events to ["*"] and a missing secret is generated (NewSecretFrom
// random, 48 characters). A new webhook gets a signing secret of its own
// (NewSecretFrom random), kept by every change but c.RotateSigningSecret,
// which makes a new one. It checks what it can without the network (auth
// type, secret length, content type, event names); the URL's own rules are
// the caller's (they need DNS).
func (c HubWebhookChange) Apply(cur *HubWebhook, random io.Reader) (*HubWebhook, error) {
	w := &HubWebhook{Target: Target{AuthType: AuthSecretKey, Active: true}, ContentType: HubContentType, AllowEvents: []string{"*"}}
	if cur != nil {
		w = &HubWebhook{Target: cur.Target, ContentType: cur.ContentType, AllowEvents: slices.Clone(cur.AllowEvents)}
	}
	if c.URL != nil {
		w.URL = *c.URL
	}
	if w.URL == "" {
		return nil, FieldError("webhook_url", "webhook_url is required")
	}
	if c.AuthType != nil {
		if *c.AuthType != AuthSecretKey && *c.AuthType != AuthNone {
			return nil, FieldError("auth_type", "auth_type must be SECRET_KEY or NONE")
		}
		w.AuthType = *c.AuthType
	}
	if c.Secret != nil {
		if *c.Secret == "" || utf8.RuneCountInString(*c.Secret) > MaxSecretLen {
			return nil, FieldError("secret_key", "secret_key must be 1 to %d characters", MaxSecretLen)
		}
		w.Secret = *c.Secret
	}
	if w.Secret == "" {
		w.Secret = NewSecretFrom(random)
	}
	if cur == nil || c.RotateSigningSecret || w.SigningSecret == "" {
		w.SigningSecret = NewSecretFrom(random)
	}
	if c.Active != nil {
		w.Active = *c.Active
	}
	if c.Ordered != nil {
		w.Ordered = *c.Ordered
	}
	if c.ContentType != nil {
		if *c.ContentType != HubContentType {
			return nil, FieldError("request_content_type", "request_content_type must be %s", HubContentType)
		}
		w.ContentType = *c.ContentType
	}
	if c.AllowEventsSet {
		events, err := NormalizeAllowEvents(c.AllowEvents)
		if err != nil {
			return nil, err
		}
		w.AllowEvents = events
	}
	return w, nil
}

// HubEventBody is the JSON body of a hub event (docs/design.md, D7, D8).
type HubEventBody struct {
	Timestamp int64        `json:"timestamp"`
	XID       string       `json:"xid"`
	Version   string       `json:"version"`
	Event     string       `json:"event"`
	Metadata  HubEventMeta `json:"metadata"`
}

// HubEventMeta is an event's metadata: the keys of docs/design.md, D8, each
// present only where the event carries it, except link_session_xid, which
// is null on events with no session (LINK_TOKEN_CREATED, as SePay shows).
type HubEventMeta struct {
	LinkTokenXID      string  `json:"link_token_xid,omitempty"`
	LinkSessionXID    *string `json:"link_session_xid"`
	Purpose           string  `json:"purpose,omitempty"`
	State             string  `json:"state,omitempty"`
	BrandName         string  `json:"brand_name,omitempty"`
	AccountType       string  `json:"account_type,omitempty"`
	AccountNumber     string  `json:"account_number,omitempty"`
	AccountHolderName string  `json:"account_holder_name,omitempty"`
	BankAccountXID    string  `json:"bank_account_xid,omitempty"`
	Unlinked          *bool   `json:"unlinked,omitempty"`
	Reason            string  `json:"reason,omitempty"`
}

// HubEventRecord is one line of a link token's timeline (recon hub events):
// every hub event as it happened, also those no webhook wanted.
type HubEventRecord struct {
	ID       int64
	Event    string
	Metadata HubEventMeta
	At       time.Time
	// DeliveryID is the outbox row that sends it; 0 when the webhook did
	// not want it (none, inactive, or not subscribed at that moment).
	DeliveryID int64
}

// HubEventDelivery builds the outbox row of a hub event made at at, whose
// body carries xid (NewXID, chosen by the store).
func HubEventDelivery(companyID int64, event string, meta HubEventMeta, at time.Time, xid string) (*Delivery, error) {
	if !slices.Contains(HubEvents, event) {
		return nil, fmt.Errorf("recon: unknown hub event %q", event)
	}
	payload, err := json.Marshal(HubEventBody{Timestamp: at.Unix(), XID: xid, Version: "1.0", Event: event, Metadata: meta})
	if err != nil {
		return nil, err
	}
	return &Delivery{CompanyID: companyID, Kind: DeliveryWebhook, Event: event, Payload: payload}, nil
}

// HubTokenIssuer issues the bearer tokens of POST /v1/token: it checks an
// OAuth2 client's id and secret, that the client holds ScopeHub and that its
// company is active, and issues a client-credentials access token with the
// hub scope. A wrong or unknown client, or one without the scope, is
// EUNAUTHORIZED (one answer for all, so nothing is learnt by probing).
type HubTokenIssuer interface {
	IssueHubToken(ctx context.Context, clientID, clientSecret string) (token string, ttl time.Duration, err error)
}

// HubStore stores the hub's customers, link tokens and sessions, linked
// accounts and webhook. Every method is scoped by the tenant's company id.
type HubStore interface {
	// CreateHubCustomer stores c (validated) with a new XID and sets its
	// ID, XID and times. ECONFLICT when the company already has a customer
	// of that full_name.
	CreateHubCustomer(ctx context.Context, c *HubCustomer) error
	// HubCustomer returns the company's customer with the xid, or ENOTFOUND
	// (also for another company's xid).
	HubCustomer(ctx context.Context, tenant TenantID, xid string) (*HubCustomer, error)
	// HubCustomers lists a page of the company's customers and the total
	// that match the filter.
	HubCustomers(ctx context.Context, tenant TenantID, f HubCustomerFilter) ([]*HubCustomer, int64, error)
	// UpdateHubCustomer applies fn to the customer under its row lock,
	// validates the result and stores it; ENOTFOUND, or fn's error.
	UpdateHubCustomer(ctx context.Context, tenant TenantID, xid string, fn func(c *HubCustomer) error) (*HubCustomer, error)
	// HubCustomerCounter counts the customer's linked accounts' transactions
	// per business day (date "" for all days, else one YYYY-MM-DD day).
	HubCustomerCounter(ctx context.Context, tenant TenantID, xid, date string) (*HubCounter, error)

	// HubWebhook returns the company's webhook, or ENOTFOUND when none is set.
	HubWebhook(ctx context.Context, tenant TenantID) (*HubWebhook, error)
	// ChangeHubWebhook applies the partial change to the stored webhook (or
	// creates it) under the row's lock (HubWebhookChange.Apply) and returns
	// what was stored and whether it was created. The caller checks a new
	// URL's rules before (they need DNS, which no lock should wait for).
	ChangeHubWebhook(ctx context.Context, tenant TenantID, c HubWebhookChange) (*HubWebhook, bool, error)

	LinkStore
	LinkPageStore
	HubAccountStore

	// HubBranding returns the company's page branding (empty when none is set).
	HubBranding(ctx context.Context, tenant TenantID) (*HubBranding, error)
	// SetHubBranding validates and stores the company's page branding.
	SetHubBranding(ctx context.Context, tenant TenantID, b *HubBranding) error
	// SetHubIPN creates or replaces the company's hub IPN target (the
	// balance-change notification), as MerchantStore.SetIPN does the
	// gateway's.
	SetHubIPN(ctx context.Context, tenant TenantID, t *Target) error
}

// HubBranding is the merchant's branding on the hosted page
// (/v1/merchant-config).
type HubBranding struct {
	DisplayName    string
	PrimaryColor   string // #rrggbb
	SecondaryColor string
	LogoURL        string // https
	UpdatedAt      time.Time
}

// Validate checks branding before it is stored.
func (b *HubBranding) Validate() error {
	if utf8.RuneCountInString(b.DisplayName) > 100 {
		return FieldError("display_name", "display_name must be at most 100 characters").Saying("br_bad_display_name")
	}
	for _, c := range []struct{ name, v string }{{"primary_color", b.PrimaryColor}, {"secondary_color", b.SecondaryColor}} {
		if c.v != "" && !validColor(c.v) {
			return FieldError(c.name, "%s must be a colour in the form #rrggbb", c.name).Saying("br_bad_" + c.name)
		}
	}
	if b.LogoURL != "" {
		// The dashboard names the rule broken (its Say key); the API's
		// message is one sentence for all three.
		bad := func(key string) error {
			return FieldError("logo_url", "logo_url must be an https URL of at most 2000 characters").Saying(key)
		}
		switch {
		case len(b.LogoURL) > 2000:
			return bad("br_bad_logo_long")
		case !strings.HasPrefix(b.LogoURL, "https://"):
			return bad("br_bad_logo_https")
		case strings.ContainsAny(b.LogoURL, " \"'<>\\"):
			return bad("br_bad_logo_chars")
		}
		if u, err := url.Parse(b.LogoURL); err != nil || u.Hostname() == "" {
			return bad("br_bad_logo_https")
		} else if localHost(u.Hostname()) {
			return FieldError("logo_url", "logo_url must not point to a private, loopback or link-local address").Saying("br_bad_logo_private")
		}
	}
	return nil
}

// localHost reports whether a logo's host is, as written, the payer's own
// machine or network: localhost, or an IP address that is private,
// loopback, link-local or unspecified. No DNS: a name is taken as public.
func localHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified())
}

func validColor(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	for i := 1; i < 7; i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// HubAccountFilter selects a page of the merchant's linked accounts, newest first.
type HubAccountFilter struct {
	CustomerXID string // "" for every customer
	Page        int
	PerPage     int
}

// HubTransactionFilter selects a page of the transactions of the
// merchant's linked accounts, newest first (transaction_date, id).
type HubTransactionFilter struct {
	CustomerXID string
	AccountXID  string
	// From and To are whole business days, inclusive (zero: open).
	From, To time.Time
	Page     int
	PerPage  int
}

// HubTransaction is a transaction on a linked account, with the hub's ids.
type HubTransaction struct {
	Transaction
	BankAccountXID string
	CustomerXID    string
}

// HubAccountStore reads the linked accounts and their transactions; only
// accounts the hub linked (with a bank_account_xid) are shown.
type HubAccountStore interface {
	HubBankAccounts(ctx context.Context, tenant TenantID, f HubAccountFilter) ([]*LinkedAccount, int64, error)
	// HubBankAccount returns the company's linked account, or ENOTFOUND.
	HubBankAccount(ctx context.Context, tenant TenantID, xid string) (*LinkedAccount, error)
	HubTransactions(ctx context.Context, tenant TenantID, f HubTransactionFilter) ([]*HubTransaction, int64, error)
	// HubTransaction returns a transaction of one of the company's linked
	// accounts, or ENOTFOUND (also for a transaction of another account).
	HubTransaction(ctx context.Context, tenant TenantID, id int64) (*HubTransaction, error)
}

// BalanceChangeEvent is the Delivery.Event of the hub's balance-change notification.
const BalanceChangeEvent = "BALANCE_CHANGE"

// BalanceChange is the body of the balance-change notification (docs/design.md,
// D8) a transaction stored on a linked account sends to the merchant's hub
// IPN URL.
type BalanceChange struct {
	Gateway         string  `json:"gateway"`
	TransactionDate string  `json:"transaction_date"`
	AccountNumber   string  `json:"account_number"`
	BankAccountXID  string  `json:"bank_account_xid"`
	VA              *string `json:"va"`
	PaymentCode     *string `json:"payment_code"`
	Content         string  `json:"content"`
	TransferType    string  `json:"transfer_type"`
	Amount          int64   `json:"amount"`
	ReferenceCode   string  `json:"reference_code"`
	Accumulated     int64   `json:"accumulated"`
	TransactionID   int64   `json:"transaction_id"`
}

// BalanceChangeDelivery builds the outbox row of a transaction on a linked
// account (brand and xid are the account's).
func BalanceChangeDelivery(companyID int64, t *Transaction, brand, accountXID string) (*Delivery, error) {
	b := BalanceChange{Gateway: brand, TransactionDate: t.TransactionDate.Format(DateTimeLayout), AccountNumber: t.AccountNumber,
		BankAccountXID: accountXID, Content: t.Content, TransferType: "credit", Amount: t.AmountIn,
		ReferenceCode: t.ReferenceNumber, Accumulated: t.Accumulated, TransactionID: t.ID}
	if t.AmountOut > 0 {
		b.TransferType, b.Amount = "debit", t.AmountOut
	}
	if t.SubAccount != "" {
		b.VA = &t.SubAccount
	}
	if t.Code != "" {
		b.PaymentCode = &t.Code
	}
	payload, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	return &Delivery{CompanyID: companyID, Kind: DeliveryHubIPN, Event: BalanceChangeEvent, Payload: payload}, nil
}
