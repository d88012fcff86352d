package collector

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
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
	// factor is the coarsening the daily budget's plan asks for, per
	// window: a series is polled for every factor-th row.
	factor map[string]int
}

// delayKey names the series that share one publication delay.
func delayKey(t *config.Tuple) string { return t.API + " " + t.Path + " " + t.Window }

// rowWindow is the spacing of a tuple's rows: its window, or for block
// windows the mean spacing of the rows seen.
func rowWindow(st *tupleState) time.Duration {
	if st.tuple.Window == "block" {
		return st.Interval
	}
	return config.WindowDuration(st.tuple.Window)
}

// series is what the policy reads of a tuple.
func (s *apiSchedule) series(st *tupleState) schedule.Series {
	t := st.tuple
	return schedule.Series{ID: t.Key, Window: t.Window, W: rowWindow(st),
		CacheTTL:   time.Duration(t.CacheTTL * float64(time.Second)),
		Revalidate: s.revalidate, Factor: s.factor[t.Window],
		Newest: st.Newest, LastAttempt: st.LastAttempt, Deprecated: st.Deprecated, Failures: st.Failures}
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
