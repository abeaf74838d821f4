package recon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Delivery kinds: who the notification goes to.
const (
	DeliveryIPN     = "ipn"     // payment gateway IPN to the merchant's IPN URL
	DeliveryWebhook = "webhook" // bank-linking hub webhook
	DeliveryHubIPN  = "hub_ipn" // the hub's balance-change notification to the merchant's hub IPN URL
)

// DeliveryKinds and DeliveryStatuses list the kinds and the states.
var (
	DeliveryKinds    = []string{DeliveryIPN, DeliveryWebhook, DeliveryHubIPN}
	DeliveryStatuses = []string{DeliveryPending, DeliveryDelivered, DeliveryDead}
)

// CheckDeliveryKind returns EINVALID naming field unless kind is "" or one
// of DeliveryKinds; CheckDeliveryStatus likewise for DeliveryStatuses.
func CheckDeliveryKind(field, kind string) error { return checkOneOf(field, kind, DeliveryKinds) }

// CheckDeliveryStatus: see CheckDeliveryKind.
func CheckDeliveryStatus(field, status string) error {
	return checkOneOf(field, status, DeliveryStatuses)
}

func checkOneOf(field, v string, known []string) error {
	if v == "" || slices.Contains(known, v) {
		return nil
	}
	return FieldError(field, "%s must be one of %s", field, strings.Join(known, ", "))
}

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
	ID int64
	// CompanyID is the company_id of the tenant's rows (a test twin's for
	// test mode): a plain int64, as DeliveryStore.DeliveryTarget's, since
	// the dispatcher handles claimed deliveries of every tenant without
	// their mode; a reader that knows the tenant scopes by TenantID.
	CompanyID int64
	Kind      string // DeliveryIPN or DeliveryWebhook
	// OrderID is the order an IPN is about (0 for other notifications),
	// so that an order's notifications are found by index.
	OrderID int64
	Event   string // ORDER_PAID, TRANSACTION_VOID, LINK_TOKEN_CREATED, ...
	// Payload is the exact JSON body to send.
	Payload       []byte
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	// LeaseUntil is when a claim by a dispatcher lapses: the last resort,
	// when the claiming node's heartbeat has not shown it dead before.
	LeaseUntil time.Time
	// ClaimedBy is the dispatcher node holding the claim ("" when none).
	ClaimedBy   string
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
	// PreviousSigningSecret is the signing secret a rotation replaced: it
	// still signs, beside SigningSecret, until PreviousSigningUntil
	// (SigningOverlap after the rotation; docs/design.md, D7, "Standard
	// Webhooks."). "" when there is none, or no longer. The store keeps it
	// (Target.KeepPrevious): a save never sets it.
	PreviousSigningSecret string
	PreviousSigningUntil  time.Time
	Active                bool
	// DisabledBy is recon.DisabledByRecon when Recon disabled the target
	// (Active false; docs/design.md, D7): its deliveries are held, not
	// attempted. "" otherwise.
	DisabledBy string
	// Settings is the target's settings, a JSON object
	// (delivery_targets.settings): an IPN target's are IPNSettings. A save
	// with "" keeps the stored ones ("{}" for a new target).
	Settings string
	// Ordered delivers the target's notifications one at a time, in the
	// order they were enqueued: the next is sent only once the one before
	// is delivered or dead, so a failing receiver holds back everything
	// after it (docs/design.md, D7, "Ordered targets"). A save stores it as
	// given: the services read the stored value first to keep it.
	Ordered bool
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
func NewSecret() string { return NewSecretFrom(rand.Reader) }

// NewSecretFrom is NewSecret reading its randomness from random (tests pass
// a fixed one). random must not fail: crypto/rand.Reader never does.
func NewSecretFrom(random io.Reader) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, SecretLen)
	buf := make([]byte, 64)
	for i := 0; i < len(b); {
		if _, err := io.ReadFull(random, buf); err != nil {
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

// NewMerchant returns new merchant credentials, secret key included, of
// tenant (the company's live one, or its test twin) for the company whose
// live id is company, from random: merchant_id MC<company>_<12 hex digits>,
// TEST- first in test mode (TestMerchantPrefix), and a NewMerchantSecret.
// `recon merchant credentials` and `recon trigger` make them here.
func NewMerchant(random io.Reader, tenant TenantID, company int64) *Merchant {
	var b [6]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		panic(err) // crypto/rand.Read never returns an error (Go 1.24)
	}
	test := !tenant.Live()
	m := &Merchant{Tenant: tenant, MerchantID: "MC" + strconv.FormatInt(company, 10) + "_" + hex.EncodeToString(b[:])}
	if test {
		m.MerchantID = TestMerchantPrefix + m.MerchantID
	}
	m.SecretKey = NewMerchantSecret(random, test)
	return m
}

// NewMerchantSecret returns a new merchant secret key from random
// (NewSecretFrom), test_ first in test mode (TestClientPrefix): the CLI's
// credentials and rotation, and the dashboard's rotation, make it here.
func NewMerchantSecret(random io.Reader, test bool) string {
	if test {
		return TestClientPrefix + NewSecretFrom(random)
	}
	return NewSecretFrom(random)
}

// AttemptOutcome is one attempt and the state it leaves its delivery in.
type AttemptOutcome struct {
	Attempt *DeliveryAttempt
	// Status is DeliveryDelivered, DeliveryDead, or DeliveryPending again
	// at Next (a zero Next keeps the delivery's next attempt time).
	Status string
	Next   time.Time
}

// NodeBeat is what a dispatcher node's heartbeat found.
type NodeBeat struct {
	// Joined is true when the node had no row: its first beat, or it had
	// been declared dead by another node, which then released its claims.
	// The claims the node still held are released too: it must not start
	// the attempts of deliveries it claimed before.
	Joined bool
	// Released counts the claims made free again: of dead nodes, and the
	// node's own when it joined.
	Released int64
}

// DeliveryFilter selects deliveries.
type DeliveryFilter struct {
	Status string // "" for any
	// Failing keeps the pending deliveries with a failed attempt (with
	// Status "" or DeliveryPending).
	Failing bool
	Kind    string
	Limit   int
	// BeforeID pages backwards: deliveries with a smaller id (0 for the newest).
	BeforeID int64
}

// DeliveryStore is the outbox.
type DeliveryStore interface {
	// EnqueueDelivery stores d as pending, due at once (outside any other
	// state change; state changes enqueue within their own transaction).
	EnqueueDelivery(ctx context.Context, d *Delivery) error
	// ClaimDeliveries takes up to n due deliveries (pending, next attempt
	// due, unclaimed or lease lapsed) for the dispatcher node until
	// now+lease, so that no other dispatcher sends them meanwhile (FOR
	// UPDATE SKIP LOCKED on PostgreSQL). The node must have joined
	// (BeatDeliveryNode): the claims of a node without a row are released.
	ClaimDeliveries(ctx context.Context, node string, now time.Time, n int, lease time.Duration) ([]*Delivery, error)
	// RecordAttempts stores attempts and their deliveries' new states, all in
	// one transaction, and ends their claims. Attempts of deliveries that no
	// longer exist are dropped rather than failing the others.
	RecordAttempts(ctx context.Context, outcomes []AttemptOutcome) error
	// BeatDeliveryNode records that the dispatcher node is alive at now
	// (registering it when it has no row), declares dead the other nodes
	// whose heartbeat is older than deadBefore, and releases their claims:
	// a crashed node's deliveries are sent again within a few heartbeats
	// instead of a whole lease.
	BeatDeliveryNode(ctx context.Context, node string, now, deadBefore time.Time) (NodeBeat, error)
	// LeaveDeliveryNode removes the node (a dispatcher that stops) and
	// releases the claims it still holds; it reports how many.
	LeaveDeliveryNode(ctx context.Context, node string) (int64, error)
	// ReleaseDeliveryClaims releases the node's claims on pending
	// deliveries but those of keep (the ones it still works on) and
	// reports how many: a node whose database answers again after an
	// outage, or whose claim failed, lets go of the claims it lost track of
	// (a claim whose answer was lost or did not scan, an attempt that could
	// not start), which would otherwise wait for their lease
	// (docs/design.md, Losing the primary).
	ReleaseDeliveryClaims(ctx context.Context, node string, keep []int64) (int64, error)
	// Delivery returns one of the tenant's deliveries (any tenant's for
	// the zero TenantID, for operators), or ENOTFOUND.
	Delivery(ctx context.Context, tenant TenantID, id int64) (*Delivery, error)
	// Deliveries lists deliveries newest first (every tenant's for the zero
	// TenantID).
	Deliveries(ctx context.Context, tenant TenantID, f DeliveryFilter) ([]*Delivery, error)
	// DeliveryAttempts lists a delivery's attempts, oldest first.
	DeliveryAttempts(ctx context.Context, deliveryID int64) ([]*DeliveryAttempt, error)
	// ReplayDelivery makes a delivery pending and due at once, whatever its state.
	ReplayDelivery(ctx context.Context, tenant TenantID, id int64, now time.Time) error
	// DeliveryTarget returns where the deliveries of the kind of the tenant
	// whose rows carry company_id companyID go, or ENOTFOUND when none is
	// configured. It takes a bare int64 on purpose, unlike the other
	// tenant-scoped methods (TenantID): the dispatcher reads it for claimed
	// deliveries of every tenant, whose Delivery.CompanyID is all it knows,
	// not their mode. Callers that know the tenant pass TenantID.ID().
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
	// Tenant is the merchant's tenant, its mode the credential's: a test
	// merchant's is the company's test twin (TenantID; the company's live
	// id is Company.LiveID). SetMerchant stores under Tenant.ID() and
	// ignores the mode, which a read takes from the tenant's row.
	Tenant     TenantID
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
	MerchantOf(ctx context.Context, tenant TenantID) (*Merchant, error)
	// SetIPN creates or replaces the company's IPN target. A target without
	// a SigningSecret keeps the one stored, or gets a new one (NewSecret); a
	// SECRET_KEY target without a Secret likewise keeps the stored SECRET_KEY
	// secret or gets a new one. The decision is taken under the row's lock,
	// so concurrent saves agree; t is set to what was stored.
	SetIPN(ctx context.Context, tenant TenantID, t *Target) error
}

// MaskSecret shows a secret as three asterisks and its last 4 characters (spec
// §4.5; docs/hub.md, The webhook API); a secret of 8 characters or fewer shows
// only the asterisks, since 4 would half reveal it.
func MaskSecret(s string) string {
	if utf8.RuneCountInString(s) <= 8 {
		return "***"
	}
	r := []rune(s)
	return "***" + string(r[len(r)-4:])
}
