package collector

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The refresh schedule. A row at time s covers [s, s+w) for a window of
// duration w; the next row starts at s+w and becomes visible some delay D
// after its start (w plus a publication lag when the API serves closed
// intervals only; less than w for a live upstream). Before then nothing
// new can be had, so the cached value is served without a call. D is
// learned per API, endpoint and window (delays.go): the first poll for a
// row goes to the learned estimate, probes go below it, and a row that is
// late is polled in widening steps until it shows up.

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
	return w + max(policy.FirstGuessMin, time.Duration(policy.FirstGuessShare*float64(w)))
}

// learnStep is the resolution of what is learned of a publication delay,
// and the first wait between polls of a row that is late: 2 % of the
// window, at least the 5 s floor, at most 5 minutes (so that a late day row
// is still found within minutes).
func learnStep(w time.Duration) time.Duration {
	return min(max(time.Duration(policy.LearnShare*float64(w)), minInterval), policy.LearnMax)
}

// pollStep is the wait before the n-th poll (from 0) of an overdue row:
// from learnStep, doubling, at most 8 learnSteps and a quarter of the
// window, so that a late row is found within a few steps of when it comes.
func pollStep(n int, w time.Duration) time.Duration {
	d := learnStep(w) << min(n, policy.LateDoublings)
	return max(min(d, w/4), minInterval)
}

// overdueStep is the wait before the next poll of a row that is overdue
// by `overdue` past its interval's end: pollStep while it is within a
// window of when it was due, then a quarter of the window, and a whole
// window once it is three windows late or the upstream marks the series
// deprecated. A series whose upstream stopped (a delisted exchange) then
// costs about a call per window, not one every few minutes for ever.
func overdueStep(n int, w, overdue time.Duration, deprecated bool) time.Duration {
	switch {
	case deprecated || overdue > 3*w:
		return max(w, minInterval)
	case overdue > w:
		return max(pollStep(n, w), w/4)
	}
	return pollStep(n, w)
}

func step(steps []time.Duration, i int, ceiling time.Duration) time.Duration {
	d := steps[min(i, len(steps)-1)]
	if ceiling > 0 && d > ceiling {
		d = ceiling
	}
	return max(d, minInterval)
}

// schedule is the policy of one API: when each tuple is next refreshed.
type schedule struct {
	delays     *delays // the API's, kept across reloads
	revalidate time.Duration
	// factor is the coarsening the daily budget's plan asks for, per
	// window: a series is polled for every factor-th row.
	factor map[string]int
}

// rowWindow is the spacing of a tuple's rows: its window, or for block
// windows the mean spacing of the rows seen.
func rowWindow(st *tupleState) time.Duration {
	if st.tuple.Window == "block" {
		return st.Interval
	}
	return config.WindowDuration(st.tuple.Window)
}

// afterSuccess learns from a refresh at `now` that succeeded and plans the
// next. prevNewest is the newest row before it; st already holds what the
// answer said.
func (s *schedule) afterSuccess(st *tupleState, prevNewest time.Time, now time.Time) time.Time {
	t := st.tuple
	w := rowWindow(st)
	key := delayKey(t)
	if k := s.factor[t.Window]; k > 1 && w > 0 && !st.Newest.IsZero() && t.CacheTTL == 0 {
		return s.coarse(st, k, w, now)
	}
	if w > 0 && !st.Newest.IsZero() {
		switch {
		case prevNewest.IsZero():
			// The first refresh after start sets the schedule from the
			// rows it got: the next row is polled for when it appears.
			if !st.Newest.After(now) {
				s.delays.bound(key, t.Key, w, now.Sub(st.Newest))
			}
		case st.Newest.After(prevNewest):
			var missed time.Duration
			if st.Polls > 0 && st.Newest.Sub(prevNewest) < w+w/2 {
				// The polls that missed were for this row: they bound
				// its delay from below. (After a gap, an outage or a
				// pause, they were for an older row: this find only
				// bounds the delay from above.)
				missed = st.Missed
			}
			if st.Following {
				s.delays.followed(key, w, true)
			} else {
				s.delays.found(key, t.Key, st.Newest, w, now.Sub(st.Newest), missed, st.Polls, st.Probing)
			}
			st.Polls, st.Probing, st.Planned, st.Following = 0, false, false, false
		case !st.Planned:
		case st.Following && s.delays.foundSince(key, prevNewest.Add(w)):
			// Polled because another series of the key found the row,
			// and this one has not got it: it publishes on its own.
			s.delays.followed(key, w, false)
			st.Following = false
			st.Polls++
			st.Missed = now.Sub(prevNewest.Add(w))
		case now.Before(prevNewest.Add(w + st.Due)):
			// Polled before the row was due (a revalidation): nothing
			// learned.
		case st.Probing:
			s.delays.probeMissed(key, t.Key, w)
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
	nextStart := st.Newest.Add(w * time.Duration(max(1, s.factor[t.Window])))
	if st.Polls > 0 {
		if !s.delays.chase(key, t.Key, nextStart, w) {
			// Another series of the key polls for this row; this one
			// is polled as soon as that one finds it (collect), or
			// after the longest step if it never does.
			return s.cap(now, now.Add(max(w/4, minInterval)))
		}
		return s.cap(now, now.Add(overdueStep(st.Polls-1, w, st.Missed-w, st.Deprecated)))
	}
	if !st.Planned {
		st.Due, st.Probing, st.Following = s.delays.plan(key, t.Key, w, now)
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

// coarse plans a series the daily budget's plan coarsens: polled for
// every k-th row, when the learned delay says it is out, and for nothing
// in between. Such polls teach nothing of the delay (a poll may find the
// row before the one it was meant for), and the series polls on its own.
func (s *schedule) coarse(st *tupleState, k int, w time.Duration, now time.Time) time.Time {
	st.Polls, st.Probing, st.Planned, st.Following = 0, false, false, false
	// The learned delay plus a learn step, and never sooner than k
	// windows after this poll: a poll that came before its row found the
	// one before, and polling k rows after that would poll more often.
	first := s.delays.publication(delayKey(st.tuple), w) + w + learnStep(w)
	next := maxTime(st.Newest.Add(time.Duration(k)*w+first), now.Add(time.Duration(k)*w))
	if !next.After(now) {
		next = now.Add(w) // nothing newer yet: a window later
	}
	return s.cap(now, maxTime(next, now.Add(minInterval)))
}

// waitsForLeader says whether a follower whose own poll is due waits
// instead, because its key's leader is still chasing the row (a late
// row): it is due again a learn step later, or as soon as the leader finds
// the row (siblingFound), or polls itself once the leader fails and
// resigns. Called under the collector's lock.
func (s *schedule) waitsForLeader(st *tupleState, now time.Time) bool {
	if !st.Following || st.Newest.IsZero() || st.tuple.CacheTTL > 0 {
		return false
	}
	w := rowWindow(st)
	if w <= 0 || !s.delays.chasing(st.delayKey(), st.Newest.Add(w)) {
		return false
	}
	st.Next = now.Add(learnStep(w))
	return true
}

// afterError plans the retry of a failing tuple.
func (s *schedule) afterError(st *tupleState, e *upstream.Error, now time.Time) time.Time {
	if st.tuple.CacheTTL == 0 && !e.HeldBack {
		s.delays.resign(delayKey(st.tuple), st.tuple.Key)
	}
	if e.HeldBack {
		// Not sent, so nothing to back off from: asked again when
		// rate_limit has a turn for it.
		return now.Add(max(e.RetryAfter, minInterval))
	}
	next := now.Add(step(policy.ErrorSteps, st.Failures-1, 0))
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
	if r := max(s.revalidate, minInterval); s.revalidate > 0 && next.After(now.Add(r)) {
		return now.Add(r) // the 5 s floor holds for revalidate too
	}
	return next
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
