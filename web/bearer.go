package web

import (
	"errors"
	"net/http"
	"strings"

	"recon"
)

// Bearer tokens (RFC 6750) as /api/v1 and API v2 take them: the token of the
// Authorization header, and the WWW-Authenticate header of their 401 and
// 403 answers (docs/design.md, D1; docs/api-v2.md, Authentication, scopes
// and roles).

// bearerError decorates a domain error with what WWW-Authenticate needs.
type bearerError struct {
	Err     *recon.Error
	noToken bool   // 401 without credentials: no error attribute (RFC 6750 §3.1)
	scope   string // 403 insufficient_scope
}

func (e *bearerError) Error() string { return e.Err.Error() }
func (e *bearerError) Unwrap() error { return e.Err }

// BearerToken returns the access token of r's Authorization: Bearer header:
// a missing header, another scheme or an empty token is EUNAUTHORIZED.
func BearerToken(r *http.Request) (string, error) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return "", &bearerError{Err: recon.Errorf(recon.EUNAUTHORIZED, "the Authorization header is missing: send Authorization: Bearer <access token>"), noToken: true}
	}
	scheme, token, found := strings.Cut(auth, " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", recon.Errorf(recon.EUNAUTHORIZED, "the Authorization header must be: Bearer <access token>")
	}
	return token, nil
}

// MissingScope is the EFORBIDDEN of a token without scope, answered with
// error="insufficient_scope" (SetWWWAuthenticate).
func MissingScope(scope string) error {
	return &bearerError{Err: recon.Errorf(recon.EFORBIDDEN, "the access token lacks the scope %q", scope), scope: scope}
}

// SetWWWAuthenticate sets RFC 6750's WWW-Authenticate header of err's
// answer: on every 401 (without an error attribute when no token was sent),
// and on a 403 of a missing scope.
func SetWWWAuthenticate(h http.Header, err error) {
	var be *bearerError
	errors.As(err, &be)
	switch recon.ErrorCode(err) {
	case recon.EUNAUTHORIZED:
		if be != nil && be.noToken {
			h.Set("WWW-Authenticate", `Bearer realm="recon"`)
		} else {
			h.Set("WWW-Authenticate", `Bearer realm="recon", error="invalid_token", error_description="the access token is invalid, expired or revoked"`)
		}
	case recon.EFORBIDDEN:
		if be != nil && be.scope != "" {
			h.Set("WWW-Authenticate", `Bearer realm="recon", error="insufficient_scope", scope="`+be.scope+`"`)
		}
	}
}
