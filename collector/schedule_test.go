package collector

import (
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// simulateRows plays the schedule against an upstream that publishes an
// hourly row delay after the row's start, polling exactly when the
// schedule says. It returns the calls made per row over the last rows and
// how late, at worst, a row was seen after it appeared.
func simulateRows(t *testing.T, delay time.Duration, rows int) (float64, time.Duration) {
	t.Helper()
	s := &schedule{}
	tp := &config.Tuple{Window: "hour", LabelGroup: "data /v1/btc/market-data/open-interest"}
	st := &tupleState{tuple: tp}
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	visible := func(now time.Time) time.Time { // newest row start visible at now
		return now.Add(-delay).Truncate(time.Hour)
	}
	now := start.Add(delay + 17*time.Minute)
	calls := 0
	var worst time.Duration
	for seen := 0; seen < rows; {
		newest := visible(now)
		if !st.newest.IsZero() && newest.After(st.newest) {
			s.delays.observe(delayKey(tp), newest, st.missedAt, now)
			st.missedAt = time.Time{}
			seen++
			if seen > rows/2 {
				worst = max(worst, now.Sub(newest.Add(delay)))
			}
		}
		if seen > rows/2 {
			calls++
		}
		st.newest = newest
		now = s.afterSuccess(st, now)
	}
	return float64(calls) / float64(rows-rows/2), worst
}

func TestScheduleLearnsThePublicationDelay(t *testing.T) {
	for _, delay := range []time.Duration{
		65 * time.Minute,  // earlier than the first guess (1 h 10 min)
		100 * time.Minute, // much later than the first guess
		2*time.Hour + 7*time.Minute,
	} {
		perRow, late := simulateRows(t, delay, 40)
		if perRow > 1.1 {
			t.Errorf("delay %v: %.2f calls per row once learned, want about 1", delay, perRow)
		}
		if late > 5*time.Minute+time.Second {
			t.Errorf("delay %v: rows seen up to %v after they appeared", delay, late)
		}
	}
}

func TestScheduleDoesNotCallBeforeTheNextRowIsDue(t *testing.T) {
	s := &schedule{}
	st := &tupleState{tuple: &config.Tuple{Window: "day", LabelGroup: "g"}}
	now := time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC)
	st.newest = time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
	next := s.afterSuccess(st, now)
	if want := time.Date(2026, 11, 21, 1, 0, 0, 0, time.UTC); !next.Equal(want) {
		t.Errorf("next refresh %v, want %v (next row start + the first-guess delay)", next, want)
	}
	s.revalidate = 6 * time.Hour
	if next := s.afterSuccess(st, now); !next.Equal(now.Add(6 * time.Hour)) {
		t.Errorf("with revalidate 6h: next %v", next)
	}
	st.tuple.CacheTTL = 60
	if next := s.afterSuccess(st, now); !next.Equal(now.Add(time.Minute)) {
		t.Errorf("with cache_ttl 1m: next %v", next)
	}
}

func TestScheduleBacksOffErrors(t *testing.T) {
	s := &schedule{}
	st := &tupleState{tuple: &config.Tuple{Window: "day"}}
	now := time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC)
	var got []time.Duration
	for i := 1; i <= 6; i++ {
		st.failures = i
		got = append(got, s.afterError(st, &upstream.Error{Code: "transport"}, now).Sub(now))
	}
	want := []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("back-off %v, want %v", got, want)
		}
	}
	if d := s.afterError(st, &upstream.Error{Code: "x", RetryAfter: 17 * time.Minute}, now).Sub(now); d != 17*time.Minute {
		t.Errorf("Retry-After 17m: next in %v", d)
	}
	if d := s.afterError(st, &upstream.Error{Code: "NO_DATA", Hold: time.Hour}, now).Sub(now); d != time.Hour {
		t.Errorf("hold 1h: next in %v", d)
	}
}
