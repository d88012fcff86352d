package schedule

import "time"

// Policy is every tunable of the schedule (next.go) and of learning
// publication delays (learn.go); everything else is derived from them in
// the function that computes it. The figures were set against the
// freshness benchmarks (BENCHMARKS.md): at most 1.2 calls per published
// row and a mean excess staleness within a tenth of the window. Check a
// change with `go test ./schedule ./benchmark` (ONCHAIN_BENCH_FULL=1 for
// the full tables).
type Policy struct {
	// MinInterval: no tuple is refreshed more often (5 s), by the
	// schedule or revalidate (a cache_ttl is taken as given); also the
	// floor of the learn step.
	MinInterval time.Duration

	// LearnShare and LearnMax: the learn step, the resolution of a
	// learned delay and first wait between polls of a late row, as a
	// share of the window (w/50, at most 5 min: a late day row is found
	// within minutes).
	LearnShare float64
	LearnMax   time.Duration
	// LateDoublings: the waits between polls of a late row double this
	// many times (3: up to 8 learn steps).
	LateDoublings int
	// LongestWait: the longest wait between polls of a late row, and the
	// deepest probe, as a share of the window (a quarter). StaleWindows:
	// a row that many windows late (3), or deprecated, is polled once a
	// window, so that an upstream that stopped costs a call per window.
	LongestWait  float64
	StaleWindows int

	// ProbeShare: the share of a lone series' first polls placed earlier
	// than the estimate (0.1), so that it can come down. A leader probes
	// ProbeShare per member of its key (its followers share its misses),
	// up to MaxProbeShare (0.5: it still polls at the estimate as often).
	ProbeShare, MaxProbeShare float64
	// MissBudget: polls per row and series that may miss (0.15). Below
	// it a leader rises only part of the way after a late row; above it
	// the delay spreads (jitter), and an early find starts no descent.
	MissBudget float64
	// SplitShare: a key's series are taken to publish apart, and learn
	// alone, once followers miss more than one row in SplitShare (20) of
	// those their leader found, SplitShare rows counted as given. Rows,
	// not followers' polls.
	SplitShare int

	// ErrorSteps widen the waits between retries of a failing tuple.
	ErrorSteps []time.Duration
	// MaxPause: the longest pause or hold a poll waits out (24 h: a daily
	// quota resets within a day). A poll taken back further ahead than
	// this, or than two rows, is not trusted (Outcome.Restored).
	MaxPause time.Duration
}

// Default is the schedule the exporter runs.
var Default = Policy{
	MinInterval: 5 * time.Second,
	LearnShare:  1.0 / 50, LearnMax: 5 * time.Minute, LateDoublings: 3,
	LongestWait: 0.25, StaleWindows: 3,
	ProbeShare: 0.1, MaxProbeShare: 0.5, MissBudget: 0.15,
	SplitShare: 20,
	ErrorSteps: []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute},
	MaxPause:   24 * time.Hour,
}

// resolution is the learn step before its LearnMax cap: LearnShare of
// the window, at least MinInterval.
func (p *Policy) resolution(w time.Duration) time.Duration {
	return max(time.Duration(p.LearnShare*float64(w)), p.MinInterval)
}

// FirstGuess is the offset from a row's start of its first poll before
// anything was learned: a quarter of the uncapped learn step after the
// interval closes (w/200: 7.2 min for day rows).
func (p *Policy) FirstGuess(w time.Duration) time.Duration {
	return w + p.resolution(w)/4
}

// LearnStep is the resolution of a learned delay and the first wait
// between polls of a late row: 2 % of the window, within [5 s, 5 min].
func (p *Policy) LearnStep(w time.Duration) time.Duration {
	return min(p.resolution(w), p.LearnMax)
}

// jitterMargin is added to the delay a late row showed, so that a
// jittering provider is not missed row after row: half a learn step (the
// learned delay is half a step off on average), not floored.
func (p *Policy) jitterMargin(w time.Duration) time.Duration {
	return min(time.Duration(p.LearnShare*float64(w))/2, p.LearnMax)
}

// spentDecay is the weight of the past in the moving average of missed
// polls per row: over the 1/ProbeShare rows in which a lone series probes
// once (0.9).
func (p *Policy) spentDecay() float64 { return 1 - p.ProbeShare }

// longestWait is LongestWait of the window w.
func (p *Policy) longestWait(w time.Duration) time.Duration {
	return time.Duration(p.LongestWait * float64(w))
}

// pollStep is the wait before the n-th poll (from 0) of an overdue row:
// LearnStep doubling LateDoublings times, at most longestWait.
func (p *Policy) pollStep(n int, w time.Duration) time.Duration {
	d := p.LearnStep(w) << min(n, p.LateDoublings)
	return max(min(d, p.longestWait(w)), p.MinInterval)
}

// overdueStep is the wait before the next poll of a row `overdue` past
// its interval's end: pollStep within a window, then longestWait, and a
// window once StaleWindows late or deprecated.
func (p *Policy) overdueStep(n int, w, overdue time.Duration, deprecated bool) time.Duration {
	switch {
	case deprecated || overdue > time.Duration(p.StaleWindows)*w:
		return max(w, p.MinInterval)
	case overdue > w:
		return max(p.pollStep(n, w), p.longestWait(w))
	}
	return p.pollStep(n, w)
}

// errorStep is the wait before the retry of a tuple failing for the n-th
// time in a row (from 1).
func (p *Policy) errorStep(n int) time.Duration {
	return max(p.ErrorSteps[min(max(n-1, 0), len(p.ErrorSteps)-1)], p.MinInterval)
}

// followerWait is how long after the estimate a follower polls for a row
// its leader has not found: longestWait, at most the longest wait between
// polls of a late row (40 min for day rows), so that a leader that fails
// delays its followers that much, once.
func (p *Policy) followerWait(w time.Duration) time.Duration {
	return max(min(p.longestWait(w), p.LearnMax<<p.LateDoublings), p.LearnStep(w))
}
