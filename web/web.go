// Package web holds the HTTP plumbing every API family shares: request ids,
// access logs, panic recovery, body limits, Prometheus metrics, strict JSON
// decoding and the health endpoints. It knows nothing of any API's envelope:
// each family (api, hub, gateway) writes its own bodies.
package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
)

// DefaultMaxBody is the default limit of a request body (docs/design.md, D1).
const DefaultMaxBody = 1 << 20

type ctxKey int

const (
	requestIDKey ctxKey = iota
	wholeConnKey        // the connection's *wholeConn (whole.go)
)

// RequestID returns the request id stored in ctx by the Middleware, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// Middleware wraps a handler (normally a ServeMux) with the shared plumbing:
//   - a request id, taken from a well-formed X-Request-Id header or made
//     anew, put in the context and echoed in the X-Request-Id response header;
//   - panic recovery (a 500 with no detail, the panic logged with the id);
//   - one structured access-log line per request and the HTTP metrics,
//     labelled with the matched route pattern rather than the raw path.
type Middleware struct {
	Logger  *slog.Logger
	Metrics *Metrics // may be nil
}

// Wrap returns next wrapped by the middleware.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		rec := &statusRecorder{ResponseWriter: w}
		if r.ProtoMajor == 1 { // one request at a time on the connection
			rec.conn, _ = r.Context().Value(wholeConnKey).(*wholeConn)
		}
		defer m.Metrics.begin()()
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				m.Logger.Error("panic serving request", "request_id", id, "panic", p, "stack", string(debug.Stack()))
				if !rec.wroteHeader {
					rec.Header().Set("Content-Type", "application/json")
					rec.WriteHeader(http.StatusInternalServerError)
					_, _ = rec.Write([]byte(`{"status":"error","error":"internal_error","message":"An internal error occurred."}`))
				}
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			d := time.Since(start)
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			m.Metrics.observe(r.Method, route, status, d)
			m.Logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
				slog.String("request_id", id),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("route", route),
				slog.Int("status", status),
				slog.Int64("bytes", rec.bytes),
				slog.Duration("duration", d),
				slog.String("remote", r.RemoteAddr),
			)
		}()
		next.ServeHTTP(rec, r)
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type statusRecorder struct {
	http.ResponseWriter
	conn        *wholeConn // nil unless the server uses WholeListener
	status      int
	bytes       int64
	wroteHeader bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.status, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wroteHeader {
		s.WriteHeader(http.StatusOK)
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
