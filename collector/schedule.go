package collector

import (
	"slices"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// The engine asks package schedule when each tuple is refreshed: this
// file turns a tuple's state into what the policy reads (schedule.Series)
// and an upstream error into a schedule.Failure.

// minInterval is the policy's floor between two refreshes of one tuple.
var minInterval = schedule.Default.MinInterval

// apiSchedule is the schedule of one API: its Book (what was learned of
// publication delays, kept across reloads) and the API's settings the
// policy reads.
type apiSchedule struct {
	book       *schedule.Book
	revalidate time.Duration
	// maxStaleness caps the wait between polls of a late row of a tuple
	// without a window (Series.MaxWait).
	maxStaleness time.Duration
	// factor is the coarsening the daily budget's plan asks for, by
	// tuple key: a series is polled for one row in factor
	// (Series.Factor).
	factor map[string]float64
}

// delayKey names the series that share one publication delay: those of
// an endpoint and window. A series without a window is a key of its own:
// nothing says that two assets' consensus, or two equities' bands, come
// out of one pipeline at one time (the fake's consensus rows of two assets
// come hours apart), and a follower of a leader published hours earlier
// would be polled at every floor until its own row came.
func delayKey(t *config.Tuple) string {
	if t.Window == "" {
		return t.API + " " + t.Path + " " + t.Window + " " + t.Key
	}
	return t.API + " " + t.Path + " " + t.Window
}

// rowWindow is the spacing of a tuple's rows: its window; for block
// windows the mean spacing of the rows seen; without a window the cadence
// it showed (learnCadence), schedule.DefaultCadence until it did. The
// cadence of an answer without times is rounded to a clock unit
// (cadenceGrid): its rows are then placed on that unit's grid.
func rowWindow(st *tupleState) time.Duration { return spacing(st.tuple.Window, &st.Tuple) }

// spacing is rowWindow of a tuple's state s in window: the spacing the
// policy plans with, and the one its plan is checked against when taken
// back (Tuple.check).
func spacing(window string, s *Tuple) time.Duration {
	switch window {
	case "block":
		return s.Interval
	case "":
		if d := cadence(s); d > 0 {
			return d
		}
		return schedule.DefaultCadence
	}
	return config.WindowDuration(window)
}

// cadence is the spacing a tuple without a window showed, 0 until it
// did: its rows' spacing, or the clock unit nearest how often the values
// of an answer without times change.
func cadence(t *Tuple) time.Duration {
	switch {
	case t.Interval <= 0:
		return 0
	case t.RowTime.IsZero():
		return cadenceGrid(t.Interval)
	}
	return t.Interval
}

// cadenceUnits are the spacings the cadence of an answer without times is
// rounded to: those of jobs run by a clock upstream, every minute to every
// week. Rounded, a daily change falls on the same offset of every UTC day
// and its delay is learned as a day row's is; unrounded, a cadence
// learned a minute short would drift across the grid.
var cadenceUnits = []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 4 * time.Hour, 6 * time.Hour, 8 * time.Hour,
	12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

// cadenceGrid is the unit nearest the cadence d (by ratio).
func cadenceGrid(d time.Duration) time.Duration {
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

// learnCadence learns how often a tuple without a window has a new row,
// after a refresh at now that succeeded; prev is the state before it, and
// lastTry when it was asked before.
// Where the rows carry times, their spacing (the smallest seen) and the
// weekdays they fall on. Where they carry none, a change of the decoded
// values is its row: seen between the last poll that did not see it and
// this one (the bracket), its time guessed in the middle; the gap between
// two changes whose brackets were narrow teaches the cadence, and once it
// is known the change is the row of its grid (gridRow), whose weekdays
// are learned as dated rows' are. It returns, when this answer placed a
// change as a row for the first time, the poll that last did not see it
// (schedule.Outcome.MissedAt).
func learnCadence(t *config.Tuple, st *Tuple, prev Tuple, lastTry time.Time, d *decode.Answer, now time.Time) (missed time.Time) {
	if t.Window != "" || t.CacheTTL > 0 {
		return time.Time{}
	}
	st.Interval = prev.Interval // learned across refreshes, not one answer's
	st.Weekdays, st.Since = prev.Weekdays, prev.Since
	if !d.Newest.IsZero() {
		gap := d.Step
		if gap <= 0 && !prev.Newest.IsZero() && d.Newest.After(prev.Newest) {
			gap = d.Newest.Sub(prev.Newest)
		}
		if gap >= minInterval && gap <= schedule.MaxSpacing && (st.Interval == 0 || gap < st.Interval) {
			st.Interval = gap
		}
		oldest := d.Oldest
		if oldest.IsZero() {
			oldest = d.Newest
		}
		st.sawRows(d.Weekdays, oldest)
		return time.Time{}
	}
	st.Changed, st.Newest = prev.Changed, prev.Newest
	switch {
	case prev.LastSuccess.IsZero() || lastTry.IsZero():
		// The first answer: when its values came is not known, nor is
		// its row until a cadence is (then the latest of its grid).
		st.Changed = time.Time{}
		if st.Interval > 0 {
			st.Newest = gridRow(now, spacing("", st))
		}
	case changed(prev.Samples, d.Samples):
		at := lastTry // the poll before this one did not see it
		guess := at.Add(now.Sub(at) / 2)
		st.Changed = time.Time{}
		if now.Sub(at) <= narrowBracket(spacing("", st)) {
			if !prev.Changed.IsZero() {
				st.learnGap(guess.Sub(prev.Changed))
			}
			st.Changed = guess
		}
		if st.Interval <= 0 {
			return time.Time{} // no row yet: its cadence is not known
		}
		w := spacing("", st)
		st.Newest = gridRow(now, w)
		if !st.Newest.After(prev.Newest) {
			st.Newest = prev.Newest // a second change within one row of the grid
			return time.Time{}
		}
		if w >= 24*time.Hour {
			st.sawRows(1<<st.Newest.UTC().Weekday(), st.Newest)
		}
		if prev.Newest.IsZero() {
			return at // the first row placed: its delay lies after the poll that missed it
		}
	}
	return time.Time{}
}

// narrowBracket is the widest a change's bracket (the poll that missed it
// to the one that saw it) may be for its middle to date the change well
// enough to teach the cadence: a quarter of the spacing w, and while the
// cadence is not known (w the hourly default) the hourly polls' own
// bracket with a quarter of slack for a poll placed late.
func narrowBracket(w time.Duration) time.Duration {
	return max(schedule.DefaultCadence+schedule.DefaultCadence/4, w/4)
}

// learnGap learns the cadence of an answer without times from the gap
// between two changes: the first gap is taken as it is; one of about the
// cadence refines it; a shorter one (changes the polls had not seen) is
// taken; a longer one (a day without a change) moves it a quarter of the
// way only.
func (st *Tuple) learnGap(gap time.Duration) {
	switch {
	case gap < minInterval || gap > schedule.MaxSpacing:
		// Not a cadence the exporter keeps (Tuple.check).
	case st.Interval == 0:
		st.Interval = gap
	case ratio(gap, st.Interval) <= 1.25:
		st.Interval = (st.Interval + gap) / 2
	case gap < st.Interval:
		st.Interval = gap
	default:
		st.Interval += (gap - st.Interval) / 4
	}
}

// sawRows records the weekdays rows were seen on, since the oldest.
func (st *Tuple) sawRows(weekdays uint8, oldest time.Time) {
	st.Weekdays |= weekdays
	if st.Since.IsZero() || oldest.Before(st.Since) {
		st.Since = oldest
	}
}

// changed says whether two answers' decoded values differ.
func changed(a, b []decode.Sample) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].Value != b[i].Value || a[i].Field.Name != b[i].Field.Name || !slices.Equal(a[i].ExtraValues, b[i].ExtraValues) {
			return true
		}
	}
	return false
}

// skipDays are the weekdays a tuple without a window was seen to have no
// rows on, once its rows, a day or more apart, span a week.
func skipDays(t *config.Tuple, st *Tuple) uint8 {
	if t.Window != "" || spacing("", st) < 24*time.Hour || st.Weekdays == 0 || st.Since.IsZero() ||
		st.Newest.Sub(st.Since) < 7*24*time.Hour {
		return 0
	}
	return ^st.Weekdays & 0x7f
}

// series is what the policy reads of a tuple t in state st.
func (s *apiSchedule) series(t *config.Tuple, st *Tuple) schedule.Series {
	se := schedule.Series{ID: t.Key, Window: t.Window, W: spacing(t.Window, st),
		CacheTTL:   time.Duration(t.CacheTTL * float64(time.Second)),
		Revalidate: s.revalidate, Factor: s.factor[t.Key],
		Newest: st.Newest, LastAttempt: st.LastAttempt, Deprecated: st.Deprecated, Failures: st.Failures,
		Skip: skipDays(t, st)}
	if t.Window == "" && t.CacheTTL == 0 {
		se.MaxWait = s.maxStaleness
		if st.RowTime.IsZero() && st.Interval <= 0 && !st.LastSuccess.IsZero() {
			// Until two changes showed its cadence, an answer without
			// times is asked every DefaultCadence (max_staleness at
			// most): no row of it is expected at any time yet.
			se.CacheTTL = min(schedule.DefaultCadence, max(s.maxStaleness, minInterval))
		}
	}
	return se
}

// siblingFound says whether another series of the tuple's key found the
// row it waits for, at `at` (schedule.Policy.SiblingFound).
func (s *apiSchedule) siblingFound(st *tupleState, at time.Time) bool {
	if st.Polls == 0 && !st.Following {
		return false
	}
	return s.book.SiblingFound(st.delayKey(), s.series(st.tuple, &st.Tuple), st.Plan, at)
}

// waitsForLeader says whether a follower due at now waits for its
// leader, which is chasing the row (the event evLeaderChasing then moves
// its plan a learn step on).
func (s *apiSchedule) waitsForLeader(st *tupleState, now time.Time) bool {
	if !st.Following {
		return false
	}
	wait, _ := s.book.WaitsForLeader(st.delayKey(), s.series(st.tuple, &st.Tuple), st.Plan, now)
	return wait
}
