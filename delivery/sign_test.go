package delivery_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"recon/delivery"
)

func TestSign(t *testing.T) {
	t.Parallel()
	body := []byte(`{"notification_type":"ORDER_PAID"}`)
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte("1772352000." + string(body)))
	want := "v1=" + hex.EncodeToString(mac.Sum(nil))
	if got := delivery.Sign("s3cret", 1772352000, body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	// An empty secret still signs (HMAC with an empty key).
	if got := delivery.Sign("", 1772352000, body); got == want || len(got) != len(want) {
		t.Fatalf("Sign with an empty secret = %q", got)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := []byte(`{"a":1}`)
	now := time.Unix(1772352000, 0)
	sig := delivery.Sign("k", now.Unix(), body)
	for _, tc := range []struct {
		name, secret, ts, sig string
		body                  []byte
		at                    time.Time
		tolerance             time.Duration
		ok                    bool
	}{
		{"valid", "k", "1772352000", sig, body, now, 5 * time.Minute, true},
		{"rotated secrets", "k", "1772352000", "v1=00ff, " + sig, body, now, 5 * time.Minute, true},
		{"received later within tolerance", "k", "1772352000", sig, body, now.Add(4 * time.Minute), 5 * time.Minute, true},
		{"replayed too late", "k", "1772352000", sig, body, now.Add(6 * time.Minute), 5 * time.Minute, false},
		{"from the future", "k", "1772352000", sig, body, now.Add(-6 * time.Minute), 5 * time.Minute, false},
		{"no age check", "k", "1772352000", sig, body, now.Add(time.Hour), 0, true},
		{"other secret", "x", "1772352000", sig, body, now, 5 * time.Minute, false},
		{"other body", "k", "1772352000", sig, []byte(`{"a":2}`), now, 5 * time.Minute, false},
		{"other timestamp", "k", "1772352001", sig, body, now, 5 * time.Minute, false},
		{"bad timestamp", "k", "soon", sig, body, now, 5 * time.Minute, false},
		{"no signature", "k", "1772352000", "", body, now, 5 * time.Minute, false},
		{"no version", "k", "1772352000", sig[3:], body, now, 5 * time.Minute, false},
		{"empty secret", "", "1772352000", delivery.Sign("", now.Unix(), body), body, now, 5 * time.Minute, false},
	} {
		err := delivery.Verify(tc.secret, tc.ts, tc.sig, tc.body, tc.at, tc.tolerance)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, delivery.ErrSignature)) {
			t.Errorf("%s: Verify = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
