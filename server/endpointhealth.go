package server

import (
	"context"
	"strconv"
	"time"

	"recon"
)

// endpointHealthStep disables the targets whose every attempt failed for 3
// days (docs/design.md, D7): each once across nodes (the store's
// conditional update), its notifications held, ENDPOINT_DISABLED enqueued
// to the company's other targets and an audit entry, in one transaction;
// then the alerts run at once, so the merchant hears of it without waiting
// for the alerts' next minute (the alert is made once: its key).
func (s *Server) endpointHealthStep(loc *time.Location) Step {
	return Step{"disabling failing notification targets", "disabled failing notification targets", func(ctx context.Context, now time.Time) ([]any, error) {
		disabled, err := s.DB.DisableFailingTargets(ctx, now.In(loc))
		if len(disabled) == 0 {
			return nil, err
		}
		changed := []any{"count", len(disabled)}
		for _, h := range disabled {
			changed = append(changed, "target", targetName(h))
		}
		if _, aerr := s.Alerts.Run(ctx, now); aerr != nil && err == nil {
			err = aerr
		}
		return changed, err
	}}
}

// targetName names a target in the log: company, mode, kind, host.
func targetName(h *recon.TargetHealth) string {
	mode := "live"
	if !h.Tenant.Live() {
		mode = "test"
	}
	return h.Kind + " of company " + strconv.FormatInt(h.Tenant.ID(), 10) + " (" + mode + ") " + recon.TargetHost(h.URL)
}
