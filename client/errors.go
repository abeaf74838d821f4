package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error codes of /api/v1 and the gateway (docs/design.md, D1), which API v2
// shares (its error_code), with 422 unprocessable and the codes below. OAuth2
// errors carry the RFC 6749 codes instead (invalid_grant, invalid_client,
// access_denied, ...).
const (
	CodeValidation   = "validation_error"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeNotFound     = "not_found"
	CodeConflict     = "conflict"
	CodeRateLimited  = "rate_limited"
	CodeUnavailable  = "unavailable"
	CodeInternal     = "internal_error"
)

// Codes of API v2 (docs/api-v2.md, Envelope and errors): the generic 422,
// and the error_code of a rule, which names it.
const (
	CodeUnprocessable          = "unprocessable"
	CodeIdempotencyKeyRequired = "idempotency_key_required" // 422
	CodeIdempotencyKeyReused   = "idempotency_key_reused"   // 409
	CodeIdempotencyKeyInUse    = "idempotency_key_in_use"   // 409
	CodeCursorExpired          = "cursor_expired"           // 409: sync again without a cursor
)

// Error is a failure the server reported: any answer outside 2xx (and a
// refused payment-code configuration, which the API answers with HTTP 400
// and a "success" envelope). Use errors.As to reach it:
//
//	var e *client.Error
//	if errors.As(err, &e) && e.Code == client.CodeConflict { ... }
type Error struct {
	StatusCode int // HTTP status
	// Code is validation_error, not_found, ...; an RFC 6749 code on /oauth;
	// API v2's error_code (a rule's own: amount_exceeds_refundable,
	// cursor_expired, ...).
	Code    string
	Message string // the server's sentence
	// Fields holds the problems per field, when the server names them.
	Fields map[string][]string
	// Reason refines a gateway validation error: INVALID_URL, BLOCKED_ADDRESS.
	Reason string
	// RequestID is the X-Request-Id of the answer: quote it to the operator.
	RequestID string
	// RetryAfter is the answer's Retry-After (429, 503), zero when absent.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "recon: %d", e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return b.String()
}

// errorEnvelope holds every error body the server writes:
//
//	/api/v1:  {"status":"error","error":CODE,"message":TEXT,"errors":{field:[TEXT]}}
//	/v2:      {"status":"error","error_code":CODE,"message":TEXT,"errors":{field:[TEXT]}}
//	gateway:  {"error":{"code":CODE,"message":TEXT,"reason":R},"message":TEXT}
//	/oauth:   {"error":CODE,"error_description":TEXT}
//	§4.2:     {"status":"success","data":{"status":false,"message":TEXT}}
//	hub:      {"code":HTTP,"message":TEXT,"errors":{field:TEXT}}
type errorEnvelope struct {
	Error            json.RawMessage            `json:"error"`
	ErrorCode        string                     `json:"error_code"`
	Message          string                     `json:"message"`
	ErrorDescription string                     `json:"error_description"`
	Errors           map[string]json.RawMessage `json:"errors"`
	Data             *struct {
		Status  *bool  `json:"status"`
		Message string `json:"message"`
	} `json:"data"`
}

// decodeError builds the *Error of an answer from its status, headers and
// body, whichever API family wrote it.
func decodeError(status int, h http.Header, body []byte, now time.Time) *Error {
	e := &Error{StatusCode: status, RequestID: h.Get("X-Request-Id"), RetryAfter: retryAfter(h.Get("Retry-After"), now)}
	var env errorEnvelope
	if json.Unmarshal(body, &env) != nil {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 200 || e.Message == "" {
			e.Message = http.StatusText(status)
		}
		e.Code = defaultCode(status)
		return e
	}
	e.Message = env.Message
	var code string
	var gw struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Reason  string `json:"reason"`
	}
	switch {
	case env.ErrorCode != "":
		e.Code = env.ErrorCode
	case json.Unmarshal(env.Error, &code) == nil && code != "":
		e.Code = code
		if env.ErrorDescription != "" {
			e.Message = env.ErrorDescription
		}
	case json.Unmarshal(env.Error, &gw) == nil && gw.Code != "":
		e.Code, e.Reason = gw.Code, gw.Reason
		if gw.Message != "" {
			e.Message = gw.Message
		}
	case env.Data != nil && env.Data.Status != nil && !*env.Data.Status:
		e.Code, e.Message = CodeValidation, env.Data.Message
	default:
		e.Code = defaultCode(status)
	}
	for field, raw := range env.Errors {
		var list []string
		var one string
		if json.Unmarshal(raw, &list) != nil {
			if json.Unmarshal(raw, &one) != nil {
				continue
			}
			list = []string{one}
		}
		if e.Fields == nil {
			e.Fields = map[string][]string{}
		}
		e.Fields[field] = list
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// defaultCode is the code of an answer whose body names none.
func defaultCode(status int) string {
	switch {
	case status == http.StatusBadRequest:
		return CodeValidation
	case status == http.StatusUnauthorized:
		return CodeUnauthorized
	case status == http.StatusForbidden:
		return CodeForbidden
	case status == http.StatusNotFound:
		return CodeNotFound
	case status == http.StatusConflict:
		return CodeConflict
	case status == http.StatusUnprocessableEntity:
		return CodeUnprocessable
	case status == http.StatusTooManyRequests:
		return CodeRateLimited
	case status == http.StatusServiceUnavailable:
		return CodeUnavailable
	case status >= 500:
		return CodeInternal
	}
	return ""
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(min(n, 86400)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now))
	}
	return 0
}
