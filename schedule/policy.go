package schedule

import "time"

// Policy is every tunable of the schedule (next.go) and of how
// publication delays are learned (learn.go), in one place, each with its
// unit and why it is what it is. The figures were set against the
// freshness benchmarks (BENCHMARKS.md): at most 1.2 calls per published
// row and a mean excess staleness within a tenth of the window, in every
// window and publication pattern. A change here is checked by
// `go test ./schedule ./benchmark` (and ONCHAIN_BENCH_FULL=1 for the full
// tables).
type Policy struct {
	// MinInterval: one tuple is never refreshed more often (5 s), by the
	// schedule or revalidate; a cache_ttl is taken as given.
	MinInterval time.Duration

	// FirstGuessShare and FirstGuessMin: before anything is learned, a
	// row is polled for this far after its interval closes (w/200, at
	// least 2 s): just after, at the cost of a few polls for a later
	// provider.
	FirstGuessShare float64
	FirstGuessMin   time.Duration

	// LearnShare and LearnMax: the resolution of a learned delay and the
	// first wait between polls of a late row (w/50, at least MinInterval,
	// at most 5 min, so that a late day row is found within minutes).
	LearnShare float64
	LearnMax   time.Duration
	// LateDoublings: the waits between polls of a late row double this
	// many times (3: up to 8 learn steps), never past a quarter window.
	LateDoublings int

	// ProbeShare: the share of a lone series' first polls placed earlier
	// than the estimate (0.1), so that it can come down; a leader probes
	// up to MaxProbeShare (0.5), its misses being shared by its
	// followers.
	ProbeShare, MaxProbeShare float64
	// MissBudget: polls per row and series that may miss (0.15); while a
	// leader's misses cost less, it rises only part of the way after a
	// late row and keeps polling early.
	MissBudget float64
	// JitterShare and JitterMax: the margin added to the delay a late row
	// showed (1 % of the window, at most 5 min), so that a provider that
	// jitters is not missed row after row.
	JitterShare float64
	JitterMax   time.Duration

	// FollowerWaitMax: a follower whose leader has not found the row polls
	// on its own a quarter window after the estimate, at most this (40
	// min, for day rows), so that a leader gone delays it once by that.
	FollowerWaitMax time.Duration
	// SplitShare and SplitSlack: the series of an endpoint are taken to be
	// published apart, and learn alone, once followers miss more than one
	// row in SplitShare (20) of those their leader found, plus SplitSlack
	// (2).
	SplitShare, SplitSlack int
	// SpentDecay: the weight of the past in the moving average of polls
	// per row that missed (0.9: about the last ten rows).
	SpentDecay float64

	// ErrorSteps widen the waits between retries of a failing tuple.
	ErrorSteps []time.Duration
}

// Default is the schedule the exporter runs.
var Default = Policy{
	MinInterval:     5 * time.Second,
	FirstGuessShare: 1.0 / 200, FirstGuessMin: 2 * time.Second,
	LearnShare: 1.0 / 50, LearnMax: 5 * time.Minute, LateDoublings: 3,
	ProbeShare: 0.1, MaxProbeShare: 0.5, MissBudget: 0.15,
	JitterShare: 0.01, JitterMax: 5 * time.Minute,
	FollowerWaitMax: 40 * time.Minute,
	SplitShare:      20, SplitSlack: 2,
	SpentDecay: 0.9,
	ErrorSteps: []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute},
}

// FirstGuess is where, after the end of its interval, the first poll for
// a row goes before anything was learned: just after the interval closes.
// A provider that is later costs the first row a few polls.
func (p *Policy) FirstGuess(w time.Duration) time.Duration {
	return w + max(p.FirstGuessMin, time.Duration(p.FirstGuessShare*float64(w)))
}

// LearnStep is the resolution of what is learned of a publication delay,
// and the first wait between polls of a row that is late: 2 % of the
// window, at least the 5 s floor, at most 5 minutes (so that a late day
// row is still found within minutes).
func (p *Policy) LearnStep(w time.Duration) time.Duration {
	return min(max(time.Duration(p.LearnShare*float64(w)), p.MinInterval), p.LearnMax)
}

// pollStep is the wait before the n-th poll (from 0) of an overdue row:
// from LearnStep, doubling, at most 8 learn steps and a quarter of the
// window, so that a late row is found within a few steps of when it comes.
func (p *Policy) pollStep(n int, w time.Duration) time.Duration {
	d := p.LearnStep(w) << min(n, p.LateDoublings)
	return max(min(d, w/4), p.MinInterval)
}

// overdueStep is the wait before the next poll of a row that is overdue
// by `overdue` past its interval's end: pollStep while it is within a
// window of when it was due, then a quarter of the window, and a whole
// window once it is three windows late or the upstream marks the series
// deprecated. A series whose upstream stopped (a delisted exchange) then
// costs about a call per window, not one every few minutes for ever.
func (p *Policy) overdueStep(n int, w, overdue time.Duration, deprecated bool) time.Duration {
	switch {
	case deprecated || overdue > 3*w:
		return max(w, p.MinInterval)
	case overdue > w:
		return max(p.pollStep(n, w), w/4)
	}
	return p.pollStep(n, w)
}

// errorStep is the wait before the retry of a tuple failing for the n-th
// time in a row (from 1).
func (p *Policy) errorStep(n int) time.Duration {
	return max(p.ErrorSteps[min(max(n-1, 0), len(p.ErrorSteps)-1)], p.MinInterval)
}

// followerWait is how long after the estimate a follower polls for a row
// its leader has not found: a quarter of the window, at most 40 min (for
// day rows; 6 h would be a quarter), so that a leader that fails or is
// gone delays its followers by that much, once. A leader still chasing
// the row holds them longer (WaitsForLeader).
func (p *Policy) followerWait(w time.Duration) time.Duration {
	return max(min(w/4, p.FollowerWaitMax), p.LearnStep(w))
}
