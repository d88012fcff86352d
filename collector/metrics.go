package collector

import (
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/published"
)

const namespace = config.Namespace

// selfMetrics are the engine's families, registered once.
type selfMetrics struct {
	staleServed *prometheus.CounterVec
	tuples      *prometheus.GaugeVec
	pubDelay    *delayGauge
	rowDelay    *prometheus.HistogramVec
	excess      *prometheus.GaugeVec
	due         *prometheus.GaugeVec
	unasked     *prometheus.GaugeVec
	rowDue      *rowDue
}

func newSelfMetrics(reg prometheus.Registerer) *selfMetrics {
	api := []string{"api"}
	m := &selfMetrics{
		staleServed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "stale_values_served_total",
			Help: "Tuple reads served from the last good value because the tuple's last refresh failed, or its first one had not ended by the scrape's deadline."}, api),
		tuples: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "tuples",
			Help: "Upstream series configured per API."}, api),
		pubDelay: newDelayGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "publication_delay_seconds",
			Help: "Learned delay between the end of a row's interval (a block row's: its block's time) and its publication upstream, per endpoint and window; the first poll for a new row goes there. 0 when rows appear before their interval ends."}, []string{"api", "endpoint", "window"}),
		rowDelay: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "row_delay_seconds",
			Help:    "Time from the end of a row's interval (a block row's: its block's time) to when the exporter first served it, 0 for a row out before its end; compare with publication_delay_seconds, the least it could be.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 43200, 86400}}, []string{"api", "window"}),
		excess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "excess_staleness_seconds",
			Help: "At the last scrape, the mean over the window's scheduled tuples of how far the row served is behind the newest row the upstream has published by the learned publication delay (its lower bound where known): 0 when every tuple serves the newest row. avg_over_time of it is the mean excess staleness."}, []string{"api", "window"}),
	}
	m.due = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "tuples_due",
		Help: "At the last scrape, tuples whose refresh is due and has not started: waiting for a turn of rate_limit, a call of daily_budget or a free connection (concurrency). Not failures: each keeps its value, and the wait is on the page."}, api)
	m.unasked = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "tuples_unasked",
		Help: "At the last scrape, tuples not yet asked once since they were configured: what is left of the first fill, which asks every tuple once before any twice."}, api)
	reg.MustRegister(m.staleServed, m.tuples, m.pubDelay.vec, m.rowDelay, m.excess, m.due, m.unasked)
	m.rowDue = newRowDue(reg)
	return m
}

// delayGauge is publication_delay_seconds and the values it holds: the
// page reads one without gathering the family (one series a path).
type delayGauge struct {
	vec *prometheus.GaugeVec
	mu  sync.Mutex
	set map[published.EndpointWindow]time.Duration
}

func newDelayGauge(opts prometheus.GaugeOpts, labels []string) *delayGauge {
	return &delayGauge{vec: prometheus.NewGaugeVec(opts, labels), set: map[published.EndpointWindow]time.Duration{}}
}

// Set sets the gauge of an endpoint and window.
func (g *delayGauge) Set(api, endpoint, window string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.set[published.EndpointWindow{API: api, Endpoint: endpoint, Window: window}] = d
	g.vec.WithLabelValues(api, endpoint, window).Set(d.Seconds())
}

// Delete drops the gauge of an endpoint and window.
func (g *delayGauge) Delete(api, endpoint, window string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.set, published.EndpointWindow{API: api, Endpoint: endpoint, Window: window})
	g.vec.DeleteLabelValues(api, endpoint, window)
}

// Get is the gauge of an endpoint and window, false when it has none.
func (g *delayGauge) Get(k published.EndpointWindow) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	d, ok := g.set[k]
	return d, ok
}

// All is a copy of every value the gauge holds.
func (g *delayGauge) All() map[published.EndpointWindow]time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.set)
}
