package web

import "net/http"

// Mux is an http.ServeMux that remembers the patterns registered on it, so
// that a test can check every route against the API document.
type Mux struct {
	*http.ServeMux
	patterns []string
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
