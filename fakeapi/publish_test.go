package fakeapi

import (
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// sweep checks, every step from from to to, that the API's newest row is
// NewestVisible's, that it is visible by VisibleAt and the next row is not.
func sweep(t *testing.T, s *Server, c *simclock.Clock, u, path, window, asset string, from, to time.Time, step time.Duration) {
	t.Helper()
	rowStep := s.RowStep(path, window, asset)
	for now := from; now.Before(to); now = now.Add(step) {
		c.Set(now)
		got := newest(t, s, u)
		if want := s.NewestVisible(path, window, asset, now); !got.Equal(want) {
			t.Fatalf("%s at %v: API shows %v, NewestVisible says %v", u, now, got, want)
		}
		if v := s.VisibleAt(path, window, asset, got); v.After(now) {
			t.Fatalf("%s at %v: row %v shown before it is visible (%v)", u, now, got, v)
		}
		if v := s.VisibleAt(path, window, asset, got.Add(rowStep)); !v.After(now) {
			t.Fatalf("%s at %v: row %v visible since %v but not shown", u, now, got.Add(rowStep), v)
		}
	}
}

func TestDelayConstantAndJitter(t *testing.T) {
	const path, u = "/v1/btc/market-data/open-interest", "/v1/btc/market-data/open-interest?window=hour&limit=2&exchange=okx"
	day := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

	s, c := newTestServer(Options{Publish: map[string]Delay{"hour": {Base: 7 * time.Minute}}})
	for r := day; r.Before(day.Add(6 * time.Hour)); r = r.Add(time.Hour) {
		if got, want := s.VisibleAt(path, "hour", "", r), r.Add(time.Hour+7*time.Minute); !got.Equal(want) {
			t.Errorf("constant delay: row %v visible at %v, want %v", r, got, want)
		}
	}
	sweep(t, s, c, u, path, "hour", "", day, day.Add(6*time.Hour), 20*time.Second)

	jit := Delay{Base: 7 * time.Minute, Jitter: 0.5}
	s, c = newTestServer(Options{Publish: map[string]Delay{"hour": jit}})
	twin := New(Options{Publish: map[string]Delay{"hour": jit}})
	seen := map[time.Duration]bool{}
	for r := day; r.Before(day.Add(48 * time.Hour)); r = r.Add(time.Hour) {
		d := s.VisibleAt(path, "hour", "", r).Sub(r.Add(time.Hour))
		if d < 7*time.Minute/2 || d > 7*time.Minute*3/2 {
			t.Errorf("jittered delay of row %v is %v, outside 3m30s..10m30s", r, d)
		}
		if d2 := twin.VisibleAt(path, "hour", "", r).Sub(r.Add(time.Hour)); d2 != d {
			t.Errorf("row %v: delay %v in one server, %v in another", r, d, d2)
		}
		seen[d.Round(time.Second)] = true
	}
	if len(seen) < 40 {
		t.Errorf("48 jittered rows have only %d distinct delays", len(seen))
	}
	if other := s.VisibleAt("/v1/btc/network-data/supply", "hour", "", day); other.Equal(s.VisibleAt(path, "hour", "", day)) {
		t.Errorf("two endpoints publish row %v at the same jittered moment %v", day, other)
	}
	sweep(t, s, c, u, path, "hour", "", day, day.Add(12*time.Hour), 10*time.Second)
}

func TestDelayDrop(t *testing.T) {
	const path, u = "/v1/erc20/exchange-flows/reserve", "/v1/erc20/exchange-flows/reserve?limit=2"
	day := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	drop := day.Add(3 * 24 * time.Hour)
	s, c := newTestServer(Options{Publish: map[string]Delay{"day": {Base: 3 * time.Hour, DropAt: drop, After: 18 * time.Minute}}})
	for r := day; r.Before(day.Add(6 * 24 * time.Hour)); r = r.Add(24 * time.Hour) {
		want := 3 * time.Hour
		if !r.Add(24 * time.Hour).Before(drop) {
			want = 18 * time.Minute
		}
		if got := s.VisibleAt(path, "day", "", r).Sub(r.Add(24 * time.Hour)); got != want {
			t.Errorf("row %v: delay %v, want %v", r, got, want)
		}
	}
	sweep(t, s, c, u, path, "day", "", day, day.Add(6*24*time.Hour), 3*time.Minute)

	// With jitter on top, rows before the drop take 1.5..4.5 h, after it
	// 9..27 min.
	s, c = newTestServer(Options{Publish: map[string]Delay{"day": {Base: 3 * time.Hour, Jitter: 0.5, DropAt: drop, After: 18 * time.Minute}}})
	sweep(t, s, c, u, path, "day", "", day, day.Add(6*24*time.Hour), 3*time.Minute)
}

func TestDelayBlockAndOrder(t *testing.T) {
	const path, u = "/v1/btc/network-data/supply", "/v1/btc/network-data/supply?window=block&limit=2"
	day := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	s, c := newTestServer(Options{Publish: map[string]Delay{"block": {Base: 2 * time.Minute, Jitter: 0.5}}})
	for r := day; r.Before(day.Add(2 * time.Hour)); r = r.Add(10 * time.Minute) {
		if d := s.VisibleAt(path, "block", "", r).Sub(r); d < time.Minute || d > 3*time.Minute {
			t.Errorf("block %v: delay %v from its block time, want 1..3 min", r, d)
		}
	}
	sweep(t, s, c, u, path, "block", "", day, day.Add(4*time.Hour), 7*time.Second)

	// A spread of delays wider than the spacing of rows: each row waits
	// for the rows before it, so the API never skips one.
	s, c = newTestServer(Options{Publish: map[string]Delay{"min": {Base: 2 * time.Minute, Jitter: 1}}})
	const oi, oiURL = "/v1/btc/market-data/open-interest", "/v1/btc/market-data/open-interest?window=min&limit=2"
	prev := time.Time{}
	for r := day; r.Before(day.Add(time.Hour)); r = r.Add(time.Minute) {
		v := s.VisibleAt(oi, "min", "", r)
		if v.Before(prev) || v.Before(r.Add(time.Minute)) {
			t.Fatalf("row %v visible at %v, before its close or the previous row (%v)", r, v, prev)
		}
		prev = v
	}
	sweep(t, s, c, oiURL, oi, "min", "", day, day.Add(time.Hour), 3*time.Second)
	if got := s.RowsPublished(oi, "min", "", day, day.Add(time.Hour)); got < 55 || got > 65 {
		t.Errorf("RowsPublished over an hour of min rows = %d, want about 60", got)
	}
}

// TestDelayNegative: a delay of minus the window shows each row as its
// interval starts; jitter on a negative delay keeps the rows in order.
func TestDelayNegative(t *testing.T) {
	const path, u = "/v1/btc/market-data/open-interest", "/v1/btc/market-data/open-interest?window=min&limit=2"
	day := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	s, c := newTestServer(Options{Publish: map[string]Delay{"min": {Base: -time.Minute}}})
	c.Set(day.Add(5*time.Minute + 30*time.Second))
	if got, want := newest(t, s, u), day.Add(5*time.Minute); !got.Equal(want) {
		t.Errorf("live rows: newest %v at %v, want %v", got, c.Now(), want)
	}
	sweep(t, s, c, u, path, "min", "", day, day.Add(30*time.Minute), 2*time.Second)
	s, c = newTestServer(Options{Publish: map[string]Delay{"min": {Base: -40 * time.Second, Jitter: 0.5}}})
	sweep(t, s, c, u, path, "min", "", day, day.Add(30*time.Minute), 2*time.Second)
}
