package recon

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
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
)

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
// and the signature under t's signing secret, and X-Secret-Key for a
// SECRET_KEY target. The dispatcher sends them, `recon listen` forwards
// them, and the dashboard's "copy as cURL" writes them.
func DeliveryHeaders(t *Target, d *Delivery, now time.Time) []HeaderField {
	ts := now.Unix()
	h := []HeaderField{
		{"Content-Type", "application/json"},
		{"User-Agent", DeliveryAgent},
		{HeaderDelivery, strconv.FormatInt(d.ID, 10)},
		{HeaderEvent, d.Event},
		{HeaderTimestamp, strconv.FormatInt(ts, 10)},
		{HeaderSignature, SignPayload(t.SigningSecret, ts, d.Payload)},
	}
	if t.AuthType == AuthSecretKey {
		h = append(h, HeaderField{HeaderSecretKey, t.Secret})
	}
	return h
}
