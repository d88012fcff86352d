package collector

import (
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/series"
	"github.com/onchain-exporter/onchain_exporter/state"
)

// tupleState is the cache entry of one tuple. What must survive a reload
// or a restart is one value, state.Tuple, carried over and persisted as a
// whole (package state); the rest is rebuilt from it or lives with the
// process. Guarded by the owning apiCollector's lock of it.
type tupleState struct {
	tuple *config.Tuple
	state.Tuple
	// key names the series it shares a publication delay with
	// (delayKey), made once: scrapes ask for it for every tuple.
	key string

	values   []sampleOf    // built from Samples, ready to serve
	info     []sampleOf    // the per-tuple families
	inflight chan struct{} // closed when the refresh under way ends
	// due is when the engine refreshes it next (its plan, or sooner when
	// a sibling found its row); slot is its place in the API's queue (-1:
	// in flight), order its place in the configuration.
	due         time.Time
	slot, order int
	logged      string // last error logged, so that each is logged once
	// first: the tuple has never been refreshed; scrapes wait for its
	// first refresh, within their deadline.
	first bool
	// deprecatedLog says the deprecation was logged by this process.
	deprecatedLog bool
}

// rebuild builds the served series from Samples with the tuple's labels.
// It reports false when they cannot become series (a label set changed
// on reload): then there are no values to serve.
func (st *tupleState) rebuild(fams *families) bool {
	st.values = nil
	if st.Samples == nil {
		return true
	}
	values, problems := fams.build(st.tuple, st.Samples)
	if len(problems) > 0 {
		st.Samples = nil
		return false
	}
	st.values = values
	return true
}

// showValues says whether the last good values are still served: while
// refreshes succeed, and for max_staleness after they start failing.
func (st *tupleState) showValues(now time.Time, maxStaleness time.Duration) bool {
	if st.values == nil {
		return false
	}
	return st.OK || st.FailingSince.IsZero() || now.Sub(st.FailingSince) <= maxStaleness
}

// tupleFamilies are the per-tuple families, one set per configuration.
type tupleFamilies struct {
	timestamp, block, success, deprecated, lastSuccess *family
}

func newTupleFamilies(labels []string) *tupleFamilies {
	g := dto.MetricType_GAUGE
	return &tupleFamilies{
		timestamp: newFamily(series.Timestamp.Name, series.Timestamp.Help, g, labels),
		block:     newFamily(series.BlockHeight.Name, series.BlockHeight.Help, g, labels),
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
	if st.OK {
		ok = 1
	}
	add(tf.success, ok)
	if !st.RowTime.IsZero() {
		add(tf.timestamp, float64(st.RowTime.Unix()))
	}
	if st.Block != nil {
		add(tf.block, *st.Block)
	}
	if st.Deprecated {
		add(tf.deprecated, 1)
	}
	if !st.LastSuccess.IsZero() {
		add(tf.lastSuccess, float64(st.LastSuccess.UnixNano())/1e9)
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

// delayKey is delayKey(st.tuple), made on first use; the collector's lock
// guards it like the rest of the state.
func (st *tupleState) delayKey() string {
	if st.key == "" {
		st.key = delayKey(st.tuple)
	}
	return st.key
}
