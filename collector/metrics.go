package collector

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/upstream"
)

const namespace = "onchain_exporter"

// selfMetrics are the exporter's own families, registered once; they live
// across reloads.
type selfMetrics struct {
	up          *upstream.Metrics
	cacheHits   *prometheus.CounterVec
	cacheMisses *prometheus.CounterVec
	callsSaved  *prometheus.CounterVec
	staleServed *prometheus.CounterVec
	tuples      *prometheus.GaugeVec
}

// registered holds the families registered per registry, so that the
// Expander and the Exporter of one process count into the same ones.
var registered = struct {
	sync.Mutex
	by map[*prometheus.Registry]*selfMetrics
}{by: map[*prometheus.Registry]*selfMetrics{}}

// metricsFor returns the exporter's own families in reg, registering them
// the first time.
func metricsFor(reg *prometheus.Registry) *selfMetrics {
	registered.Lock()
	defer registered.Unlock()
	if m := registered.by[reg]; m != nil {
		return m
	}
	m := newSelfMetrics(reg)
	registered.by[reg] = m
	return m
}

func newSelfMetrics(reg prometheus.Registerer) *selfMetrics {
	api := []string{"api"}
	m := &selfMetrics{
		up: upstream.NewMetrics(reg),
		cacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "cache_hits_total",
			Help: "Tuple reads answered from the cache because no new row was due."}, api),
		cacheMisses: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "cache_misses_total",
			Help: "Tuple reads that needed a refresh from upstream (their own call or one already in flight)."}, api),
		callsSaved: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "upstream_calls_saved_total",
			Help: "Upstream calls a cacheless exporter would have made and this one did not (cache hits plus reads that joined a call in flight)."}, api),
		staleServed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "stale_values_served_total",
			Help: "Tuple reads served from the last good value because the refresh failed or did not finish in time."}, api),
		tuples: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "tuples",
			Help: "Upstream series configured per API."}, api),
	}
	reg.MustRegister(m.cacheHits, m.cacheMisses, m.callsSaved, m.staleServed, m.tuples)
	return m
}
