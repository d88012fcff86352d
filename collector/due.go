package collector

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// rowDue is onchain_exporter_row_due_timestamp_seconds: per API,
// endpoint and window, when the row after the newest one served is due
// at the latest, from what the engine learned of its rows. Past it with
// no newer row, the provider is late (the mixin's OnchainDataLate): the
// end of the next row's interval, plus the learned publication delay,
// plus a tolerance for the spread of the delays and the poll that finds
// the row (dueTolerance). Only windowed rows (min, 10min, hour, day) have
// one: block rows come when blocks do, and rows without a window follow
// a cadence with days off.
type rowDue struct {
	vec *prometheus.GaugeVec

	mu   sync.Mutex
	last map[string]map[dueKey]bool // per API, the keys set at its last scrape
}

type dueKey struct{ endpoint, window string }

func newRowDue(reg prometheus.Registerer) *rowDue {
	d := &rowDue{vec: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "row_due_timestamp_seconds",
		Help: "When the row after the newest one served is due at the latest, per endpoint and window: the end of its interval, plus the learned publication delay, plus a tolerance for its spread (a 12th of the window, at least 2 minutes); absent until two rows taught the delay. Past it with no newer row, the provider is late. Windowed rows only (min, 10min, hour, day)."},
		[]string{"api", "endpoint", "window"}), last: map[string]map[dueKey]bool{}}
	reg.MustRegister(d.vec)
	return d
}

// dueTolerance is what the due time allows past the learned delay: the
// spread of the provider's delays around it and the poll that finds a
// row once it is out.
func dueTolerance(w time.Duration) time.Duration { return max(w/12, 2*time.Minute) }

// dueAfterRows is how many rows the key's delay is learned from before
// a due time is published: the first guess is no habit to be late for.
const dueAfterRows = 2

// dueTally is, per endpoint and window, the latest due time of its
// tuples (the one that found the newest row: the endpoint is late only
// when none of its series has the row).
type dueTally map[dueKey]time.Time

func (d dueTally) add(tv *tupleView) {
	at := tv.due()
	if at.IsZero() {
		return
	}
	if k := (dueKey{tv.tuple.Path, tv.tuple.Window}); at.After(d[k]) {
		d[k] = at
	}
}

// due is when the row after the tuple's newest is due at the latest: the
// next row's start, plus its due offset; zero when it has none (not
// learned, no row yet, or no window).
func (tv *tupleView) due() time.Time {
	if tv.dueOffset <= 0 || tv.newest == 0 || config.WindowDuration(tv.tuple.Window) <= 0 {
		return time.Time{}
	}
	return tv.newest.Time().Add(tv.w + tv.dueOffset)
}

// publish sets the API's due times and deletes those of endpoints it no
// longer has.
func (d *rowDue) publish(api string, t dueTally) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := make(map[dueKey]bool, len(t))
	for k, at := range t {
		d.vec.WithLabelValues(api, k.endpoint, k.window).Set(float64(at.UnixNano()) / 1e9)
		now[k] = true
	}
	for k := range d.last[api] {
		if !now[k] {
			d.vec.DeleteLabelValues(api, k.endpoint, k.window)
		}
	}
	d.last[api] = now
}

// drop deletes an API's due times (its engine closed).
func (d *rowDue) drop(api string) { d.publish(api, nil) }
