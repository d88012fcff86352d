package budget

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

var day0 = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

// greedy spends the budget as fast as it allows for span from start: a
// call at once whenever Take says yes, else at the time it names. It
// returns the calls per UTC day and per clock hour.
func greedy(t *testing.T, b *Budget, start time.Time, span time.Duration) (perDay, perHour map[time.Time]int) {
	t.Helper()
	perDay, perHour = map[time.Time]int{}, map[time.Time]int{}
	now := start
	for now.Before(start.Add(span)) {
		ok, next := b.Take(now)
		if ok {
			perDay[midnight(now)]++
			perHour[now.Truncate(time.Hour)]++
			continue
		}
		if !next.After(now) {
			t.Fatalf("refused at %s with next %s", now, next)
		}
		// At the time named, a call is allowed.
		if ok, _ := b.Take(next); !ok {
			t.Fatalf("refused at %s, and again at the %s it named", now, next)
		}
		perDay[midnight(next)]++
		perHour[next.Truncate(time.Hour)]++
		now = next
	}
	return perDay, perHour
}

// Spent as fast as it allows for three days, a budget of N holds: at most
// N calls per UTC day, at most N/24 + 25 % (rounded up) in any clock
// hour, and, after the first day, no less than N-1 a day: pacing does
// not waste the budget.
func TestBudgetCapsDaysAndHours(t *testing.T) {
	for _, n := range []int{1, 10, 24, 30, 95, 96, 100, 1000, 5000, 86400, 200000} {
		// Started mid-morning: the first day is short.
		start := day0.Add(9*time.Hour + 17*time.Minute)
		perDay, perHour := greedy(t, New(n, start), start, 3*24*time.Hour)
		hourCap := int(math.Ceil(1.25 * float64(n) / 24))
		for h, c := range perHour {
			if c > hourCap {
				t.Errorf("N=%d: %d calls in the hour of %s, more than %d", n, c, h.Format(time.RFC3339), hourCap)
			}
		}
		for d, c := range perDay {
			if c > n {
				t.Errorf("N=%d: %d calls on %s, more than the budget", n, c, d.Format(time.DateOnly))
			}
			if d.After(day0) && d.Before(day0.Add(3*24*time.Hour)) && c < n-1 {
				t.Errorf("N=%d: only %d calls on %s: pacing left the budget unspent", n, c, d.Format(time.DateOnly))
			}
		}
	}
}

// The day counter resets at 00:00 UTC: a day spent up waits for
// midnight, whatever the time zone of the clock.
func TestBudgetDayResetsAtMidnightUTC(t *testing.T) {
	zone := time.FixedZone("UTC+9", 9*3600)
	now := day0.Add(23 * time.Hour).In(zone)
	b := New(96*10, now.Add(-24*time.Hour))
	b.ObserveUpstream(0, 960, now) // the upstream counted the whole day
	ok, next := b.Take(now)
	if ok || !next.Equal(day0.Add(24*time.Hour)) {
		t.Fatalf("Take = %v, %s; want refused until %s", ok, next, day0.Add(24*time.Hour))
	}
	if ok, _ := b.Take(next); !ok {
		t.Fatal("refused at midnight UTC")
	}
	if got := b.Used(next); got != 1 {
		t.Errorf("used after midnight = %d, want 1", got)
	}
}

func TestBudgetWithoutLimitCounts(t *testing.T) {
	b := New(0, day0)
	for i := range 1000 {
		if ok, _ := b.Take(day0.Add(time.Duration(i) * time.Millisecond)); !ok {
			t.Fatal("a budget without limit refused a call")
		}
	}
	if got := b.Used(day0.Add(time.Hour)); got != 1000 {
		t.Errorf("used = %d, want 1000", got)
	}
	if got := b.Limit(day0); got != 0 {
		t.Errorf("limit = %d, want 0", got)
	}
}

// The upstream's daily limit applies when it is the smaller, for the UTC
// day it was seen; its count of used calls when it is the larger.
func TestBudgetUpstreamLimit(t *testing.T) {
	for _, tc := range []struct {
		name                string
		own, upLimit, upUse int
		wantLimit, wantUsed int
	}{
		{"upstream lower", 1000, 100, 0, 100, 0},
		{"own lower", 100, 1000, 0, 100, 0},
		{"no own budget", 0, 300, 0, 300, 0},
		{"upstream counted more", 1000, 0, 420, 1000, 420},
		{"headers absent", 1000, 0, 0, 1000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := day0.Add(12 * time.Hour)
			b := New(tc.own, now)
			b.ObserveUpstream(tc.upLimit, tc.upUse, now)
			if got := b.Limit(now); got != tc.wantLimit {
				t.Errorf("limit = %d, want %d", got, tc.wantLimit)
			}
			if got := b.Used(now); got != tc.wantUsed {
				t.Errorf("used = %d, want %d", got, tc.wantUsed)
			}
			// The next day the upstream's limit is seen again or not.
			if got := b.Limit(now.Add(12 * time.Hour)); got != tc.own {
				t.Errorf("limit the next day = %d, want daily_budget %d", got, tc.own)
			}
		})
	}

	// A lower upstream limit paces too: 100 a day is at most 6 an hour.
	start := day0.Add(time.Hour)
	b := New(10000, start)
	b.ObserveUpstream(100, 0, start)
	_, perHour := greedy(t, b, start, 6*time.Hour)
	for h, c := range perHour {
		if c > 6 {
			t.Errorf("%d calls in the hour of %s under an upstream limit of 100 a day", c, h.Format(time.RFC3339))
		}
	}
	// And the upstream's used count stops the day.
	b = New(1000, start)
	b.ObserveUpstream(0, 999, start)
	if ok, _ := b.Take(start); !ok {
		t.Fatal("the last call of the day refused")
	}
	if ok, next := b.Take(start.Add(time.Hour)); ok || !next.Equal(day0.Add(24*time.Hour)) {
		t.Errorf("Take after the upstream's count reached the limit = %v, %s", ok, next)
	}
}

// A reload's new daily_budget keeps the day's calls; a lower one caps the
// bucket at its own room.
func TestBudgetSetLimit(t *testing.T) {
	now := day0.Add(8 * time.Hour)
	b := New(9600, now)
	for range 50 {
		if ok, _ := b.Take(now); !ok {
			t.Fatal("refused within the burst")
		}
	}
	b.SetLimit(960, now)
	if b.Used(now) != 50 || b.Limit(now) != 960 {
		t.Fatalf("after SetLimit: used %d, limit %d", b.Used(now), b.Limit(now))
	}
	// 960 a day has room for 10; 50 were taken from a room of 100.
	taken := 0
	for {
		ok, _ := b.Take(now)
		if !ok {
			break
		}
		taken++
	}
	if taken != 10 {
		t.Errorf("%d calls at once after lowering to 960 a day, want the 10 of its room", taken)
	}
	b.SetLimit(0, now)
	if ok, _ := b.Take(now); !ok {
		t.Error("no budget any more, and a call refused")
	}
}

// Saved and restored, through JSON as a state file keeps it: the day's
// calls and the bucket's level carry over, so a restart gets no new
// burst.
func TestBudgetSavedRestored(t *testing.T) {
	now := day0.Add(10 * time.Hour)
	b := New(960, now)
	b.ObserveUpstream(500, 0, now)
	for {
		if ok, _ := b.Take(now); !ok {
			break
		}
	}
	used := b.Used(now)
	raw, err := json.Marshal(b.Saved(now))
	if err != nil {
		t.Fatal(err)
	}
	var s Saved
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	later := now.Add(30 * time.Second)
	r := New(960, later)
	if err := r.Restore(s, later); err != nil {
		t.Fatal(err)
	}
	if r.Used(later) != used || r.Limit(later) != 500 {
		t.Errorf("restored: used %d (want %d), limit %d (want the upstream's 500)", r.Used(later), used, r.Limit(later))
	}
	// 500 a day refills a call in 172.8 s: 30 s after, none is free.
	if ok, next := r.Take(later); ok || !next.After(later) {
		t.Errorf("restored bucket gave a call 30 s after it was spent (next %s)", next)
	}
}

func TestSavedCheck(t *testing.T) {
	now := day0.Add(10 * time.Hour)
	good := Saved{Day: "2026-11-20", Used: 5, Paced: true, Tokens: 0.5, At: now.Add(-time.Minute)}
	if err := good.Check(now); err != nil {
		t.Fatalf("a good value refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Saved)
		want string
	}{
		{"beyond any count", func(s *Saved) { s.Used = math.MaxInt64 }, "saved counts are beyond any day's calls (used 9223372036854775807, upstream limit 0; at most 100000000)"},
		{"infinite level", func(s *Saved) { s.Tokens = math.Inf(1) }, "saved bucket level +Inf is not a number of calls"},
		{"in the future", func(s *Saved) { s.At = now.Add(time.Minute) }, "saved at 2026-11-20T10:01:00Z, later than now (2026-11-20T10:00:00Z)"},
		{"day and time differ", func(s *Saved) { s.Day = "2026-11-22" }, "saved day 2026-11-22 is not the day of its time 2026-11-20T09:59:00Z (within 24h0m0s, as a cluster's clock may be)"},
		{"not a date", func(s *Saved) { s.Day = "yesterday" }, `saved day "yesterday" is not a date (YYYY-MM-DD)`},
		{"no time", func(s *Saved) { s.At = time.Time{} }, "saved without a time"},
		{"negative", func(s *Saved) { s.Used = -1 }, "saved counts are negative (used -1, upstream limit 0)"},
		{"NaN level", func(s *Saved) { s.Tokens = math.NaN() }, "saved bucket level NaN is not a number of calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good
			tc.edit(&s)
			err := s.Check(now)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Check = %v, want %q", err, tc.want)
			}
			b := New(100, now)
			if rerr := b.Restore(s, now); rerr == nil || b.Used(now) != 0 {
				t.Errorf("a refused value was restored (used %d)", b.Used(now))
			}
		})
	}
}

// A value saved on an earlier day gives no count (the day is new) but its
// bucket: a process restarted after midnight gets no fresh burst.
func TestBudgetRestoresYesterdaysBucketNotItsCount(t *testing.T) {
	now := day0.Add(24*time.Hour + 30*time.Second)
	s := Saved{Day: "2026-11-20", Used: 900, Paced: true, Tokens: 0, At: day0.Add(24*time.Hour - 30*time.Second), UpstreamLimit: 500}
	b := New(960, now)
	if err := b.Restore(s, now); err != nil {
		t.Fatal(err)
	}
	if b.Used(now) != 0 || b.Limit(now) != 960 {
		t.Errorf("yesterday's count restored: used %d, limit %d", b.Used(now), b.Limit(now))
	}
	// 960 a day refill a call in 90 s: 60 s after the bucket was empty,
	// none is free.
	if ok, _ := b.Take(now); ok {
		t.Error("a restart after midnight got a fresh burst")
	}
}

// Concurrent callers never take more than the day allows.
func TestBudgetConcurrentTakes(t *testing.T) {
	now := day0.Add(time.Hour)
	b := New(9600, now) // room for 100
	var mu sync.Mutex
	taken := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if ok, _ := b.Take(now); ok {
					mu.Lock()
					taken++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if taken != 100 || b.Used(now) != 100 {
		t.Errorf("taken %d, used %d; want the room of 100", taken, b.Used(now))
	}
}

func TestSavedJSONNames(t *testing.T) {
	raw, err := json.Marshal(New(960, day0.Add(time.Hour)).Saved(day0.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"day":"2026-11-20"`, `"used":0`, `"paced":true`, `"tokens":10`, `"at":"2026-11-20T01:00:00Z"`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("saved JSON %s lacks %s", raw, k)
		}
	}
}

// Borrow takes a call the pace has no token for, never one the day's
// count has no room for, and the calls after it wait out the debt: a
// window still holds no more than the bucket's room and its refill.
func TestBorrowDoesNotWaitForThePaceAndRepaysIt(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 30, 0, 0, time.UTC)
	b := New(35, now)
	if ok, _ := b.Take(now); !ok {
		t.Fatal("the bucket's first call was refused")
	}
	if ok, _ := b.Take(now); ok {
		t.Fatal("a second call at once: 35 a day has room for one")
	}
	if ok, _ := b.Borrow(now); !ok {
		t.Fatal("a borrowed call was refused with room left in the day")
	}
	// In debt by one: the next call waits two refills (86400/35 s each),
	// not one.
	ok, next := b.Take(now.Add(86400 / 35 * time.Second))
	if ok {
		t.Fatal("a call one refill after the borrowed one: the debt was not repaid")
	}
	if want := now.Add(2 * 86400 / 35 * time.Second); next.Sub(want).Abs() > 2*time.Second {
		t.Errorf("next call at %s, want about %s", next.Format(time.TimeOnly), want.Format(time.TimeOnly))
	}
	// Never past the day's limit.
	full := New(2, now)
	full.Take(now)
	full.Borrow(now)
	if ok, _ := full.Borrow(now); ok {
		t.Error("a borrowed call past the day's limit")
	}
}
