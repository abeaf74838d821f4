package web

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"recon"
)

func TestUnmarshal(t *testing.T) {
	type body struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	tests := []struct {
		name, in, wantMsg string
	}{
		{"ok", `{"name":"a","count":2}`, ""},
		{"malformed", `{"name":`, "malformed JSON: the body ends early"},
		{"syntax", `{"name" 1}`, "malformed JSON at byte 9: invalid character '1' after object key"},
		{"wrong type", `{"count":"2"}`, "count must be an integer, not string"},
		{"not an object", `[1]`, "request body must be an object, not array"},
		{"unknown field", `{"nam":"a"}`, `unknown field "nam"`},
		{"trailing data", `{"name":"a"} {}`, "malformed JSON: unexpected data after the top-level value"},
		{"out of range", `{"count":1e400}`, "count must be an integer, not number 1e400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b body
			err := Unmarshal([]byte(tt.in), &b)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Unmarshal: %v", err)
				}
				return
			}
			if recon.ErrorCode(err) != recon.EINVALID || recon.ErrorMessage(err) != tt.wantMsg {
				t.Fatalf("Unmarshal(%s) = %v, want invalid %q", tt.in, err, tt.wantMsg)
			}
		})
	}
}

func TestReadBodyLimitsAndUTF8(t *testing.T) {
	mux := NewMux()
	mux.MaxBody = 16
	var got error
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) { _, got = ReadBody(r) })
	h := (&Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux)
	for _, tt := range []struct{ body, want string }{
		{strings.Repeat("x", 17), "request body is larger than the limit of 16 bytes"},
		{"\xff\xfe", "request body is not valid UTF-8"},
		{"  ", "request body is empty: a JSON object is required"},
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(tt.body)))
		if recon.ErrorMessage(got) != tt.want {
			t.Errorf("body %q: got %v, want %q", tt.body, got, tt.want)
		}
	}
}

func TestMiddlewareRequestIDAndRecover(t *testing.T) {
	var logs bytes.Buffer
	metrics := NewMetrics()
	mux := NewMux()
	mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("kaboom") })
	mux.HandleFunc("GET /id", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, RequestID(r.Context())) })
	h := (&Middleware{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Metrics: metrics}).Wrap(mux)

	// A well-formed incoming id is kept and echoed.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/id", nil)
	req.Header.Set("X-Request-Id", "abc-123")
	h.ServeHTTP(rec, req)
	if rec.Header().Get("X-Request-Id") != "abc-123" || rec.Body.String() != "abc-123" {
		t.Fatalf("request id: header %q body %q", rec.Header().Get("X-Request-Id"), rec.Body.String())
	}
	// A hostile one is replaced.
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("GET", "/id", nil)
	req.Header.Set("X-Request-Id", "bad id\nwith newline")
	h.ServeHTTP(rec, req)
	if id := rec.Header().Get("X-Request-Id"); len(id) != 24 || rec.Body.String() != id {
		t.Fatalf("replaced request id: header %q body %q", id, rec.Body.String())
	}
	// A panic is a 500 with no detail, logged with the id.
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/boom", nil))
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "kaboom") {
		t.Fatalf("panic: %d %s", rec.Code, rec.Body.String())
	}
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["error"] != "internal_error" {
		t.Fatalf("panic body %q: %v", rec.Body.String(), err)
	}
	if !strings.Contains(logs.String(), "kaboom") || !strings.Contains(logs.String(), rec.Header().Get("X-Request-Id")) {
		t.Fatalf("panic not logged with request id: %s", logs.String())
	}
	// Metrics are labelled by route pattern.
	rec = httptest.NewRecorder()
	metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `recon_http_requests_total{code="500",method="GET",route="GET /boom"} 1`) {
		t.Fatalf("metrics lack the route label:\n%s", rec.Body.String())
	}
}

func TestMuxRemembersPatterns(t *testing.T) {
	m := NewMux()
	m.HandleFunc("GET /a", func(http.ResponseWriter, *http.Request) {})
	m.Handle("POST /b", http.NotFoundHandler())
	if got := strings.Join(m.Patterns(), ","); got != "GET /a,POST /b" {
		t.Fatalf("Patterns() = %q", got)
	}
}

func TestMuxUnmatchedIsJSON(t *testing.T) {
	m := NewMux()
	m.HandleFunc("GET /thing", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	for _, tt := range []struct {
		method, path string
		status       int
		allow, code  string
	}{
		{"GET", "/thing", 200, "", ""},
		{"DELETE", "/thing", 405, "GET, HEAD", "method_not_allowed"},
		{"GET", "/nothing", 404, "", "not_found"},
	} {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status || rec.Header().Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d Allow=%q", tt.method, tt.path, rec.Code, rec.Header().Get("Allow"))
		}
		if tt.code != "" {
			var body map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["error"] != tt.code {
				t.Errorf("%s %s: body %q", tt.method, tt.path, rec.Body.String())
			}
		}
	}
}
