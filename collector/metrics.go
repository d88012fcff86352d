package collector

import (
	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "onchain_exporter"

// selfMetrics are the cache families, registered once; they live across
// reloads. The families of upstream calls are package upstream's.
type selfMetrics struct {
	cacheHits   *prometheus.CounterVec
	cacheMisses *prometheus.CounterVec
	callsSaved  *prometheus.CounterVec
	staleServed *prometheus.CounterVec
	tuples      *prometheus.GaugeVec
	pubDelay    *prometheus.GaugeVec
	rowDelay    *prometheus.HistogramVec
	excess      *prometheus.GaugeVec
}

func newSelfMetrics(reg prometheus.Registerer) *selfMetrics {
	api := []string{"api"}
	m := &selfMetrics{
		cacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "cache_hits_total",
			Help: "Tuple reads answered from the cache because no new row was due."}, api),
		cacheMisses: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "cache_misses_total",
			Help: "Tuple reads that found the tuple due or its refresh under way: served what it had, while the refresh engine fetches the new row (a scrape never waits for it)."}, api),
		callsSaved: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "upstream_calls_saved_total",
			Help: "Upstream calls a cacheless exporter would have made and this one did not (cache hits plus reads that joined a call in flight)."}, api),
		staleServed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "stale_values_served_total",
			Help: "Tuple reads served from the last good value because the tuple's last refresh failed, or its first one had not ended by the scrape's deadline."}, api),
		tuples: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "tuples",
			Help: "Upstream series configured per API."}, api),
		pubDelay: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "publication_delay_seconds",
			Help: "Learned delay between the end of a row's interval and its publication upstream, per endpoint and window; the first poll for a new row goes there. Negative when rows appear before their interval ends."}, []string{"api", "endpoint", "window"}),
		rowDelay: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "row_delay_seconds",
			Help:    "Time from the end of a row's interval to when the exporter first served it; compare with publication_delay_seconds, the least it could be.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 43200, 86400}}, []string{"api", "window"}),
		excess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "excess_staleness_seconds",
			Help: "At the last scrape, the mean over the window's scheduled tuples of how far the row served is behind the newest row the upstream has published by the learned publication delay (its lower bound where known): 0 when every tuple serves the newest row. avg_over_time of it is the mean excess staleness."}, []string{"api", "window"}),
	}
	reg.MustRegister(m.cacheHits, m.cacheMisses, m.callsSaved, m.staleServed, m.tuples, m.pubDelay, m.rowDelay, m.excess)
	return m
}
