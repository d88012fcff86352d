package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
)

// Two real members whose clocks are 3 minutes apart count their calls on
// one UTC day around 00:00 UTC when their budgets take the day from the
// cluster's clock (ClusterTime, the earlier of the two): each takes the
// other's count as a gossiped row carries it (its day and its calls), and
// the day turns for both at once.
func TestBudgetDayOnTheClusterClock(t *testing.T) {
	const skew = 3 * time.Minute
	a := start(t, testConfig("a"))
	ahead := testConfig("b", a.address())
	ahead.Clock = func() time.Time { return time.Now().Add(skew) }
	b := create(t, ahead)
	if err := b.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a and b serve", seeAll([]*member{a, b}, "a", "b"))
	eventually(t, "b, 3 min ahead, takes a's clock, the earlier", func() bool {
		return a.ClockOffset().Abs() < time.Second && (b.ClockOffset()-skew).Abs() < time.Second
	})

	// The true time is 23:58; b's clock reads 00:01, a's 23:58.
	truth := time.Date(2026, 11, 20, 23, 58, 0, 0, time.UTC)
	nowA, nowB := truth, truth.Add(skew)
	ba, bb := budget.New(9600, nowA.Add(-time.Hour)), budget.New(9600, nowB.Add(-time.Hour))
	ba.SetClock(a.ClusterTime)
	bb.SetClock(b.ClusterTime)
	ba.SetMembers([]string{"b"}, 2)
	bb.SetMembers([]string{"a"}, 2)
	for _, x := range []struct {
		b   *budget.Budget
		now time.Time
	}{{ba, nowA}, {bb, nowB}} {
		if ok, _ := x.b.Take(x.now); !ok {
			t.Fatal("a call refused")
		}
	}
	dayA, usedA := ba.OwnDay(nowA)
	dayB, usedB := bb.OwnDay(nowB)
	if !dayA.Equal(dayB) {
		t.Fatalf("a counts %s, b %s: two days", dayA.Format(time.DateOnly), dayB.Format(time.DateOnly))
	}
	if added := ba.ObservePeer("b", dayB, usedB, nowA) + bb.ObservePeer("a", dayA, usedA, nowB); added != 2 {
		t.Fatalf("%d calls of the other member taken, want 1 each", added)
	}
	if ua, ub := ba.Used(nowA), bb.Used(nowB); ua != 2 || ub != 2 {
		t.Fatalf("a counts %d calls of the cluster, b %d; want 2 each", ua, ub)
	}
	// 2 minutes later (true 00:00, the cluster's, a's; a second more for
	// the network delay in b's offset) both are on the next day.
	dayA2, _ := ba.OwnDay(nowA.Add(2*time.Minute + time.Second))
	dayB2, _ := bb.OwnDay(nowB.Add(2*time.Minute + time.Second))
	if !dayA2.Equal(dayB2) || !dayA2.After(dayA) {
		t.Fatalf("after the cluster's midnight a counts %s, b %s; want both the next day", dayA2.Format(time.DateOnly), dayB2.Format(time.DateOnly))
	}
}

// A member of another configuration digest is logged at warn, naming it,
// once however many heartbeats say so, and at info when it runs this
// member's configuration again; one that set none yet (starting) is not.
func TestOtherConfigLogged(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	eventually(t, "a and b serve", seeAll([]*member{a, b}, "a", "b"))
	a.SetConfigDigest("file-1")
	warned := func() int { return strings.Count(a.logs.String(), "a member runs another configuration") }
	eventually(t, "a no longer counts b, of no digest yet, as serving", func() bool { return len(a.Members()) == 1 })
	time.Sleep(5 * a.cfg.heartbeatInterval())
	if n := warned(); n != 0 {
		t.Errorf("b, which set no digest yet, logged %d times by a as another configuration:\n%s", n, a.logs.String())
	}
	b.SetConfigDigest("file-2")
	eventually(t, "a logs b's other configuration", func() bool { return warned() > 0 })
	time.Sleep(10 * a.cfg.heartbeatInterval()) // ten heartbeats more
	if n := warned(); n != 1 {
		t.Errorf("b's other configuration logged %d times by a, want once:\n%s", n, a.logs.String())
	}
	for _, want := range []string{"level=warn", "member=b", "its_digest=file-2", "this_digest=file-1"} {
		if !strings.Contains(a.logs.String(), want) {
			t.Errorf("no %q in a's log:\n%s", want, a.logs.String())
		}
	}
	b.SetConfigDigest("file-1")
	eventually(t, "a logs b's configuration as its own again", func() bool {
		return strings.Contains(a.logs.String(), "a member runs this member's configuration again")
	})
	eventually(t, "a and b serve together again", seeAll([]*member{a, b}, "a", "b"))
}

// The cluster's clock is not a vote anyone can join: three rogues that
// heartbeat the captured configuration digest with clocks 12 h ahead (a
// majority of the five serving members) move neither real member's clock
// nor its budget's day, and own nothing. Before, they out-voted the two,
// and the day turned: 16 calls counted became none.
func TestRogueClocksDoNotTurnTheDay(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	for _, m := range []*member{a, b} {
		m.SetConfigDigest("file-1")
	}
	eventually(t, "a and b serve", seeAll([]*member{a, b}, "a", "b"))
	for i := range 3 {
		startRogue(t, fmt.Sprintf("rogue-%d", i), a.address(), "file-1", 12*time.Hour)
	}
	eventually(t, "a and b see the rogues serve", func() bool { return len(a.Members()) == 5 && len(b.Members()) == 5 })
	time.Sleep(5 * a.cfg.heartbeatInterval())
	for _, m := range []*member{a, b} {
		if off := m.ClockOffset(); off.Abs() > time.Second {
			t.Errorf("%s's clock is %s off the cluster's after three rogues 12 h ahead", m.Name(), off)
		}
		for _, u := range units(60) {
			if owner, _ := m.Owner(u); owner != "a" && owner != "b" {
				t.Fatalf("%s sees %s own unit %s", m.Name(), owner, u)
			}
		}
	}
	// 13:00 UTC on a's clock: 12 h more would be the next day.
	now := time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC)
	bud := budget.New(20000, now)
	bud.SetClock(a.ClusterTime)
	for range 16 {
		bud.Take(now)
	}
	if day, used := bud.OwnDay(now.Add(time.Minute)); used != 16 || !day.Equal(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("a's budget counts %d calls on %s, want 16 on 2026-11-20", used, day.Format(time.DateOnly))
	}
}

// A member whose clock is 19 h ahead (past midnight while the cluster is
// not) counts on the cluster's day, the other's: its budget's day is the
// true one. Before, two members met halfway, and the one ahead counted
// the next day.
func TestFarClockCountsOnTheClustersDay(t *testing.T) {
	const skew = 19 * time.Hour
	a := start(t, testConfig("a"))
	ahead := testConfig("b", a.address())
	ahead.Clock = func() time.Time { return time.Now().Add(skew) }
	b := start(t, ahead)
	eventually(t, "a and b serve", seeAll([]*member{a, b}, "a", "b"))
	eventually(t, "b reads 19 h ahead", func() bool { return (b.ClockOffset() - skew).Abs() < time.Second })
	truth := time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC) // b's clock: 15:00 on the 21st
	bud := budget.New(9600, truth.Add(skew-time.Hour))
	bud.SetClock(b.ClusterTime)
	if day, _ := bud.OwnDay(truth.Add(skew)); !day.Equal(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("b, 19 h ahead, counts on %s; want the cluster's day, 2026-11-20", day.Format(time.DateOnly))
	}
	for _, u := range units(20) {
		if owner, _ := a.Owner(u); owner != "a" {
			t.Fatalf("a sees %s own %s", owner, u)
		}
	}
}
