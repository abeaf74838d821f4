package web

import (
	"net/http"
	"strings"

	"recon"
)

// Mux is an http.ServeMux that remembers the patterns registered on it, so
// that a test can check every route against the API document. It also holds
// what differs by route before a handler runs: the body limit of each route,
// and the error envelope of each API family, which each surface registers
// with its routes.
type Mux struct {
	*http.ServeMux
	patterns []string
	limits   map[string]bodyLimit
	families []family
	// MaxBody limits the body of a request whose route has no limit of its
	// own, and of one that matches no route (default DefaultMaxBody).
	MaxBody int64
}

// ErrorWriter writes an error answer in an API family's envelope: status, a
// code name of docs/design.md, D1 (validation_error, not_found, ...) and a message.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, status int, name, message string)

type family struct {
	prefix string
	write  ErrorWriter
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{ServeMux: http.NewServeMux(), limits: map[string]bodyLimit{}} }

// bodyLimit is a route's own body limit; file marks a body that is a file,
// which the handler streams and checks itself (see CheckInput).
type bodyLimit struct {
	max  int64
	file bool
}

// Handle registers h for pattern.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFile registers h for a route whose body is a file (statement
// uploads), with a body limit of its own. The Mux leaves such a body to the
// handler, which streams and checks it; see CheckInput.
func (m *Mux) HandleFile(pattern string, h http.Handler, maxBody int64) {
	m.limits[pattern] = bodyLimit{maxBody, true}
	m.Handle(pattern, h)
}

// HandleLimited registers h for pattern with a body limit of its own (a
// form that needs far less than MaxBody), checked by CheckInput as usual.
func (m *Mux) HandleLimited(pattern string, h http.Handler, maxBody int64) {
	m.limits[pattern] = bodyLimit{maxBody, false}
	m.Handle(pattern, h)
}

// Family makes write answer the requests under the path prefix that fail
// before reaching a handler (no route, wrong method, refused input). The
// longest matching prefix wins; requests under none get the /api/v1 shape.
func (m *Mux) Family(prefix string, write ErrorWriter) {
	m.families = append(m.families, family{prefix, write})
}

func (m *Mux) errorWriter(path string) ErrorWriter {
	var best *family
	for i, f := range m.families {
		if strings.HasPrefix(path, f.prefix) && (best == nil || len(f.prefix) > len(best.prefix)) {
			best = &m.families[i]
		}
	}
	if best != nil {
		return best.write
	}
	return func(w http.ResponseWriter, _ *http.Request, status int, name, message string) {
		WriteJSON(w, status, struct {
			Status  string `json:"status"`
			Error   string `json:"error"`
			Message string `json:"message"`
		}{"error", name, message})
	}
}

// HandleFunc registers fn for pattern.
func (m *Mux) HandleFunc(pattern string, fn func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(fn))
}

// Patterns returns the registered patterns in registration order.
func (m *Mux) Patterns() []string { return append([]string(nil), m.patterns...) }

// ServeHTTP dispatches like http.ServeMux, but answers a request that matches
// no route with a JSON body instead of the mux's plain text: 404 not_found,
// or 405 with the Allow header when the path exists for other methods.
//
// Before any route, CheckInput refuses control characters and bytes that are
// not UTF-8 in the path, query, credentials and JSON or form bodies, with a
// 400 validation_error in the family's envelope.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	write := m.errorWriter(r.URL.Path)
	_, pattern := m.ServeMux.Handler(r)
	if r.Body != nil {
		limit := m.MaxBody
		if l, ok := m.limits[pattern]; ok {
			limit = l.max
		} else if limit <= 0 {
			limit = DefaultMaxBody
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	if err := CheckInput(r, m.limits[pattern].file); err != nil {
		write(w, r, http.StatusBadRequest, "validation_error", recon.ErrorMessage(err))
		return
	}
	if pattern != "" {
		m.ServeMux.ServeHTTP(w, r)
		return
	}
	probe := &headerProbe{header: http.Header{}}
	m.ServeMux.ServeHTTP(probe, r)
	switch probe.status {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", probe.header.Get("Allow"))
		write(w, r, http.StatusMethodNotAllowed, "method_not_allowed",
			"method "+r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+probe.header.Get("Allow"))
	case http.StatusNotFound:
		write(w, r, http.StatusNotFound, "not_found", "no endpoint "+r.Method+" "+r.URL.Path+"; see /openapi.json")
	default:
		// A redirect (such as a cleaned path): let the mux answer it.
		m.ServeMux.ServeHTTP(w, r)
	}
}

// headerProbe records what the mux would answer, writing nothing.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(code int)        { p.status = code }
