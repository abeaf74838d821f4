package web

import (
	"net/http"

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
