package recon

import (
	"context"
	"encoding/json"
	"time"
)

// Operations on a tenant's notifications beyond one delivery: replaying
// every failed one since a time, the per-target figures of the delivery log,
// and a test notification to check an endpoint.

// TestNotificationEvent is the event of a test notification: sent to the
// tenant's active target of a kind on request, whatever the target
// subscribes to, so a merchant can check its endpoint, its secret and its
// signature check. It is never sent by anything else.
const TestNotificationEvent = "TEST_NOTIFICATION"

// TestNotification builds the test notification of a kind, in the body
// shape of that kind: an IPN's top-level keys, a hub event's envelope, a
// balance change's event key. xid is the hub event's id (NewXID, chosen by
// the store), unused by the other kinds.
func TestNotification(companyID int64, kind string, at time.Time, xid string) (*Delivery, error) {
	if err := CheckDeliveryKind("kind", kind); err != nil {
		return nil, err
	}
	const message = "A test notification from Recon: your endpoint is reachable and can check the signature."
	var body any
	switch kind {
	case DeliveryIPN:
		body = struct {
			Timestamp        int64  `json:"timestamp"`
			NotificationType string `json:"notification_type"`
			Message          string `json:"message"`
		}{at.Unix(), TestNotificationEvent, message}
	case DeliveryWebhook:
		body = struct {
			HubEventBody
			Message string `json:"message"`
		}{HubEventBody{Timestamp: at.Unix(), XID: xid, Version: "1.0", Event: TestNotificationEvent}, message}
	default:
		body = struct {
			Timestamp int64  `json:"timestamp"`
			Event     string `json:"event"`
			Message   string `json:"message"`
		}{at.Unix(), TestNotificationEvent, message}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &Delivery{CompanyID: companyID, Kind: kind, Event: TestNotificationEvent, Payload: payload}, nil
}

// FailedFilter selects the failed deliveries of a tenant: dead ones, and
// pending ones with at least one failed attempt (waiting for a retry),
// created at or after Since, of one kind or any ("").
type FailedFilter struct {
	Kind  string
	Since time.Time
}

// TargetStats are the figures of a tenant's deliveries of one kind created
// since a time: how many are in each state, how many attempts were made and
// succeeded (2xx), and the attempts' latency.
type TargetStats struct {
	Kind                   string
	Delivered, Pending     int64
	Failing, Dead          int64 // Failing: pending after at least one failed attempt
	Attempts, Succeeded    int64
	LatencyP50, LatencyP95 time.Duration
}

// SuccessRate is Succeeded/Attempts, 0 without attempts.
func (s TargetStats) SuccessRate() float64 {
	if s.Attempts == 0 {
		return 0
	}
	return float64(s.Succeeded) / float64(s.Attempts)
}

// MaxStatsDeliveries bounds the deliveries the figures of a request read
// (the API, the CLI, the dashboard): the newest of the window.
const MaxStatsDeliveries = 2_000

// MaxCountedFailed bounds the count of a replay's confirmation page.
const MaxCountedFailed = 10_000

// DeliveryOpsStore replays and measures a tenant's notifications.
type DeliveryOpsStore interface {
	// ReplayFailed makes the tenant's failed deliveries the filter selects
	// pending and due at now, in one statement, and reports how many.
	ReplayFailed(ctx context.Context, tenant TenantID, f FailedFilter, now time.Time) (int64, error)
	// CountFailed counts, up to max, the deliveries ReplayFailed with the
	// same filter would replay at now (the confirmation step's figure).
	CountFailed(ctx context.Context, tenant TenantID, f FailedFilter, now time.Time, max int) (int64, error)
	// DeliveryTargetStats returns the figures of each kind the tenant has
	// deliveries of, created at or after since, in the order of
	// DeliveryKinds, over at most the newest max of those deliveries (and
	// their attempts): bounded work whatever the volume of the window.
	DeliveryTargetStats(ctx context.Context, tenant TenantID, since time.Time, max int) ([]TargetStats, error)
	// SendTestNotification enqueues the test notification of the kind
	// (TestNotification) to the tenant's active target of the kind, or, in
	// test mode without one, for recon listen, as every notification;
	// EINVALID when there is nowhere to send it.
	SendTestNotification(ctx context.Context, tenant TenantID, kind string) (*Delivery, error)
}
