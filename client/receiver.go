package client

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers of every notification Recon sends (docs/design.md, D7).
const (
	HeaderTimestamp = "X-Recon-Timestamp" // Unix seconds of the attempt
	HeaderSignature = "X-Recon-Signature" // v1=<hex HMAC-SHA256(signing secret, timestamp + "." + body)>
	HeaderDelivery  = "X-Recon-Delivery"  // the same on every retry: deduplicate on it
	HeaderEvent     = "X-Recon-Event"     // ORDER_PAID, TRANSACTION_VOID, BANK_ACCOUNT_LINKED, ...
	HeaderSecretKey = "X-Secret-Key"      // auth type SECRET_KEY only

	// The Standard Webhooks headers (docs/design.md, D7, "Standard
	// Webhooks."): every notification carries them too.
	HeaderWebhookID        = "webhook-id"        // msg_<delivery id>: the same on every retry
	HeaderWebhookTimestamp = "webhook-timestamp" // Unix seconds, the X-Recon-Timestamp instant
	HeaderWebhookSignature = "webhook-signature" // space-separated "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>"
)

// DefaultTolerance is how far a notification's timestamp may be from the
// receiver's clock: the replay window docs/api.md recommends.
const DefaultTolerance = 5 * time.Minute

// ErrSignature is the error of VerifySignature (wrapped with the reason).
var ErrSignature = errors.New("recon: bad or expired notification signature")

// VerifySignature checks a notification's X-Recon-Timestamp and
// X-Recon-Signature headers against the raw body, received at now, as the
// server signs it: one of the comma-separated "v1=<hex>" values of
// signature must be hex(HMAC-SHA256(signingSecret, timestamp + "." + body)),
// compared in constant time, and the timestamp must be within tolerance of
// now (tolerance <= 0 skips that check). signingSecret is the signing_secret
// of the IPN target or of the hub webhook (shown in full only by the answer
// that made or rotated it), never the X-Secret-Key secret, which every
// request carries. Every failure is ErrSignature.
func VerifySignature(signingSecret, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	if signingSecret == "" {
		return fmt.Errorf("%w: no signing secret", ErrSignature)
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: the %s header %q is not Unix seconds", ErrSignature, HeaderTimestamp, timestamp)
	}
	if tolerance > 0 {
		if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
			return fmt.Errorf("%w: the timestamp is %s from now, more than %s", ErrSignature, d.Round(time.Second), tolerance)
		}
	}
	mac := hmac.New(sha256.New, []byte(signingSecret))
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	want := mac.Sum(nil)
	found := false
	for v := range strings.SplitSeq(signature, ",") {
		hexSig, ok := strings.CutPrefix(strings.TrimSpace(v), "v1=")
		if !ok {
			continue // another scheme
		}
		found = true
		got, err := hex.DecodeString(hexSig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	if !found {
		return fmt.Errorf("%w: the %s header holds no v1= value", ErrSignature, HeaderSignature)
	}
	return fmt.Errorf("%w: no v1 signature matches", ErrSignature)
}

// VerifyStandardWebhook checks a notification's Standard Webhooks headers
// (webhook-id, webhook-timestamp, webhook-signature) against the raw body,
// received at now, as the server signs them: one of the space-separated
// "v1,<base64>" values of signature must be base64(HMAC-SHA256(key, id +
// "." + timestamp + "." + body)), compared in constant time, and the
// timestamp must be within tolerance of now (tolerance <= 0 skips that
// check). secret is the signing secret as the server shows it, either form:
// signing_secret_whsec ("whsec_" and the base64 of the key) or
// signing_secret (the key itself). During a rotation the server signs with
// both the new secret and the one it replaced (docs/api.md, "IPN
// settings"), so a receiver holding either verifies. Every failure is
// ErrSignature.
func VerifyStandardWebhook(secret, id, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	key := []byte(secret)
	if encoded, ok := strings.CutPrefix(secret, "whsec_"); ok {
		var err error
		if key, err = base64.StdEncoding.DecodeString(encoded); err != nil {
			return fmt.Errorf("%w: the whsec_ secret is not base64", ErrSignature)
		}
	}
	if len(key) == 0 {
		return fmt.Errorf("%w: no signing secret", ErrSignature)
	}
	if id == "" {
		return fmt.Errorf("%w: no %s header", ErrSignature, HeaderWebhookID)
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: the %s header %q is not Unix seconds", ErrSignature, HeaderWebhookTimestamp, timestamp)
	}
	if tolerance > 0 {
		if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
			return fmt.Errorf("%w: the timestamp is %s from now, more than %s", ErrSignature, d.Round(time.Second), tolerance)
		}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	want := mac.Sum(nil)
	found := false
	for _, v := range strings.Fields(signature) {
		b64, ok := strings.CutPrefix(v, "v1,")
		if !ok {
			continue // another scheme
		}
		found = true
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	if !found {
		return fmt.Errorf("%w: the %s header holds no v1, value", ErrSignature, HeaderWebhookSignature)
	}
	return fmt.Errorf("%w: no v1 signature matches", ErrSignature)
}

// IPN types (spec §2.8; docs/api.md, Payment gateway; the API v2 ones,
// sent only to a target that subscribes to them: docs/api-v2.md,
// Notifications).
const (
	IPNOrderPaid          = "ORDER_PAID"
	IPNTransactionVoid    = "TRANSACTION_VOID"
	IPNOrderPartiallyPaid = "ORDER_PARTIALLY_PAID"
	IPNOrderExpired       = "ORDER_EXPIRED"
	IPNRefundSucceeded    = "REFUND_SUCCEEDED"
	IPNRefundFailed       = "REFUND_FAILED"
)

// IPN is the body of a gateway notification (spec §2.8; docs/api.md, Payment
// gateway). Amounts are decimal text ("150000.00"); TransactionDate is
// YYYY-MM-DD HH:MM:SS in the server's business time zone.
type IPN struct {
	Timestamp        int64  `json:"timestamp"`         // when the notification was made, Unix seconds
	NotificationType string `json:"notification_type"` // IPNOrderPaid, IPNTransactionVoid, or a type the target subscribed to
	Order            struct {
		ID                 string          `json:"id"`
		OrderID            string          `json:"order_id"`
		OrderStatus        string          `json:"order_status"`
		OrderCurrency      string          `json:"order_currency"`
		OrderAmount        string          `json:"order_amount"`
		OrderInvoiceNumber string          `json:"order_invoice_number"`
		CustomData         json.RawMessage `json:"custom_data"`        // a JSON array
		CustomDataSigned   bool            `json:"custom_data_signed"` // false: the checkout's signature did not cover custom_data, which the payer may have written
		UserAgent          string          `json:"user_agent"`
		IPAddress          string          `json:"ip_address"`
		OrderDescription   string          `json:"order_description"`
	} `json:"order"`
	Transaction struct {
		ID                   string `json:"id"`
		PaymentMethod        string `json:"payment_method"`
		TransactionID        string `json:"transaction_id"`
		TransactionType      string `json:"transaction_type"` // PAYMENT or VOID
		TransactionDate      string `json:"transaction_date"`
		TransactionStatus    string `json:"transaction_status"` // APPROVED or VOIDED
		TransactionAmount    string `json:"transaction_amount"`
		TransactionCurrency  string `json:"transaction_currency"`
		AuthenticationStatus string `json:"authentication_status"`
		CardNumber           string `json:"card_number"`
		CardHolderName       string `json:"card_holder_name"`
		CardExpiry           string `json:"card_expiry"`
		CardFundingMethod    string `json:"card_funding_method"`
		CardBrand            string `json:"card_brand"`
	} `json:"transaction"`
	Customer struct {
		ID         string `json:"id"`
		CustomerID string `json:"customer_id"`
	} `json:"customer"`
}

// ParseIPN decodes an IPN body. A body without a notification_type is an error.
func ParseIPN(body []byte) (*IPN, error) {
	var n IPN
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, fmt.Errorf("recon: the IPN body is not JSON: %w", err)
	}
	if n.NotificationType == "" {
		return nil, errors.New("recon: the body is not an IPN: no notification_type")
	}
	return &n, nil
}

// HubEvent is the body of a bank-linking hub webhook (docs/design.md, D8):
// LINK_TOKEN_*, LINK_SESSION_*, BANK_ACCOUNT_*. Deduplicate on XID.
type HubEvent struct {
	Timestamp int64           `json:"timestamp"` // Unix seconds
	XID       string          `json:"xid"`
	Version   string          `json:"version"` // "1.0"
	Event     string          `json:"event"`
	Metadata  json.RawMessage `json:"metadata"`
}

// HubMetadata holds the metadata keys docs/design.md, D8 defines; an event
// carries those that apply to it.
type HubMetadata struct {
	LinkTokenXID      string `json:"link_token_xid"`
	LinkSessionXID    string `json:"link_session_xid"`
	Purpose           string `json:"purpose"` // LINK_BANK_ACCOUNT or UNLINK_BANK_ACCOUNT
	State             string `json:"state"`   // of LINK_SESSION_STATE_CHANGED
	BrandName         string `json:"brand_name"`
	AccountType       string `json:"account_type"` // individual or enterprise
	AccountNumber     string `json:"account_number"`
	AccountHolderName string `json:"account_holder_name"`
	BankAccountXID    string `json:"bank_account_xid"`
	Unlinked          bool   `json:"unlinked"` // true on a completed unlink
	Reason            string `json:"reason"`   // REVOKED, EXPIRED, FAILED, ABANDONED
}

// ParseHubEvent decodes a hub webhook body. A body without an event is an error.
func ParseHubEvent(body []byte) (*HubEvent, error) {
	var e HubEvent
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("recon: the hub event body is not JSON: %w", err)
	}
	if e.Event == "" {
		return nil, errors.New("recon: the body is not a hub event: no event")
	}
	return &e, nil
}

// Meta decodes the event's metadata.
func (e *HubEvent) Meta() (*HubMetadata, error) {
	var m HubMetadata
	if len(e.Metadata) == 0 || string(e.Metadata) == "null" {
		return &m, nil
	}
	if err := json.Unmarshal(e.Metadata, &m); err != nil {
		return nil, fmt.Errorf("recon: hub event metadata: %w", err)
	}
	return &m, nil
}

// Notification is a verified notification, as WebhookHandler hands it on.
type Notification struct {
	DeliveryID string    // X-Recon-Delivery: deduplicate on it
	Event      string    // X-Recon-Event
	Timestamp  time.Time // X-Recon-Timestamp
	Body       []byte    // the raw, verified body
}

// IPN decodes the notification as a gateway IPN.
func (n *Notification) IPN() (*IPN, error) { return ParseIPN(n.Body) }

// HubEvent decodes the notification as a hub webhook event.
func (n *Notification) HubEvent() (*HubEvent, error) { return ParseHubEvent(n.Body) }

type notificationKey struct{}

// NotificationFrom returns the verified notification WebhookHandler put in
// the request's context.
func NotificationFrom(ctx context.Context) (*Notification, bool) {
	n, ok := ctx.Value(notificationKey{}).(*Notification)
	return n, ok
}

// Receiver checks notifications before a handler sees them. Its zero value
// refuses everything; set at least a secret.
type Receiver struct {
	// Secrets are the signing secrets accepted: the current one, and the
	// previous one for a while after a rotation.
	Secrets []string
	// Tolerance is the replay window (0: DefaultTolerance).
	Tolerance time.Duration
	// MaxBody bounds the body read (0: 1 MiB); a longer one gets 413.
	MaxBody int64
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// WebhookHandler verifies each notification with signingSecret and the
// replay window tolerance (0: DefaultTolerance) and passes it on to next
// with the verified *Notification in its context (NotificationFrom); the
// body is read again from the start by next too. A missing, bad or stale
// signature gets 401 and next is not called.
func WebhookHandler(signingSecret string, tolerance time.Duration, next http.Handler) http.Handler {
	return (&Receiver{Secrets: []string{signingSecret}, Tolerance: tolerance}).Wrap(next)
}

// Wrap is WebhookHandler with the receiver's settings.
func (rc *Receiver) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, status, err := rc.Verify(r)
		if err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), notificationKey{}, n))
		r.Body = io.NopCloser(bytes.NewReader(n.Body))
		next.ServeHTTP(w, r)
	})
}

// HandleIPN returns a handler that verifies each notification, decodes it
// as an IPN and calls fn. It answers 200 when fn returns nil and 500
// otherwise (the server sends the IPN again later); 400 for a body that is
// not an IPN, 401 for a bad signature.
func (rc *Receiver) HandleIPN(fn func(ctx context.Context, n *Notification, ipn *IPN) error) http.Handler {
	return rc.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := NotificationFrom(r.Context())
		ipn, err := n.IPN()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := fn(r.Context(), n, ipn); err != nil {
			http.Error(w, "the notification was not processed", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
}

// Verify reads r's body (up to MaxBody) and checks its signature against
// each secret. On failure it returns the HTTP status to answer: 401 for a
// bad signature, 413 for a body too large, 400 for a body not read.
func (rc *Receiver) Verify(r *http.Request) (*Notification, int, error) {
	limit := rc.MaxBody
	if limit <= 0 {
		limit = 1 << 20
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("recon: reading the notification: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("recon: the notification is larger than %d bytes", limit)
	}
	now := time.Now
	if rc.Now != nil {
		now = rc.Now
	}
	tolerance := rc.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts, sig := r.Header.Get(HeaderTimestamp), r.Header.Get(HeaderSignature)
	err = fmt.Errorf("%w: no signing secret configured", ErrSignature)
	for _, secret := range rc.Secrets {
		if err = VerifySignature(secret, ts, sig, body, now(), tolerance); err == nil {
			break
		}
	}
	if err != nil {
		return nil, http.StatusUnauthorized, err
	}
	unix, _ := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	return &Notification{DeliveryID: r.Header.Get(HeaderDelivery), Event: r.Header.Get(HeaderEvent),
		Timestamp: time.Unix(unix, 0), Body: body}, 0, nil
}
