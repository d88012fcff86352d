package collector

import (
	"slices"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/state"
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
	// factor is the coarsening the daily budget's plan asks for, per
	// window: a series is polled for every factor-th row.
	factor map[string]int
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
// it showed (learnCadence), schedule.DefaultCadence until it did.
func rowWindow(st *tupleState) time.Duration {
	switch st.tuple.Window {
	case "block":
		return st.Interval
	case "":
		if st.Interval > 0 {
			return st.Interval
		}
		return schedule.DefaultCadence
	}
	return config.WindowDuration(st.tuple.Window)
}

// learnCadence learns how often a tuple without a window has a new row,
// after a refresh at now that succeeded; prev is the state before it, and
// lastTry when it was asked before.
// Where the rows carry times, their spacing (the smallest seen) and the
// weekdays they fall on; where they carry none, a change of the decoded
// values is its row: dated at the last poll that did not see it (the
// change came after), its cadence the moving mean of the gaps between
// changes. A value that did not change is a poll that missed.
func learnCadence(st *tupleState, prev state.Tuple, lastTry time.Time, d *decode.Answer, now time.Time) {
	if st.tuple.Window != "" || st.tuple.CacheTTL > 0 {
		return
	}
	st.Interval = prev.Interval // learned across refreshes, not one answer's
	if !d.Newest.IsZero() {
		gap := d.Step
		if gap <= 0 && !prev.Newest.IsZero() && d.Newest.After(prev.Newest) {
			gap = d.Newest.Sub(prev.Newest)
		}
		if gap >= minInterval && (st.Interval == 0 || gap < st.Interval) {
			st.Interval = gap
		}
		st.Weekdays = prev.Weekdays | d.Weekdays
		oldest := d.Oldest
		if oldest.IsZero() {
			oldest = d.Newest
		}
		if st.Since = prev.Since; st.Since.IsZero() || oldest.Before(st.Since) {
			st.Since = oldest
		}
		return
	}
	st.Changed = prev.Changed
	switch {
	case prev.Newest.IsZero() || lastTry.IsZero():
		st.Newest, st.Changed = now, now // the first answer: its values are as of now
	case changed(prev.Samples, d.Samples):
		// The change came after the last poll that did not see it: that
		// poll is the row's start to the schedule, and the middle of the
		// two the change's best guess. A gap between two guesses teaches
		// the cadence when the poll that missed was close enough to tell
		// (within half the cadence, or half the gap), or when even that
		// reading says the cadence is shorter.
		at := lastTry
		if at.Before(prev.Newest) {
			at = prev.Newest
		}
		guess := at.Add(now.Sub(at) / 2)
		w := rowWindow(st)
		if gap := guess.Sub(prev.Changed); !prev.Changed.IsZero() && gap >= minInterval && (now.Sub(at) <= max(w, gap)/2 || gap < w) {
			if st.Interval == 0 {
				st.Interval = gap
			} else {
				st.Interval = (st.Interval + gap) / 2
			}
		}
		// The schedule plans the next change from this one's start: the
		// guess when the poll that missed was close, else the poll that
		// found it (a change seen late is not taken to be early).
		st.Newest, st.Changed = at, guess
		if now.Sub(at) > w/2 {
			st.Newest = now
		}
	default:
		st.Newest = prev.Newest
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
	if st.tuple.Window != "" || st.Interval < 24*time.Hour || st.Weekdays == 0 || st.Since.IsZero() ||
		st.Newest.Sub(st.Since) < 7*24*time.Hour {
		return 0
	}
	return ^st.Weekdays & 0x7f
}

// series is what the policy reads of a tuple.
func (s *apiSchedule) series(st *tupleState) schedule.Series {
	t := st.tuple
	return schedule.Series{ID: t.Key, Window: t.Window, W: rowWindow(st),
		CacheTTL:   time.Duration(t.CacheTTL * float64(time.Second)),
		Revalidate: s.revalidate, Factor: s.factor[t.Window],
		Newest: st.Newest, LastAttempt: st.LastAttempt, Deprecated: st.Deprecated, Failures: st.Failures,
		Skip: skipDays(st)}
}

// next runs the policy on an event of a tuple and keeps the plan it
// returns: the one place the engine sets when a tuple is refreshed next
// (Policy.Next decides). It reports whether what the key's other tuples
// wait for changed (schedule.Book.Next). A tuple's plan is otherwise only
// ever taken whole: restored from a state file, or from a peer that
// fetched it (cluster.go).
func (s *apiSchedule) next(st *tupleState, o schedule.Outcome, now time.Time) bool {
	var siblings bool
	st.Plan, siblings = s.book.Next(st.delayKey(), s.series(st), st.Plan, o, now)
	return siblings
}

// afterSuccess plans the next refresh of a tuple whose refresh at now
// succeeded; prevNewest is the newest row before it. It reports whether
// the other tuples of its key that wait for a row are to be placed again
// in the queue.
func (s *apiSchedule) afterSuccess(st *tupleState, prevNewest, now time.Time) bool {
	return s.next(st, schedule.Outcome{PrevNewest: prevNewest}, now)
}

// afterError plans the retry of a failing tuple, or of one the budget
// held back.
func (s *apiSchedule) afterError(st *tupleState, e *upstream.Error, now time.Time) {
	f := schedule.Failure{HeldBack: e.HeldBack, RetryAfter: e.RetryAfter, Hold: e.Hold, PauseUntil: e.PauseUntil}
	// A failure finds no row and splits no key: the key's other tuples
	// stay where they are (a leader that resigns is WaitsForLeader's).
	s.next(st, schedule.Outcome{Err: &f}, now)
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
