package budget

import (
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the families of what an API's calls cost, set by the
// refresh engine from its Budget, Allotment and Forecast; registered once,
// they live across reloads.
type Metrics struct {
	budget   *prometheus.GaugeVec
	used     *prometheus.GaugeVec
	own      *prometheus.GaugeVec
	forecast *prometheus.GaugeVec
	factor   *prometheus.GaugeVec
	// peerSeen is what each API's budget had reported of peerRefused.
	peerRefused *prometheus.CounterVec
	peerMu      sync.Mutex
	peerSeen    map[string]map[string]int
}

// NewMetrics registers the cost families in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns = config.Namespace
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help}, append([]string{"api"}, labels...))
	}
	m := &Metrics{
		budget: gauge("daily_budget_calls",
			"Upstream calls the API may make on the current UTC day: the smaller of daily_budget and the upstream's X-Daily-Limit; absent when neither applies."),
		used: gauge("daily_calls_used",
			"Upstream calls of the API counted on the current UTC day (every call: refreshes, retries, listing), or the upstream's X-Daily-Used when higher, by every member of a cluster; resets at 00:00 UTC."),
		own: gauge("daily_calls_used_here",
			"Upstream calls of the API this member made on the current UTC day; daily_calls_used when it runs alone; resets at 00:00 UTC."),
		forecast: gauge("forecast_calls_per_day",
			"Upstream calls a day the configuration in force costs, per configured endpoint (path as written) and listing endpoint, after expansion, before any cut of the daily budget.", "endpoint"),
		factor: gauge("coarsening_factor",
			"Rows of its window per poll under the daily budget's plan, on average (1: every row; 2.5: alternately every 2nd and 3rd row); the largest among a window's spacings.", "window"),
	}
	m.peerRefused = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "cluster_peer_counts_refused_total",
		Help: "Other members' daily call counts refused or cut, by reason: negative, pace (more than a member's bucket allowed since the day began), limit (past the day's limit from one member), members (more member names than a day holds), not_serving (a name that is not a serving member)."}, []string{"api", "reason"})
	m.peerSeen = map[string]map[string]int{}
	reg.MustRegister(m.budget, m.used, m.own, m.forecast, m.factor, m.peerRefused)
	return m
}

// Observe sets an API's budget in force and calls used today from its
// budget at now.
func (m *Metrics) Observe(api string, b *Budget, now time.Time) {
	if l := b.Limit(now); l > 0 {
		m.budget.WithLabelValues(api).Set(float64(l))
	} else {
		m.budget.DeleteLabelValues(api)
	}
	m.used.WithLabelValues(api).Set(float64(b.Used(now)))
	m.own.WithLabelValues(api).Set(float64(b.Own(now)))
	m.observePeerRefusals(api, b)
}

// SetForecast sets an API's forecast per endpoint, replacing the last:
// an endpoint a reload dropped goes.
func (m *Metrics) SetForecast(f APIForecast) {
	m.forecast.DeletePartialMatch(prometheus.Labels{"api": f.API})
	for endpoint, calls := range f.ByEndpoint() {
		m.forecast.WithLabelValues(f.API, endpoint).Set(calls)
	}
}

// SetAllotment sets the coarsening factor of each window of an API's
// allotment, 1 where nothing is cut, replacing the last.
func (m *Metrics) SetAllotment(api string, p Allotment) {
	m.factor.DeletePartialMatch(prometheus.Labels{"api": api})
	for window, f := range p.WindowFactors() {
		m.factor.WithLabelValues(api, window).Set(float64(f))
	}
}

// Forget drops the series of an API no longer configured.
func (m *Metrics) Forget(api string) {
	for _, v := range []*prometheus.GaugeVec{m.budget, m.used, m.own, m.forecast, m.factor} {
		v.DeletePartialMatch(prometheus.Labels{"api": api})
	}
	m.peerRefused.DeletePartialMatch(prometheus.Labels{"api": api})
	m.peerMu.Lock()
	delete(m.peerSeen, api)
	m.peerMu.Unlock()
}

// observePeerRefusals adds what b refused of its peers' counts since the
// last call.
func (m *Metrics) observePeerRefusals(api string, b *Budget) {
	now := b.PeerRefusals()
	m.peerMu.Lock()
	defer m.peerMu.Unlock()
	for _, r := range peerReasons {
		// A series from the first refusal on: a lone exporter has none.
		if d := now[r] - m.peerSeen[api][r]; d > 0 {
			m.peerRefused.WithLabelValues(api, r).Add(float64(d))
		}
	}
	m.peerSeen[api] = now
}
