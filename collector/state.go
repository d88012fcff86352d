package collector

import (
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// tupleState is the cache entry of one tuple: its last good values and
// what the schedule needs. Guarded by the owning apiCollector's lock of it.
type tupleState struct {
	tuple *config.Tuple

	values     []sampleOf    // last good values, ready to serve
	info       []sampleOf    // the per-tuple families
	decoded    *decoded      // what the values were built from
	rowTime    time.Time     // row time of the values
	newest     time.Time     // newest row seen
	interval   time.Duration // mean row spacing (block windows)
	block      float64
	hasBlock   bool
	deprecated bool

	ok           bool // the last refresh succeeded
	lastCode     string
	lastSuccess  time.Time
	lastAttempt  time.Time
	failingSince time.Time
	failures     int

	next     time.Time     // when a refresh is due
	planned  bool          // due holds the first poll of the next row
	due      time.Duration // offset from the next row's start of its first poll
	probing  bool          // that first poll is a probe, earlier than the estimate
	polls    int           // polls that missed the next row after it was due
	missed   time.Duration // offset from the next row's start of the last of them
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

// tupleFamilies are the per-tuple families, one set per configuration.
type tupleFamilies struct {
	timestamp, block, success, deprecated, lastSuccess *family
}

func newTupleFamilies(labels []string) *tupleFamilies {
	g := dto.MetricType_GAUGE
	return &tupleFamilies{
		timestamp: newFamily("onchain_data_timestamp_seconds",
			"Time of the row the tuple's values come from (interval start), as a Unix time.", g, labels),
		block: newFamily("onchain_data_block_height",
			"Block height of the newest row of a block-window tuple.", g, labels),
		success: newFamily(namespace+"_query_success",
			"1 when the last refresh of the tuple from upstream succeeded, else 0.", g, labels),
		deprecated: newFamily(namespace+"_query_deprecated",
			"1 when the upstream marks the tuple's series deprecated (data may no longer update).", g, labels),
		lastSuccess: newFamily(namespace+"_last_success_timestamp_seconds",
			"When the tuple was last refreshed from upstream successfully, as a Unix time.", g, labels),
	}
}

// buildInfo renders the per-tuple families after the state changed; they
// change only with a refresh, so scrapes serve them as built.
func (st *tupleState) buildInfo(tf *tupleFamilies) {
	lv := st.tuple.TupleLabelValues
	st.info = st.info[:0]
	add := func(f *family, v float64) {
		if smp, err := f.sample(v, lv...); err == nil {
			st.info = append(st.info, smp)
		}
	}
	ok := 0.0
	if st.ok {
		ok = 1
	}
	add(tf.success, ok)
	if !st.rowTime.IsZero() {
		add(tf.timestamp, float64(st.rowTime.Unix()))
	}
	if st.hasBlock {
		add(tf.block, st.block)
	}
	if st.deprecated {
		add(tf.deprecated, 1)
	}
	if !st.lastSuccess.IsZero() {
		add(tf.lastSuccess, float64(st.lastSuccess.UnixNano())/1e9)
	}
}

// emit appends the tuple's metrics: values while they may be served, and
// the per-tuple families always.
func (st *tupleState) emit(out []sampleOf, now time.Time, maxStaleness time.Duration) []sampleOf {
	if st.showValues(now, maxStaleness) {
		out = append(out, st.values...)
	}
	return append(out, st.info...)
}
