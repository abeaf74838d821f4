package web

import (
	"net/http"
	"strconv"

	"recon"
)

var errorStatus = map[string]struct {
	status int
	name   string
}{
	recon.EINVALID:      {http.StatusBadRequest, "validation_error"},
	recon.EUNAUTHORIZED: {http.StatusUnauthorized, "unauthorized"},
	recon.EFORBIDDEN:    {http.StatusForbidden, "forbidden"},
	recon.ENOTFOUND:     {http.StatusNotFound, "not_found"},
	recon.ECONFLICT:     {http.StatusConflict, "conflict"},
	// The families of docs/design.md, D1 have no 422: a business rule is a validation error.
	recon.EUNPROCESSABLE: {http.StatusBadRequest, "validation_error"},
	recon.ERATELIMITED:   {http.StatusTooManyRequests, "rate_limited"},
	recon.EUNAVAILABLE:   {http.StatusServiceUnavailable, "unavailable"},
	recon.EINTERNAL:      {http.StatusInternalServerError, "internal_error"},
}

// ErrorStatus returns the HTTP status and the error code name (docs/design.md,
// D1) of err, which every API family writes in its own envelope. An error
// that is not a *recon.Error is internal: 500, internal_error.
func ErrorStatus(err error) (status int, name string) {
	s, ok := errorStatus[recon.ErrorCode(err)]
	if !ok {
		s = errorStatus[recon.EINTERNAL]
	}
	return s.status, s.name
}

// RetryAfterUnavailable is the Retry-After, in seconds, of a 503 whose
// error did not set its own: long enough for a failover to finish or a
// connection to be made again (docs/design.md, Losing the primary), short
// enough that a client's retry comes soon after.
const RetryAfterUnavailable = 5

// SetRetryAfter sets Retry-After on h when err is EUNAVAILABLE (a 503) and
// no Retry-After is set yet (a refusal that knows its wait, as Slots, sets
// its own). Every family's error writer calls it: a 503 always says when to
// retry (docs/api.md, Errors).
func SetRetryAfter(h http.Header, err error) {
	if recon.ErrorCode(err) == recon.EUNAVAILABLE && h.Get("Retry-After") == "" {
		h.Set("Retry-After", strconv.Itoa(RetryAfterUnavailable))
	}
}
