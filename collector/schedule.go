package collector

import (
	"slices"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/plan"
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

// delayKey names the series that share a publication delay
// (schedule.Key): those of an endpoint and window; a series without a
// window is a key of its own (the fake's consensus rows of two assets
// come hours apart, and a follower of a leader published hours earlier
// would be polled at every floor until its own row came).
func delayKey(t *config.Tuple) string {
	return schedule.NewKey(t.API, t.Path, t.Window, t.Key).String()
}

// rowWindow is the spacing of a tuple's rows: its window; for block
// windows the mean spacing of the rows seen; without a window the cadence
// it showed (learnCadence), schedule.DefaultCadence until it did. The
// cadence of an answer without times is rounded to a clock unit
// (schedule.Grid): its rows are then placed on that unit's grid.
func rowWindow(st *tupleState) time.Duration { return spacing(st.tuple.Window, &st.Tuple) }

// rowLength is how long after its time a row of window is complete: its
// window for a windowed row, whose time is its interval's start; none for
// a block row, whose time is the block's own. A row's delay runs from its
// time plus rowLength: row_delay_seconds and publication_delay_seconds.
func rowLength(window string, s *Tuple) time.Duration {
	if window == "block" {
		return 0
	}
	return spacing(window, s)
}

// spacing is rowWindow of a tuple's state s in window: the spacing the
// policy plans with, and the one its plan is checked against when taken
// back (Tuple.check).
func spacing(window string, s *Tuple) time.Duration {
	switch window {
	case "block":
		return s.Interval
	case "":
		if d := cadence(s).Spacing(); d > 0 {
			return d
		}
		return schedule.DefaultCadence
	}
	return plan.WindowDuration(window)
}

// cadence is what a tuple without a window learned of its rows, as
// package schedule reads it.
func cadence(s *Tuple) schedule.Cadence {
	return schedule.Cadence{Interval: s.Interval, Timeless: s.RowTime.IsZero(), Weekdays: s.Weekdays,
		Since: s.Since.Time(), Changed: s.Changed.Time(), Newest: s.Newest.Time()}
}

// learnCadence learns, after an answer a at now that succeeded, how often
// a tuple without a window has a new row (schedule.Policy.LearnCadence);
// n is its state with the answer, prev the state before it, lastTry when
// it was asked before. It returns Outcome.MissedAt.
func learnCadence(t *config.Tuple, n *Tuple, prev Tuple, lastTry time.Time, a *decode.Answer, now time.Time) time.Time {
	if t.Window != "" || t.CacheTTL > 0 {
		return time.Time{}
	}
	c, missed := schedule.Default.LearnCadence(cadence(&prev),
		schedule.Seen{Newest: a.Newest, Oldest: a.Oldest, Step: a.Step, Weekdays: a.Weekdays, Changed: changed(prev.Samples, a.Samples)},
		lastTry, prev.LastSuccess.IsZero(), now)
	n.Interval, n.Weekdays, n.Since, n.Changed, n.Newest = c.Interval, c.Weekdays, schedule.InstantOf(c.Since), schedule.InstantOf(c.Changed), schedule.InstantOf(c.Newest)
	return missed
}

// changed says whether two answers' decoded values differ.
func changed(a, b []decode.Sample) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].Value != b[i].Value || a[i].Field.Name != b[i].Field.Name || !slices.Equal(a[i].ExtraValues(), b[i].ExtraValues()) {
			return true
		}
	}
	return false
}

// series is what the policy reads of a tuple t in state st.
func (s *apiSchedule) series(t *config.Tuple, st *Tuple) schedule.Series {
	se := schedule.Series{ID: t.Key, Window: t.Window, W: spacing(t.Window, st),
		CacheTTL:   time.Duration(t.CacheTTL * float64(time.Second)),
		Revalidate: s.revalidate, Factor: s.factor[t.Key],
		Newest: st.Newest.Time(), LastAttempt: st.LastAttempt.Time(), Deprecated: st.Deprecated, Failures: st.Failures}
	if t.Window == "" {
		se.Skip = cadence(st).SkipDays()
	}
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
	return s.book.SiblingFound(st.delayKey(), s.series(st.tuple, &st.Tuple), st.Poll, at)
}

// waitsForLeader says whether a follower due at now waits for its
// leader, which is chasing the row (the event evLeaderChasing then moves
// its plan a learn step on).
func (s *apiSchedule) waitsForLeader(st *tupleState, now time.Time) bool {
	if !st.Following {
		return false
	}
	wait, _ := s.book.WaitsForLeader(st.delayKey(), s.series(st.tuple, &st.Tuple), st.Poll, now)
	return wait
}
