package collector

import "time"

// Policy is every tunable of the refresh schedule (schedule.go) and of
// how publication delays are learned (delays.go), in one place, each with
// its unit and why it is what it is. The figures were set against the
// freshness benchmarks (BENCHMARKS.md): at most 1.2 calls per published
// row and a mean excess staleness within a tenth of the window, in every
// window and publication pattern. A change here is checked by
// `go test ./benchmark` (and ONCHAIN_BENCH_FULL=1 for the full tables).
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

// policy is the schedule the exporter runs.
var policy = Policy{
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

// minInterval is policy.MinInterval, named for the many places it bounds.
var minInterval = policy.MinInterval
