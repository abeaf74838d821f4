package delivery

import (
	"crypto/hmac"
	"errors"
	"strconv"
	"strings"
	"time"

	"recon"
)

// Headers of every delivery request (docs/design.md, D7): see recon.DeliveryHeaders.
const (
	HeaderTimestamp = recon.HeaderTimestamp
	HeaderSignature = recon.HeaderSignature
	HeaderDelivery  = recon.HeaderDelivery
	HeaderEvent     = recon.HeaderEvent
	HeaderSecretKey = recon.HeaderSecretKey
	UserAgent       = recon.DeliveryAgent
)

// ErrSignature is what Verify returns for a request it cannot vouch for.
var ErrSignature = errors.New("delivery: bad or expired signature")

// ErrNoSigningSecret is the error of an attempt to a target without a
// signing secret: nothing is sent.
var ErrNoSigningSecret = errors.New("the target has no signing secret: nothing is sent unsigned (save the target again to make one)")

// Sign returns the X-Recon-Signature value of a body sent at ts (Unix
// seconds): recon.SignPayload.
func Sign(secret string, ts int64, body []byte) string { return recon.SignPayload(secret, ts, body) }

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
