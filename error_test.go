package recon

import (
	"errors"
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
