package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"recon"
)

// Pinger is what /readyz asks: a database that answers Ping.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Readier is a Pinger that can also say whether it takes writes
// (sqlstore.DB.Ready: on PostgreSQL, whether the server it reaches is a
// writable primary); /readyz asks Ready instead of Ping when it has it.
type Readier interface {
	Ready(ctx context.Context) error
}

// RegisterHealth adds GET /healthz (the process is up: it never asks the
// database) and GET /readyz (the database answers, and takes writes, within
// two seconds) to mux. While no writable primary is reachable (a failover in
// progress; docs/design.md, Losing the primary) /readyz is 503 with
// Retry-After, so that a load balancer sends requests to other nodes, or
// none, and the node needs no restart when the primary is back.
func RegisterHealth(mux *Mux, db Pinger) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	check := db.Ping
	if rd, ok := db.(Readier); ok {
		check = rd.Ready
	}
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := check(ctx); err != nil {
			state := "unreachable"
			if say := recon.ErrorSay(err); say != nil && say.Key == "db_read_only" {
				state = "read_only" // a standby, or a primary being demoted
			}
			w.Header().Set("Retry-After", strconv.Itoa(RetryAfterUnavailable))
			WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": state})
			return
		}
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok", "database": "ok"})
	})
}
