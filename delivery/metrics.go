package delivery

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Attempt outcomes, the label values of recon_delivery_attempts_total.
const (
	outcomeDelivered = "delivered" // a 2xx answer
	outcomeFailed    = "failed"    // retried later
	outcomeDead      = "dead"      // failed for the last time, or no active target
)

// Metrics are the dispatchers' Prometheus collectors. One Metrics may serve
// several dispatchers of a process. A nil *Metrics records nothing.
type Metrics struct {
	pending  prometheus.Gauge
	dead     prometheus.Gauge
	inFlight prometheus.Gauge
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
	duration prometheus.Histogram
}

// NewMetrics creates the collectors and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "recon_delivery_pending",
			Help: "Deliveries waiting to be sent or retried, in the whole database (refreshed periodically).",
		}),
		dead: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "recon_delivery_dead",
			Help: "Deliveries whose retries ran out, in the whole database (refreshed periodically).",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "recon_delivery_in_flight",
			Help: "Attempts in progress in this process.",
		}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "recon_delivery_attempts_total",
			Help: "Delivery attempts, by outcome: delivered, failed (to be retried) or dead.",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "recon_delivery_latency_seconds",
			Help:    "Time from enqueueing a delivery to its successful attempt.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 15, 60, 300, 900, 3600, 6 * 3600, 24 * 3600, 72 * 3600},
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "recon_delivery_attempt_duration_seconds",
			Help:    "Time of one attempt, from sending to the end of the answer.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
	}
	for _, o := range []string{outcomeDelivered, outcomeFailed, outcomeDead} {
		m.attempts.WithLabelValues(o)
	}
	reg.MustRegister(m.pending, m.dead, m.inFlight, m.attempts, m.latency, m.duration)
	return m
}

func (m *Metrics) stats(stats map[string]int64) {
	if m == nil {
		return
	}
	m.pending.Set(float64(stats["pending"]))
	m.dead.Set(float64(stats["dead"]))
}

func (m *Metrics) sending(delta float64) {
	if m != nil {
		m.inFlight.Add(delta)
	}
}

func (m *Metrics) attempt(outcome string, took, sinceEnqueue time.Duration) {
	if m == nil {
		return
	}
	m.attempts.WithLabelValues(outcome).Inc()
	if took > 0 {
		m.duration.Observe(took.Seconds())
	}
	if outcome == outcomeDelivered {
		m.latency.Observe(sinceEnqueue.Seconds())
	}
}
