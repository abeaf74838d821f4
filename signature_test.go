package recon

import (
	"strings"
	"testing"
	"time"
)

// The example of the Standard Webhooks specification: its whsec_ secret is
// WhsecSecret of the key it decodes to.
func TestSignStandardExample(t *testing.T) {
	const key = "1\xf2\x90\xf6\xbf\x06)\x8a\xabO\x08\xd4<?\x08,\xf6H\xa3b\xda-\xa4\xb0"
	if got := WhsecSecret(key); got != "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" {
		t.Fatalf("WhsecSecret = %q", got)
	}
	if got := SignStandard(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`)); got != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("SignStandard = %q", got)
	}
}

func TestKeepPrevious(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	day := now.Add(SigningOverlap)
	for _, tc := range []struct {
		name      string
		old       *Target
		signing   string
		wantPrev  string
		wantUntil time.Time
	}{
		{"new target", nil, "B", "", time.Time{}},
		{"kept, none before", &Target{SigningSecret: "A"}, "A", "", time.Time{}},
		{"rotated", &Target{SigningSecret: "A"}, "B", "A", day},
		{"kept during the day", &Target{SigningSecret: "B", PreviousSigningSecret: "A", PreviousSigningUntil: now.Add(time.Hour)}, "B", "A", now.Add(time.Hour)},
		{"kept after the day", &Target{SigningSecret: "B", PreviousSigningSecret: "A", PreviousSigningUntil: now}, "B", "", time.Time{}},
		{"rotated again within the day: the oldest dropped", &Target{SigningSecret: "B", PreviousSigningSecret: "A", PreviousSigningUntil: now.Add(time.Hour)}, "C", "B", day},
		{"before a signing secret existed", &Target{}, "B", "", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &Target{SigningSecret: tc.signing, PreviousSigningSecret: "stale", PreviousSigningUntil: day.Add(time.Hour)}
			next.KeepPrevious(tc.old, now)
			if next.PreviousSigningSecret != tc.wantPrev || !next.PreviousSigningUntil.Equal(tc.wantUntil) {
				t.Fatalf("previous %q until %v, want %q until %v", next.PreviousSigningSecret, next.PreviousSigningUntil, tc.wantPrev, tc.wantUntil)
			}
		})
	}
}

func TestDeliveryHeadersSignWithBothSecretsDuringTheDay(t *testing.T) {
	now := time.Unix(1_735_689_600, 0)
	d := &Delivery{ID: 42, Event: "ORDER_PAID", Payload: []byte(`{"a":1}`)}
	tg := &Target{AuthType: AuthSecretKey, Secret: "sk", SigningSecret: "new", PreviousSigningSecret: "old", PreviousSigningUntil: now.Add(time.Second)}
	headers := func(at time.Time) map[string]string {
		m := map[string]string{}
		for _, f := range DeliveryHeaders(tg, d, at) {
			m[f.Name] = f.Value
		}
		return m
	}
	h := headers(now)
	if h[HeaderWebhookID] != "msg_42" || h[HeaderWebhookTimestamp] != "1735689600" || h[HeaderTimestamp] != h[HeaderWebhookTimestamp] || h[HeaderSecretKey] != "sk" {
		t.Fatalf("headers %v", h)
	}
	if want := SignPayload("new", now.Unix(), d.Payload) + "," + SignPayload("old", now.Unix(), d.Payload); h[HeaderSignature] != want {
		t.Fatalf("X-Recon-Signature %q, want %q", h[HeaderSignature], want)
	}
	if want := SignStandard("new", "msg_42", now.Unix(), d.Payload) + " " + SignStandard("old", "msg_42", now.Unix(), d.Payload); h[HeaderWebhookSignature] != want {
		t.Fatalf("webhook-signature %q, want %q", h[HeaderWebhookSignature], want)
	}
	// At the end of the day the old one no longer signs.
	later := now.Add(time.Second)
	h = headers(later)
	if h[HeaderSignature] != SignPayload("new", later.Unix(), d.Payload) || h[HeaderWebhookSignature] != SignStandard("new", "msg_42", later.Unix(), d.Payload) ||
		strings.Contains(h[HeaderWebhookSignature], " ") {
		t.Fatalf("after the day: %v", h)
	}
}
