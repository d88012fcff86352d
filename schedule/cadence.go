package schedule

import "time"

// Cadence is what a series without a window learned of how often it has
// a new row.
type Cadence struct {
	// Interval is the spacing learned (0: not yet); Timeless says its
	// answers carry no times: its rows are the changes of its values,
	// placed on the grid of the cadence (Grid).
	Interval time.Duration
	Timeless bool
	// Weekdays are the UTC weekdays rows were seen on (bit i:
	// time.Weekday i) since Since, the oldest row seen.
	Weekdays uint8
	Since    time.Time
	// Changed is when the values of an answer without times were last
	// seen to change (estimated); Newest is the newest row.
	Changed, Newest time.Time
}

// Seen is what one answer of a series without a window showed.
type Seen struct {
	// Newest and Oldest are its rows' times (zero without times), Step
	// the smallest spacing between two, Weekdays the UTC weekdays of them.
	Newest, Oldest time.Time
	Step           time.Duration
	Weekdays       uint8
	// Changed: without times, its values differ from the last answer's.
	Changed bool
}

// Spacing is the cadence the series showed, 0 until it did; for an
// answer without times, on the grid.
func (c Cadence) Spacing() time.Duration {
	switch {
	case c.Interval <= 0:
		return 0
	case c.Timeless:
		return Grid(c.Interval)
	}
	return c.Interval
}

// spacing is Spacing, DefaultCadence until one is known.
func (c Cadence) spacing() time.Duration {
	if d := c.Spacing(); d > 0 {
		return d
	}
	return DefaultCadence
}

// SkipDays are the weekdays the series was seen to have no rows on, once
// its rows, a day or more apart, span a week.
func (c Cadence) SkipDays() uint8 {
	if c.spacing() < 24*time.Hour || c.Weekdays == 0 || c.Since.IsZero() || c.Newest.Sub(c.Since) < 7*24*time.Hour {
		return 0
	}
	return ^c.Weekdays & 0x7f
}

// cadenceUnits are the spacings the cadence of an answer without times is
// rounded to: those of jobs run by a clock upstream, so that a daily
// change falls on the same offset every day instead of drifting.
var cadenceUnits = []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 4 * time.Hour, 6 * time.Hour, 8 * time.Hour,
	12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

// CadenceUnits are the spacings Grid rounds to.
func CadenceUnits() []time.Duration { return append([]time.Duration(nil), cadenceUnits...) }

// Grid is the unit nearest the cadence d (by ratio).
func Grid(d time.Duration) time.Duration {
	best := cadenceUnits[0]
	for _, u := range cadenceUnits {
		if ratio(d, u) < ratio(d, best) {
			best = u
		}
	}
	return best
}

func ratio(a, b time.Duration) float64 {
	return max(float64(a), float64(b)) / max(min(float64(a), float64(b)), 1)
}

// gridRow is the start of the row a change seen at `at` is taken to be:
// the latest interval of the grid w closed by then.
func gridRow(at time.Time, w time.Duration) time.Time {
	return at.Truncate(w).Add(-w)
}

// LearnCadence learns how often a series without a window has a new row
// from a successful answer a at now; c is what it learned before, lastTry
// its last ask, first whether this is its first answer. Dated rows teach
// their smallest spacing and weekdays. Without times, a change of values
// is a row, dated mid-bracket (last poll to this one); the gap between
// two narrowly bracketed changes teaches the cadence, then the change is
// the row of its grid. It returns the poll before the first row so
// placed (Outcome.MissedAt).
func (p *Policy) LearnCadence(c Cadence, a Seen, lastTry time.Time, first bool, now time.Time) (Cadence, time.Time) {
	prev := c
	c.Timeless = a.Newest.IsZero()
	if !c.Timeless {
		gap := a.Step
		if gap <= 0 && !prev.Newest.IsZero() && a.Newest.After(prev.Newest) {
			gap = a.Newest.Sub(prev.Newest)
		}
		if gap >= p.MinInterval && gap <= MaxSpacing && (c.Interval == 0 || gap < c.Interval) {
			c.Interval = gap
		}
		oldest := a.Oldest
		if oldest.IsZero() {
			oldest = a.Newest
		}
		if a.Newest.After(c.Newest) || c.Newest.IsZero() {
			c.Newest = a.Newest
		}
		c.sawRows(a.Weekdays, oldest)
		return c, time.Time{}
	}
	switch {
	case first || lastTry.IsZero():
		// When its values came is not known.
		c.Changed = time.Time{}
		if c.Interval > 0 {
			c.Newest = gridRow(now, c.spacing())
		}
	case a.Changed:
		at := lastTry // the poll before this one did not see it
		guess := at.Add(now.Sub(at) / 2)
		c.Changed = time.Time{}
		if now.Sub(at) <= narrowBracket(c.spacing()) {
			if !prev.Changed.IsZero() {
				c.Interval = p.learnGap(c.Interval, guess.Sub(prev.Changed))
			}
			c.Changed = guess
		}
		if c.Interval <= 0 {
			return c, time.Time{} // no row yet: its cadence is not known
		}
		w := c.spacing()
		if c.Newest = gridRow(now, w); !c.Newest.After(prev.Newest) {
			c.Newest = prev.Newest // a second change within one row of the grid
			return c, time.Time{}
		}
		if w >= 24*time.Hour {
			c.sawRows(1<<c.Newest.UTC().Weekday(), c.Newest)
		}
		if prev.Newest.IsZero() {
			return c, at // the first row placed: its delay lies after the poll that missed it
		}
	}
	return c, time.Time{}
}

// narrowBracket is the widest bracket whose middle dates a change well
// enough to teach the cadence: w/4, at least the default hourly polls'
// own bracket with a quarter of slack.
func narrowBracket(w time.Duration) time.Duration {
	return max(DefaultCadence+DefaultCadence/4, w/4)
}

// learnGap learns the cadence from the gap between two changes: the
// first or a shorter one is taken, one of about the cadence refines it, a
// longer one (a day without a change) moves it a quarter of the way.
func (p *Policy) learnGap(interval, gap time.Duration) time.Duration {
	switch {
	case gap < p.MinInterval || gap > MaxSpacing:
		return interval
	case interval == 0, gap < interval && ratio(gap, interval) > 1.25:
		return gap
	case ratio(gap, interval) <= 1.25:
		return (interval + gap) / 2
	}
	return interval + (gap-interval)/4
}

// sawRows records the weekdays rows were seen on, since the oldest.
func (c *Cadence) sawRows(weekdays uint8, oldest time.Time) {
	c.Weekdays |= weekdays
	if c.Since.IsZero() || oldest.Before(c.Since) {
		c.Since = oldest
	}
}
