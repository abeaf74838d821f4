package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"recon"
)

func TestCheckInput(t *testing.T) {
	for _, tt := range []struct {
		name, target, contentType, body, basic, want string
	}{
		{"clean JSON", "/x?q=abc", "application/json", `{"a":"b\n\tc","d":"\\u0000 is text"}`, "", ""},
		{"escaped NUL", "/x", "application/json", `{"a":"b\u0000"}`, "", "the JSON body holds the control character U+0000"},
		{"escaped ESC in a key", "/x", "application/json", `{"\u001B":1}`, "", "U+001B"},
		{"escaped DEL", "/x", "application/json", `{"a":"\u007f"}`, "", "U+007F"},
		{"backslash then u0000 text", "/x", "application/json", `{"a":"\\\\u0000"}`, "", ""},
		{"quote inside a string", "/x", "application/json", `{"a":"\" \u0000"}`, "", "U+0000"},
		{"NUL in the path", "/x/a%00b", "", "", "", "the URL path holds the control character U+0000"},
		{"non-UTF-8 in the path", "/x/%ff", "", "", "", "the URL path holds bytes that are not UTF-8"},
		{"NUL in a query value", "/x?q=a%00", "", "", "", `query parameter "q" holds the control character U+0000`},
		{"newline in a query value", "/x?q=a%0Ab", "", "", "", `query parameter "q" holds the control character U+000A`},
		{"NUL in a form field", "/x", "application/x-www-form-urlencoded", "a=1&b=x%00", "", `form field "b" holds the control character U+0000`},
		{"line breaks in a form field", "/x", "application/x-www-form-urlencoded", "a=1%0D%0A2", "", ""},
		{"NUL in Basic user", "/x", "", "", "m\x00:s", "the user name of the Basic credentials holds the control character U+0000"},
		{"NUL in Basic password", "/x", "", "", "m:s\x00", "the password of the Basic credentials holds the control character U+0000"},
		{"other bodies are not read", "/x", "text/csv", "a\x00b", "", ""},
	} {
		r := httptest.NewRequest("POST", tt.target, strings.NewReader(tt.body))
		if tt.contentType != "" {
			r.Header.Set("Content-Type", tt.contentType)
		}
		if tt.basic != "" {
			u, p, _ := strings.Cut(tt.basic, ":")
			r.SetBasicAuth(u, p)
		}
		err := CheckInput(r, false)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			// The body is handed on unchanged.
			if b, _ := io.ReadAll(r.Body); string(b) != tt.body {
				t.Errorf("%s: body %q after the check, want %q", tt.name, b, tt.body)
			}
			continue
		}
		if recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(recon.ErrorMessage(err), tt.want) {
			t.Errorf("%s: %v, want EINVALID containing %q", tt.name, err, tt.want)
		}
	}
}

// TestCheckInputKeepsBodyLimit: a body over the limit reaches the handler
// with the same *http.MaxBytesError it would have had without the check.
func TestCheckInputKeepsBodyLimit(t *testing.T) {
	r := httptest.NewRequest("POST", "/x", strings.NewReader(`{"a":"0123456789"}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	r.Body = http.MaxBytesReader(w, r.Body, 8)
	if err := CheckInput(r, false); err != nil {
		t.Fatal(err)
	}
	_, got := ReadBody(r)
	if !strings.Contains(recon.ErrorMessage(got), "larger than the limit of 8 bytes") {
		t.Fatalf("ReadBody after CheckInput: %v", got)
	}
}
