package recon

import (
	"errors"
	"net/url"
)

// ReasonError is a validation error with a machine-readable reason beside
// its code (INVALID_URL, BLOCKED_ADDRESS, INVALID_EVENT), which the gateway
// and hub error bodies show.
type ReasonError struct {
	Err    *Error
	Reason string
}

func (e *ReasonError) Error() string { return e.Err.Error() }
func (e *ReasonError) Unwrap() error { return e.Err }

// MaxTargetURLLen bounds the URL of a notification target, IPN, hub webhook
// and hub IPN alike (spec §8; docs/api.md, Notifications).
const MaxTargetURLLen = 2000

// CheckTargetURL applies the save-time rules of a notification target's URL
// to the field: at most MaxTargetURLLen characters, then check (the
// server's scheme and SSRF rules, delivery.CheckURL; nil accepts any
// absolute http(s) URL). A refusal is a *ReasonError: BLOCKED_ADDRESS when
// blocked says check refused an internal address, INVALID_URL otherwise.
func CheckTargetURL(field, raw string, check func(string) error, blocked func(error) bool) error {
	invalid := func(msg string) error {
		return &ReasonError{Err: FieldError(field, "%s", msg), Reason: "INVALID_URL"}
	}
	if len(raw) > MaxTargetURLLen {
		return invalid(field + " must be at most 2000 characters")
	}
	if check == nil {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid(field + " must be an absolute http or https URL")
		}
		return nil
	}
	err := check(raw)
	if err == nil {
		return nil
	}
	// The text of the check's error: a *Error's message, or the error's
	// own text (it is about the client's URL).
	problem := err.Error()
	var re *Error
	if errors.As(err, &re) {
		problem = re.Message
	}
	if blocked != nil && blocked(err) {
		return &ReasonError{Err: FieldError(field, "%s points to an internal address, which is blocked: %s", field, problem), Reason: "BLOCKED_ADDRESS"}
	}
	return invalid(field + " is not usable: " + problem)
}
