package collector

import (
	"slices"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// minInterval is the policy's floor between two refreshes of one tuple.
var minInterval = schedule.Default.MinInterval

// apiSchedule is the schedule of one API: its Book (the learned
// publication delays) and the API's settings the policy reads.
type apiSchedule struct {
	book         *schedule.Book
	revalidate   time.Duration
	maxStaleness time.Duration      // Series.MaxWait
	factor       map[string]float64 // Series.Factor, by tuple key
}

// delayKey names the series that share a publication delay: those of an
// endpoint and window; a series without a window is a key of its own
// (two assets' rows may come hours apart).
func delayKey(t *config.Tuple) string {
	return schedule.NewKey(t.API, t.Path, t.Window, t.Key).String()
}

// rowLength is how long after its time a row of window is complete, where
// its delay runs from: none for a block row, whose time is the block's.
func rowLength(window string, s *Tuple) time.Duration {
	if window == "block" {
		return 0
	}
	return spacing(window, s)
}

// spacing is the spacing of the rows of a tuple's state s in window: its
// window; for blocks the mean seen; without a window the cadence it
// showed, schedule.DefaultCadence until then.
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

// cadence is what a tuple without a window learned of its rows.
func cadence(s *Tuple) schedule.Cadence {
	return schedule.Cadence{Interval: s.Interval, Timeless: s.RowTime.IsZero(), Weekdays: s.Weekdays,
		Since: s.Since.Time(), Changed: s.Changed.Time(), Newest: s.Newest.Time()}
}

// learnCadence learns, after an answer a that succeeded, how often a
// tuple without a window has a new row; n is its state with the answer,
// prev the one before. It returns Outcome.MissedAt.
func learnCadence(t *config.Tuple, n *Tuple, prev Tuple, a *decode.Answer, now time.Time) time.Time {
	if t.Window != "" || t.CacheTTL > 0 {
		return time.Time{}
	}
	c, missed := schedule.Default.LearnCadence(cadence(&prev),
		schedule.Seen{Newest: a.Newest, Oldest: a.Oldest, Step: a.Step, Weekdays: a.Weekdays, Changed: changed(prev.Samples, a.Samples)},
		prev.LastAttempt.Time(), prev.LastSuccess.IsZero(), now)
	n.Interval, n.Weekdays, n.Since, n.Changed, n.Newest = c.Interval, c.Weekdays, schedule.InstantOf(c.Since), schedule.InstantOf(c.Changed), schedule.InstantOf(c.Newest)
	return missed
}

// changed says whether two answers' decoded values differ.
func changed(a, b []decode.Sample) bool {
	return !slices.EqualFunc(a, b, func(x, y decode.Sample) bool {
		return x.Value == y.Value && x.Field.Name == y.Field.Name && slices.Equal(x.ExtraValues(), y.ExtraValues())
	})
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
			// times is asked every DefaultCadence (max_staleness at most).
			se.CacheTTL = min(schedule.DefaultCadence, max(s.maxStaleness, minInterval))
		}
	}
	return se
}

// waitsForLeader says whether a follower due at now waits for its
// leader, which is chasing the row.
func (s *apiSchedule) waitsForLeader(st *tupleState, now time.Time) bool {
	if !st.Following {
		return false
	}
	wait, _ := s.book.WaitsForLeader(st.delayKey(), s.series(st.tuple, &st.Tuple), st.Poll, now)
	return wait
}
