package recon

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes: a small fixed set, mapped to HTTP statuses and body shapes by
// each API family in one place.
const (
	EINVALID      = "invalid"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	// EUNPROCESSABLE is a well-formed request that a business rule refuses
	// (an amount above what is refundable, an order in the wrong state):
	// API v2 answers 422 with the error's Reason as its error_code
	// (docs/api-v2.md, Envelope and errors); /api/v1 and the gateway, which
	// have no 422, answer it as their validation error (400).
	EUNPROCESSABLE = "unprocessable"
	ERATELIMITED   = "rate_limited"
	EUNAVAILABLE   = "unavailable"
	EINTERNAL      = "internal"
)

// Error is the error every layer returns for an expected failure. Message is
// safe to show to a client; Err (internal detail) never is.
type Error struct {
	Code    string
	Message string
	// Fields holds per-field problems of a validation error, keyed by field name.
	Fields map[string][]string
	// Reason names the precise rule an error broke, in snake case, for the
	// API families that show it (API v2's error_code: amount_exceeds_refundable,
	// invalid_state, idempotency_key_reused, ...; docs/api-v2.md, Envelope and
	// errors). Empty: the family names the error after its Code. Code still
	// decides the HTTP status, so a reason is free to be specific.
	Reason string
	// Say is the message as data, for the surfaces that write it in the
	// reader's language (the dashboard's catalogue: docs/dashboard.md,
	// Language); Message stays the English text the APIs and the CLI show.
	// Nil: Message is all there is.
	Say *Say
	// Err is the underlying cause, for logs only.
	Err error
}

// Say is an error's message as a key of the dashboard's catalogue and its
// arguments; Row, when above 0, is the line of a file the problem is on.
type Say struct {
	Key  string
	Args []string
	Row  int
}

// Saying sets e's Say (see Error) and returns e.
func (e *Error) Saying(key string, args ...string) *Error {
	e.Say = &Say{Key: key, Args: args}
	return e
}

// ErrorSay returns the Say of the first *Error in err's chain, nil when it
// has none.
func ErrorSay(err error) *Say {
	var e *Error
	if errors.As(err, &e) {
		if u := unavailableCause(e.Err); e.Code == EINTERNAL && u != nil {
			return u.Say // see ErrorCode
		}
		return e.Say
	}
	return nil
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// RuleError returns an EUNPROCESSABLE error whose Reason names the business
// rule the request broke (API v2: 422 with error_code reason).
func RuleError(reason, format string, args ...any) *Error {
	return &Error{Code: EUNPROCESSABLE, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// WithReason sets e's Reason (see Error) and returns e.
func (e *Error) WithReason(reason string) *Error {
	e.Reason = reason
	return e
}

// ErrorReason returns the Reason of the first *Error in err's chain, "" when
// it has none.
func ErrorReason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// FieldError returns an EINVALID error naming one field.
func FieldError(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: EINVALID, Message: msg, Fields: map[string][]string{field: {msg}}}
}

// Nested names the fields of err by their path under parent, a nested
// object of a request body ("amount_mode" of "va" is "va.amount_mode"), in
// Fields and at the start of the message, which names its field first. Any
// other error is returned as it is; err itself is not changed.
func Nested(parent string, err error) error {
	var e *Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return err
	}
	n := *e
	n.Fields = make(map[string][]string, len(e.Fields))
	for field, msgs := range e.Fields {
		path := parent + "." + field
		renamed := make([]string, len(msgs))
		for i, m := range msgs {
			renamed[i] = nestedText(m, field, path)
		}
		n.Fields[path] = renamed
		n.Message = nestedText(n.Message, field, path)
	}
	return &n
}

// nestedText is msg with its leading field name replaced by path.
func nestedText(msg, field, path string) string {
	if rest, found := strings.CutPrefix(msg, field); found && (rest == "" || rest[0] == ' ') {
		return path + rest
	}
	return msg
}

// ErrorCode returns the code of err: the code of the first *Error in its chain,
// EINTERNAL for any other non-nil error, "" for nil. An EINTERNAL *Error
// whose cause is EUNAVAILABLE (a layer that wrapped a store error it did not
// expect, when the database was unreachable) is EUNAVAILABLE: the request may
// succeed when retried (docs/design.md, Losing the primary).
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Code == EINTERNAL && unavailableCause(e.Err) != nil {
			return EUNAVAILABLE
		}
		return e.Code
	}
	return EINTERNAL
}

// unavailableCause returns the first EUNAVAILABLE *Error in err's chain
// below any EINTERNAL ones, nil when there is none.
func unavailableCause(err error) *Error {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return nil
		}
		if e.Code == EUNAVAILABLE {
			return e
		}
		if e.Code != EINTERNAL {
			return nil
		}
		err = e.Err
	}
	return nil
}

// ErrorMessage returns the client-safe message of err. Errors that are not an
// *Error yield a generic text: their detail is for the logs only; an
// internal error caused by an unavailable one (see ErrorCode) has the
// latter's message.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		return e.Message
	}
	if e != nil {
		if u := unavailableCause(e.Err); u != nil {
			return u.Message
		}
	}
	return "An internal error occurred."
}
