package cluster

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

func membersNamed(names ...string) []Member {
	out := make([]Member, len(names))
	for i, n := range names {
		out[i] = Member{Name: n}
	}
	slices.SortFunc(out, func(a, b Member) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Pod-like names, as a StatefulSet or Deployment gives them.
var podNames = []string{
	"onchain-exporter-0-3f9a1c2e", "onchain-exporter-1-b07d44a1", "onchain-exporter-2-5e6c0f93",
	"onchain-exporter-3-c1d2e3f4", "onchain-exporter-4-0a0b0c0d",
}

func ownersOf(ms []Member, n int) map[string]string {
	out := map[string]string{}
	for i := 0; i < n; i++ {
		u := fmt.Sprintf("indicator/rsi/%d", i)
		out[u], _ = rank(ms, ms[0].Name, u)
	}
	return out
}

// A member that joins takes about 1/n of the units, each from one member;
// no unit moves between the others.
func TestRendezvousJoinMovesOnlyToTheNewMember(t *testing.T) {
	const n = 10000
	before := ownersOf(membersNamed(podNames[:3]...), n)
	after := ownersOf(membersNamed(podNames[:4]...), n)
	moved := 0
	for u, o := range after {
		if o == before[u] {
			continue
		}
		moved++
		if o != podNames[3] {
			t.Fatalf("unit %s moved from %s to %s, not to the new member", u, before[u], o)
		}
	}
	if moved < n*20/100 || moved > n*30/100 {
		t.Errorf("%d of %d units moved to the 4th member; want about a quarter", moved, n)
	}
	t.Logf("a 4th member takes %d of %d units", moved, n)
}

// Units spread evenly and each unit's ranks are a permutation.
func TestRendezvousBalanceAndRanks(t *testing.T) {
	const n = 10000
	ms := membersNamed(podNames...)
	count := map[string]int{}
	for i := 0; i < n; i++ {
		u := fmt.Sprintf("consensus/%d", i)
		owner, _ := rank(ms, podNames[0], u)
		count[owner]++
		var ranks []int
		for _, m := range ms {
			o, r := rank(ms, m.Name, u)
			if o != owner {
				t.Fatalf("unit %s: owner %s for %s, %s for %s", u, o, m.Name, owner, podNames[0])
			}
			ranks = append(ranks, r)
		}
		slices.Sort(ranks)
		if !slices.Equal(ranks, []int{0, 1, 2, 3, 4}) {
			t.Fatalf("unit %s: ranks %v", u, ranks)
		}
	}
	for _, name := range podNames {
		if c := count[name]; c < n/5*85/100 || c > n/5*115/100 {
			t.Errorf("%s owns %d of %d units; want %d ± 15%%", name, c, n, n/5)
		}
	}
	t.Logf("5 members own %v of %d units", count, n)
}

func TestRankEdgeCases(t *testing.T) {
	if o, r := rank(nil, "me", "u"); o != "me" || r != 0 {
		t.Errorf("no members: %q, %d", o, r)
	}
	ms := membersNamed("a", "b")
	if _, r := rank(ms, "stranger", "u"); r != 2 {
		t.Errorf("a member not in the list ranks %d, want after all 2", r)
	}
	if !ahead("a", 5, "b", 5) || ahead("b", 5, "a", 5) || !ahead("b", 6, "a", 5) {
		t.Error("ties do not go to the smaller name")
	}
}

// The engine asks for ranks on its hot path: no allocation.
func TestOwnerAllocatesNothing(t *testing.T) {
	p := &Peer{name: podNames[1]}
	ms := membersNamed(podNames...)
	p.serve(ms)
	if allocs := testing.AllocsPerRun(100, func() { p.Owner("data/price/BTC") }); allocs != 0 {
		t.Errorf("Owner allocates %v times", allocs)
	}
}

func BenchmarkOwner(b *testing.B) {
	p := &Peer{name: podNames[1]}
	ms := membersNamed(podNames[:3]...)
	p.serve(ms)
	for b.Loop() {
		p.Owner("data/price/BTC")
	}
}

// Ahead says which serving members rank before this one for a unit: the
// owner and every member of a smaller rank; not this member, not a later
// one, not one that does not serve.
func TestAheadFollowsTheRanks(t *testing.T) {
	names := podNames[:3]
	ms := membersNamed(names...)
	unit := "data /v1/btc/market-data/open-interest hour"
	for _, self := range names {
		p := &Peer{name: self}
		p.serve(ms)
		_, mine := p.Owner(unit)
		for _, other := range names {
			q := &Peer{name: other}
			q.serve(ms)
			_, theirs := q.Owner(unit)
			if got, want := p.Ahead(other, unit), theirs < mine; got != want {
				t.Errorf("%s (rank %d): Ahead(%s, rank %d) = %v, want %v", self, mine, other, theirs, got, want)
			}
		}
		if p.Ahead("not-serving", unit) {
			t.Errorf("%s: a member that does not serve ranks ahead", self)
		}
	}
	var nilPeer *Peer
	if nilPeer.Ahead(names[0], unit) {
		t.Error("alone, a member ranks ahead")
	}
}

// serve publishes ms as the members that serve and own, as publishLocked
// does when their heartbeats came and their clocks agree.
func (p *Peer) serve(ms []Member) {
	p.serving.Store(&ms)
	p.standing.Store(&standing{owners: ms})
}

// A member whose clock is far off ranks after every other, whichever unit:
// the owner is among the others, and the ranks of the others keep their
// order; far members rank among themselves by weight.
func TestFarMembersRankLast(t *testing.T) {
	st := &standing{owners: membersNamed(podNames[:3]...), far: membersNamed(podNames[3:5]...)}
	for _, u := range units(50) {
		owner, _ := rank(st.owners, podNames[0], u)
		for i, self := range podNames[:5] {
			o, r := rankIn(st, self, u)
			if o != owner {
				t.Fatalf("%s: %s sees %s own %s, want %s", u, self, o, u, owner)
			}
			if i >= 3 && r < 3 {
				t.Fatalf("%s: far member %s ranks %d, before an owner", u, self, r)
			}
			if _, inOwners := rank(st.owners, self, u); i < 3 && r != inOwners {
				t.Fatalf("%s: %s ranks %d, among the owners %d", u, self, r, inOwners)
			}
		}
	}
}

// Clocks a peer gives near the end of time (or before its beginning)
// make it far off, never an overflow that brings it near.
func TestFarClockSaturates(t *testing.T) {
	p := &Peer{name: "a", heard: map[string]heard{
		"late":  {offset: math.MaxInt64},
		"early": {offset: math.MinInt64},
		"near":  {offset: time.Second},
	}}
	serving := membersNamed("a", "early", "late", "near")
	for _, offset := range []time.Duration{math.MaxInt64, math.MinInt64, math.MaxInt64 / 2, math.MinInt64 / 2, time.Hour, 0} {
		far := p.farLocked(serving, offset)
		if !far["late"] || !far["early"] {
			t.Errorf("offset %s: far %v; want late and early far off", offset, far)
		}
	}
}
