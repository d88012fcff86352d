package schedule

import "time"

// Behind is how many rows a series serving the row at newest is behind
// those out at now, rows of spacing w being out earliest past their
// start; 0 without a spacing or a row.
func Behind(newest time.Time, w, earliest time.Duration, now time.Time) int {
	if w <= 0 || newest.IsZero() {
		return 0
	}
	return int(now.Sub(newest.Add(earliest)) / w)
}

// Excess is how far a series is behind the newest row out (Behind): w
// when one row behind; its mean over a window's series is
// excess_staleness_seconds. Two rows or more behind is not counted: the
// series was asked and the upstream did not have the rows, and a row
// missed cannot be told from one that does not exist.
func Excess(newest time.Time, w, earliest time.Duration, now time.Time) (excess time.Duration, counted bool) {
	switch n := Behind(newest, w, earliest, now); {
	case n >= 2:
		return 0, false
	case n == 1:
		return w, true
	}
	return 0, true
}
