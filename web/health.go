package web

import (
	"context"
	"net/http"
	"time"
)

// Pinger is what /readyz asks: a database that answers Ping.
type Pinger interface {
	Ping(ctx context.Context) error
}

// RegisterHealth adds GET /healthz (the process is up) and GET /readyz (the
// database answers within two seconds) to mux.
func RegisterHealth(mux *Mux, db Pinger) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
			return
		}
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok", "database": "ok"})
	})
}
