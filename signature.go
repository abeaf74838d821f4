package recon

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Headers of every delivery request (docs/design.md, D7).
const (
	HeaderTimestamp = "X-Recon-Timestamp" // Unix seconds when the attempt was made
	HeaderSignature = "X-Recon-Signature" // v1=<hex HMAC-SHA256(signing secret, timestamp + "." + body)>
	HeaderDelivery  = "X-Recon-Delivery"  // the delivery's id: the same on every retry
	HeaderEvent     = "X-Recon-Event"     // ORDER_PAID, BANK_ACCOUNT_LINKED, ...
	HeaderSecretKey = "X-Secret-Key"      // the target's secret, for auth type SECRET_KEY only
	DeliveryAgent   = "Recon-Webhook/1.0" // the User-Agent of every attempt

	// The Standard Webhooks headers (docs/design.md, D7, "Standard
	// Webhooks."), which its libraries verify unmodified.
	HeaderWebhookID        = "webhook-id"        // msg_<delivery id>: the same on every retry
	HeaderWebhookTimestamp = "webhook-timestamp" // the X-Recon-Timestamp instant, Unix seconds
	HeaderWebhookSignature = "webhook-signature" // v1,<base64 HMAC-SHA256(signing secret, id + "." + timestamp + "." + body)>
)

// SigningOverlap is how long a rotated signing secret keeps signing beside
// the new one (docs/design.md, D7, "Standard Webhooks.").
const SigningOverlap = 24 * time.Hour

// WhsecPrefix starts the form of a signing secret that Standard Webhooks
// libraries take (WhsecSecret).
const WhsecPrefix = "whsec_"

// WhsecSecret returns the signing secret in the form Standard Webhooks
// libraries take: "whsec_" and the standard base64 of the secret's bytes,
// which are the HMAC key of both header families.
func WhsecSecret(secret string) string {
	return WhsecPrefix + base64.StdEncoding.EncodeToString([]byte(secret))
}

// SigningSecrets returns the secrets that sign an attempt made at now: the
// signing secret, then the previous one while it is valid (a rotation less
// than SigningOverlap ago).
func (t *Target) SigningSecrets(now time.Time) []string {
	if t.PreviousValid(now) {
		return []string{t.SigningSecret, t.PreviousSigningSecret}
	}
	return []string{t.SigningSecret}
}

// PreviousValid reports whether the previous signing secret still signs at now.
func (t *Target) PreviousValid(now time.Time) bool {
	return t.PreviousSigningSecret != "" && now.Before(t.PreviousSigningUntil)
}

// PreviousUntilText returns when t's previous signing secret stops
// signing, in loc as the APIs, the dashboard and the CLI show times
// (DateTimeLayout), or "" when it has none (a store leaves out one that
// expired).
func (t *Target) PreviousUntilText(loc *time.Location) string {
	if t.PreviousSigningSecret == "" || t.PreviousSigningUntil.IsZero() {
		return ""
	}
	if loc == nil {
		loc = time.UTC
	}
	return t.PreviousSigningUntil.In(loc).Format(DateTimeLayout)
}

// KeepPrevious sets t's previous signing secret as a save of t over old
// (the stored target, nil when there is none) at now leaves it: when t's
// signing secret replaces old's, old's signs on until now + SigningOverlap;
// otherwise old's previous one is kept while it is valid. Of the secrets
// before a rotation only the last is kept: at most two ever sign.
func (t *Target) KeepPrevious(old *Target, now time.Time) {
	t.PreviousSigningSecret, t.PreviousSigningUntil = "", time.Time{}
	switch {
	case old == nil || old.SigningSecret == "":
	case t.SigningSecret != old.SigningSecret:
		t.PreviousSigningSecret, t.PreviousSigningUntil = old.SigningSecret, now.Add(SigningOverlap)
	case old.PreviousValid(now):
		t.PreviousSigningSecret, t.PreviousSigningUntil = old.PreviousSigningSecret, old.PreviousSigningUntil
	}
}

// SignStandard returns the signature of a Standard Webhooks header, "v1,"
// and the base64 HMAC-SHA256 under secret's bytes of the message id, the
// timestamp and the body, dot-separated.
func SignStandard(secret, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, ts, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// SignPayload returns the X-Recon-Signature value of a body sent at ts
// (Unix seconds): "v1=" and the hex HMAC-SHA256 under secret of the
// timestamp, a dot and the body. The secret is the target's signing secret,
// which every target has whatever its auth type: anyone without it can
// neither forge nor alter a notification.
func SignPayload(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(strconv.AppendInt(nil, ts, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// HeaderField is one request header.
type HeaderField struct{ Name, Value string }

// DeliveryHeaders returns, in order, the headers of an attempt to send d to
// t at now: content type, user agent, delivery id and event, the timestamp
// and the signature under t's signing secret, the Standard Webhooks headers
// (docs/design.md, D7, "Standard Webhooks."), and X-Secret-Key for a
// SECRET_KEY target. While a rotated signing secret is valid
// (Target.SigningSecrets) both sign: X-Recon-Signature lists two
// comma-separated v1= values, webhook-signature two space-separated v1,
// values, the current secret's first. The dispatcher sends them, `recon
// listen` forwards them, and the dashboard's "copy as cURL" writes them.
func DeliveryHeaders(t *Target, d *Delivery, now time.Time) []HeaderField {
	ts := now.Unix()
	id := "msg_" + strconv.FormatInt(d.ID, 10)
	var own, standard []string
	for _, secret := range t.SigningSecrets(now) {
		own = append(own, SignPayload(secret, ts, d.Payload))
		standard = append(standard, SignStandard(secret, id, ts, d.Payload))
	}
	h := []HeaderField{
		{"Content-Type", "application/json"},
		{"User-Agent", DeliveryAgent},
		{HeaderDelivery, strconv.FormatInt(d.ID, 10)},
		{HeaderEvent, d.Event},
		{HeaderTimestamp, strconv.FormatInt(ts, 10)},
		{HeaderSignature, strings.Join(own, ",")},
		{HeaderWebhookID, id},
		{HeaderWebhookTimestamp, strconv.FormatInt(ts, 10)},
		{HeaderWebhookSignature, strings.Join(standard, " ")},
	}
	if t.AuthType == AuthSecretKey {
		h = append(h, HeaderField{HeaderSecretKey, t.Secret})
	}
	return h
}
