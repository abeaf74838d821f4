package web

import (
	"errors"
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
