package recon_test

import (
	"encoding/json"
	"testing"
	"time"

	"recon"
)

func TestShouldDisableTarget(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name         string
		active       bool
		failingSince time.Time
		want         bool
	}{
		{"never failed", true, time.Time{}, false},
		{"failing for an hour", true, now.Add(-time.Hour), false},
		{"failing for 71 h", true, now.Add(-71 * time.Hour), false},
		{"a second short of 72 h", true, now.Add(-72*time.Hour + time.Second), false},
		{"exactly 72 h", true, now.Add(-72 * time.Hour), true},
		{"failing for a week", true, now.Add(-7 * 24 * time.Hour), true},
		{"inactive (the merchant's or Recon's)", false, now.Add(-7 * 24 * time.Hour), false},
		{"a failure in the future (clocks apart)", true, now.Add(time.Hour), false},
	} {
		if got := recon.ShouldDisableTarget(tc.active, tc.failingSince, now); got != tc.want {
			t.Errorf("%s: ShouldDisableTarget = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTargetHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://shop.example.vn/ipn?token=secret": "https://shop.example.vn",
		"http://127.0.0.1:8080/a/b":                "http://127.0.0.1:8080",
		"https://user:pass@shop.example.vn/x":      "https://shop.example.vn",
		"not a url":                                "***",
		"":                                         "***",
	} {
		if got := recon.TargetHost(in); got != want {
			t.Errorf("TargetHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEndpointDisabledDelivery(t *testing.T) {
	ict := time.FixedZone("ICT", 7*3600)
	at := time.Date(2026, 11, 26, 19, 0, 0, 0, ict)
	h := &recon.TargetHealth{Kind: recon.DeliveryWebhook, URL: "https://hook.example.vn/x?k=1",
		FailingSince: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), DisabledAt: at, LastError: "connection refused"}
	for _, tc := range []struct {
		to, want string
	}{
		{recon.DeliveryIPN, `{"timestamp":1795694400,"notification_type":"ENDPOINT_DISABLED","endpoint":{"kind":"webhook","url":"https://hook.example.vn","failing_since":"2026-11-23T19:00:00+07:00","disabled_at":"2026-11-26T19:00:00+07:00","last_error":"connection refused"}}`},
		{recon.DeliveryWebhook, `{"timestamp":1795694400,"xid":"x1","version":"1.0","event":"ENDPOINT_DISABLED","metadata":{"endpoint":{"kind":"webhook","url":"https://hook.example.vn","failing_since":"2026-11-23T19:00:00+07:00","disabled_at":"2026-11-26T19:00:00+07:00","last_error":"connection refused"}}}`},
	} {
		d, err := recon.EndpointDisabledDelivery(7, tc.to, h, at, "x1")
		if err != nil {
			t.Fatalf("to %s: %v", tc.to, err)
		}
		if string(d.Payload) != tc.want || d.Kind != tc.to || d.Event != recon.EndpointDisabled || d.CompanyID != 7 || !json.Valid(d.Payload) {
			t.Errorf("to %s: %s %s %d\n%s\nwant %s", tc.to, d.Kind, d.Event, d.CompanyID, d.Payload, tc.want)
		}
	}
	if _, err := recon.EndpointDisabledDelivery(7, recon.DeliveryHubIPN, h, at, "x1"); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("to the hub IPN target: %v", err)
	}
}

func TestIPNWantsEndpointDisabled(t *testing.T) {
	for settings, want := range map[string]bool{
		`{}`:                                    false, // DefaultIPNTypes: a v1 receiver sees no new type
		`{"notification_types":["ORDER_PAID"]}`: false,
		`{"notification_types":["ORDER_PAID","ENDPOINT_DISABLED"]}`: true,
	} {
		if got, err := recon.IPNWants(settings, recon.IPNEndpointDisabled); err != nil || got != want {
			t.Errorf("IPNWants(%s) = %v, %v; want %v", settings, got, err, want)
		}
	}
}
