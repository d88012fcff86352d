package collector

import (
	"sync/atomic"
	"time"
	"unsafe"

	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/published"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/series"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// tupleState is the engine's entry of one tuple, guarded by its
// apiCollector's lock. What survives a reload or a restart is one value,
// Tuple; the rest is rebuilt from it or lives with the process. Scrapes
// read only what it published last (view).
type tupleState struct {
	tuple *config.Tuple
	cell         // what the door changes (door.go)
	key   string // delayKey, made once
	// info is what the per-tuple families' samples are made of, their
	// label set rendered once (buildInfo; nil until then, or when it
	// cannot be).
	info     *tupleInfo
	inflight bool // a refresh is under way
	removed  bool // a reload dropped it: a refresh under way ends without a trace
	// first: never refreshed; scrapes wait for it within their deadline.
	first bool
	// running is inflight as scrapes and the page read it, without the
	// lock: cleared when the refresh's outcome is published.
	running atomic.Bool
	// slot is its place in the API's queue (-1: not queued), order its
	// place in the configuration.
	slot, order int32
	page        *pageNotes // what only the page reads (view.go); nil until noted
	// view is what scrapes read, published after every change.
	view atomic.Pointer[tupleView]
}

// tupleView is what the engine published of a tuple, immutable; its
// series are shared with the tupleState, never copied.
type tupleView struct {
	tuple        *config.Tuple // the tuple in force when published
	values       []exposition.Sample
	info         *tupleInfo // nil: none
	ok           bool       // the last refresh succeeded
	attempted    bool       // a refresh has ended (LastAttempt is set)
	asked        bool       // its first fill is over (tupleState.asked)
	deprecated   bool
	why          schedule.Why // why next is then, as the policy said
	failingSince schedule.Instant
	next         schedule.Instant // when its next refresh is due
	// For excessTally: the spacing of its rows (0: not scheduled), the
	// newest row, and the offset from a row's start at which rows are
	// taken to be out.
	w        time.Duration
	newest   schedule.Instant
	earliest time.Duration
	// dueOffset is how long after its start a row is due at the latest
	// (rowDue), 0 until learned.
	dueOffset time.Duration
	// For the operator's page (nil: none noted).
	samples []decode.Sample
	page    *pageNotes
}

// pageNotes are what only the operator's page reads of a tuple: its last
// outcomes, oldest first, the text of its last failure, masked, and the
// rows its values came from. Replaced whole by noteLocked, never written
// once published: the state and its view share it.
type pageNotes struct {
	answers   []published.Answer
	lastError string
	points    published.Points
}

// lastError is the text of the tuple's last failure, "" for none.
func (st *tupleState) lastError() string {
	if st.page == nil {
		return ""
	}
	return st.page.lastError
}

// publishLocked publishes what scrapes serve of the tuple now: a new view,
// unless the one published holds just that (no garbage left behind).
func (c *apiCollector) publishLocked(st *tupleState) {
	v := tupleView{tuple: st.tuple, values: st.values, info: st.info, ok: st.OK, attempted: !st.LastAttempt.IsZero(), asked: st.asked(),
		failingSince: st.FailingSince, next: st.Next, why: st.Why,
		newest: st.Newest, deprecated: st.Deprecated,
		samples: st.Samples, page: st.page}
	if w := spacing(st.tuple.Window, &st.Tuple); w > 0 && st.tuple.CacheTTL == 0 {
		v.w = w
		if !st.Newest.IsZero() && !st.Deprecated {
			v.earliest = c.sched.book.Earliest(st.delayKey(), st.tuple.Key, w)
			if est, ok := c.sched.book.Estimate(st.delayKey()); ok && est.Learned {
				v.dueOffset, _ = est.DueOffset(w)
			}
		}
	}
	defer st.running.Store(st.inflight) // after the view: an outcome is served before its refresh ends
	if old := st.view.Load(); old != nil && sameView(old, &v) {
		return
	}
	p := new(tupleView) // v itself stays on the stack
	*p = v
	st.view.Store(p)
}

// sameView says whether two views hold the same slices and pointers.
func sameView(a, b *tupleView) bool {
	same := func(x, y []exposition.Sample) bool {
		return len(x) == len(y) && unsafe.SliceData(x) == unsafe.SliceData(y)
	}
	return a.tuple == b.tuple && same(a.values, b.values) && a.info == b.info &&
		a.ok == b.ok && a.attempted == b.attempted && a.asked == b.asked && a.deprecated == b.deprecated &&
		a.failingSince == b.failingSince && a.next == b.next && a.why == b.why && a.w == b.w && a.newest == b.newest && a.earliest == b.earliest &&
		a.dueOffset == b.dueOffset && len(a.samples) == len(b.samples) && unsafe.SliceData(a.samples) == unsafe.SliceData(b.samples) &&
		a.page == b.page
}

// showValues says whether the last good values are still served: while
// refreshes succeed, and for max_staleness after they start failing.
func showValues(values []exposition.Sample, ok bool, failingSince, now time.Time, maxStaleness time.Duration) bool {
	if values == nil {
		return false
	}
	return ok || failingSince.IsZero() || now.Sub(failingSince) <= maxStaleness
}

// tupleFamilies are the per-tuple families, one set per configuration.
type tupleFamilies struct {
	timestamp, block, success, deprecated, refused, lastSuccess *exposition.Family
}

func newTupleFamilies(labels []string) *tupleFamilies {
	g := dto.MetricType_GAUGE
	return &tupleFamilies{
		timestamp: exposition.NewFamily(series.Timestamp.Name, series.Timestamp.Help, g, labels),
		block:     exposition.NewFamily(series.BlockHeight.Name, series.BlockHeight.Help, g, labels),
		success: exposition.NewFamily(namespace+"_query_success",
			"1 when the last refresh of the tuple from upstream succeeded, else 0.", g, labels),
		deprecated: exposition.NewFamily(namespace+"_query_deprecated",
			"1 when the upstream marks the tuple's series deprecated (data may no longer update).", g, labels),
		refused: exposition.NewFamily(namespace+"_query_refused",
			"1 when the key's plan refuses the tuple's request (code plan_refused): its endpoint and window are held, asked again after a reload or when the plan may have changed (24 h).", g, labels),
		lastSuccess: exposition.NewFamily(namespace+"_last_success_timestamp_seconds",
			"When the tuple was last refreshed from upstream successfully, as a Unix time.", g, labels),
	}
}

// tupleInfo is what the per-tuple families' samples of a tuple are made
// of (appendTo), and their label set when a scrape cannot render it;
// never written once published. Smaller than the samples it makes.
type tupleInfo struct {
	tf *tupleFamilies
	// labels is the label set as the client library rendered it, kept
	// where a scrape would not render the same; "": a scrape renders it
	// from the tuple's label values (exposition.Family.AppendLabelSet).
	labels                      string
	rowTime, block, lastSuccess float64
	has                         infoBits
}

// infoBits say which per-tuple families a tuple has a sample of, and the
// value of query_success.
type infoBits uint8

const (
	hasSuccess infoBits = 1 << iota
	wasOK               // query_success is 1
	hasRowTime
	hasBlock
	hasDeprecated
	hasRefused
	hasLastSuccess
)

// buildInfo makes the per-tuple families' info after the state changed.
// A label set that cannot be rendered (not UTF-8) leaves the tuple
// without them: they all share its label names. It is rendered by the
// client library once, and kept only where a scrape would not render the
// same.
func (st *tupleState) buildInfo(tf *tupleFamilies) {
	var labels string
	if st.info != nil {
		labels = st.info.labels
	} else {
		var err error
		values := st.tuple.TupleLabelValues
		if labels, err = tf.success.LabelSet(values...); err != nil {
			return
		}
		if b, ok := tf.success.AppendLabelSet(nil, values); ok && string(b) == labels {
			labels = "" // rendered at each scrape
		}
	}
	var has infoBits
	// No query_success before the first refresh: a fill is not an outage.
	if st.asked() {
		has |= hasSuccess
		if st.OK {
			has |= wasOK
		}
	}
	in := tupleInfo{tf: tf, labels: labels}
	if !st.RowTime.IsZero() {
		has |= hasRowTime
		in.rowTime = float64(st.RowTime.Unix())
	}
	if st.Block != nil {
		has |= hasBlock
		in.block = *st.Block
	}
	if st.Deprecated {
		has |= hasDeprecated
	}
	if st.refused() {
		has |= hasRefused
	}
	if !st.LastSuccess.IsZero() {
		has |= hasLastSuccess
		in.lastSuccess = float64(st.LastSuccess.Time().UnixNano()) / 1e9
	}
	in.has = has
	if st.info != nil && *st.info == in {
		return // the same: the view published keeps it, and no garbage is made
	}
	st.info = &in // a new value: the published view keeps the old one
}

// appendTo appends the per-tuple families' samples, their shared label
// set rendered from values in scratch unless kept.
func (in *tupleInfo) appendTo(out []exposition.Sample, values []string, scratch *[]byte) []exposition.Sample {
	if in == nil || in.has == 0 {
		return out // none: nothing to render
	}
	labels := in.labels
	if labels == "" {
		*scratch, _ = in.tf.success.AppendLabelSet((*scratch)[:0], values)
		labels = string(*scratch)
	}
	add := func(f *exposition.Family, v float64) { out = append(out, f.WithLabelSet(labels, v)) }
	if in.has&hasSuccess != 0 {
		ok := 0.0
		if in.has&wasOK != 0 {
			ok = 1
		}
		add(in.tf.success, ok)
	}
	if in.has&hasRowTime != 0 {
		add(in.tf.timestamp, in.rowTime)
	}
	if in.has&hasBlock != 0 {
		add(in.tf.block, in.block)
	}
	if in.has&hasDeprecated != 0 {
		add(in.tf.deprecated, 1)
	}
	if in.has&hasRefused != 0 {
		add(in.tf.refused, 1)
	}
	if in.has&hasLastSuccess != 0 {
		add(in.tf.lastSuccess, in.lastSuccess)
	}
	return out
}

// emit appends the tuple's metrics: values while they may be served, and
// the per-tuple families always.
func (v *tupleView) emit(out []exposition.Sample, now time.Time, maxStaleness time.Duration, scratch *[]byte) []exposition.Sample {
	if showValues(v.values, v.ok, v.failingSince.Time(), now, maxStaleness) {
		out = append(out, v.values...)
	}
	return v.info.appendTo(out, v.tuple.TupleLabelValues, scratch)
}

// refused says whether the view has the sample of query_refused.
func (v *tupleView) refused() bool { return v.info != nil && v.info.has&hasRefused != 0 }

// delayKey is delayKey(st.tuple), made on first use.
func (st *tupleState) delayKey() string {
	if st.key == "" {
		st.key = delayKey(st.tuple)
	}
	return st.key
}

// refused says the key's plan refused the tuple's request when last asked,
// or a sibling's of its endpoint and window (evRefused).
func (st *tupleState) refused() bool {
	return !st.OK && st.LastCode == upstream.PlanRefused
}

// failed says the tuple's last outcome is a failure, its own or a
// sibling's refusal.
func (st *tupleState) failed() bool { return !st.OK && st.asked() }

// asked says the tuple has been asked once since it was configured, or
// holds what an earlier ask left (a saved entry, a peer's row), or a
// sibling's refusal holds it: the first fill is over for it (fill.go).
func (st *tupleState) asked() bool {
	return !st.LastAttempt.IsZero() || st.LastCode != ""
}
