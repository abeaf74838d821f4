package api

import (
	"net/http"
	"time"

	"recon"
	"recon/web"
)

// The delivery log's operations beyond one delivery: replay every failed
// one since a time, the per-kind figures, a test notification.

// replayFailed: POST /api/v1/deliveries/replay {"since", "kind"?} → the
// number of failed deliveries (dead, or waiting for a retry) made due now;
// {"kind", "missed": true} → the number of those held while the target of
// kind was disabled by Recon (docs/api.md, Endpoint health).
func (h *Handler) replayFailed(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	var in struct {
		Since  *string `json:"since"`
		Kind   *string `json:"kind"`
		Missed bool    `json:"missed"`
	}
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.Missed {
		return h.replayMissed(w, r, c, in.Since, in.Kind)
	}
	if in.Since == nil {
		return recon.FieldError("since", "since is required: replay the failed deliveries created since then (YYYY-MM-DD HH:MM:SS or RFC 3339)")
	}
	since, err := parseDateTime(*in.Since, h.location())
	if err != nil {
		return recon.FieldError("since", "since %v", err)
	}
	var f recon.FailedFilter
	f.Since = since
	if in.Kind != nil {
		if err := recon.CheckDeliveryKind("kind", *in.Kind); err != nil {
			return err
		}
		f.Kind = *in.Kind
	}
	n, err := h.Store.ReplayFailed(r.Context(), c.Tenant, f, h.now())
	if err != nil {
		return err
	}
	if n > 0 && h.Kick != nil {
		h.Kick()
	}
	web.WriteJSON(w, http.StatusOK, ok(map[string]int64{"replayed": n}))
	return nil
}

type targetStatsJSON struct {
	Kind         string  `json:"kind"`
	Delivered    int64   `json:"delivered"`
	Pending      int64   `json:"pending"`
	Failing      int64   `json:"failing"`
	Dead         int64   `json:"dead"`
	Attempts     int64   `json:"attempts"`
	Succeeded    int64   `json:"succeeded"`
	SuccessRate  float64 `json:"success_rate"`
	LatencyP50MS float64 `json:"latency_p50_ms"`
	LatencyP95MS float64 `json:"latency_p95_ms"`
}

// deliveryStats: GET /api/v1/deliveries/stats?since= (default: the last 7
// days) → the figures of each kind of notification.
func (h *Handler) deliveryStats(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	q := r.URL.Query()
	since := h.now().Add(-7 * 24 * time.Hour)
	for name := range q {
		if name != "since" {
			return recon.FieldError(name, "unknown query parameter %q (known: since)", name)
		}
		var err error
		if since, err = parseDateTime(q.Get(name), h.location()); err != nil {
			return recon.FieldError(name, "since %v", err)
		}
	}
	stats, err := h.Store.DeliveryTargetStats(r.Context(), c.Tenant, since, recon.MaxStatsDeliveries)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(TargetStatsJSON(stats)))
	return nil
}

// TargetStatsJSON renders the per-kind figures, as the API and the CLI show them.
func TargetStatsJSON(stats []recon.TargetStats) []targetStatsJSON {
	out := make([]targetStatsJSON, len(stats))
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for i, s := range stats {
		out[i] = targetStatsJSON{s.Kind, s.Delivered, s.Pending, s.Failing, s.Dead, s.Attempts, s.Succeeded, s.SuccessRate(),
			ms(s.LatencyP50), ms(s.LatencyP95)}
	}
	return out
}

// testNotification: POST /api/v1/deliveries/test {"kind"} → the test
// notification enqueued to the active target of the kind.
func (h *Handler) testNotification(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	var in struct {
		Kind *string `json:"kind"`
	}
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.Kind == nil {
		return recon.FieldError("kind", "kind is required: ipn, webhook or hub_ipn")
	}
	d, err := h.Store.SendTestNotification(r.Context(), c.Tenant, *in.Kind)
	if err != nil {
		return err
	}
	if h.Kick != nil {
		h.Kick()
	}
	j := toDeliveryJSON(d)
	live := c.Livemode()
	j.Livemode = &live
	web.WriteJSON(w, http.StatusCreated, ok(j))
	return nil
}

// replayMissed is replayFailed with missed: the notifications held while
// the target of kind was disabled by Recon, in their order.
func (h *Handler) replayMissed(w http.ResponseWriter, r *http.Request, c *recon.Caller, since, kind *string) error {
	if since != nil {
		return recon.FieldError("since", "since is not taken with missed: what the target missed is every notification held while it was disabled")
	}
	if kind == nil {
		return recon.FieldError("kind", "kind is required with missed: ipn, webhook or hub_ipn")
	}
	n, err := h.Store.ReplayMissed(r.Context(), c.Tenant, *kind, h.now())
	if err != nil {
		return err
	}
	if n > 0 && h.Kick != nil {
		h.Kick()
	}
	web.WriteJSON(w, http.StatusOK, ok(map[string]int64{"replayed": n}))
	return nil
}
