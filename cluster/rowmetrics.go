package cluster

import "github.com/prometheus/client_golang/prometheus"

// RowMetrics are the families of the rows members share, counted by the
// engine (package collector); registered once per exporter.
type RowMetrics struct {
	Owned     *prometheus.GaugeVec   // by api
	Received  *prometheus.CounterVec // by api
	Refused   *prometheus.CounterVec // by api, reason
	Refreshes *prometheus.CounterVec // by api, role
}

// NewRowMetrics registers the row families in reg.
func NewRowMetrics(reg prometheus.Registerer) *RowMetrics {
	m := &RowMetrics{
		Owned: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: namespace + "units_owned",
			Help: "Refresh units (the series of one endpoint and window) this member owns among the live members: it fetches them, the others take its rows. All of them when it runs alone."}, []string{"api"}),
		Received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: namespace + "rows_received_total",
			Help: "Tuple outcomes a peer fetched and sent that this member took and serves as if it had fetched them."}, []string{"api"}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: namespace + "rows_refused_total",
			Help: "Tuple outcomes a peer sent that this member refused, by reason: invalid (not what an answer for the tuple can be: numbers, times, fields, size), not_owner (from a member that neither owns the unit nor ranks before this one for it, before the tuple is due here), older (not newer than what is here), another_request (a peer on another configuration). The tuple keeps what it had."}, []string{"api", "reason"}),
		Refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: namespace + "refreshes_total",
			Help: "Refreshes this member made, by role: owner (its own unit) or fallback (a unit whose owner's row did not come within rank × --cluster.peer-timeout)."}, []string{"api", "role"}),
	}
	reg.MustRegister(m.Owned, m.Received, m.Refused, m.Refreshes)
	return m
}
