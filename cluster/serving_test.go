package cluster

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// silentMember is a bare memberlist node of the cluster's label that
// joins and says nothing: no heartbeat, no row.
func silentMember(t *testing.T, name, join string) {
	t.Helper()
	mc := memberlist.DefaultLANConfig()
	mc.Name, mc.BindAddr, mc.BindPort, mc.AdvertisePort = name, "127.0.0.1", 0, 0
	mc.Label = testLabel
	mc.EnableCompression = false // as this cluster's members: compressed gossip in the clear is refused
	mc.ProbeInterval, mc.ProbeTimeout, mc.GossipInterval = 200*time.Millisecond, 100*time.Millisecond, 20*time.Millisecond
	mc.LogOutput = &syncBuffer{}
	ml, err := memberlist.Create(mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ml.Shutdown() })
	if _, err := ml.Join([]string{join}); err != nil {
		t.Fatal(err)
	}
}

// Members that join and say nothing own nothing: units are owned among
// the members whose heartbeats came. Before, 20 silent members took 2 of
// 3 units and the real members fetched them as fallbacks.
func TestSilentMembersOwnNothing(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	eventually(t, "a and b serve", seeAll([]*member{a, b}, "a", "b"))
	for i := 0; i < 8; i++ {
		silentMember(t, fmt.Sprintf("silent-%d", i), a.address())
	}
	eventually(t, "a and b see ten live members", func() bool { return len(a.liveNames()) == 10 && len(b.liveNames()) == 10 })
	time.Sleep(5 * a.cfg.heartbeatInterval())
	eventually(t, "a and b serve, alone", func() bool {
		return strings.Join(a.names(), ",") == "a,b" && strings.Join(b.names(), ",") == "a,b"
	})
	us := units(60)
	got := owners(t, []*member{a, b}, us)
	counts := map[string]int{}
	for _, o := range got {
		counts[o]++
	}
	if counts["a"]+counts["b"] != len(us) {
		t.Errorf("owners of %d units: %v; want a and b alone", len(us), counts)
	}
	if got, live := a.counter(t, "onchain_exporter_cluster_members"), a.counter(t, "onchain_exporter_cluster_live_members"); got != 2 || live != 10 {
		t.Errorf("members %v, live members %v; want 2 and 10", got, live)
	}
}

// Members of another configuration digest own nothing of each other's:
// each owns every unit among its own.
func TestOwnersShareADigest(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	eventually(t, "a and b serve", seeAll([]*member{a, b}, "a", "b"))
	a.SetConfigDigest("file-1")
	b.SetConfigDigest("file-2")
	eventually(t, "a and b serve apart", func() bool { return len(a.Members()) == 1 && len(b.Members()) == 1 })
	for _, u := range units(20) {
		if a.Rank(u) != 0 || b.Rank(u) != 0 {
			t.Fatalf("unit %s: ranks %d and %d, want each the owner of its own", u, a.Rank(u), b.Rank(u))
		}
	}
	b.SetConfigDigest("file-1")
	eventually(t, "a and b serve together again", seeAll([]*member{a, b}, "a", "b"))
}

// A member's clock offset from the cluster's is measured from the
// heartbeats of the members it trusts (here in the clear: those at the
// address --cluster.peer names, a): one member 3 h ahead shows +3 h, the
// two others 0 (the median outvotes it), and it owns nothing, ranking
// after the others, and waits 3 h more for their rows, as its refreshes
// come due 3 h early. With two members the earlier clock is the cluster's.
func TestClockOffsetFromHeartbeats(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	skewed := testConfig("c", a.address())
	skewed.Clock = func() time.Time { return time.Now().Add(3 * time.Hour) }
	c := create(t, skewed)
	if err := c.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	all := []*member{a, b, c}
	eventually(t, "a, b and c serve", seeAll(all, "a", "b", "c"))
	near := func(d, want time.Duration) bool { return math.Abs((d - want).Seconds()) < 1 }
	eventually(t, "c reads about +3h, a and b about 0", func() bool {
		return near(c.ClockOffset(), 3*time.Hour) && near(a.ClockOffset(), 0) && near(b.ClockOffset(), 0)
	})
	if got := c.counter(t, "onchain_exporter_cluster_clock_offset_seconds"); math.Abs(got-10800) > 1 {
		t.Errorf("c's clock_offset_seconds = %v, want about 10800", got)
	}
	if d := time.Until(c.ClusterTime(time.Now().Add(3 * time.Hour))); !near(d, 0) {
		t.Errorf("c's cluster time is %s off the others'", d)
	}
	for _, u := range units(30) {
		for _, m := range all {
			if owner, _ := m.Owner(u); owner == "c" {
				t.Fatalf("%s: %s sees c, 3 h off, own unit %s", u, m.Name(), u)
			}
		}
		if r := c.Rank(u); r != 2 {
			t.Fatalf("unit %s: c ranks %d, want after a and b (2)", u, r)
		}
		if d := c.FallbackDelay(u); !near(d, 2*c.cfg.PeerTimeout+3*time.Hour) {
			t.Fatalf("unit %s: c waits %s for the others' rows, want 2 × the peer timeout and 3 h", u, d)
		}
	}
	if !strings.Contains(c.logs.String(), "this member's clock is off the cluster's") {
		t.Errorf("c does not say its clock is off:\n%s", c.logs.String())
	}
	if err := b.Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a and c alone", func() bool { return len(a.Members()) == 2 && len(c.Members()) == 2 })
	time.Sleep(5 * a.cfg.heartbeatInterval())
	if !near(a.ClockOffset(), 0) || !near(c.ClockOffset(), 3*time.Hour) {
		t.Errorf("two members 3 h apart: a reads %s, c %s; want the earlier clock, a's, the cluster's", a.ClockOffset(), c.ClockOffset())
	}
	if !strings.Contains(strings.Join(a.names(), ","), "c") {
		t.Error("c, whose clock is off, no longer serves")
	}
}

// Two members 3 h apart cannot tell which of them is wrong: the earlier
// clock is the cluster's, right only when the other is the one ahead.
// With the provider's clock as reference (each member's answers' Date),
// the member that is off is the far one whichever way it is off, and
// both agree: the other owns every unit and the far one ranks after it.
func TestTheProvidersClockTellsWhichMemberIsOff(t *testing.T) {
	near := func(d, want time.Duration) bool { return math.Abs((d - want).Seconds()) < 1 }
	for _, off := range []time.Duration{-3 * time.Hour, 3 * time.Hour} {
		t.Run(off.String(), func(t *testing.T) {
			right := testConfig("right")
			right.Reference = func() (time.Duration, bool) { return 0, true }
			a := start(t, right)
			wrong := testConfig("wrong", a.address())
			wrong.Clock = func() time.Time { return time.Now().Add(off) }
			wrong.Reference = func() (time.Duration, bool) { return off, true }
			b := create(t, wrong)
			if err := b.Join(t.Context()); err != nil {
				t.Fatal(err)
			}
			eventually(t, "both serve", seeAll([]*member{a, b}, "right", "wrong"))
			eventually(t, "the wrong clock is the one off the cluster's", func() bool {
				return near(a.ClockOffset(), 0) && near(b.ClockOffset(), off)
			})
			for _, u := range units(30) {
				for _, m := range []*member{a, b} {
					if owner, _ := m.Owner(u); owner != "right" {
						t.Fatalf("unit %s: %s sees %s own it, want the member whose clock is right", u, m.Name(), owner)
					}
				}
				if a.Rank(u) != 0 || b.Rank(u) != 1 {
					t.Fatalf("unit %s: ranks %d and %d, want 0 for the right clock and 1 for the wrong", u, a.Rank(u), b.Rank(u))
				}
			}
		})
	}
}
