package main

import (
	"context"
	"log/slog"
	"time"

	"recon"
	"recon/sqlstore"
)

// hubSweepInterval is how often a node ends the link tokens and sessions
// that time ended (expiry, 15 quiet minutes). Every node sweeps; the store
// ends each exactly once.
const hubSweepInterval = 15 * time.Second

// sweepHub runs ExpireHubLinks at start and every hubSweepInterval until ctx ends.
func sweepHub(ctx context.Context, db *sqlstore.DB, clock recon.Clock, log *slog.Logger) {
	t := time.NewTicker(hubSweepInterval)
	defer t.Stop()
	for {
		tokens, sessions, err := db.ExpireHubLinks(ctx, clock.Now())
		if err != nil && ctx.Err() == nil {
			log.Warn("ending expired link tokens and idle link sessions", "err", err)
		} else if tokens > 0 || sessions > 0 {
			log.Info("ended expired link tokens and idle link sessions", "tokens", tokens, "sessions", sessions)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
