package recon

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"
)

// Endpoint health (docs/design.md, D7): each delivery target (a row of
// delivery_targets: the IPN target, the hub webhook, the hub IPN target, of
// one mode) keeps its failure streak, the time of the first failed attempt
// since its last success. A target whose every attempt has failed for
// EndpointDisableAfter is disabled by Recon (not by its merchant): its
// notifications are held, not attempted, until the merchant re-enables it
// and, on request, replays what it missed.

// EndpointDisableAfter is how long every attempt must have failed.
const EndpointDisableAfter = 72 * time.Hour

// DisabledByRecon is a target's DisabledBy when Recon disabled it; a
// merchant's own deactivation leaves DisabledBy "".
const DisabledByRecon = "disabled_by_recon"

// EndpointDisabled is the notification sent to the company's other active
// targets of the mode when one is disabled (docs/hub.md, Events; docs/api.md,
// Endpoint health). An IPN target receives it only when it subscribes to it
// (IPNTypes); the hub webhook always does; the hub IPN target never does.
const EndpointDisabled = "ENDPOINT_DISABLED"

// HeldError is the last_error of a delivery held because its target was
// disabled by Recon: dead, never attempted while the target is disabled,
// and made due again by the replay of what it missed (ReplayMissed).
const HeldError = "held: the target was disabled by Recon after failing for 3 days"

// TargetHealth is a target's health, as the maintenance step, the
// dashboard's settings card and the alerts read it.
type TargetHealth struct {
	Tenant TenantID
	Kind   string
	URL    string
	Active bool
	// FailingSince is the first failed attempt since the last success
	// (zero: none failed since).
	FailingSince time.Time
	// DisabledBy is DisabledByRecon when Recon disabled the target ("" when
	// it did not), at DisabledAt, for DisabledWhy.
	DisabledBy  string
	DisabledAt  time.Time
	DisabledWhy string
	// LastError is the newest failed attempt's error (read when disabling).
	LastError string
	// Held counts the notifications waiting for the replay (HeldError).
	Held int64
}

// DisabledByRecon reports whether Recon disabled the target (and nobody
// re-enabled it since).
func (h *TargetHealth) DisabledByRecon() bool {
	return h != nil && !h.Active && h.DisabledBy == DisabledByRecon
}

// ShouldDisableTarget is the rule: an active target whose first failure
// since its last success (failingSince) is at least EndpointDisableAfter
// before now is disabled. A target with no failure since its last success
// (zero failingSince), an inactive one, or one failing for less is not.
func ShouldDisableTarget(active bool, failingSince, now time.Time) bool {
	return active && !failingSince.IsZero() && !now.Before(failingSince.Add(EndpointDisableAfter))
}

// DisableReason is the why of a target Recon disables: since when every
// attempt failed, and the last error.
func DisableReason(failingSince time.Time, lastError string) string {
	why := "every attempt failed since " + failingSince.UTC().Format(time.RFC3339) + " (3 days)"
	if lastError != "" {
		why += "; last error: " + cutText(lastError, 300)
	}
	return why
}

// TargetHost is what a notification about a target shows of its URL: the
// scheme and host, never the path or query (which may carry a token).
func TargetHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "***"
	}
	return u.Scheme + "://" + u.Host
}

// EndpointInfo is the body's description of the disabled target.
type EndpointInfo struct {
	Kind       string `json:"kind"`
	URL        string `json:"url"` // scheme and host only (TargetHost)
	Since      string `json:"failing_since"`
	DisabledAt string `json:"disabled_at"`
	LastError  string `json:"last_error"`
}

type endpointDisabledIPN struct {
	Timestamp        int64        `json:"timestamp"`
	NotificationType string       `json:"notification_type"`
	Endpoint         EndpointInfo `json:"endpoint"`
}

type endpointDisabledHub struct {
	Timestamp int64                   `json:"timestamp"`
	XID       string                  `json:"xid"`
	Version   string                  `json:"version"`
	Event     string                  `json:"event"`
	Metadata  map[string]EndpointInfo `json:"metadata"`
}

// EndpointDisabledDelivery is the ENDPOINT_DISABLED notification about the
// disabled target h, to the company's target of kind to, made at at (in the
// business time zone): to an IPN target an IPN-shaped body
// ({timestamp, notification_type, endpoint}), to the hub webhook a hub
// event ({timestamp, xid, version, event, metadata: {endpoint}}, xid its
// id). The hub IPN target takes balance changes only: EINVALID.
func EndpointDisabledDelivery(companyID int64, to string, h *TargetHealth, at time.Time, xid string) (*Delivery, error) {
	info := EndpointInfo{Kind: h.Kind, URL: TargetHost(h.URL), LastError: cutText(h.LastError, 300),
		Since: h.FailingSince.In(at.Location()).Format(time.RFC3339), DisabledAt: h.DisabledAt.In(at.Location()).Format(time.RFC3339)}
	var body any
	switch to {
	case DeliveryIPN:
		body = endpointDisabledIPN{Timestamp: at.Unix(), NotificationType: EndpointDisabled, Endpoint: info}
	case DeliveryWebhook:
		body = endpointDisabledHub{Timestamp: at.Unix(), XID: xid, Version: "1.0", Event: EndpointDisabled,
			Metadata: map[string]EndpointInfo{"endpoint": info}}
	default:
		return nil, Errorf(EINVALID, "no %s notification goes to a %s target", EndpointDisabled, to)
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &Delivery{CompanyID: companyID, Kind: to, Event: EndpointDisabled, Payload: payload}, nil
}

// CheckTargetKind is EINVALID unless kind names a delivery target
// (DeliveryKinds), required.
func CheckTargetKind(kind string) error {
	if kind == "" {
		return FieldError("kind", "kind is required: %s", strings.Join(DeliveryKinds, ", "))
	}
	return CheckDeliveryKind("kind", kind)
}
