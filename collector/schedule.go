package collector

import (
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The refresh schedule. A row at time s covers [s, s+w) for a window of
// duration w; the next row starts at s+w and becomes visible some delay D
// after its start (w plus a publication lag when the API serves closed
// intervals only). Before then nothing new can be had, so the cached value
// is served without a call. When the row is due the tuple is polled with
// widening steps until it shows up. D is learned per API and window from
// what polling observes, per endpoint and window (each metric has its own
// pipeline upstream): a poll that misses the row bounds D from below, a
// poll that finds it bounds it from above, and the first poll for a row is
// placed between the tightest recent bounds.

// windowDuration is the spacing of rows for fixed windows; 0 for block.
func windowDuration(w string) time.Duration {
	switch w {
	case "day":
		return 24 * time.Hour
	case "hour":
		return time.Hour
	case "10min":
		return 10 * time.Minute
	case "min":
		return time.Minute
	}
	return 0
}

// fallbackTTL is how long a value is cached when the schedule cannot be
// derived (no row time, or a window unknown), by window.
func fallbackTTL(w string) time.Duration {
	switch w {
	case "block", "min":
		return 30 * time.Second
	case "10min":
		return 2 * time.Minute
	case "hour":
		return 5 * time.Minute
	case "day":
		return 15 * time.Minute
	}
	return 5 * time.Minute
}

// defaultDelay is the first guess of D before anything was observed: the
// window itself plus a publication lag.
func defaultDelay(w string, interval time.Duration) time.Duration {
	switch w {
	case "day":
		return 24*time.Hour + time.Hour
	case "hour":
		return time.Hour + 10*time.Minute
	case "10min":
		return 10*time.Minute + 3*time.Minute
	case "min":
		return time.Minute + 30*time.Second
	}
	return 0 // block: a block is visible when it is mined
}

// pollStep is the wait before the n-th poll (from 0) of an overdue row: it
// starts at about 1 % of the window, at least 30 s, doubles each time, and
// never exceeds a quarter of the window (nor goes under 15 s): a late row
// is found in a few calls, and found again soon once it comes.
func pollStep(n int, w time.Duration) time.Duration {
	d := max(w/96, 30*time.Second) << min(n, 16)
	return max(min(d, w/4), 15*time.Second)
}

// errorSteps widen the interval between retries of a failing tuple.
var errorSteps = []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute}

const (
	minInterval  = 5 * time.Second // never call one tuple more often
	observations = 8               // recent bounds kept per window
)

func step(steps []time.Duration, i int, ceiling time.Duration) time.Duration {
	d := steps[min(i, len(steps)-1)]
	if ceiling > 0 && d > ceiling {
		d = ceiling
	}
	return max(d, minInterval)
}

// delays learns the publication delay of one API per endpoint and window.
type delays struct {
	mu     sync.Mutex
	bounds map[string]*bounds
}

type bounds struct {
	lower, upper []time.Duration // recent observations, newest last
}

func push(list []time.Duration, d time.Duration) []time.Duration {
	list = append(list, d)
	if len(list) > observations {
		list = list[len(list)-observations:]
	}
	return list
}

// delayKey names the series that share one publication delay.
func delayKey(t *config.Tuple) string { return t.LabelGroup + " " + t.Window }

// observe records that a row starting at start was seen at `seen` and,
// when a poll missed it before, not yet at `missed`.
func (ds *delays) observe(key string, start, missed, seen time.Time) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.bounds == nil {
		ds.bounds = map[string]*bounds{}
	}
	b := ds.bounds[key]
	if b == nil {
		b = &bounds{}
		ds.bounds[key] = b
	}
	b.upper = push(b.upper, seen.Sub(start))
	if !missed.IsZero() && missed.After(start) {
		b.lower = push(b.lower, missed.Sub(start))
	}
}

// estimate is when, after its start, to look for a row first.
func (ds *delays) estimate(key, window string, w time.Duration) time.Duration {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	b := ds.bounds[key]
	if b == nil || len(b.upper) == 0 {
		return defaultDelay(window, w)
	}
	ub := b.upper[0]
	for _, u := range b.upper {
		ub = min(ub, u)
	}
	var lb time.Duration
	for _, l := range b.lower {
		lb = max(lb, l)
	}
	if lb == 0 {
		// Nothing has been missed yet: no reason to look later than the
		// first guess, and no reason to probe earlier than what works.
		return min(ub, defaultDelay(window, w))
	}
	tolerance := max(time.Minute, w/100)
	if lb >= ub || ub-lb <= tolerance {
		return ub
	}
	return lb + (ub-lb)/2
}

// schedule is the policy of one API: when each tuple is next refreshed.
type schedule struct {
	delays     delays
	revalidate time.Duration
}

// afterSuccess plans the next refresh of a tuple whose refresh at `now`
// succeeded; st already holds what the answer said.
func (s *schedule) afterSuccess(st *tupleState, now time.Time) time.Time {
	t := st.tuple
	if t.CacheTTL > 0 {
		return now.Add(time.Duration(t.CacheTTL * float64(time.Second)))
	}
	w := windowDuration(t.Window)
	if t.Window == "block" {
		w = st.interval
	}
	if w <= 0 || st.newest.IsZero() {
		return s.cap(now, now.Add(fallbackTTL(t.Window)))
	}
	nextStart := st.newest.Add(w)
	due := nextStart.Add(s.delays.estimate(delayKey(t), t.Window, w))
	if now.Before(due) {
		st.polls = 0
		return s.cap(now, maxTime(due, now.Add(minInterval)))
	}
	// Overdue: the row should be there and is not (yet).
	st.missedAt = now
	next := now.Add(pollStep(st.polls, w))
	st.polls++
	return s.cap(now, next)
}

// afterError plans the retry of a failing tuple.
func (s *schedule) afterError(st *tupleState, e *upstream.Error, now time.Time) time.Time {
	next := now.Add(step(errorSteps, st.failures-1, 0))
	if e.Hold > 0 {
		next = now.Add(e.Hold)
	}
	if e.RetryAfter > 0 && now.Add(e.RetryAfter).After(next) {
		next = now.Add(e.RetryAfter)
	}
	if !e.PauseUntil.IsZero() && e.PauseUntil.After(next) {
		next = e.PauseUntil
	}
	return next
}

// cap applies the revalidation interval: data is revised after the fact.
func (s *schedule) cap(now, next time.Time) time.Time {
	if s.revalidate > 0 && next.After(now.Add(s.revalidate)) {
		return now.Add(s.revalidate)
	}
	return next
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
