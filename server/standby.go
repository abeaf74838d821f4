package server

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"recon/sqlstore"
)

// standbyMetrics are the gauges of the standby the listings read from
// (--database-read-url; docs/design.md, "Reads from a standby"), read from
// the store at each scrape.
func standbyMetrics(db *sqlstore.DB) []prometheus.Collector {
	status := func() sqlstore.StandbyStatus { st, _ := db.Standby(); return st }
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "recon_db_standby_serving",
			Help: "1 while the listings read from the standby (--database-read-url), 0 while they read from the primary.",
		}, func() float64 {
			if status().Serving {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "recon_db_standby_staleness_seconds",
			Help: "How far behind the primary the standby may be: the time since the newest primary WAL position it has replayed was read; +Inf when unknown (unreachable, not in recovery).",
		}, func() float64 {
			if st := status(); st.Staleness >= 0 {
				return st.Staleness.Seconds()
			}
			return math.Inf(1)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "recon_db_standby_reads_total",
			Help: "Listings the standby answered.",
		}, func() float64 { return float64(status().Reads) }),
	}
}
