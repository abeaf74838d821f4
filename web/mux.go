package web

import (
	"net/http"

	"recon"
)

// Mux is an http.ServeMux that remembers the patterns registered on it, so
// that a test can check every route against the API document.
type Mux struct {
	*http.ServeMux
	patterns []string
	// Unmatched, when set, writes the answer to a request that matches no
	// route, in the envelope of the API family its path belongs to; nil
	// writes the /api/v1 shape.
	Unmatched func(w http.ResponseWriter, r *http.Request, status int, name, message string)
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{ServeMux: http.NewServeMux()} }

// Handle registers h for pattern.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
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
	write := m.Unmatched
	if write == nil {
		write = func(w http.ResponseWriter, _ *http.Request, status int, name, message string) {
			WriteJSON(w, status, map[string]string{"status": "error", "error": name, "message": message})
		}
	}
	if err := CheckInput(r); err != nil {
		write(w, r, http.StatusBadRequest, "validation_error", recon.ErrorMessage(err))
		return
	}
	if _, pattern := m.ServeMux.Handler(r); pattern != "" {
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
