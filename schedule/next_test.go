package schedule

import (
	"reflect"
	"testing"
	"time"
)

// simulateRows plays the schedule of one hour-window tuple against an
// upstream that publishes row k (start k hours) at its start plus
// delay(k), polling exactly when the schedule says. From row `from` on it
// counts calls per row and the mean time a row was served late (found
// minus published).
func simulateRows(t *testing.T, delay func(k int) time.Duration, rows, from int) (float64, time.Duration) {
	t.Helper()
	st := newTuple(NewBook(nil), "k", "/v1/btc/market-data/open-interest", "hour")
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	newestAt := func(now time.Time) time.Time {
		k := int(now.Sub(start) / time.Hour)
		for ; k > -3 && start.Add(time.Duration(k)*time.Hour+delay(k)).After(now); k-- {
		}
		return start.Add(time.Duration(k) * time.Hour)
	}
	now := start.Add(17 * time.Minute)
	calls, counted := 0, 0
	var late time.Duration
	for now.Before(start.Add(time.Duration(rows) * time.Hour)) {
		prev := st.Newest
		st.Newest = newestAt(now)
		k := int(st.Newest.Sub(start) / time.Hour)
		if k >= from {
			calls++
			if st.Newest.After(prev) && !prev.IsZero() {
				counted++
				late += now.Sub(st.Newest.Add(delay(k)))
			}
		}
		now = st.success(prev, now)
	}
	return float64(calls) / float64(counted), late / time.Duration(counted)
}

func TestScheduleLearnsThePublicationDelay(t *testing.T) {
	constant := func(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }
	for _, tc := range []struct {
		name     string
		delay    func(k int) time.Duration
		maxCalls float64
		from     int // the rows measured: from this one to the 80th
	}{
		{"as the interval closes", constant(time.Hour), 1.2, 40},
		{"5 min after it closes", constant(65 * time.Minute), 1.2, 40},
		{"40 min after it closes", constant(100 * time.Minute), 1.2, 40},
		{"67 min after it closes", constant(127 * time.Minute), 1.2, 40},
		// One series alone, polled exactly when planned, against a
		// spread of 7 min: the least favourable case. The benchmark
		// (BENCHMARKS.md) holds 1.2 with scrapes and several series.
		{"jitter of +-50 % around 7 min", func(k int) time.Duration {
			return time.Hour + 7*time.Minute*time.Duration(50+(k*37)%101)/100
		}, 1.25, 40},
		// A series alone probes one row in ten or twenty: it follows a
		// drop within about twenty rows (a key of several series, whose
		// leader probes more, in a few).
		{"a delay that drops from 40 to 4 min at row 50", func(k int) time.Duration {
			if k < 50 {
				return 100 * time.Minute
			}
			return 64 * time.Minute
		}, 1.2, 70},
	} {
		perRow, late := simulateRows(t, tc.delay, 80, tc.from)
		if perRow > tc.maxCalls {
			t.Errorf("%s: %.2f calls per row once learned, want at most %.2f", tc.name, perRow, tc.maxCalls)
		}
		if late > 6*time.Minute {
			t.Errorf("%s: rows served %v after they appeared, on average", tc.name, late)
		}
		t.Logf("%s: %.2f calls per row, served %v late on average", tc.name, perRow, late)
	}
}

// TestScheduleColdStartPollsTheNextRow: the first refresh after start
// bounds the delay by the newest row's age, so the next row is polled for
// when it appears, not a first guess later; a row seen before its
// interval closed (a live upstream) has the next one probed for at its
// interval's start.
func TestScheduleColdStartPollsTheNextRow(t *testing.T) {
	for _, tc := range []struct {
		name        string
		now, newest time.Time
		want        time.Time
	}{
		{"closed intervals: the row 1 s after its interval closed", time.Date(2026, 11, 20, 12, 0, 1, 0, time.UTC),
			time.Date(2026, 11, 20, 11, 59, 0, 0, time.UTC), time.Date(2026, 11, 20, 12, 1, 1, 0, time.UTC)},
		{"live: the row 45 s into its interval", time.Date(2026, 11, 20, 12, 0, 45, 0, time.UTC),
			time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 12, 1, 0, 0, time.UTC)},
	} {
		st := newTuple(NewBook(nil), "k", "/p", "min")
		st.Newest = tc.newest
		if next := st.success(time.Time{}, tc.now); !next.Equal(tc.want) {
			t.Errorf("%s: next refresh %v, want %v", tc.name, next, tc.want)
		}
	}
}

func TestScheduleDoesNotCallBeforeTheNextRowIsDue(t *testing.T) {
	st := newTuple(NewBook(nil), "k", "/p", "day")
	now := time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC)
	st.Newest = time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
	prev := time.Date(2026, 11, 18, 0, 0, 0, 0, time.UTC)
	next := st.success(prev, now)
	if want := time.Date(2026, 11, 20, 0, 7, 12, 0, time.UTC).Add(24 * time.Hour); !next.Equal(want) {
		t.Errorf("next refresh %v, want %v (next row start + the window + the first guess's 7 min 12 s)", next, want)
	}
	st.Revalidate = 6 * time.Hour
	if next := st.success(st.Newest, now); !next.Equal(now.Add(6 * time.Hour)) {
		t.Errorf("with revalidate 6h: next %v", next)
	}
	st.CacheTTL = time.Minute
	if next := st.success(st.Newest, now); !next.Equal(now.Add(time.Minute)) {
		t.Errorf("with cache_ttl 1m: next %v", next)
	}
}

func TestScheduleBacksOffErrors(t *testing.T) {
	st := newTuple(NewBook(nil), "k", "/p", "day")
	now := time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC)
	var got []time.Duration
	for i := 1; i <= 6; i++ {
		st.Failures = i
		got = append(got, st.failure(Failure{}, now).Sub(now))
	}
	want := []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("back-off %v, want %v", got, want)
		}
	}
	if d := st.failure(Failure{RetryAfter: 17 * time.Minute}, now).Sub(now); d != 17*time.Minute {
		t.Errorf("Retry-After 17m: next in %v", d)
	}
	if d := st.failure(Failure{Hold: time.Hour}, now).Sub(now); d != time.Hour {
		t.Errorf("hold 1h: next in %v", d)
	}
}

// TestRevalidateKeepsTheFloor: a revalidate shorter than 5 s still calls a
// series at most every 5 s.
func TestRevalidateKeepsTheFloor(t *testing.T) {
	st := newTuple(NewBook(nil), "k", "/p", "day")
	st.Revalidate = time.Second
	now := time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC)
	st.Newest = time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
	if next := st.success(st.Newest, now); next.Sub(now) != Default.MinInterval {
		t.Errorf("revalidate 1s: next refresh after %v, want the floor %v", next.Sub(now), Default.MinInterval)
	}
}

// TestFailingLeaderHandsOn: the series of one key follow a leader; when
// the leader fails (a request the upstream refuses for that series only)
// or leaves the configuration, the next series that plans leads, rather
// than every follower waiting its fallback for each row.
func TestFailingLeaderHandsOn(t *testing.T) {
	b := NewBook(nil)
	w := 24 * time.Hour
	a, bb, c := newTuple(b, "a", "/p", "day"), newTuple(b, "b", "/p", "day"), newTuple(b, "c", "/p", "day")
	b.SetMembers(map[string]int{a.key: 3}, map[string]bool{"a": true, "b": true, "c": true})
	now := time.Date(2026, 11, 20, 0, 10, 0, 0, time.UTC)
	plan := func(s *tuple) (time.Duration, bool) {
		k := s.known()
		due, _, following := b.p.plan(&k, s.ID, w, now)
		b.mu.Lock()
		b.put(s.key, s.ID, k)
		b.mu.Unlock()
		return due, following
	}
	if _, following := plan(a); following {
		t.Fatal("the first series to plan follows")
	}
	due, following := plan(bb)
	if !following {
		t.Fatal("the second series leads too")
	}
	if k := bb.known(); due-k.Key.First > 40*time.Minute {
		t.Errorf("a follower's fallback is %v after the estimate, want at most 40 min", due-k.Key.First)
	}
	a.Failures = 1
	a.failure(Failure{Hold: time.Hour}, now)
	if _, following := plan(bb); following {
		t.Error("the leader failed, and the next series to plan still follows it")
	}
	b.SetMembers(map[string]int{a.key: 2}, map[string]bool{"a": true, "c": true})
	if _, following := plan(c); following {
		t.Error("the leader left the configuration, and the next series to plan still follows it")
	}
}

// TestStalledSeriesIsPolledLessAndLess: a day series whose upstream stops
// publishing is polled in the usual steps while its row is within a
// window of due, then every 6 h, and once it is three windows late, once
// a day; a deprecated one once a day at once.
func TestStalledSeriesIsPolledLessAndLess(t *testing.T) {
	for _, deprecated := range []bool{false, true} {
		st := newTuple(NewBook(nil), "k", "/p", "day")
		start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		st.Newest = start.Add(-24 * time.Hour)
		st.Deprecated = deprecated
		now := start.Add(time.Hour)
		now = st.success(time.Time{}, now) // the first refresh after start
		calls := map[int]int{}             // per day
		for now.Before(start.Add(10 * 24 * time.Hour)) {
			calls[int(now.Sub(start)/(24*time.Hour))]++
			now = st.success(st.Newest, now) // no new row, ever
		}
		late := 0
		for d := 4; d < 10; d++ {
			late += calls[d]
		}
		if late > 7 || (deprecated && calls[1] > 2) {
			t.Errorf("deprecated=%v: calls per day %v; want at most about one a day once the row is days late", deprecated, calls)
		}
		if !deprecated && calls[1] < 10 {
			t.Errorf("calls per day %v: a row late by less than a window must still be looked for in steps", calls)
		}
	}
}

// TestFollowerWaitsForAChasingLeader: a follower whose own poll comes due
// while its leader still chases the late row waits (no call), and polls
// itself once the leader fails and resigns.
func TestFollowerWaitsForAChasingLeader(t *testing.T) {
	b := NewBook(nil)
	w := 24 * time.Hour
	leader, follower := newTuple(b, "a", "/p", "day"), newTuple(b, "b", "/p", "day")
	b.SetMembers(map[string]int{leader.key: 2}, map[string]bool{"a": true, "b": true})
	row := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	now := row.Add(w + 2*time.Hour)
	k := leader.known()
	b.p.plan(&k, "a", w, now)
	if !k.chase("a", row.Add(w)) {
		t.Fatal("the leader does not chase its late row")
	}
	b.mu.Lock()
	b.put(leader.key, "a", k)
	b.mu.Unlock()
	follower.Newest, follower.Following, follower.Next = row, true, InstantOf(now)
	if wait, until := b.WaitsForLeader(follower.key, follower.Series, follower.Poll, now); !wait || !until.After(now) {
		t.Error("a follower polls itself while its leader chases the row")
	}
	leader.Failures = 1
	leader.failure(Failure{}, now)
	if wait, _ := b.WaitsForLeader(follower.key, follower.Series, follower.Poll, now); wait {
		t.Error("a follower still waits for a leader that failed")
	}
}

// TestMissFromAnotherStartBoundsNothing: a poll that missed was measured
// from the row it expected then (a Saturday, before the series showed it
// has no rows at weekends); the row found is Monday's. The miss, 72 h
// after Saturday, is later than the find from Monday (30 h): it is not a
// lower bound of Monday's delay, and the estimate does not rise to the
// find.
func TestMissFromAnotherStartBoundsNothing(t *testing.T) {
	p := Default
	day := 24 * time.Hour
	fri := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	mon := fri.Add(3 * day)
	now := mon.Add(30*time.Hour + 3*time.Minute)
	k := Known{Members: 1, Key: p.fresh(day)}
	s := Series{ID: "band", W: day, Newest: mon, Skip: 1<<time.Saturday | 1<<time.Sunday}
	pl := Poll{Planned: true, Due: p.FirstGuess(day), Polls: 1, Missed: 72*time.Hour + 3*time.Minute, Spacing: day}
	k, pl = p.Next(k, s, pl, Outcome{PrevNewest: fri}, now)
	if k.Key.HasLow {
		t.Errorf("a miss measured from Saturday set a lower bound %v of Monday's delay", k.Key.Low)
	}
	if k.Key.First != p.FirstGuess(day) {
		t.Errorf("estimate %v after a find 30 h after its row's start with no lower bound, want it kept at %v", k.Key.First, p.FirstGuess(day))
	}
	if want := mon.Add(day).Add(p.FirstGuess(day)); !pl.Next.Time().Equal(want) {
		t.Errorf("next poll %v, want Tuesday's row at the estimate %v", pl.Next, want)
	}
}

// TestRespacedDropsWhatWasLearnedForAnotherSpacing: a series without a
// window whose cadence became known (an hour assumed, a day shown) drops
// the plan and estimate made for the hour; a windowed series keeps them.
func TestRespacedDropsWhatWasLearnedForAnotherSpacing(t *testing.T) {
	p := Default
	learned := Estimate{First: 61 * time.Minute, Learned: true, HasLow: true, Low: time.Hour}
	pl := Poll{Planned: true, Due: 61 * time.Minute, Polls: 3, Missed: time.Hour, Spacing: time.Hour}
	k, got := p.respaced(Known{Key: learned}, Series{W: 24 * time.Hour}, pl)
	if got.Planned || got.Polls != 0 || got.Spacing != 24*time.Hour {
		t.Errorf("plan after the spacing changed: %+v, want a fresh one for 24h", got)
	}
	if !reflect.DeepEqual(k.Key, p.fresh(24*time.Hour)) {
		t.Errorf("estimate after the spacing changed: %+v, want a fresh one", k.Key)
	}
	k, got = p.respaced(Known{Key: learned}, Series{Window: "hour", W: 24 * time.Hour}, pl)
	if got != pl || !reflect.DeepEqual(k.Key, learned) {
		t.Errorf("a windowed series' plan or estimate changed with its spacing: %+v %+v", got, k.Key)
	}
}
