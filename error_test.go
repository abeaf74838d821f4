package recon

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// TestNested: a nested object's field errors are named by their path, in
// Fields and at the start of the message; the original error is left as it
// is, and errors without fields pass through.
func TestNested(t *testing.T) {
	plain := errors.New("boom")
	rule := RuleError(ReasonInvalidState, "order x is paid")
	for _, c := range []struct {
		name        string
		err         error
		message     string
		fields      map[string][]string
		sameAsGiven bool
	}{
		{"field first", FieldError("amount_mode", "amount_mode must be one of exact, partial, open"),
			"va.amount_mode must be one of exact, partial, open",
			map[string][]string{"va.amount_mode": {"va.amount_mode must be one of exact, partial, open"}}, false},
		{"field elsewhere", FieldError("amount", "an open virtual account asks for no amount"),
			"an open virtual account asks for no amount",
			map[string][]string{"va.amount": {"an open virtual account asks for no amount"}}, false},
		{"a longer word", FieldError("amount", "amounts differ"), "amounts differ",
			map[string][]string{"va.amount": {"amounts differ"}}, false},
		{"no fields", rule, "order x is paid", nil, true},
		{"not ours", plain, "", nil, true},
	} {
		got := Nested("va", c.err)
		if c.sameAsGiven {
			if got != c.err {
				t.Errorf("%s: %v, want the error given", c.name, got)
			}
			continue
		}
		var e *Error
		if !errors.As(got, &e) || e.Code != EINVALID || e.Message != c.message || !reflect.DeepEqual(e.Fields, c.fields) {
			t.Errorf("%s: %#v", c.name, got)
		}
		if orig := c.err.(*Error); orig.Fields["va."+firstKey(orig.Fields)] != nil {
			t.Errorf("%s: the given error was changed: %v", c.name, orig.Fields)
		}
	}
}

func firstKey(m map[string][]string) string {
	for k := range m {
		return k
	}
	return ""
}

// TestInternalErrorOfAnUnavailableOne: a layer that wrapped a store error it
// did not expect in an EINTERNAL error keeps a lost database EUNAVAILABLE
// (a 503 with its message and catalogue key, not a 500); any other cause
// stays internal (docs/design.md, Losing the primary).
func TestInternalErrorOfAnUnavailableOne(t *testing.T) {
	away := (&Error{Code: EUNAVAILABLE, Message: "retry shortly", Err: errors.New("EOF")}).Saying("db_unavailable")
	for _, tt := range []struct {
		name string
		err  error
		code string
		msg  string
		say  string
	}{
		{"unavailable", away, EUNAVAILABLE, "retry shortly", "db_unavailable"},
		{"wrapped by fmt", fmt.Errorf("loading: %w", away), EUNAVAILABLE, "retry shortly", "db_unavailable"},
		{"internal of unavailable", &Error{Code: EINTERNAL, Message: "could not check the token", Err: away}, EUNAVAILABLE, "retry shortly", "db_unavailable"},
		{"internal of internal of unavailable", &Error{Code: EINTERNAL, Err: fmt.Errorf("x: %w", &Error{Code: EINTERNAL, Err: away})}, EUNAVAILABLE, "retry shortly", "db_unavailable"},
		{"internal of another error", &Error{Code: EINTERNAL, Message: "m", Err: errors.New("boom")}, EINTERNAL, "An internal error occurred.", ""},
		{"not found of unavailable keeps its code", &Error{Code: ENOTFOUND, Message: "gone", Err: away}, ENOTFOUND, "gone", ""},
		{"internal of a conflict of unavailable", &Error{Code: EINTERNAL, Err: &Error{Code: ECONFLICT, Err: away}}, EINTERNAL, "An internal error occurred.", ""},
		{"plain error", errors.New("boom"), EINTERNAL, "An internal error occurred.", ""},
	} {
		if got := ErrorCode(tt.err); got != tt.code {
			t.Errorf("%s: code %q, want %q", tt.name, got, tt.code)
		}
		if got := ErrorMessage(tt.err); got != tt.msg {
			t.Errorf("%s: message %q, want %q", tt.name, got, tt.msg)
		}
		say := ""
		if s := ErrorSay(tt.err); s != nil {
			say = s.Key
		}
		if say != tt.say {
			t.Errorf("%s: say %q, want %q", tt.name, say, tt.say)
		}
	}
}
