package schedule

import (
	"math"
	"slices"
	"time"
)

// When a key's next row is due (onchain_exporter_row_due_timestamp_seconds):
// the learned release is the latest offset at which its last rows found
// on time were first found (Estimate.Released), plus a margin their
// spread explains (pooled across the API and window, pool.go, or the
// key's own). A row found past due is the provider's incident, not its
// habit, and moves nothing; two in a row are a new habit.

// ReleaseRows is how many rows found on time the release and its spread
// are taken from: more shrink the margin, fewer follow a faster habit
// sooner.
const ReleaseRows = 16

// DueAfterRows is how many rows found on time come before a due time is
// published: the first guess is no habit to be late for.
const DueAfterRows = 2

// dueFalseShare is the chance, per row, that a provider whose delays are
// uniform between unknown bounds publishes past the due time.
const dueFalseShare = 1e-3

// Release is the learned release, the latest of Released; false until
// DueAfterRows rows were found on time.
func (e *Estimate) Release() (time.Duration, bool) {
	if len(e.Released) < DueAfterRows {
		return 0, false
	}
	return slices.Max(e.Released), true
}

// DueOffset is how long after its start a row of spacing w is due at the
// latest: Release plus DueTolerance.
func (e *Estimate) DueOffset(w time.Duration) (time.Duration, bool) {
	r, ok := e.Release()
	if !ok {
		return 0, false
	}
	return r + e.DueTolerance(w), true
}

// DueTolerance is what the key's due time allows past its release: the
// pooled margin when the Book pooled it, else the key's own.
func (e *Estimate) DueTolerance(w time.Duration) time.Duration {
	if e.pooled > 0 {
		return e.pooled
	}
	return DueTolerance(e.Released, w)
}

// DueTolerance is what the due time allows past the latest of released
// from the key's own rows: k(n) times their spread, within [2 min, w/12].
//
// For n uniform samples of maximum M and spread S, the next one exceeds
// M + k·S with probability
//
//	P(n, k) = 1 / ((n+1) · (1+k)^(n-1))
//
// whatever the bounds, so k(n) = ((n+1)·P)^(-1/(n-1)) - 1 for P =
// dueFalseShare: 14.8 for 3 rows, 1.7 for 6, 0.31 for 16.
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

// released records that the key's row was first found at offset at: on
// time it joins Released; late, it is kept aside (Late) and reported for
// the estimate to ignore. A second late row in a row is a new habit.
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

// appendRelease returns a new slice (copies of an estimate share rs) of
// rs and at, the oldest dropped beyond ReleaseRows.
func appendRelease(rs []time.Duration, at time.Duration) []time.Duration {
	if len(rs) >= ReleaseRows {
		rs = rs[len(rs)-ReleaseRows+1:]
	}
	out := make([]time.Duration, len(rs), len(rs)+1)
	copy(out, rs)
	return append(out, at)
}
