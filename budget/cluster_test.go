package budget

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestClusterBudget: the calls the other members gossip count against the
// day's limit, not against this member's bucket; a member that sees fewer
// members than there were spends at most its share.
func TestClusterBudget(t *testing.T) {
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	b := New(960, now) // 40 an hour, a bucket of 10
	b.SetMembers([]string{"b"}, 2)
	for i := 0; i < 5; i++ {
		if ok, _ := b.Take(now); !ok {
			t.Fatalf("call %d refused with a full bucket", i+1)
		}
	}
	b.ObservePeer("b", now, 5, now) // the other member spent its own burst's half
	if got := b.Used(now); got != 10 {
		t.Fatalf("Used = %d, want the cluster's 10", got)
	}
	if got := b.Own(now); got != 5 {
		t.Fatalf("Own = %d, want this member's 5", got)
	}
	for i := 0; i < 5; i++ {
		if ok, _ := b.Take(now); !ok {
			t.Fatalf("call %d refused: the other member's calls drained this member's bucket", i+6)
		}
	}
	if ok, _ := b.Take(now); ok {
		t.Fatal("a call past this member's own burst was allowed")
	}
	b.ObservePeer("b", now, 5, now) // the same count again: nothing more
	b.ObservePeer("b", now.Add(-24*time.Hour), 100, now)
	if got := b.Used(now); got != 15 {
		t.Fatalf("Used = %d after a repeated and a stale count, want 15", got)
	}
	// The other member called all day as fast as its bucket let it; this
	// one calls on until the cluster's daily_budget is spent, not past it.
	later := now.Add(22 * time.Hour)
	if added := b.ObservePeer("b", later, 890, later); added != 885 {
		t.Fatalf("the other member's day at its pace: %d calls added, want 885", added)
	}
	for at := later; at.Before(now.Add(24 * time.Hour)); at = at.Add(time.Minute) {
		b.Take(at)
	}
	if got := b.Used(now.Add(24*time.Hour - time.Second)); got != 960 {
		t.Fatalf("Used = %d at the day's end, want the cluster's daily_budget, 960", got)
	}

	// Cut off: one of two members (the other made calls today), it
	// spends at most half the limit.
	midnight := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	c := New(96, midnight)
	c.SetMembers([]string{"b"}, 2)
	c.ObservePeer("b", midnight, 1, midnight)
	c.SetMembers(nil, 2)
	n := 0
	for at := midnight; at.Before(midnight.Add(24 * time.Hour)); at = at.Add(time.Minute) {
		if ok, _ := c.Take(at); ok {
			n++
		}
	}
	if n != 48 {
		t.Fatalf("a member cut off from one other made %d calls in a day of 96, want its share 48", n)
	}
}

// A peer's count is bounded by what a member can do: a count of the whole
// budget at noon, counts of 2^62, a flood of member names, a negative
// count, members that joined and never called. Each is cut or refused and
// counted by reason, and this member goes on calling.
func TestPeerCountBounds(t *testing.T) {
	noon := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	const limit = 20000

	b := New(limit, noon)
	b.SetMembers([]string{"rogue"}, 2)
	added := b.ObservePeer("rogue", noon, limit, noon)
	// Since 00:00 a member can have made its burst and half a day's pace.
	if most := int(burst(limit) + rate(limit)*12*3600); added > most || added < most-1 {
		t.Errorf("a whole budget at noon added %d calls, want at most the pace since 00:00, %d", added, most)
	}
	if ok, _ := b.Take(noon.Add(time.Hour)); !ok {
		t.Error("after one member's count of the whole budget, this member calls no more")
	}
	if got := b.PeerRefusals()[PeerPace]; got != 1 {
		t.Errorf("refusals for pace: %d, want 1", got)
	}
	// Two minutes later the same member says it made 5000 more: two
	// minutes of pace, no more (a count each second adds no burst).
	before := b.Used(noon.Add(2 * time.Minute))
	for i := range 120 {
		at := noon.Add(time.Duration(i+1) * time.Second)
		b.ObservePeer("rogue", noon, limit+5000, at)
	}
	if grew := b.Used(noon.Add(2*time.Minute)) - before; grew > int(rate(limit)*120)+1 {
		t.Errorf("a count grew by %d in two minutes; a member's bucket allows %v", grew, rate(limit)*120)
	}

	// Counts of 2^62 from two members, with and without a limit: no
	// overflow, never past the limit from one member.
	for _, l := range []int{limit, 0} {
		c := New(l, noon)
		c.SetMembers([]string{"x", "y"}, 3)
		c.ObservePeer("x", noon, 1<<62, noon)
		c.ObservePeer("y", noon, 1<<62, noon)
		c.ObservePeer("x", noon, 1<<62, noon.Add(11*time.Hour))
		got := c.Used(noon.Add(11 * time.Hour))
		if got < 0 || got > 2*peerCap(l) {
			t.Errorf("limit %d: Used = %d after counts of 2^62", l, got)
		}
		if l > 0 && got > 2*l {
			t.Errorf("limit %d: one member counted past the limit: Used %d", l, got)
		}
	}

	// A flood of member names: those that do not serve count nothing;
	// of those that do, at most maxPeerNames.
	f := New(limit, noon)
	for i := 0; i < 1000; i++ {
		f.ObservePeer(fmt.Sprintf("m%d", i), noon, 1, noon)
	}
	if got := f.Used(noon); got != 0 || f.PeerRefusals()[PeerNotServing] != 1000 {
		t.Errorf("1000 names that do not serve: Used %d, %d refused as not serving", got, f.PeerRefusals()[PeerNotServing])
	}
	var names []string
	for i := 0; i < 1000; i++ {
		names = append(names, fmt.Sprintf("m%d", i))
	}
	f.SetMembers(names, 1001)
	for _, m := range names {
		f.ObservePeer(m, noon, 1, noon)
	}
	if got := f.Used(noon); got != maxPeerNames {
		t.Errorf("1000 names of one call each: Used %d, want %d", got, maxPeerNames)
	}
	if got := f.PeerRefusals()[PeerMembers]; got != 1000-maxPeerNames {
		t.Errorf("refusals for members: %d, want %d", got, 1000-maxPeerNames)
	}
	if f.ObservePeer("m1", noon, -5, noon) != 0 || f.PeerRefusals()[PeerNegative] != 1 {
		t.Error("a negative count not refused and counted")
	}

	// 200 members joined and left without a call; one other calls. Seeing
	// the two that call, this member is not held to 2 in 202.
	s := New(7000, noon)
	s.SetMembers([]string{"b"}, 202)
	s.ObservePeer("b", noon, 10, noon)
	calls := 0
	for at := noon; at.Before(noon.Add(6 * time.Hour)); at = at.Add(time.Minute) {
		if ok, _ := s.Take(at); ok {
			calls++
		}
	}
	if calls < 300 {
		t.Errorf("with 2 calling members of 202 seen today: %d calls in 6 h, want its pace (about 1750/6 h)", calls)
	}
}

// The refusals show as a counter by API and reason, from the first one on.
func TestPeerRefusalMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	noon := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	b := New(20000, noon)
	b.SetMembers([]string{"rogue"}, 2)
	m.Observe("data", b, noon)
	if n := testutil.CollectAndCount(m.peerRefused); n != 0 {
		t.Errorf("%d refusal series before any refusal", n)
	}
	b.ObservePeer("rogue", noon, 20000, noon)
	b.ObservePeer("rogue", noon, -1, noon)
	m.Observe("data", b, noon)
	m.Observe("data", b, noon) // nothing new: nothing added
	want := `
# HELP onchain_exporter_cluster_peer_counts_refused_total Other members' daily call counts refused or cut, by reason: negative, pace (more than a member's bucket allowed since the day began), limit (past the day's limit from one member), members (more member names than a day holds), not_serving (a name that is not a serving member).
# TYPE onchain_exporter_cluster_peer_counts_refused_total counter
onchain_exporter_cluster_peer_counts_refused_total{api="data",reason="negative"} 1
onchain_exporter_cluster_peer_counts_refused_total{api="data",reason="pace"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "onchain_exporter_cluster_peer_counts_refused_total"); err != nil {
		t.Error(err)
	}
	m.Forget("data")
	if n := testutil.CollectAndCount(m.peerRefused); n != 0 {
		t.Errorf("%d refusal series after Forget", n)
	}
}
