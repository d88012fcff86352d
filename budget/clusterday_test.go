package budget

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// member is one member of a two-member cluster: its budget and its own
// clock, off the true time by skew.
type member struct {
	b    *Budget
	skew time.Duration
}

func (m member) now(at time.Time) time.Time { return at.Add(m.skew) }

// take spends one call at the true time at, on this member's clock.
func (m member) take(t *testing.T, at time.Time) {
	t.Helper()
	if ok, next := m.b.Take(m.now(at)); !ok {
		t.Fatalf("a call refused at %s (next %s)", m.now(at).Format(time.TimeOnly), next)
	}
}

// tell hands m's count, as it gossips it, to o.
func (m member) tell(o member, at time.Time) int {
	day, used := m.b.OwnDay(m.now(at))
	return o.b.ObservePeer("m", day, used, o.now(at))
}

// TestClusterDayAcrossClocks: two members whose clocks are 3 minutes
// apart count their calls on one UTC day around 00:00 UTC when their
// budgets follow the cluster's clock (the two meet halfway, as
// cluster.Peer.ClusterTime does): each takes the other's count, and the
// day turns for both at the cluster's midnight. On their own clocks the
// one ahead counts the next day's calls for 3 minutes, and neither takes
// the other's count.
func TestClusterDayAcrossClocks(t *testing.T) {
	midnight := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	start := midnight.Add(-4 * time.Minute) // true time
	const skew = 3 * time.Minute
	pair := func(clustered bool) (a, b member) {
		a, b = member{skew: 0}, member{skew: skew}
		a.b, b.b = New(9600, a.now(start.Add(-time.Hour))), New(9600, b.now(start.Add(-time.Hour)))
		a.b.SetMembers([]string{"m"}, 2)
		b.b.SetMembers([]string{"m"}, 2)
		if clustered {
			// The cluster's clock is halfway: a is 90 s behind it, b
			// 90 s ahead (ClusterTime(t) = t - ClockOffset()).
			a.b.SetClock(func(t time.Time) time.Time { return t.Add(skew / 2) })
			b.b.SetClock(func(t time.Time) time.Time { return t.Add(-skew / 2) })
		}
		return a, b
	}

	// On their own clocks: at 23:58 true time, b's clock reads 00:01.
	a, b := pair(false)
	at := start.Add(2 * time.Minute)
	a.take(t, at)
	b.take(t, at)
	da, _ := a.b.OwnDay(a.now(at))
	db, _ := b.b.OwnDay(b.now(at))
	if da.Equal(db) {
		t.Fatalf("on their own clocks both count %s: the test does not put the clocks on two days", da.Format(time.DateOnly))
	}
	if added := b.tell(a, at) + a.tell(b, at); added != 0 {
		t.Fatalf("on their own clocks %d calls of the other's day were taken", added)
	}

	// On the cluster's clock: one day for both, each takes the other's
	// count, until the cluster's midnight turns both.
	a, b = pair(true)
	for i := range 4 {
		at := start.Add(time.Duration(i) * 30 * time.Second) // 23:56:00 to 23:57:30 true, 23:57:30 to 23:59:00 the cluster's
		a.take(t, at)
		b.take(t, at)
		b.tell(a, at)
		a.tell(b, at)
		da, _ := a.b.OwnDay(a.now(at))
		db, _ := b.b.OwnDay(b.now(at))
		if !da.Equal(db) || !da.Equal(midnight.Add(-24*time.Hour)) {
			t.Fatalf("at %s true time (b's clock %s): a counts %s, b %s; want both %s", at.Format(time.TimeOnly),
				b.now(at).Format(time.TimeOnly), da.Format(time.DateOnly), db.Format(time.DateOnly), midnight.Add(-24*time.Hour).Format(time.DateOnly))
		}
		if ua, ub := a.b.Used(a.now(at)), b.b.Used(b.now(at)); ua != 2*(i+1) || ub != 2*(i+1) {
			t.Fatalf("at %s true time: a counts %d calls of the cluster, b %d; want %d", at.Format(time.TimeOnly), ua, ub, 2*(i+1))
		}
	}
	// 23:58:30 true time is 00:00 on the cluster's clock: both turn.
	turn := midnight.Add(-skew / 2)
	for _, at := range []time.Time{turn.Add(-time.Second), turn.Add(time.Second)} {
		da, _ := a.b.OwnDay(a.now(at))
		db, _ := b.b.OwnDay(b.now(at))
		if !da.Equal(db) {
			t.Fatalf("at %s true time a counts %s, b %s", at.Format(time.TimeOnly), da.Format(time.DateOnly), db.Format(time.DateOnly))
		}
	}
	at = turn.Add(time.Second)
	if ua, ub := a.b.Used(a.now(at)), b.b.Used(b.now(at)); ua != 0 || ub != 0 {
		t.Fatalf("after the cluster's midnight a counts %d, b %d; want a new day, 0", ua, ub)
	}
	a.take(t, at)
	b.take(t, at)
	if added := b.tell(a, at); added != 1 {
		t.Fatalf("a took %d of b's calls of the new day, want 1", added)
	}
	if got := a.b.Used(a.now(at)); got != 2 {
		t.Fatalf("a counts %d calls of the cluster's new day, want 2", got)
	}
}

// A day spent up waits for the cluster's midnight, told on this member's
// clock; a clock further than maxClockShift off moves the day by no more.
func TestClusterDayNextCall(t *testing.T) {
	local := time.Date(2026, 11, 20, 23, 50, 0, 0, time.UTC)
	b := New(10, local)
	b.SetClock(func(t time.Time) time.Time { return t.Add(-5 * time.Minute) }) // this clock is 5 min ahead
	b.ObserveUpstream(0, 10, local)                                            // the day is spent
	ok, next := b.Take(local)
	if want := time.Date(2026, 11, 21, 0, 5, 0, 0, time.UTC); ok || !next.Equal(want) {
		t.Fatalf("Take = %v, %s; want refused until %s on this clock (the cluster's 00:00)", ok, next, want)
	}

	far := New(0, local)
	far.SetClock(func(t time.Time) time.Time { return t.Add(400 * 24 * time.Hour) })
	if day, _ := far.OwnDay(local); !day.Equal(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("a cluster clock 400 days ahead moves the day to %s, want at most %s ahead: %s", day.Format(time.DateOnly), maxClockShift, "2026-11-21")
	}
}

// A peer's count refused or cut is logged at warn, naming the member and
// why, once an hour per member and reason; a flood of names is counted,
// and logged for at most maxLoggedRefusals of them an hour.
func TestPeerRefusalLogged(t *testing.T) {
	noon := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var buf testtool.LogBuffer
	b := New(20000, noon)
	b.SetLogger(log.NewLogfmtLogger(&buf))
	b.SetMembers([]string{"rogue"}, 2)
	for i := range 100 { // every gossip of a row carries the count again
		at := noon.Add(time.Duration(i) * time.Second)
		b.ObservePeer("rogue", at, -1, at)
		b.ObservePeer("rogue", at, 20000, at)
	}
	for _, want := range []string{"level=warn", "member=rogue", "reason=negative", "reason=pace", "count=20000", "why="} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in the log:\n%s", want, buf.String())
		}
	}
	if n := buf.Count("reason=negative"); n != 1 {
		t.Errorf("a negative count gossiped 100 times logged %d times, want once:\n%s", n, buf.String())
	}
	if n := buf.Count("reason=pace"); n != 1 {
		t.Errorf("a count past the pace gossiped 100 times logged %d times, want once", n)
	}
	if got := b.PeerRefusals()[PeerNegative]; got != 100 {
		t.Errorf("%d negative counts counted, want every one, 100", got)
	}
	b.ObservePeer("other", noon, -1, noon)
	if n := buf.Count("member=other"); n != 1 {
		t.Errorf("another member's refusal logged %d times, want once", n)
	}
	later := noon.Add(refusalLogEvery + time.Minute)
	b.ObservePeer("rogue", later, -1, later)
	if n := buf.Count("reason=negative", "member=rogue"); n != 2 {
		t.Errorf("after an hour the refusal logged %d times in all, want again (2)", n)
	}

	var flood testtool.LogBuffer
	f := New(20000, noon)
	f.SetLogger(log.NewLogfmtLogger(&flood))
	for i := range 10000 {
		f.ObservePeer(fmt.Sprintf("m%d", i), noon, -1, noon)
	}
	if n := flood.Count("level=warn"); n > maxLoggedRefusals || n == 0 {
		t.Errorf("10 000 names logged %d lines, want some and at most %d", n, maxLoggedRefusals)
	}
	if got := f.PeerRefusals()[PeerNegative]; got != 10000 {
		t.Errorf("%d of 10 000 counted", got)
	}
	long := strings.Repeat("x", 10000)
	f.ObservePeer(long, noon.Add(2*refusalLogEvery), -1, noon.Add(2*refusalLogEvery))
	if strings.Contains(flood.String(), long[:maxShownName+1]) {
		t.Error("a member name of 10 000 bytes was logged whole")
	}
}

// DayStart is the budget's midnight on the member's own clock: its own
// UTC midnight alone, the cluster's midnight (shifted by the offset) in a
// cluster.
func TestDayStartFollowsTheDaysClock(t *testing.T) {
	own := time.Date(2026, 11, 21, 0, 1, 0, 0, time.UTC) // this member's clock
	b := New(100, own)
	if got := b.DayStart(own); !got.Equal(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("alone: day starts %s", got)
	}
	// This member's clock runs 3 min ahead of the cluster's: the
	// cluster's day began at 00:03 on this member's clock, and at 00:01
	// the cluster is still on the 20th.
	b.SetClock(func(t time.Time) time.Time { return t.Add(-3 * time.Minute) })
	if got, want := b.DayStart(own), time.Date(2026, 11, 20, 0, 3, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("in a cluster 3 min behind: day starts %s on this clock, want %s", got, want)
	}
}
