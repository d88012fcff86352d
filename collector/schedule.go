package collector

import (
	"slices"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
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

// timeless says whether a tuple without a window has answers without
// times: its rows are the changes of its values.
func timeless(st *tupleState) bool {
	return st.tuple.Window == "" && st.RowTime.IsZero()
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
func learnCadence(st *tupleState, prev Tuple, lastTry time.Time, d *decode.Answer, now time.Time) (missed time.Time) {
	if st.tuple.Window != "" || st.tuple.CacheTTL > 0 {
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
			st.Newest = gridRow(now, rowWindow(st))
		}
	case changed(prev.Samples, d.Samples):
		at := lastTry // the poll before this one did not see it
		guess := at.Add(now.Sub(at) / 2)
		st.Changed = time.Time{}
		if now.Sub(at) <= narrowBracket(rowWindow(st)) {
			if !prev.Changed.IsZero() {
				st.learnGap(guess.Sub(prev.Changed))
			}
			st.Changed = guess
		}
		if st.Interval <= 0 {
			return time.Time{} // no row yet: its cadence is not known
		}
		w := rowWindow(st)
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
func (st *tupleState) learnGap(gap time.Duration) {
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
func (st *tupleState) sawRows(weekdays uint8, oldest time.Time) {
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
func skipDays(st *tupleState) uint8 {
	if st.tuple.Window != "" || rowWindow(st) < 24*time.Hour || st.Weekdays == 0 || st.Since.IsZero() ||
		st.Newest.Sub(st.Since) < 7*24*time.Hour {
		return 0
	}
	return ^st.Weekdays & 0x7f
}

// series is what the policy reads of a tuple.
func (s *apiSchedule) series(st *tupleState) schedule.Series {
	t := st.tuple
	se := schedule.Series{ID: t.Key, Window: t.Window, W: rowWindow(st),
		CacheTTL:   time.Duration(t.CacheTTL * float64(time.Second)),
		Revalidate: s.revalidate, Factor: s.factor[t.Key],
		Newest: st.Newest, LastAttempt: st.LastAttempt, Deprecated: st.Deprecated, Failures: st.Failures,
		Skip: skipDays(st)}
	if t.Window == "" && t.CacheTTL == 0 {
		se.MaxWait = s.maxStaleness
		if timeless(st) && st.Interval <= 0 && !st.LastSuccess.IsZero() {
			// Until two changes showed its cadence, an answer without
			// times is asked every DefaultCadence (max_staleness at
			// most): no row of it is expected at any time yet.
			se.CacheTTL = min(schedule.DefaultCadence, max(s.maxStaleness, minInterval))
		}
	}
	return se
}

// next runs the policy on an event of a tuple and keeps the plan it
// returns: the one place the engine sets when a tuple is refreshed next
// (Policy.Next decides). It reports whether what the key's other tuples
// wait for changed (schedule.Book.Next). A tuple's plan is otherwise only
// ever taken whole: from a peer that fetched it (cluster.go), or from a
// state file, the policy judging its time (restored).
func (s *apiSchedule) next(st *tupleState, o schedule.Outcome, now time.Time) bool {
	var siblings bool
	st.Plan, siblings = s.book.Next(st.delayKey(), s.series(st), st.Plan, o, now)
	return siblings
}

// afterSuccess plans the next refresh of a tuple whose refresh at now
// succeeded; prevNewest is the newest row before it, missedAt the poll
// that last missed a row placed for the first time (learnCadence). It reports whether
// the other tuples of its key that wait for a row are to be placed again
// in the queue.
func (s *apiSchedule) afterSuccess(st *tupleState, prevNewest, missedAt, now time.Time) bool {
	return s.next(st, schedule.Outcome{PrevNewest: prevNewest, MissedAt: missedAt}, now)
}

// afterError plans the retry of a failing tuple, or of one the budget
// held back.
func (s *apiSchedule) afterError(st *tupleState, e *upstream.Error, now time.Time) {
	f := schedule.Failure{HeldBack: e.HeldBack, RetryAfter: e.RetryAfter, Hold: e.Hold, PauseUntil: e.PauseUntil}
	// A failure finds no row and splits no key: the key's other tuples
	// stay where they are (a leader that resigns is WaitsForLeader's).
	s.next(st, schedule.Outcome{Err: &f}, now)
}

// restored has the policy judge the plan of a tuple taken back from a
// state file or a peer: one further ahead than it ever plans (a wrong
// clock, an altered file) is due at once.
func (s *apiSchedule) restored(st *tupleState, now time.Time) {
	s.next(st, schedule.Outcome{Restored: true}, now)
}

// reset has a tuple asked at once: a reload may have fixed why it fails,
// or its labels changed.
func (s *apiSchedule) reset(st *tupleState, now time.Time) {
	s.next(st, schedule.Outcome{Reset: true}, now)
}

// siblingFound says whether another series of the tuple's key found the
// row it waits for, at `at` (schedule.Policy.SiblingFound).
func (s *apiSchedule) siblingFound(st *tupleState, at time.Time) bool {
	if st.Polls == 0 && !st.Following {
		return false
	}
	return s.book.SiblingFound(st.delayKey(), s.series(st), st.Plan, at)
}

// waitsForLeader says whether a follower due at now waits for its
// leader, which is chasing the row; its plan then moves a learn step on
// (the policy's LeaderChasing event).
func (s *apiSchedule) waitsForLeader(st *tupleState, now time.Time) bool {
	if !st.Following {
		return false
	}
	if wait, _ := s.book.WaitsForLeader(st.delayKey(), s.series(st), st.Plan, now); !wait {
		return false
	}
	s.next(st, schedule.Outcome{LeaderChasing: true}, now)
	return true
}
