package fakeapi

import (
	"testing"
	"time"
)

func TestWindowDurationAndBlockInterval(t *testing.T) {
	for w, d := range map[string]time.Duration{"day": 24 * time.Hour, "hour": time.Hour, "10min": 10 * time.Minute, "min": time.Minute, "block": 0, "week": 0} {
		if got := WindowDuration(w); got != d {
			t.Errorf("WindowDuration(%q) = %v, want %v", w, got, d)
		}
	}
	for a, d := range map[string]time.Duration{"btc": 10 * time.Minute, "eth": 12 * time.Second, "erc20": 12 * time.Second,
		"stablecoin": 12 * time.Second, "usdt": 12 * time.Second, "xrp": time.Minute, "trx": time.Minute, "sol": time.Minute} {
		if got := BlockInterval(a); got != d {
			t.Errorf("BlockInterval(%q) = %v, want %v", a, got, d)
		}
	}
}

// newest is the time of the newest row of a series at the clock's time.
func newest(t *testing.T, s *Server, u string) time.Time {
	t.Helper()
	return rowTime(t, rowsOf(t, s, u).rows[0])
}

func TestPublicationTiming(t *testing.T) {
	interval := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		url    string
		w, lag time.Duration
		opts   Options
	}{
		{"/v1/btc/network-data/supply?limit=1", 24 * time.Hour, 30 * time.Minute, Options{}},
		{"/v1/btc/network-data/supply?limit=1&window=hour", time.Hour, 5 * time.Minute, Options{}},
		{"/v1/eth/network-data/addresses-count?limit=1&window=10min", 10 * time.Minute, 2 * time.Minute, Options{}},
		{"/v1/btc/market-data/open-interest?limit=1&window=min", time.Minute, 30 * time.Second, Options{}},
		{"/v2/network/events-count?asset=usdt&limit=1&window=hour", time.Hour, 5 * time.Minute, Options{}},
		{"/v1/btc/network-data/supply?limit=1&window=hour", time.Hour, 17 * time.Minute,
			Options{PublishLag: map[string]time.Duration{"hour": 17 * time.Minute}}},
	}
	for _, c := range cases {
		s, clock := newTestServer(c.opts)
		visible := interval.Add(c.w + c.lag)
		clock.Set(visible.Add(-time.Second))
		if got := newest(t, s, c.url); !got.Equal(interval.Add(-c.w)) {
			t.Errorf("%s one second early: newest row %v, want %v", c.url, got, interval.Add(-c.w))
		}
		clock.Set(visible)
		if got := newest(t, s, c.url); !got.Equal(interval) {
			t.Errorf("%s at t+W+L: newest row %v, want %v", c.url, got, interval)
		}
	}

	// Block rows are visible at their block time.
	s, clock := newTestServer(Options{})
	b := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	clock.Set(b.Add(-time.Nanosecond))
	if got := newest(t, s, "/v1/btc/network-data/supply?window=block&limit=1"); !got.Equal(b.Add(-10 * time.Minute)) {
		t.Errorf("block before its time: %v", got)
	}
	clock.Set(b)
	if got := newest(t, s, "/v1/btc/network-data/supply?window=block&limit=1"); !got.Equal(b) {
		t.Errorf("block at its time: %v", got)
	}
}

func TestRowsPublished(t *testing.T) {
	s, clock := newTestServer(Options{})
	day := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		path, window, asset string
		from, to            time.Time
		want                int
	}{
		{"/v1/btc/network-data/supply", "hour", "", day, day.Add(24 * time.Hour), 24},
		{"/v1/btc/network-data/supply", "day", "", day, day.Add(30 * time.Minute), 1},
		{"/v1/btc/network-data/supply", "day", "", day.Add(30 * time.Minute), day.Add(24 * time.Hour), 0},
		{"/v1/btc/network-data/supply", "block", "", day, day.Add(time.Hour), 6},
		{"/v1/eth/network-data/addresses-count", "block", "", day, day.Add(time.Minute), 5},
		{"/v1/erc20/exchange-flows/reserve", "block", "", day, day.Add(time.Minute), 5},
		{"/v2/network/events-count", "block", "usdc", day, day.Add(time.Minute), 5},
		{"/v1/btc/market-data/open-interest", "min", "", day, day.Add(10 * time.Minute), 10},
		{"/v1/btc/market-data/open-interest", "min", "", day.Add(29 * time.Second), day.Add(30 * time.Second), 1},
		{"/v1/btc/market-data/open-interest", "min", "", day.Add(30 * time.Second), day.Add(89 * time.Second), 0},
		{"/v1/btc/network-data/supply", "week", "", day, day.Add(time.Hour), 0},
	} {
		if got := s.RowsPublished(c.path, c.window, c.asset, c.from, c.to); got != c.want {
			t.Errorf("RowsPublished(%s, %s, %s, %v, %v) = %d, want %d", c.path, c.window, c.asset, c.from, c.to, got, c.want)
		}
	}

	// RowsPublished agrees with what the API shows over a run of steps.
	const u = "/v1/eth/network-data/addresses-count?window=10min&limit=50"
	clock.Set(day)
	prev := rowsOf(t, s, u)
	from := day
	for i := 0; i < 40; i++ {
		clock.Add(97 * time.Second)
		cur := rowsOf(t, s, u)
		gotNew := int(rowTime(t, cur.rows[0]).Sub(rowTime(t, prev.rows[0])) / (10 * time.Minute))
		if want := s.RowsPublished("/v1/eth/network-data/addresses-count", "10min", "", from, clock.Now()); gotNew != want {
			t.Fatalf("step %d: %d new rows shown, RowsPublished says %d", i, gotNew, want)
		}
		prev, from = cur, clock.Now()
	}
}
