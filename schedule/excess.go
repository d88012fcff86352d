package schedule

import "time"

// Behind is how many rows a series that serves the row starting at newest
// is behind the rows its upstream has out at now, for rows of spacing w
// taken to be out earliest past their start: one once now is past the
// start of the row after it plus earliest, two a spacing later; 0 before,
// without a spacing or without a row.
func Behind(newest time.Time, w, earliest time.Duration, now time.Time) int {
	if w <= 0 || newest.IsZero() {
		return 0
	}
	return int(now.Sub(newest.Add(earliest)) / w)
}

// Excess is how far a series is behind the newest row its upstream has
// out (Behind): w when one row behind, none before; the mean of it over a
// window's series is excess_staleness_seconds. Not counted: a series two
// rows or more behind. The engine asks a series as soon as its row is
// due, so such a series was asked and the upstream did not have the rows
// (it stopped, or publishes far later than learned): the exporter cannot
// tell a row it misses from one that does not exist.
func Excess(newest time.Time, w, earliest time.Duration, now time.Time) (excess time.Duration, counted bool) {
	switch n := Behind(newest, w, earliest, now); {
	case n >= 2:
		return 0, false
	case n == 1:
		return w, true
	}
	return 0, true
}
