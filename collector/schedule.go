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

// firstGuess is where, after the end of its interval, the first poll for
// a row goes before anything was learned: just after the interval closes.
// A provider that is later costs the first row a few polls.
func firstGuess(w time.Duration) time.Duration {
	return w + max(2*time.Second, w/200)
}

// learnStep is the resolution of what is learned of a publication delay,
// and the first wait between polls of a row that is late: 2 % of the
// window, at least the 5 s floor, at most 5 minutes (so that a late day row
// is still found within minutes).
func learnStep(w time.Duration) time.Duration {
	return min(max(w/50, minInterval), 5*time.Minute)
}

// pollStep is the wait before the n-th poll (from 0) of an overdue row:
// from learnStep, doubling, at most a quarter of the window.
func pollStep(n int, w time.Duration) time.Duration {
	d := learnStep(w) << min(n, 16)
	return max(min(d, w/4), minInterval)
}

// errorSteps widen the interval between retries of a failing tuple.
var errorSteps = []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute}

const (
	minInterval = 5 * time.Second // never call one tuple more often
	// probeShare is the share of first polls placed earlier than the
	// estimate, so that it can come down; a probe that misses costs one
	// call more.
	probeShare = 0.1
	// jitterMargin, of the window, is added to the delay a late row
	// showed, so that a provider that jitters is not missed row after
	// row (at most 5 minutes).
	jitterMargin = 0.03
)

func step(steps []time.Duration, i int, ceiling time.Duration) time.Duration {
	d := steps[min(i, len(steps)-1)]
	if ceiling > 0 && d > ceiling {
		d = ceiling
	}
	return max(d, minInterval)
}

// delays learns, per API, endpoint and window, when rows appear: the
// offset from a row's start at which to poll for it first.
type delays struct {
	mu  sync.Mutex
	est map[string]*estimate
}

// estimate is what one series of rows taught. first is the offset from a
// row's start of its first poll. A poll that misses a row bounds its delay
// from below and the poll that then finds it from above: first rises to
// that (plus a margin for jitter). A poll that finds the row at once only
// says the delay is no later, so a small share of first polls are probes,
// placed depth earlier: a probe that finds the row brings first down to it
// and doubles the depth (a provider that became faster is followed in a
// few rows); one that misses halves the depth (down to learnStep).
type estimate struct {
	first   time.Duration
	depth   time.Duration
	credit  float64
	learned bool
	// seen is the newest row any series of the key was found with;
	// chaser is the one series polling for a late row (chased), while the
	// others wait for it to find the row.
	seen   time.Time
	chaser string
	chased time.Time
}

// delayKey names the series that share one publication delay.
func delayKey(t *config.Tuple) string { return t.API + " " + t.Path + " " + t.Window }

func (ds *delays) get(key string, w time.Duration) *estimate {
	if ds.est == nil {
		ds.est = map[string]*estimate{}
	}
	e := ds.est[key]
	if e == nil {
		e = &estimate{first: firstGuess(w), depth: learnStep(w)}
		ds.est[key] = e
	}
	return e
}

// offset is where to poll first for the next row, and whether that poll
// is a probe.
func (ds *delays) offset(key string, w time.Duration) (time.Duration, bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.get(key, w)
	if e.learned {
		e.credit += probeShare
		if e.credit >= 1 {
			e.credit--
			return e.first - e.depth, true
		}
	}
	return e.first, false
}

// found records that a row was found `at` after its start: by a probe,
// at the first try, or (missed > 0) late, after a poll at `missed` did not
// find it. A late row's delay lies between the two: first goes to the
// middle of a wide bracket (the next row, polled from there in small
// steps, narrows it) or to the top of a narrow one, plus a margin for
// jitter.
func (ds *delays) found(key string, row time.Time, w, at, missed time.Duration, probe bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.get(key, w)
	if row.After(e.seen) {
		e.seen = row
	}
	if !e.chased.After(row) {
		e.chaser, e.chased = "", time.Time{}
	}
	switch {
	case missed > 0:
		top := at
		if step := learnStep(w); at-missed > 2*step {
			top = missed + (at-missed)/2
		}
		e.first = max(e.first, top+min(time.Duration(jitterMargin*float64(w)), 5*time.Minute))
	default:
		e.first = min(e.first, at) // the delay is no later than this
		if probe {
			e.depth = min(2*e.depth, w/4)
			e.credit = 1 // it worked: probe again for the next row
		}
	}
	e.learned = true
}

// bound records that a row was there `at` after its start (the first
// refresh after start): its delay is no later, but nothing says how much
// earlier, so probing waits for a row found by the schedule.
func (ds *delays) bound(key string, w, at time.Duration) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.get(key, w)
	e.first = min(e.first, at)
}

// chase says whether the series `id` is the one to poll for a late row
// starting at row: the first to find it missing is, and the others of the
// key wait until it is found.
func (ds *delays) chase(key, id string, row time.Time, w time.Duration) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.get(key, w)
	if e.chaser == "" || e.chaser == id || e.chased.Before(row) {
		e.chaser, e.chased = id, row
		return true
	}
	return false
}

// foundSince says whether a series of the key found a row starting at or
// after row.
func (ds *delays) foundSince(key string, row time.Time) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.est[key]
	return e != nil && !e.seen.Before(row)
}

// probeMissed records that a probe came too early.
func (ds *delays) probeMissed(key string, w time.Duration) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.get(key, w)
	e.depth = max(e.depth/2, learnStep(w))
}

// publication is the estimated delay between the end of a row's interval
// and its publication, for the gauge: the first guess until something is
// learned.
func (ds *delays) publication(key string, w time.Duration) time.Duration {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.get(key, w).first - w
}

// schedule is the policy of one API: when each tuple is next refreshed.
type schedule struct {
	delays     *delays // the API's, kept across reloads
	revalidate time.Duration
}

// rowWindow is the spacing of a tuple's rows: its window, or for block
// windows the mean spacing of the rows seen.
func rowWindow(st *tupleState) time.Duration {
	if st.tuple.Window == "block" {
		return st.Interval
	}
	return windowDuration(st.tuple.Window)
}

// afterSuccess learns from a refresh at `now` that succeeded and plans the
// next. prevNewest is the newest row before it; st already holds what the
// answer said.
func (s *schedule) afterSuccess(st *tupleState, prevNewest time.Time, now time.Time) time.Time {
	t := st.tuple
	w := rowWindow(st)
	key := delayKey(t)
	if w > 0 && !st.Newest.IsZero() {
		switch {
		case prevNewest.IsZero():
			// The first refresh after start sets the schedule from the
			// rows it got: the next row is polled for when it appears.
			if !st.Newest.After(now) {
				s.delays.bound(key, w, now.Sub(st.Newest))
			}
		case st.Newest.After(prevNewest):
			var missed time.Duration
			if st.Polls > 0 {
				missed = st.Missed
			}
			s.delays.found(key, st.Newest, w, now.Sub(st.Newest), missed, st.Probing)
			st.Polls, st.Probing, st.Planned = 0, false, false
		case !st.Planned || now.Before(prevNewest.Add(w+st.Due)):
			// Polled before the row was due (a revalidation): nothing
			// learned.
		case st.Probing:
			s.delays.probeMissed(key, w)
			st.Probing, st.Planned = false, false
		default:
			st.Polls++ // the row was due and is not there (yet)
			st.Missed = now.Sub(prevNewest.Add(w))
		}
	}
	if t.CacheTTL > 0 {
		return now.Add(time.Duration(t.CacheTTL * float64(time.Second)))
	}
	if w <= 0 || st.Newest.IsZero() {
		return s.cap(now, now.Add(fallbackTTL(t.Window)))
	}
	nextStart := st.Newest.Add(w)
	if st.Polls > 0 {
		if !s.delays.chase(key, t.Key, nextStart, w) {
			// Another series of the key polls for this row; this one
			// is polled as soon as that one finds it (collect), or
			// after the longest step if it never does.
			return s.cap(now, now.Add(max(pollStep(16, w), minInterval)))
		}
		return s.cap(now, now.Add(pollStep(st.Polls-1, w)))
	}
	if !st.Planned {
		st.Due, st.Probing = s.delays.offset(key, w)
		st.Planned = true
	}
	due := nextStart.Add(st.Due)
	if now.Before(due) {
		return s.cap(now, maxTime(due, now.Add(minInterval)))
	}
	// Due already (a revalidation, or a row the estimate says is there):
	// poll again after the floor; if the row is still missing then, it
	// is late.
	return s.cap(now, now.Add(minInterval))
}

// siblingFound says whether a late row a tuple waits for was found by
// another series of its key: then the tuple is due at once.
func (s *schedule) siblingFound(st *tupleState, now time.Time) bool {
	if st.Polls == 0 || st.tuple.CacheTTL > 0 || st.Newest.IsZero() {
		return false
	}
	w := rowWindow(st)
	return w > 0 && now.Sub(st.LastAttempt) >= minInterval && s.delays.foundSince(delayKey(st.tuple), st.Newest.Add(w))
}

// afterError plans the retry of a failing tuple.
func (s *schedule) afterError(st *tupleState, e *upstream.Error, now time.Time) time.Time {
	next := now.Add(step(errorSteps, st.Failures-1, 0))
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
