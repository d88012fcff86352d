package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// tupleState is the cache entry of one tuple: its last good values and
// what the schedule needs. Guarded by the owning apiCollector's lock of it.
type tupleState struct {
	tuple *config.Tuple

	values     []prometheus.Metric // last good values, ready to serve
	decoded    *decoded            // what they were built from
	rowTime    time.Time           // row time of the values
	newest     time.Time           // newest row seen
	interval   time.Duration       // mean row spacing (block windows)
	block      float64
	hasBlock   bool
	deprecated bool

	ok           bool // the last refresh succeeded
	everOK       bool
	lastCode     string
	lastSuccess  time.Time
	lastAttempt  time.Time
	failingSince time.Time
	failures     int

	next     time.Time     // when a refresh is due
	polls    int           // polls of an overdue row so far
	missedAt time.Time     // last poll that found the due row missing
	inflight chan struct{} // closed when the refresh under way ends

	dropSourceText bool   // the key lacks raw access: ask for the excerpt
	logged         string // last error logged, so that each is logged once
	deprecatedLog  bool
}

// showValues says whether the last good values are still served: while
// refreshes succeed, and for max_staleness after they start failing.
func (st *tupleState) showValues(now time.Time, maxStaleness time.Duration) bool {
	if st.values == nil {
		return false
	}
	return st.ok || st.failingSince.IsZero() || now.Sub(st.failingSince) <= maxStaleness
}

// tupleDescs are the per-tuple families, built once per configuration.
type tupleDescs struct {
	timestamp, block, success, deprecated, lastSuccess *prometheus.Desc
}

func newTupleDescs(labels []string) *tupleDescs {
	return &tupleDescs{
		timestamp: prometheus.NewDesc("onchain_data_timestamp_seconds",
			"Time of the row the tuple's values come from (interval start), as a Unix time.", labels, nil),
		block: prometheus.NewDesc("onchain_data_block_height",
			"Block height of the newest row of a block-window tuple.", labels, nil),
		success: prometheus.NewDesc(namespace+"_query_success",
			"1 when the last refresh of the tuple from upstream succeeded, else 0.", labels, nil),
		deprecated: prometheus.NewDesc(namespace+"_query_deprecated",
			"1 when the upstream marks the tuple's series deprecated (data may no longer update).", labels, nil),
		lastSuccess: prometheus.NewDesc(namespace+"_last_success_timestamp_seconds",
			"When the tuple was last refreshed from upstream successfully, as a Unix time.", labels, nil),
	}
}

// emit sends the tuple's metrics: values while they may be served, and
// the per-tuple families always.
func (st *tupleState) emit(ch chan<- prometheus.Metric, d *tupleDescs, now time.Time, maxStaleness time.Duration) {
	if st.showValues(now, maxStaleness) {
		for _, m := range st.values {
			ch <- m
		}
	}
	lv := st.tuple.TupleLabelValues
	ok := 0.0
	if st.ok {
		ok = 1
	}
	ch <- prometheus.MustNewConstMetric(d.success, prometheus.GaugeValue, ok, lv...)
	if !st.rowTime.IsZero() {
		ch <- prometheus.MustNewConstMetric(d.timestamp, prometheus.GaugeValue, float64(st.rowTime.Unix()), lv...)
	}
	if st.hasBlock {
		ch <- prometheus.MustNewConstMetric(d.block, prometheus.GaugeValue, st.block, lv...)
	}
	if st.deprecated {
		ch <- prometheus.MustNewConstMetric(d.deprecated, prometheus.GaugeValue, 1, lv...)
	}
	if !st.lastSuccess.IsZero() {
		ch <- prometheus.MustNewConstMetric(d.lastSuccess, prometheus.GaugeValue, float64(st.lastSuccess.UnixNano())/1e9, lv...)
	}
}
