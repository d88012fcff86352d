package page

import (
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/published"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// Each state in words, from what the engine published of a series and
// what its API's client says now.
func TestStateOf(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 30, 0, 0, time.UTC)
	hour := published.Series{Tuple: &config.Tuple{Key: "k", Window: "hour"}, OK: true, Attempted: true,
		Spacing: time.Hour, Earliest: time.Hour + 5*time.Minute, Next: now.Add(30 * time.Minute), Why: schedule.WhyNextRow}
	with := func(f func(*published.Series)) published.Series {
		s := hour
		t := *s.Tuple
		s.Tuple = &t
		f(&s)
		return s
	}
	calm := apiNow{now: now}
	for _, c := range []struct {
		name string
		s    published.Series
		a    apiNow
		want string
		why  string
	}{
		// Newest 11:00: the 12:00 row is out at 13:05.
		{"the next row is not out yet", with(func(s *published.Series) { s.Newest = now.Add(-90 * time.Minute) }), calm, StateFresh, "the next row (2026-11-27 12:00:00Z) is due out at 2026-11-27 13:05:00Z"},
		// Newest 10:00: the 11:00 row was out at 12:05.
		{"one row behind", with(func(s *published.Series) { s.Newest, s.Why = now.Add(-150*time.Minute), schedule.WhyLate }), calm, StateAwaiting, "polling for the next row"},
		{"two rows behind", with(func(s *published.Series) { s.Newest, s.Why = now.Add(-210*time.Minute), schedule.WhyLate }), calm, StateLate, "polling for the next row"},
		{"failing", with(func(s *published.Series) { s.OK = false; s.Newest = now.Add(-90 * time.Minute) }), calm, StateFailing, "retried after the failure"},
		{"never called", with(func(s *published.Series) { s.OK, s.Attempted = false, false }), calm, StateFirst, "its first call"},
		{"refused", with(func(s *published.Series) { s.OK, s.Refused = false, true }), calm, StateRefused, ""},
		{"paused keyed", with(func(s *published.Series) { s.Tuple.Keyed = true }),
			apiNow{now: now, pausedKeyed: pause{now.Add(time.Hour), "quota_exceeded"}}, StatePaused, "paused after quota_exceeded"},
		{"a pause of the other lane", with(func(s *published.Series) { s.Newest = now.Add(-90 * time.Minute) }),
			apiNow{now: now, pausedKeyed: pause{now.Add(time.Hour), "quota_exceeded"}}, StateFresh, ""},
		{"a pause that ended", with(func(s *published.Series) { s.Newest = now.Add(-90 * time.Minute) }),
			apiNow{now: now, paused: pause{now.Add(-time.Second), "rate_limited"}}, StateFresh, ""},
		{"due while the budget is spent", with(func(s *published.Series) { s.Next = now.Add(-time.Minute) }),
			apiNow{now: now, spent: true, resume: now.Add(11*time.Hour + 30*time.Minute)}, StateHeld, "daily_budget has no call left"},
		{"never called while the budget is spent", with(func(s *published.Series) { s.OK, s.Attempted = false, false }),
			apiNow{now: now, spent: true, resume: now.Add(time.Hour)}, StateHeld, "daily_budget has no call left"},
		{"one row behind while the budget is spent", with(func(s *published.Series) { s.Newest = now.Add(-150 * time.Minute) }),
			apiNow{now: now, spent: true, resume: now.Add(time.Hour)}, StateHeld, "daily_budget has no call left"},
		{"not due while the budget is spent", with(func(s *published.Series) { s.Newest = now.Add(-90 * time.Minute) }),
			apiNow{now: now, spent: true}, StateFresh, ""},
		{"due while rate_limit has no turn: it waits, whatever its last call said", with(func(s *published.Series) { s.OK, s.Next = false, now.Add(-time.Minute) }),
			apiNow{now: now, wait: published.Wait{Until: now.Add(20 * time.Second), By: published.HeldByRateLimit}}, StateRateHeld, "waits in its place for a turn of rate_limit, which frees at 2026-11-27 12:30:20Z"},
		{"never called while rate_limit has no turn", with(func(s *published.Series) { s.OK, s.Attempted, s.Next = false, false, now.Add(-time.Minute) }),
			apiNow{now: now, wait: published.Wait{Until: now.Add(20 * time.Second), By: published.HeldByRateLimit}}, StateFirst, "its first call"},
		{"not due while rate_limit has no turn", with(func(s *published.Series) { s.Newest = now.Add(-90 * time.Minute) }),
			apiNow{now: now, wait: published.Wait{Until: now.Add(20 * time.Second), By: published.HeldByRateLimit}}, StateFresh, ""},
		{"due while daily_budget has no call", with(func(s *published.Series) { s.Next = now.Add(-time.Minute) }),
			apiNow{now: now, wait: published.Wait{Until: now.Add(20 * time.Second), By: published.HeldByDailyBudget}}, StateHeld, "daily_budget has no call left"},
		{"cut by the plan", with(func(s *published.Series) { s.Newest = now.Add(-90 * time.Minute) }),
			apiNow{now: now, factor: map[string]float64{"k": 2.5}}, StateFresh, "polls one row in 2.5"},
		{"in flight", with(func(s *published.Series) { s.InFlight = true; s.Newest = now.Add(-150 * time.Minute) }), calm, StateAwaiting, "a call is under way"},
		{"deprecated", with(func(s *published.Series) { s.Deprecated = true; s.Newest = now.Add(-210 * time.Minute) }), calm, StateLate, "deprecated: its rows may no longer come"},
		{"cache_ttl", with(func(s *published.Series) { s.Spacing, s.Tuple.CacheTTL, s.Why = 0, 600, schedule.WhyCacheTTL }), calm, StateFresh, "cache_ttl 10m"},
		// The reason is the policy's: the same times with another reason
		// say another thing.
		{"a row the estimate says is out", with(func(s *published.Series) { s.Newest = now.Add(-150 * time.Minute) }), calm, StateAwaiting, "polling for the next row (2026-11-27 11:00:00Z), due out since 2026-11-27 12:05:00Z"},
		{"following the key's leader", with(func(s *published.Series) { s.Newest, s.Why = now.Add(-90*time.Minute), schedule.WhyFollow }), calm, StateFresh, "this poll is the fallback"},
		{"a sibling chases the late row", with(func(s *published.Series) { s.Newest, s.Why = now.Add(-150*time.Minute), schedule.WhySibling }), calm, StateAwaiting, "another series of its endpoint chases it"},
		{"a probe", with(func(s *published.Series) { s.Newest, s.Why = now.Add(-90*time.Minute), schedule.WhyProbe }), calm, StateFresh, "a probe for the next row (2026-11-27 12:00:00Z)"},
		{"the owner's row awaited", with(func(s *published.Series) { s.Newest, s.Why = now.Add(-90*time.Minute), schedule.WhyAwaited }), calm, StateFresh, "its unit's owner's row"},
		{"reset", with(func(s *published.Series) { s.Newest, s.Why = now.Add(-90*time.Minute), schedule.WhyNow }), calm, StateFresh, "due at once"},
		{"a poll of an earlier version's state file", with(func(s *published.Series) { s.Newest, s.Why = now.Add(-90*time.Minute), schedule.WhyUnknown }), calm, StateFresh, "as the last run planned it"},
	} {
		got := stateOf(c.s, c.a)
		_, why := nextOf(c.s, got, c.a)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: %q (%s), want %q (%s)", c.name, got, why, c.want, c.why)
		}
	}
}

func TestHuman(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 45 * time.Second: "45s", 90 * time.Second: "1m30s", 3*time.Hour + 20*time.Minute: "3h20m",
		52 * time.Hour: "2d4h", -5 * time.Minute: "-5m",
	} {
		if got := human(d); got != want {
			t.Errorf("human(%v) = %q, want %q", d, got, want)
		}
	}
}
