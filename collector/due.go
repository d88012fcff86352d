package collector

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// rowDue is onchain_exporter_row_due_timestamp_seconds: when the row
// after the newest one served is due at the latest (the end of its
// interval, plus schedule.Estimate.DueOffset); past it, the provider is
// late (the mixin's OnchainDataLate). Windowed rows only: block rows come
// when blocks do, windowless rows on a cadence with days off.
type rowDue struct {
	vec *prometheus.GaugeVec

	mu   sync.Mutex
	last map[string]map[dueKey]bool // per API, the keys set at its last scrape
}

type dueKey struct{ endpoint, window string }

func newRowDue(reg prometheus.Registerer) *rowDue {
	d := &rowDue{vec: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "row_due_timestamp_seconds",
		Help: "When the row after the newest one served is due at the latest, per endpoint and window: the end of its interval, plus the learned release (the latest delay of the last 16 rows found on time), plus the margin their spread explains, pooled with the API's other endpoints of that window once three have rows (at least 2 minutes, at most a 12th of the window); rows found late teach neither. Absent until two rows were found on time. Past it with no newer row, the provider is late. Windowed rows only (min, 10min, hour, day)."},
		[]string{"api", "endpoint", "window"}), last: map[string]map[dueKey]bool{}}
	reg.MustRegister(d.vec)
	return d
}

// dueTally is, per endpoint and window, the latest due time of its
// tuples: the endpoint is late only when none of its series has the row.
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

// due is when the row after the tuple's newest is due at the latest;
// zero when not known.
func (tv *tupleView) due() time.Time {
	if tv.dueOffset <= 0 || tv.newest == 0 || plan.WindowDuration(tv.tuple.Window) <= 0 {
		return time.Time{}
	}
	return tv.newest.Time().Add(tv.w + tv.dueOffset)
}

// publish sets the API's due times and deletes those of endpoints it no
// longer has (all of them for nil: its engine closed).
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

// DueTolerance is what the due time of an endpoint's window allows past
// its learned release (schedule.Estimate.DueTolerance), false while it
// has no due time.
func (e *Exporter) DueTolerance(api, endpoint, window string) (time.Duration, bool) {
	w := plan.WindowDuration(window)
	if w <= 0 {
		return 0, false
	}
	for _, c := range *e.served.Load() {
		if c.name != api {
			continue
		}
		est, ok := c.sched.book.Estimate(schedule.NewKey(api, endpoint, window, "").String())
		if _, learned := est.Release(); !ok || !learned {
			return 0, false
		}
		return est.DueTolerance(w), true
	}
	return 0, false
}
