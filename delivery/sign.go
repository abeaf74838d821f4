package delivery

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Headers of every delivery request (decisions §7).
const (
	HeaderTimestamp = "X-Recon-Timestamp" // Unix seconds when the attempt was made
	HeaderSignature = "X-Recon-Signature" // v1=<hex HMAC-SHA256(signing secret, timestamp + "." + body)>
	HeaderDelivery  = "X-Recon-Delivery"  // the delivery's id: the same on every retry
	HeaderEvent     = "X-Recon-Event"     // ORDER_PAID, BANK_ACCOUNT_LINKED, ...
	HeaderSecretKey = "X-Secret-Key"      // the target's secret, for auth type SECRET_KEY only
	UserAgent       = "Recon-Webhook/1.0"
)

// ErrSignature is what Verify returns for a request it cannot vouch for.
var ErrSignature = errors.New("delivery: bad or expired signature")

// ErrNoSigningSecret is the error of an attempt to a target without a
// signing secret: nothing is sent.
var ErrNoSigningSecret = errors.New("the target has no signing secret: nothing is sent unsigned (save the target again to make one)")

// Sign returns the X-Recon-Signature value of a body sent at ts (Unix
// seconds): "v1=" and the hex HMAC-SHA256 under secret of the timestamp, a
// dot and the body. The secret is the target's signing secret, which every
// target has whatever its auth type (the server makes it; the merchant sees
// it once, when it is made or rotated): anyone without it can neither forge
// nor alter a notification.
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(strconv.AppendInt(nil, ts, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks the X-Recon-Timestamp and X-Recon-Signature headers of a
// request received at now, for receivers and tests. The signature header may
// list several comma-separated values (as when a secret is rotated); one v1
// value must match. A timestamp further than tolerance from now is refused,
// which bounds replays; tolerance <= 0 skips that check. It returns
// ErrSignature on any failure, and always for an empty secret.
func Verify(secret, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	if secret == "" {
		return ErrSignature
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrSignature
	}
	if tolerance > 0 {
		if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
			return ErrSignature
		}
	}
	want := Sign(secret, ts, body)
	for v := range strings.SplitSeq(signature, ",") {
		if hmac.Equal([]byte(strings.TrimSpace(v)), []byte(want)) {
			return nil
		}
	}
	return ErrSignature
}
