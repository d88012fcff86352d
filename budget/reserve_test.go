package budget

import (
	"errors"
	"math"
	"testing"
	"time"
)

// disk is what a Reserver has made durable: the last value it was given.
type disk struct {
	saved  *Saved
	writes int
	fail   error
}

func (d *disk) reserve(s Saved) error {
	if d.fail != nil {
		return d.fail
	}
	d.writes++
	d.saved = &s
	return nil
}

// start is a process starting at now: a budget of limit restored from the
// disk, writing its reservations there.
func (d *disk) start(t *testing.T, limit int, now time.Time) *Budget {
	t.Helper()
	b := New(limit, now)
	if d.saved != nil {
		if err := b.Restore(*d.saved, now); err != nil {
			t.Fatalf("restore at %s: %v", now.Format(time.RFC3339), err)
		}
	}
	b.SetReserver(d.reserve)
	return b
}

// Every call is reserved on disk before Take allows it, in chunks of 1,
// 2, 4, then MaxChunk calls: the disk's count is never behind the calls
// made, and a chunk costs one write.
func TestReserveBeforeEachCall(t *testing.T) {
	now := day0.Add(10 * time.Hour)
	d := &disk{}
	b := d.start(t, 86400, now) // a call a second, room for 900
	var sizes []int
	last := 0
	for i := 0; i < 30; i++ {
		if ok, _ := b.Take(now); !ok {
			t.Fatalf("call %d refused", i)
		}
		if d.saved == nil || d.saved.Used < b.Used(now) {
			t.Fatalf("call %d allowed with %v on disk, %d used", i, d.saved, b.Used(now))
		}
		if d.saved.Used != last {
			sizes = append(sizes, d.saved.Used-last)
			last = d.saved.Used
		}
	}
	want := []int{1, 2, 4, 5, 5, 5, 5, 5}
	if len(sizes) != len(want) {
		t.Fatalf("chunks %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("chunks %v, want %v", sizes, want)
		}
	}
	if d.writes != len(want) {
		t.Errorf("%d writes for %d chunks", d.writes, len(want))
	}
	// The bucket's level on disk has the chunk's calls taken: 32 calls
	// reserved for 30 made.
	if got, want := d.saved.Tokens, 900.0-32; d.saved.Used != 32 || math.Abs(got-want) > 1e-6 {
		t.Errorf("on disk %d reserved, level %v; want 32 and %v", d.saved.Used, got, want)
	}
}

// A chunk never goes past the day's calls left nor the bucket's whole
// tokens: the level saved is never negative.
func TestReserveChunkFitsWhatIsLeft(t *testing.T) {
	now := day0.Add(10 * time.Hour)
	d := &disk{}
	b := d.start(t, 960, now) // room for 10
	for range 10 {
		if ok, _ := b.Take(now); !ok {
			t.Fatal("a call of the burst refused")
		}
		if d.saved.Tokens < 0 || d.saved.Used > 10 {
			t.Fatalf("reserved %d with level %v: beyond the burst of 10", d.saved.Used, d.saved.Tokens)
		}
	}
	if d.saved.Used != 10 || d.saved.Tokens > 1e-6 {
		t.Errorf("after the burst: %d reserved, level %v; want 10 and 0", d.saved.Used, d.saved.Tokens)
	}
	d2 := &disk{}
	b = d2.start(t, 3, now) // room for 1 (burst at least one), 3 a day
	b.Take(now)
	if d2.saved.Used != 1 {
		t.Errorf("budget of 3: reserved %d for the first call, want 1", d2.saved.Used)
	}
}

// A reservation that cannot be written holds the call back (no money is
// spent that the next process cannot see) until ReserveRetry, and says
// why; once the disk takes it again, calls go.
func TestReserveFailureHoldsTheCall(t *testing.T) {
	now := day0.Add(10 * time.Hour)
	d := &disk{fail: errors.New("no space left on device")}
	b := d.start(t, 960, now)
	ok, next := b.Take(now)
	if ok || !next.Equal(now.Add(ReserveRetry)) {
		t.Fatalf("Take with a failing disk = %v, %s; want held back until %s", ok, next, now.Add(ReserveRetry))
	}
	if b.Used(now) != 0 || b.ReserveError() == nil || b.ReserveError().Error() != "no space left on device" {
		t.Fatalf("used %d, error %v", b.Used(now), b.ReserveError())
	}
	d.fail = nil
	if ok, _ := b.Take(next); !ok || b.ReserveError() != nil {
		t.Fatalf("disk back: Take = %v, error %v", ok, b.ReserveError())
	}
	// Without a limit nothing is capped, nothing is reserved.
	d3 := &disk{fail: errors.New("read-only file system")}
	free := d3.start(t, 0, now)
	if ok, _ := free.Take(now); !ok {
		t.Error("no budget: a call was held back for a reservation")
	}
}

// The crash loop of issue 26: processes that each restore from disk,
// make a call and die a second later without a save. With reservations
// the day's count on disk is ahead of every call, so 100 restarts spend
// no more than daily_budget 96 (without them, each restart had a fresh
// count: 100 calls).
func TestCrashLoopStaysWithinDailyBudget(t *testing.T) {
	now := day0.Add(10 * time.Hour)
	d := &disk{}
	spent := 0
	for range 100 {
		b := d.start(t, 96, now)
		if ok, _ := b.Take(now); ok {
			spent++
		}
		now = now.Add(time.Second)
	}
	// 96 a day pace a call every 15 min, with room for one: 100 s of
	// restarts allow one call.
	if spent != 1 {
		t.Errorf("100 restarts in 100 s spent %d calls; the pacing of 96 a day allows 1", spent)
	}
	t.Logf("daily_budget 96: 100 restarts 1 s apart spent %d call(s)", spent)
}

// Restarts as fast as a crash loop goes, each spending what the budget
// allows at once, for a whole day: no UTC day spends more than the budget
// and no clock hour more than its pacing (N/24 + 25 %, rounded up), the
// same caps as one process that never crashes.
func TestCrashLoopKeepsDayAndHourCaps(t *testing.T) {
	for _, tc := range []struct {
		n     int
		every time.Duration
	}{{96, time.Second}, {960, time.Second}, {960, 10 * time.Second}, {10000, 30 * time.Second}} {
		start := day0.Add(22 * time.Hour)
		now := start
		d := &disk{}
		perDay, perHour := map[time.Time]int{}, map[time.Time]int{}
		first := 0
		for now.Before(start.Add(26 * time.Hour)) {
			b := d.start(t, tc.n, now)
			for {
				ok, _ := b.Take(now)
				if !ok {
					break
				}
				perDay[midnight(now)]++
				perHour[now.Truncate(time.Hour)]++
				if now.Sub(start) < 67*time.Second {
					first++
				}
			}
			now = now.Add(tc.every)
		}
		hourCap := int(math.Ceil(1.25 * float64(tc.n) / 24))
		for h, c := range perHour {
			if c > hourCap {
				t.Errorf("N=%d, a restart every %s: %d calls in the hour of %s, more than %d", tc.n, tc.every, c, h.Format(time.RFC3339), hourCap)
			}
		}
		for dd, c := range perDay {
			if c > tc.n {
				t.Errorf("N=%d, a restart every %s: %d calls on %s, more than the budget", tc.n, tc.every, c, dd.Format(time.DateOnly))
			}
		}
		allowed := int(burst(tc.n) + 67*rate(tc.n))
		if first > allowed {
			t.Errorf("N=%d, a restart every %s: %d calls in the first 67 s, pacing allows %d", tc.n, tc.every, first, allowed)
		}
		t.Logf("N=%d, a restart every %s: %d calls in the first 67 s (pacing allows %d), %d on %s",
			tc.n, tc.every, first, allowed, perDay[day0.Add(24*time.Hour)], day0.Add(24*time.Hour).Format(time.DateOnly))
	}
}

// TestReservationWrittenOutsideTheLock: while a reservation's write is
// stuck (a slow disk), what reads the budget (a scrape's Used and Limit,
// a save's Saved, a peer's count) answers at once; a second Take waits
// for the write under way and is not given a call it did not reserve;
// both calls are allowed once the write ends, counted once each.
func TestReservationWrittenOutsideTheLock(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	b := New(960, now)
	b.SetMembers([]string{"b"}, 2)
	release, entered := make(chan struct{}), make(chan Saved, 4)
	b.SetReserver(func(s Saved) error {
		entered <- s
		<-release
		return nil
	})
	took := make(chan bool, 2)
	go func() { ok, _ := b.Take(now); took <- ok }()
	first := <-entered // the write is under way, and stuck
	read := make(chan int)
	go func() {
		b.ObservePeer("b", midnight(now), 3, now)
		_ = b.Saved(now)
		read <- b.Used(now) + b.Limit(now)
	}()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("reading the budget waited for the reservation's write")
	}
	go func() { ok, _ := b.Take(now); took <- ok }()
	select {
	case <-took:
		t.Fatal("a call was allowed before its reservation was written")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	for i := 0; i < 2; i++ {
		if !<-took {
			t.Fatal("a call was refused once the reservation was written")
		}
	}
	if got := b.Used(now) - 3; got != 2 || first.Used < 1 {
		t.Errorf("%d calls counted (reserved %d first), want 2", got, first.Used)
	}
}
