package schedule

import (
	"testing"
	"time"
)

// Each decision of the policy comes with its reason: the page says the
// reason the policy gave, it does not guess it from the times.
func TestEveryPollSaysWhy(t *testing.T) {
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	hourly := func() *tuple { return newTuple(NewBook(nil), "s", "/v1/btc/x", "hour") }

	t.Run("the first row, then the next row by the learned delay, then late", func(t *testing.T) {
		st := hourly()
		now := start.Add(10 * time.Minute)
		st.success(time.Time{}, now) // no row yet
		if st.Why != WhyFirstRow {
			t.Errorf("no row yet: %d, want WhyFirstRow", st.Why)
		}
		for i := range 4 { // rows found 5 min after they start
			now = start.Add(time.Duration(i+1)*time.Hour + 5*time.Minute)
			prev := st.Newest
			st.Newest = now.Truncate(time.Hour).Add(-time.Hour)
			st.success(prev, now)
		}
		if st.Why != WhyNextRow || !st.Next.Time().After(now) {
			t.Errorf("a row found on time: %d at %s, want WhyNextRow after %s", st.Why, st.Next, now)
		}
		now = st.Next.Time().Add(time.Second) // polled when due: the row is not there
		st.success(st.Newest, now)
		if st.Why != WhyLate {
			t.Errorf("the row missed when due: %d, want WhyLate", st.Why)
		}
	})
	t.Run("a failure, a reset, an owner awaited, a leader chasing, an unread answer", func(t *testing.T) {
		st := hourly()
		now := start.Add(10 * time.Minute)
		for _, tc := range []struct {
			o    Outcome
			want Why
		}{
			{Outcome{Err: &Failure{}}, WhyRetry},
			{Outcome{Reset: true}, WhyNow},
			{Outcome{Until: now.Add(time.Minute)}, WhyAwaited},
			{Outcome{LeaderChasing: true}, WhyLeader},
			{Outcome{Unread: true}, WhyUnread},
		} {
			st.Poll, _ = st.book.Next(st.key, st.Series, st.Poll, tc.o, now)
			if st.Why != tc.want {
				t.Errorf("%+v: %d, want %d", tc.o, st.Why, tc.want)
			}
		}
		// A poll taken back keeps its reason.
		st.Why = WhyNextRow
		st.Next = InstantOf(now.Add(time.Minute))
		if st.Poll, _ = st.book.Next(st.key, st.Series, st.Poll, Outcome{Restored: true}, now); st.Why != WhyNextRow {
			t.Errorf("restored: %d, want the saved WhyNextRow", st.Why)
		}
	})
	t.Run("cache_ttl, a cadence, revalidate", func(t *testing.T) {
		now := start.Add(10 * time.Minute)
		ttl := hourly()
		ttl.CacheTTL = time.Minute
		if ttl.success(time.Time{}, now); ttl.Why != WhyCacheTTL {
			t.Errorf("cache_ttl: %d, want WhyCacheTTL", ttl.Why)
		}
		block := newTuple(NewBook(nil), "b", "/v1/btc/x", "block")
		if block.success(time.Time{}, now); block.Why != WhyCadence {
			t.Errorf("a block window: %d, want WhyCadence", block.Why)
		}
		rv := hourly()
		rv.Revalidate = 2 * time.Minute
		rv.Newest = now.Truncate(time.Hour).Add(-time.Hour)
		if next := rv.success(rv.Newest.Add(-time.Hour), now); rv.Why != WhyRevalidate || !next.Equal(now.Add(2*time.Minute)) {
			t.Errorf("revalidate 2m: %d at %s, want WhyRevalidate at %s", rv.Why, next, now.Add(2*time.Minute))
		}
	})
}
