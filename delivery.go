package recon

import (
	"context"
	"crypto/rand"
	"time"
)

// Delivery kinds: who the notification goes to.
const (
	DeliveryIPN     = "ipn"     // payment gateway IPN to the merchant's IPN URL
	DeliveryWebhook = "webhook" // bank-linking hub webhook
)

// Delivery states.
const (
	DeliveryPending   = "pending"   // waiting for its next attempt (NextAttemptAt)
	DeliveryDelivered = "delivered" // a 2xx answer was received
	DeliveryDead      = "dead"      // the retry schedule ran out
)

// AuthSecretKey and AuthNone are the authentication types of a notification target.
const (
	AuthSecretKey = "SECRET_KEY"
	AuthNone      = "NONE"
)

// Delivery is one notification in the durable outbox. It is written in the
// same database transaction as the state change that causes it, so a crash
// never loses it; the dispatcher sends it at least once.
type Delivery struct {
	ID        int64
	CompanyID int64
	Kind      string // DeliveryIPN or DeliveryWebhook
	Event     string // ORDER_PAID, TRANSACTION_VOID, LINK_TOKEN_CREATED, ...
	// Payload is the exact JSON body to send.
	Payload       []byte
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	// LeaseUntil is when a claim by a dispatcher lapses (a crashed node's
	// claimed rows are taken up again after it).
	LeaseUntil  time.Time
	LastError   string
	CreatedAt   time.Time
	DeliveredAt time.Time
}

// DeliveryAttempt records one try to send a delivery.
type DeliveryAttempt struct {
	ID         int64
	DeliveryID int64
	At         time.Time
	URL        string
	StatusCode int // 0 when no HTTP answer
	Latency    time.Duration
	// Response is an excerpt of the answer's body (at most 1 KiB).
	Response string
	Error    string
}

// Target is where a company's deliveries of one kind go: resolved when each
// attempt is made, so a corrected URL or secret applies to pending retries.
type Target struct {
	URL      string
	AuthType string // AuthSecretKey or AuthNone
	// Secret is sent as X-Secret-Key with AuthSecretKey ("" with AuthNone).
	Secret string
	// SigningSecret keys X-Recon-Signature, whatever the auth type. Only the
	// server makes it (NewSecret): the store generates one when it saves a
	// target without it.
	SigningSecret string
	Active        bool
}

// Secret sizes: generated secrets have SecretLen letters and digits; a
// secret a merchant chooses has 1 to MaxSecretLen characters.
const (
	SecretLen    = 48
	MaxSecretLen = 500
)

// NewSecret returns SecretLen random letters and digits from crypto/rand
// (about 285 bits): merchant secret keys, IPN secrets and signing secrets
// are all made here.
func NewSecret() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, SecretLen)
	buf := make([]byte, 64)
	for i := 0; i < len(b); {
		if _, err := rand.Read(buf); err != nil {
			panic(err) // crypto/rand.Read never returns an error (Go 1.24)
		}
		for _, c := range buf {
			// 248 = 4*62: rejecting the rest keeps every character equally likely.
			if c < 248 && i < len(b) {
				b[i] = alphabet[c%62]
				i++
			}
		}
	}
	return string(b)
}

// DeliveryFilter selects deliveries.
type DeliveryFilter struct {
	Status string // "" for any
	Kind   string
	Limit  int
	// BeforeID pages backwards: deliveries with a smaller id (0 for the newest).
	BeforeID int64
}

// DeliveryStore is the outbox.
type DeliveryStore interface {
	// EnqueueDelivery stores d as pending, due at once (outside any other
	// state change; state changes enqueue within their own transaction).
	EnqueueDelivery(ctx context.Context, d *Delivery) error
	// ClaimDeliveries takes up to n due deliveries (pending, next attempt
	// due, lease lapsed) for this dispatcher until lease, so that no other
	// dispatcher sends them meanwhile (FOR UPDATE SKIP LOCKED on PostgreSQL).
	ClaimDeliveries(ctx context.Context, now time.Time, n int, lease time.Duration) ([]*Delivery, error)
	// RecordAttempt stores an attempt and the delivery's new state: delivered,
	// pending again at next, or dead.
	RecordAttempt(ctx context.Context, a *DeliveryAttempt, status string, next time.Time) error
	// Delivery returns one of the company's deliveries (any company when
	// companyID is 0, for operators), or ENOTFOUND.
	Delivery(ctx context.Context, companyID, id int64) (*Delivery, error)
	// Deliveries lists deliveries newest first (all companies when companyID is 0).
	Deliveries(ctx context.Context, companyID int64, f DeliveryFilter) ([]*Delivery, error)
	// DeliveryAttempts lists a delivery's attempts, oldest first.
	DeliveryAttempts(ctx context.Context, deliveryID int64) ([]*DeliveryAttempt, error)
	// ReplayDelivery makes a delivery pending and due at once, whatever its state.
	ReplayDelivery(ctx context.Context, companyID, id int64, now time.Time) error
	// DeliveryTarget returns where the company's deliveries of the kind go,
	// or ENOTFOUND when none is configured.
	DeliveryTarget(ctx context.Context, companyID int64, kind string) (*Target, error)
	// DeliveryStats counts pending, dead and in-flight (pending and leased)
	// deliveries, for metrics; delivered ones, the bulk, are not counted.
	DeliveryStats(ctx context.Context) (map[string]int64, error)
	// DeleteDeliveredBefore deletes the deliveries delivered before t, with
	// their attempts (retention), and reports how many.
	DeleteDeliveredBefore(ctx context.Context, t time.Time) (int64, error)
}

// Merchant is a company's payment-gateway identity: Basic credentials
// merchant_id:secret_key, and the secret signs checkout forms.
type Merchant struct {
	CompanyID  int64
	MerchantID string
	SecretKey  string // kept encrypted at rest
}

// MerchantStore stores merchant credentials and IPN settings.
type MerchantStore interface {
	// SetMerchant creates or replaces the company's credentials.
	SetMerchant(ctx context.Context, m *Merchant) error
	// MerchantByID returns the merchant with the public id, or ENOTFOUND.
	MerchantByID(ctx context.Context, merchantID string) (*Merchant, error)
	// MerchantOf returns the company's merchant, or ENOTFOUND.
	MerchantOf(ctx context.Context, companyID int64) (*Merchant, error)
	// SetIPN creates or replaces the company's IPN target. A target without
	// a SigningSecret gets a new one (NewSecret), set in t.
	SetIPN(ctx context.Context, companyID int64, t *Target) error
}
