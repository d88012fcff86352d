package schedule

import "time"

// Excess is how far a series that serves the row starting at newest is
// behind the newest row its upstream has out at now, for rows of spacing
// w taken to be out earliest past their start: one row (w) once now is
// past the start of the row after it plus earliest, none before; the
// mean of it over a window's series is excess_staleness_seconds. Not
// counted: a series two rows or more behind. The engine asks a series as
// soon as its row is due, so such a series was asked and the upstream
// did not have the rows (it stopped, or publishes far later than
// learned): the exporter cannot tell a row it misses from one that does
// not exist.
func Excess(newest time.Time, w, earliest time.Duration, now time.Time) (excess time.Duration, counted bool) {
	switch behind := now.Sub(newest.Add(earliest)); {
	case behind >= 2*w:
		return 0, false
	case behind >= w:
		return w, true
	}
	return 0, true
}
