package schedule

import "time"

// Policy is every tunable of the schedule (next.go) and of how
// publication delays are learned (learn.go), in one place, each with its
// unit and why it is what it is. Twelve of them: the other quantities are
// derived from these, each in the function that computes it and says
// why: the first guess and the jitter margin as shares of the learn step
// (FirstGuess, jitterMargin), a follower's wait as the longest wait
// between polls of a late row (followerWait), the moving average of
// misses over the rows that hold one probe (spentDecay). The figures were set against the freshness benchmarks
// (BENCHMARKS.md): at most 1.2 calls per published row and a mean excess
// staleness within a tenth of the window, in every window and
// publication pattern. A change here is checked by
// `go test ./schedule ./benchmark` (and ONCHAIN_BENCH_FULL=1 for the full
// tables).
type Policy struct {
	// MinInterval: one tuple is never refreshed more often (5 s), by the
	// schedule or revalidate; a cache_ttl is taken as given. It is also
	// the floor of the learn step.
	MinInterval time.Duration

	// LearnShare and LearnMax: the resolution of a learned delay and the
	// first wait between polls of a late row, as a share of the window
	// (w/50, at least MinInterval, at most 5 min, so that a late day row
	// is found within minutes). The first guess (a quarter step after the
	// interval closes) and the jitter margin (half a step) are derived
	// from it.
	LearnShare float64
	LearnMax   time.Duration
	// LateDoublings: the waits between polls of a late row double this
	// many times (3: up to 8 learn steps), never past LongestWait of the
	// window. A follower whose leader has not found a row waits at most
	// as long (40 min for day rows).
	LateDoublings int
	// LongestWait: the longest wait between polls of a late row, as a
	// share of the window (a quarter): a row a window late is polled
	// that often, and a probe never looks deeper than that below the
	// estimate. StaleWindows: a row that many windows late (3), or
	// marked deprecated, is polled once a window: an upstream that
	// stopped costs a call per window, not one every few minutes.
	LongestWait  float64
	StaleWindows int

	// ProbeShare: the share of a lone series' first polls placed earlier
	// than the estimate (0.1), so that it can come down. A leader probes
	// ProbeShare per member of its key, its misses being shared by its
	// followers, up to MaxProbeShare (0.5: every other row, so that a
	// leader still polls at the estimate as often as it probes). The
	// polls that missed are averaged over the 1/ProbeShare rows that
	// hold one probe of a lone series.
	ProbeShare, MaxProbeShare float64
	// MissBudget: polls per row and series that may miss (0.15); while a
	// leader's misses cost less, it rises only part of the way after a
	// late row and keeps polling early. A series whose rows miss more
	// often has a delay that spreads (jitter): a probe that finds a row
	// earlier than its bracket then lowers the estimate to that row but
	// starts no descent toward the first guess.
	MissBudget float64
	// SplitShare: the series of an endpoint are taken to be published
	// apart, and learn alone, once their followers miss more than one row
	// in SplitShare (20) of those their leader found, counting SplitShare
	// rows found as given (so not before a second row missed). Rows, not
	// followers' polls: two followers missing one row are one row.
	SplitShare int

	// ErrorSteps widen the waits between retries of a failing tuple.
	ErrorSteps []time.Duration
	// MaxPause: the longest pause or hold a poll waits out (24 h: a
	// daily quota resets within a day; upstream.MaxRestoredPause caps a
	// saved pause alike). A poll taken back further ahead than this, or
	// than two rows, is not trusted (Outcome.Restored).
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

// FirstGuess is where, after the end of its interval, the first poll for
// a row goes before anything was learned: just after the interval closes,
// a quarter of the learn step's resolution later (w/200, 1.25 s at least,
// not capped: 7.2 min for day rows). A provider that is later costs the
// first row a few polls.
func (p *Policy) FirstGuess(w time.Duration) time.Duration {
	return w + p.resolution(w)/4
}

// LearnStep is the resolution of what is learned of a publication delay,
// and the first wait between polls of a row that is late: 2 % of the
// window, at least the 5 s floor, at most 5 minutes (so that a late day
// row is still found within minutes).
func (p *Policy) LearnStep(w time.Duration) time.Duration {
	return min(p.resolution(w), p.LearnMax)
}

// jitterMargin is what is added to the delay a late row showed, so that
// a provider that jitters is not missed row after row: half the learn
// step's share of the window (the learned delay is a step wide, half a
// step off on average), not floored, at most LearnMax (1 % of the window,
// at most 5 min).
func (p *Policy) jitterMargin(w time.Duration) time.Duration {
	return min(time.Duration(p.LearnShare*float64(w))/2, p.LearnMax)
}

// spentDecay is the weight of the past in the moving average of polls
// per row that missed: it spans the 1/ProbeShare rows in which a lone
// series probes once (0.9: about the last ten rows).
func (p *Policy) spentDecay() float64 { return 1 - p.ProbeShare }

// longestWait is LongestWait of the window w: the longest wait between
// polls of a late row, and the deepest a probe looks below the estimate.
func (p *Policy) longestWait(w time.Duration) time.Duration {
	return time.Duration(p.LongestWait * float64(w))
}

// pollStep is the wait before the n-th poll (from 0) of an overdue row:
// from LearnStep, doubling, at most 8 learn steps and longestWait, so
// that a late row is found within a few steps of when it comes.
func (p *Policy) pollStep(n int, w time.Duration) time.Duration {
	d := p.LearnStep(w) << min(n, p.LateDoublings)
	return max(min(d, p.longestWait(w)), p.MinInterval)
}

// overdueStep is the wait before the next poll of a row that is overdue
// by `overdue` past its interval's end: pollStep while it is within a
// window of when it was due, then longestWait, and a whole window once it
// is StaleWindows late or the upstream marks the series deprecated. A
// series whose upstream stopped (a delisted exchange) then costs about a
// call per window, not one every few minutes for ever.
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
// its leader has not found: longestWait, at most the longest wait
// between polls of a late row (LearnMax doubled LateDoublings times:
// 40 min, for day rows; 6 h would be a quarter), so that a leader that
// fails or is gone delays its followers by that much, once. A leader
// still chasing the row holds them longer (WaitsForLeader).
func (p *Policy) followerWait(w time.Duration) time.Duration {
	return max(min(p.longestWait(w), p.LearnMax<<p.LateDoublings), p.LearnStep(w))
}
