package schedule

import (
	"math"
	"slices"
	"time"
)

// What the rows of a key found on time say of when the next one is due
// (onchain_exporter_row_due_timestamp_seconds): the key keeps the offsets
// from their start at which its last ReleaseRows rows were first found
// here (Estimate.Released), only rows found by the due time then in force.
// The learned release is the latest of them, the envelope of the recent
// releases; the due time allows past it a margin the spread of the rows
// explains: the spread of the rows of all the keys of the API and window,
// each about its own location, once 3 keys have 2 rows or more (pool.go,
// Estimate.DueTolerance), else the key's own (DueTolerance). A row found past its due time is the provider's
// incident, not its habit: it moves neither the envelope nor, once rows
// were learned, the first poll of the next row (found): the next row is
// due, and polled for, as before it. Two rows in a row found late are a
// new habit: the envelope starts again from them.

// ReleaseRows is how many rows, found on time, the learned release and
// its spread are taken from: the margin the spread must allow shrinks
// with them (DueTolerance), and the envelope falls back to a provider's
// faster habit after as many rows.
const ReleaseRows = 16

// DueAfterRows is how many rows found on time the key learns before a
// due time is published: the first guess is no habit to be late for.
const DueAfterRows = 2

// dueFalseShare is the chance, per row, that a provider whose delays
// spread uniformly between two unknown bounds publishes its next row past
// the due time (DueTolerance): one row in a thousand.
const dueFalseShare = 1e-3

// Release is the learned release of the key's rows, the offset from a
// row's start by which its last rows found on time were all out (the
// envelope of Released), and false until DueAfterRows rows were.
func (e *Estimate) Release() (time.Duration, bool) {
	if len(e.Released) < DueAfterRows {
		return 0, false
	}
	return slices.Max(e.Released), true
}

// DueOffset is how long after its start a row of spacing w is due at the
// latest: the learned release plus the tolerance its spread explains
// (Estimate.DueTolerance); false until DueAfterRows rows were found on
// time.
func (e *Estimate) DueOffset(w time.Duration) (time.Duration, bool) {
	r, ok := e.Release()
	if !ok {
		return 0, false
	}
	return r + e.DueTolerance(w), true
}

// DueTolerance is what the key's due time allows past its learned
// release: the margin the spread of the rows of its API and window
// explains (PooledTolerance) when the Book that handed the estimate out
// pooled it, else the key's own (DueTolerance).
func (e *Estimate) DueTolerance(w time.Duration) time.Duration {
	if e.pooled > 0 {
		return e.pooled
	}
	return DueTolerance(e.Released, w)
}

// DueTolerance is what the due time allows past the learned release (the
// latest of released, n offsets) from the key's own rows, when the
// spread is not pooled (pool.go): k(n) times their spread (latest less
// earliest), at least 2 minutes (the poll that finds a row), at most a
// 12th of the window w.
//
// k(n) is the smallest factor for which the next row of a provider whose
// delays are uniform between two bounds it never says comes later than
// the latest of the last n by more than k(n) times their spread with a
// chance of dueFalseShare at most. For n uniform samples with maximum M
// and spread S, the next one exceeds M + k·S with probability
//
//	P(n, k) = 1 / ((n+1) · (1+k)^(n-1))
//
// (the joint density of the spread s and the maximum is n(n-1)s^(n-2);
// the next sample passes M + ks with probability 1 - M - ks; integrating
// over M, then s up to 1/(1+k), gives n(n-1)/2 · B(n-1, 3) / (1+k)^(n-1)),
// whatever the bounds: P is the same for any location and scale. So
// k(n) = ((n+1)·P)^(-1/(n-1)) - 1: 14.8 for 3 rows (the cap rules: a
// spread of 3 rows tells little), 1.7 for 6, 0.96 for 8, 0.31 for 16.
// With delays of 50 min ±50 % (a spread of 50 min, 16 rows seen 44 min
// apart on average) the margin is 14 min; over a year of a key's day
// rows, 0.4 past due on average.
func DueTolerance(released []time.Duration, w time.Duration) time.Duration {
	most, least := max(w/12, 2*time.Minute), 2*time.Minute
	n := len(released)
	if n < 2 {
		return most
	}
	spread := slices.Max(released) - slices.Min(released)
	k := math.Pow(float64(n+1)*dueFalseShare, -1/float64(n-1)) - 1
	margin := time.Duration(math.Min(k*float64(spread), float64(most)))
	return min(max(margin, least), most)
}

// released records that the key's row was first found at offset at from
// its start: on time (at or before the due time in force) its offset
// joins Released; late, it is kept aside (Late), and it says whether the
// estimate should ignore it. A second row in a row found late is a new
// habit: Released starts again from the two.
func (e *Estimate) released(w, at time.Duration) (late bool) {
	due, ok := e.DueOffset(w)
	if !ok || at <= due {
		e.Released = appendRelease(e.Released, at)
		e.Late, e.pooled = 0, 0 // the Book pools the new rows
		return false
	}
	if e.Late > 0 {
		// The provider's habit changed: learn from the late rows.
		e.Released, e.Late, e.pooled = []time.Duration{e.Late, at}, 0, 0
		return false
	}
	e.Late = at
	return true
}

// appendRelease returns rs with at appended, the oldest dropped beyond
// ReleaseRows: a new slice, as copies of an estimate share the old one.
func appendRelease(rs []time.Duration, at time.Duration) []time.Duration {
	if len(rs) >= ReleaseRows {
		rs = rs[len(rs)-ReleaseRows+1:]
	}
	out := make([]time.Duration, len(rs), len(rs)+1)
	copy(out, rs)
	return append(out, at)
}
