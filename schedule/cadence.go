package schedule

import "time"

// The cadence of a series without a window: how often it has a new row,
// learned from its answers as the publication delay is learned from its
// rows (learn.go). A pure function of what was learned and one answer.

// Cadence is what a series without a window learned of its rows.
type Cadence struct {
	// Interval is the spacing learned (0: not yet); Timeless says its
	// answers carry no times: its rows are the changes of its values,
	// placed on the grid of the cadence (Grid).
	Interval time.Duration
	Timeless bool
	// Weekdays are the UTC weekdays rows were seen on (bit i:
	// time.Weekday i) since Since, the oldest row seen: a series learns
	// which days it has no rows on (trading days).
	Weekdays uint8
	Since    time.Time
	// Changed is when the values of an answer without times were last
	// seen to change, as estimated: between the last poll that did not
	// see the change and the one that did. Newest is the newest row.
	Changed, Newest time.Time
}

// Seen is what one answer of a series without a window showed.
type Seen struct {
	// Newest and Oldest are its rows' times (zero: an answer without
	// times), Step the smallest spacing between two of them, Weekdays
	// the UTC weekdays they fall on.
	Newest, Oldest time.Time
	Step           time.Duration
	Weekdays       uint8
	// Changed: (an answer without times) its values differ from the
	// last answer's.
	Changed bool
}

// Spacing is the cadence the series showed, 0 until it did: its rows'
// spacing, or the clock unit nearest how often the values of an answer
// without times change.
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
// rounded to: those of jobs run by a clock upstream, every minute to every
// week. Rounded, a daily change falls on the same offset of every UTC day
// and its delay is learned as a day row's is; unrounded, a cadence
// learned a minute short would drift across the grid.
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

// gridRow is the start of the row an answer without times found at `at`
// is taken to be: the latest interval of the grid w that had closed by
// then. Its delay is then learned from that start as a window's, the
// poll that found it at an offset between w and 2w.
func gridRow(at time.Time, w time.Duration) time.Time {
	return at.Truncate(w).Add(-w)
}

// LearnCadence learns how often a series without a window has a new row,
// from an answer a (Seen) at now that succeeded; c is what it learned
// before, lastTry when it was asked before, first that this is its first
// answer. Where the rows carry times, their spacing (the smallest seen)
// and the weekdays they fall on. Where they carry none, a change of the
// values is its row: seen between the last poll that did not see it and
// this one (the bracket), its time guessed in the middle; the gap between
// two changes whose brackets were narrow teaches the cadence, and once it
// is known the change is the row of its grid, whose weekdays are learned
// as dated rows' are. It returns, when this answer placed a change as a
// row for the first time, the poll that last did not see it
// (Outcome.MissedAt).
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
		// The first answer: when its values came is not known, nor is
		// its row until a cadence is (then the latest of its grid).
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

// narrowBracket is the widest a change's bracket (the poll that missed it
// to the one that saw it) may be for its middle to date the change well
// enough to teach the cadence: a quarter of the spacing w, and while the
// cadence is not known (w the hourly default) the hourly polls' own
// bracket with a quarter of slack for a poll placed late.
func narrowBracket(w time.Duration) time.Duration {
	return max(DefaultCadence+DefaultCadence/4, w/4)
}

// learnGap learns the cadence of an answer without times from the gap
// between two changes: the first gap is taken as it is; one of about the
// cadence refines it; a shorter one (changes the polls had not seen) is
// taken; a longer one (a day without a change) moves it a quarter of the
// way only. A gap beyond MaxSpacing teaches nothing.
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
