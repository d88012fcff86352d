package page

import (
	"fmt"
	"strconv"
	"time"

	"github.com/onchain-exporter/onchain_exporter/published"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// The states a series is in, in words: the page shows them and its state
// filter takes them.
const (
	StateFresh    = "fresh"                  // it serves the newest row out by the learned delay
	StateAwaiting = "awaiting the next row"  // the next row is due out and polled for
	StateLate     = "late"                   // two rows or more behind what should be out
	StateFailing  = "failing"                // its last refresh failed
	StateHeld     = "held by the budget"     // it wants a call, and daily_budget has none now
	StateRateHeld = "held by the rate limit" // it is due and waits for a turn of rate_limit
	StateRefused  = "refused by the plan"    // the key's plan does not read it
	StatePaused   = "paused"                 // its API's calls are paused
	StateFirst    = "waiting for first call" // no refresh has ended yet
)

// States lists the states in the order the page counts them.
var States = []string{StateFresh, StateAwaiting, StateLate, StateFailing, StateHeld, StateRateHeld, StateRefused, StatePaused, StateFirst}

// apiNow is what the words need of a series' API at the time of the page.
type apiNow struct {
	now time.Time
	// paused and pausedKeyed are the pauses of the key-free and keyed
	// lanes in force (zero Until: none).
	paused, pausedKeyed pause
	// spent: daily_budget has no call left today; resume is when it has.
	spent  bool
	resume time.Time
	// factor is the coarsening of each series the plan cuts, by key.
	factor map[string]float64
	wait   published.Wait // what the API's due series wait for
}

// waitsFor says whether a series waits for a turn of the limit by: due,
// not under way, its API waiting for that limit's next turn.
func (a apiNow) waitsFor(s published.Series, by published.Limit) bool {
	return a.wait.By == by && a.wait.Until.After(a.now) && !s.InFlight && !s.Next.After(a.now)
}

type pause struct {
	until time.Time
	by    string
}

// behind is how many rows the newest row served is behind the rows that
// should be out by the learned delay (schedule.Behind, the rule of
// onchain_exporter_excess_staleness_seconds).
func behind(s published.Series, now time.Time) int {
	return schedule.Behind(s.Newest, s.Spacing, s.Earliest, now)
}

// stateOf says a series' state in words.
func stateOf(s published.Series, a apiNow) string {
	p := a.paused
	if s.Tuple.Keyed {
		p = a.pausedKeyed
	}
	switch {
	case !p.until.IsZero() && a.now.Before(p.until):
		return StatePaused
	case s.Refused:
		return StateRefused
	case a.spent && !s.InFlight && (!s.Next.After(a.now) || !s.Attempted || behind(s, a.now) >= 1),
		a.waitsFor(s, published.HeldByDailyBudget):
		// It wants a call (due, never called, or its next row is out)
		// and the budget has none now.
		return StateHeld
	case !s.Attempted:
		return StateFirst
	case a.waitsFor(s, published.HeldByRateLimit):
		// Due, and waits in its place for the next turn: a wait, not
		// a failure, whatever its last call said.
		return StateRateHeld
	case !s.OK:
		return StateFailing
	}
	switch n := behind(s, a.now); {
	case n >= 2:
		return StateLate
	case n == 1:
		return StateAwaiting
	}
	return StateFresh
}

// nextOf says when a series is called next and why, in words.
func nextOf(s published.Series, state string, a apiNow) (time.Time, string) {
	switch state {
	case StatePaused:
		p := a.paused
		if s.Tuple.Keyed {
			p = a.pausedKeyed
		}
		return p.until, fmt.Sprintf("its API is paused after %s; called again when the pause ends", p.by)
	case StateHeld:
		return a.resume, "daily_budget has no call left now; called when the budget has one"
	}
	if s.InFlight {
		return a.now, "a call is under way"
	}
	if !s.Attempted {
		return s.Next, "its first call"
	}
	switch state {
	case StateFailing:
		return s.Next, "retried after the failure, backing off"
	case StateRateHeld:
		return a.wait.Until, fmt.Sprintf("due, and waits in its place for a turn of rate_limit, which frees at %s", short(a.wait.Until))
	}
	return s.Next, whyOf(s, a)
}

// whyOf says the reason the policy gave for a series' next call
// (published.Series.Why), with the times it speaks of.
func whyOf(s published.Series, a apiNow) string {
	row, out := short(s.Newest.Add(s.Spacing)), s.Newest.Add(s.Spacing+s.Earliest)
	var why string
	switch s.Why {
	case schedule.WhyNow:
		why = "due at once: the configuration, the key's plan or its labels changed, or the last run's poll was not trusted"
	case schedule.WhyLeader:
		why = fmt.Sprintf("another series of its endpoint chases the late row (%s); asked a step later, or as soon as that one finds it", row)
	case schedule.WhyUnread:
		why = "its last answer said nothing of its row (every row dated in the future); asked again on a late row's steps"
	case schedule.WhyAwaited:
		why = "another's find: a series of its endpoint found the row it waits for, or it waits for its unit's owner's row"
	case schedule.WhyRetry:
		why = "retried after the failure, backing off"
	case schedule.WhyCacheTTL:
		why = fmt.Sprintf("cache_ttl %s", human(time.Duration(s.Tuple.CacheTTL*float64(time.Second))))
	case schedule.WhyCadence:
		why = "called again on its cadence"
	case schedule.WhyFirstRow:
		why = "polled until its first row comes"
	case schedule.WhyNextRow, schedule.WhyCoarse:
		why = fmt.Sprintf("the next row (%s) is due out at %s by the learned publication delay", row, short(out))
	case schedule.WhyProbe:
		why = fmt.Sprintf("a probe for the next row (%s), earlier than the learned publication delay (%s)", row, short(out))
	case schedule.WhyFollow:
		why = fmt.Sprintf("the next row (%s) is due out at %s; another series of its endpoint polls for it first, and this poll is the fallback", row, short(out))
	case schedule.WhyLate:
		why = fmt.Sprintf("polling for the next row (%s), due out since %s", row, short(out))
	case schedule.WhySibling:
		why = fmt.Sprintf("the next row (%s), due out since %s, is late; another series of its endpoint chases it", row, short(out))
	case schedule.WhyRevalidate:
		why = "its API's revalidate: asked again at least that often, rows being revised after the fact"
	default:
		why = "as the last run planned it"
	}
	if (s.Why == schedule.WhyNextRow || s.Why == schedule.WhyCoarse) && !out.After(a.now) {
		why = fmt.Sprintf("polling for the next row (%s), due out since %s", row, short(out))
	}
	if s.Deprecated {
		why += "; the upstream marks it deprecated: its rows may no longer come"
	}
	if f := a.factor[s.Tuple.Key]; f > 1 {
		why += fmt.Sprintf("; daily_budget's plan polls one row in %.2g", f)
	}
	return why
}

// short is a time in a sentence of the page: "2026-11-27 15:04:05Z".
func short(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// human is a duration rounded for reading: 45s, 12m, 3h20m, 2d4h.
func human(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	if d < time.Minute {
		return sign + strconv.Itoa(int(d.Round(time.Second)/time.Second)) + "s"
	}
	// Two units, rounded to the smaller, which is left out when 0.
	big, small, bn, sn := time.Minute, time.Second, "m", "s"
	switch {
	case d >= 48*time.Hour:
		big, small, bn, sn = 24*time.Hour, time.Hour, "d", "h"
	case d >= time.Hour:
		big, small, bn, sn = time.Hour, time.Minute, "h", "m"
	}
	d = d.Round(small)
	// Joined without fmt, which allocates for each string it is given:
	// the index says an age a series.
	if r := int(d % big / small); r > 0 {
		return sign + strconv.Itoa(int(d/big)) + bn + strconv.Itoa(r) + sn
	}
	return sign + strconv.Itoa(int(d/big)) + bn
}
