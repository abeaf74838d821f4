package web

import (
	"errors"
	"net/http"
	"testing"

	"recon"
)

// TestErrorStatus checks the status and code name of each recon.Error code
// in the families of docs/design.md, D1, which have no 422: a business
// rule (EUNPROCESSABLE, API v2's 422) is their 400 validation_error, and
// its Reason is not theirs to show.
func TestErrorStatus(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		name   string
	}{
		{recon.Errorf(recon.EINVALID, "x"), 400, "validation_error"},
		{recon.RuleError("amount_exceeds_refundable", "x"), 400, "validation_error"},
		{recon.Errorf(recon.ECONFLICT, "x").WithReason("idempotency_key_reused"), 409, "conflict"},
		{recon.Errorf(recon.ENOTFOUND, "x"), 404, "not_found"},
		{recon.Errorf(recon.ERATELIMITED, "x"), 429, "rate_limited"},
		{errors.New("boom"), 500, "internal_error"},
	} {
		if status, name := ErrorStatus(tc.err); status != tc.status || name != tc.name {
			t.Errorf("%v: %d %s, want %d %s", tc.err, status, name, tc.status, tc.name)
		}
	}
}

// TestSetRetryAfter: every 503 says when to retry, 5 s unless the refusal
// set its own wait; other errors get none.
func TestSetRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		preset string
		want   string
	}{
		{"unavailable", recon.Errorf(recon.EUNAVAILABLE, "the database is not reachable"), "", "5"},
		{"internal of unavailable", &recon.Error{Code: recon.EINTERNAL, Err: recon.Errorf(recon.EUNAVAILABLE, "away")}, "", "5"},
		{"its own wait kept", recon.Errorf(recon.EUNAVAILABLE, "slots full"), "10", "10"},
		{"internal", errors.New("boom"), "", ""},
		{"not found", recon.Errorf(recon.ENOTFOUND, "gone"), "", ""},
	} {
		h := http.Header{}
		if tt.preset != "" {
			h.Set("Retry-After", tt.preset)
		}
		SetRetryAfter(h, tt.err)
		if got := h.Get("Retry-After"); got != tt.want {
			t.Errorf("%s: Retry-After %q, want %q", tt.name, got, tt.want)
		}
		if status, _ := ErrorStatus(tt.err); tt.want != "" && status != http.StatusServiceUnavailable {
			t.Errorf("%s: status %d, want 503", tt.name, status)
		}
	}
}
