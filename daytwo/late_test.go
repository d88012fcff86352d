//go:build !race

package daytwo

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// lateRow is a delay the run injects: the fake holds back the rows of the
// data API endpoints under path, in windows, that it would show from from
// on, and shows them at until. path is an endpoint, or a prefix of many
// ("/v1/": an incident at the provider).
type lateRow struct {
	what        string
	path        string
	windows     []string
	from, until time.Time
}

func (l lateRow) holds(path, window string, now time.Time) bool {
	return !now.Before(l.from) && now.Before(l.until) && strings.HasPrefix(path, l.path) && slices.Contains(l.windows, window)
}

// incident says whether the delay is the provider's incident, many
// endpoints at once, rather than one endpoint's.
func (l lateRow) incident() bool { return strings.HasSuffix(l.path, "/") }

// holder stands between the test server and the fake: while a lateRow
// holds a request's endpoint and window, it asks the fake for the rows up
// to the newest one shown at the delay's start (the API's own "to"
// parameter), so that the answer is the one the fake gave then.
type holder struct {
	now  func() time.Time
	late []lateRow

	mu   sync.Mutex
	held int // requests answered without the newer rows
}

func (h *holder) wrap(next http.Handler) http.Handler {
	fake := next.(*fakeapi.Server)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		window := q.Get("window")
		if now := h.now(); q.Get("to") == "" {
			for _, l := range h.late {
				if l.holds(r.URL.Path, window, now) {
					q.Set("to", fake.NewestVisible(r.URL.Path, window, "", l.from).Format("20060102T150405"))
					r.URL.RawQuery = q.Encode()
					h.mu.Lock()
					h.held++
					h.mu.Unlock()
					break
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

const dueFamily = "onchain_exporter_row_due_timestamp_seconds"

// last is, for each series of name that match, its newest sample at or
// before ts (within Prometheus's lookback of 5 minutes).
func (r *recording) last(name string, ts time.Time, match func(labels.Labels) bool) map[*memSeries]float64 {
	out := map[*memSeries]float64{}
	ms := ts.UnixMilli()
	for _, s := range r.byName[name] {
		if !match(s.ls) {
			continue
		}
		i := sort.Search(len(s.samples), func(i int) bool { return s.samples[i].T() > ms })
		if i > 0 && ms-s.samples[i-1].T() <= (5*time.Minute).Milliseconds() {
			out[s] = s.samples[i-1].F()
		}
	}
	return out
}

// heldDues are the due times, as the members serve them at now, of the
// series of the delays in force. It notes what each due time allows past
// the learned release, as the exporter says (the largest of the members'):
// the key learns nothing while its rows are held.
func (r *run) heldDues(now time.Time) []time.Time {
	var out []time.Time
	for _, l := range r.late {
		if now.Before(l.from) || !now.Before(l.until) {
			continue
		}
		for _, w := range l.windows {
			for _, m := range r.members {
				if m.app == nil || l.incident() {
					continue
				}
				if tol, ok := m.app.DueTolerance("data", l.path, w); ok && tol > r.tolerance[l.what+" "+w] {
					if r.tolerance == nil {
						r.tolerance = map[string]time.Duration{}
					}
					r.tolerance[l.what+" "+w] = tol
				}
			}
		}
		for _, v := range r.rec.last(dueFamily, now, func(ls labels.Labels) bool {
			return strings.HasPrefix(ls.Get("endpoint"), l.path) && slices.Contains(l.windows, ls.Get("window"))
		}) {
			out = append(out, time.Unix(0, int64(v*1e9)))
		}
	}
	return out
}

// dueAt is the due time of an endpoint's window at ts: the latest any
// member and job serves.
func (r *run) dueAt(endpoint, window string, ts time.Time) (time.Time, bool) {
	var due time.Time
	for _, v := range r.rec.last(dueFamily, ts, func(ls labels.Labels) bool {
		return ls.Get("endpoint") == endpoint && ls.Get("window") == window
	}) {
		if at := time.Unix(0, int64(v*1e9)); at.After(due) {
			due = at
		}
	}
	return due, !due.IsZero()
}

// injectedLate says whether a late alert is one of an injected delay.
func (r *run) injectedLate(f firing) bool {
	for i := range r.late {
		if r.injectedLateBy(f, &r.late[i]) {
			return true
		}
	}
	return false
}

// injectedLateBy says whether a late alert is l's: it started while l
// held its rows or soon after, on an endpoint l holds (OnchainProviderLate,
// raised per API, on an incident's).
func (r *run) injectedLateBy(f firing, l *lateRow) bool {
	endpoint := f.ls.Get("endpoint")
	return !f.from.Before(l.from) && f.from.Before(l.until.Add(lateGrace)) &&
		(endpoint != "" && strings.HasPrefix(endpoint, l.path) || endpoint == "" && l.incident())
}

// lateGrace is how long after a delay ends its alerts are still its: the
// held rows are found at the next poll.
const lateGrace = 30 * time.Minute

// lateFigures holds the late alerts to the delays injected: none outside
// them, each delayed endpoint raised once, an incident once per API, and
// returns the detection times of the rows late alone (after the learned
// release, after the due time), per window.
func (r *run) lateFigures(fired []firing) (afterRelease, afterDue map[string][]time.Duration) {
	t := r.t
	afterRelease, afterDue = map[string][]time.Duration{}, map[string][]time.Duration{}
	seen := map[string]int{}
	for _, f := range fired {
		if f.name != "OnchainDataLate" && f.name != "OnchainProviderLate" {
			continue
		}
		endpoint := f.ls.Get("endpoint") // "" for OnchainProviderLate, raised per API
		var in *lateRow
		for i := range r.late {
			if l := &r.late[i]; r.injectedLateBy(f, l) {
				in = l
			}
		}
		if in == nil {
			t.Errorf("a false late alert: %s", f)
			continue
		}
		key := in.what + " " + f.name + " " + endpoint
		if seen[key]++; seen[key] > 1 {
			t.Errorf("%s: %s fired again (once per endpoint, not per series, member or job): %s", in.what, f.name, f)
		}
		if f.name != "OnchainDataLate" {
			continue
		}
		// The window whose due time passed first is the one late.
		var due time.Time
		var window string
		for _, w := range in.windows {
			if d, ok := r.dueAt(endpoint, w, f.from); ok && d.Before(f.from) && (due.IsZero() || d.Before(due)) {
				due, window = d, w
			}
		}
		if due.IsZero() {
			t.Errorf("%s: %s fired with no due time of %v past", in.what, f, in.windows)
			continue
		}
		if in.incident() {
			continue // detected as the incident; the figures are of rows late alone
		}
		tol, ok := r.tolerance[in.what+" "+window]
		if !ok {
			t.Errorf("%s: no tolerance of the %s due time noted while it held", in.what, window)
			continue
		}
		release := due.Add(-tol) // the learned release
		afterDue[window] = append(afterDue[window], f.from.Sub(due))
		afterRelease[window] = append(afterRelease[window], f.from.Sub(release))
		t.Logf("%s: %s detected %v after its due time %s, %v after the learned release (a tolerance of %v)", in.what, window,
			f.from.Sub(due), due.UTC().Format("Jan 2 15:04:05"), f.from.Sub(release), tol)
	}
	for _, l := range r.late {
		// What a day row held back taught the exporter: its due time
		// after the close of the next day's row, before and after.
		if slices.Equal(l.windows, []string{"day"}) {
			before, ok1 := r.dueAt(l.path, "day", l.from.Add(-5*time.Minute))
			after, ok2 := r.dueAt(l.path, "day", l.from.Add(24*time.Hour-5*time.Minute))
			if ok1 && ok2 {
				t.Logf("%s: the next row due %v after its close before, %v after", l.what, before.Sub(l.from), after.Sub(l.from.Add(24*time.Hour)))
			}
		}
		if l.incident() {
			if n := seen[l.what+" OnchainProviderLate "]; n != 1 {
				t.Errorf("%s: OnchainProviderLate fired %d times, want once", l.what, n)
			}
			continue
		}
		if seen[l.what+" OnchainDataLate "+l.path] == 0 {
			t.Errorf("%s: no OnchainDataLate for %s", l.what, l.path)
		}
	}
	return afterRelease, afterDue
}

// quantile is the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// figures renders detection times per window: "hour n=2 p50 7m p95 8m".
func figures(by map[string][]time.Duration) string {
	var parts []string
	for _, w := range []string{"hour", "day"} {
		if ds := by[w]; len(ds) > 0 {
			parts = append(parts, fmt.Sprintf("%s n=%d p50 %v p95 %v", w, len(ds), quantile(ds, 0.5), quantile(ds, 0.95)))
		}
	}
	return strings.Join(parts, ", ")
}
