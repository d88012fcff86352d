package cluster

import (
	"slices"
	"time"
)

// Ownership is rendezvous (highest random weight) hashing: each live
// member scores each unit with weight(member, unit) and the member with
// the highest score owns the unit; ranks follow the scores downward. Every
// member computes the same ranks from the same member names, with no vote
// and no message; when a member leaves, only the units it owned move (to
// their rank-1 member), and a member that joins takes about 1/n of the
// units, each from one member. Changing weight is a protocol change:
// members of two versions would disagree, which costs fallback calls
// (never a gap) until all run the same one.

// FNV-1a's constants, then murmur3's finalizer: FNV alone spreads names
// that differ in one trailing character poorly.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// weight hashes member, a byte no UTF-8 text holds (0xff), then unit.
func weight(member, unit string) uint64 {
	return mix(fnv1a(fnv1a(fnv1a(fnvOffset, member), "\xff"), unit))
}

// fnv1a adds b to the FNV-1a hash h.
func fnv1a[T string | []byte](h uint64, b T) uint64 {
	for i := 0; i < len(b); i++ {
		h ^= uint64(b[i])
		h *= fnvPrime
	}
	return h
}

// mix is murmur3's 64-bit finalizer.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// ahead reports whether member a ranks before member b for a unit whose
// weights for them are wa and wb; ties go to the smaller name.
func ahead(a string, wa uint64, b string, wb uint64) bool {
	return wa > wb || (wa == wb && a < b)
}

// standing is the serving members (Members) split by their clocks:
// owners, among whom units are owned, and far, members whose clock is
// more than farClock off the cluster's (heartbeat.go), who own nothing
// and rank after every owner. Each list is sorted by name.
type standing struct {
	owners, far []Member
}

// rank returns the owner of unit among members and the rank of self:
// how many members rank before it. A self that is not among members
// ranks after all of them; no members at all makes self the owner.
func rank(members []Member, self, unit string) (owner string, r int) {
	if len(members) == 0 {
		return self, 0
	}
	ws := weight(self, unit)
	var best uint64
	for i, m := range members {
		w := weight(m.Name, unit)
		if i == 0 || ahead(m.Name, w, owner, best) {
			owner, best = m.Name, w
		}
		if m.Name != self && ahead(m.Name, w, self, ws) {
			r++
		}
	}
	return owner, r
}

// rankIn is rank over a standing: the owner among the owners; self, when
// far, after every owner and then by weight among the far members.
func rankIn(st *standing, self, unit string) (owner string, r int) {
	owner, r = rank(st.owners, self, unit)
	if slices.ContainsFunc(st.far, func(m Member) bool { return m.Name == self }) {
		_, behind := rank(st.far, self, unit)
		r = len(st.owners) + behind
		if len(st.owners) == 0 {
			owner, r = rank(st.far, self, unit)
		}
	}
	return owner, r
}

// Owner returns the member that owns unit among the members that serve
// (Members, heartbeat.go) and whose clock agrees with the cluster's, and
// the rank of this member for it: 0 is the owner, r > 0 means r members
// come before this one (a member whose clock is far off ranks after
// every other). A member of rank r acts in the owner's place when what
// the owner should have sent has not arrived r × PeerTimeout after it was
// due. All members that see the same serving members agree; while their
// views differ (a join, a failure or a heartbeat not yet known everywhere,
// a partition, two configuration digests during a rolling change) two
// members may both rank 0, and the unit is fetched twice, never zero
// times.
//
// A nil *Peer (cluster mode off) owns every unit: it returns "", 0.
func (p *Peer) Owner(unit string) (owner string, rank int) {
	if p == nil {
		return "", 0
	}
	return p.rank(unit)
}

// Ahead says whether member, one that serves, ranks before this member
// for unit: its wait for the unit's owner ends before this one's, so a
// row it fetched as a fallback is as good as the owner's here.
func (p *Peer) Ahead(member, unit string) bool {
	if p == nil || member == p.name {
		return false
	}
	st := p.standing.Load()
	_, mine := rankIn(st, p.name, unit)
	for _, list := range [][]Member{st.owners, st.far} {
		for _, m := range list {
			if m.Name == member {
				_, theirs := rankIn(st, member, unit)
				return theirs < mine
			}
		}
	}
	return false
}

// Rank returns this member's rank for unit, as Owner does.
func (p *Peer) Rank(unit string) int {
	_, r := p.Owner(unit)
	return r
}

// FallbackDelay is how long after a unit's refresh was due this member
// waits before it fetches the unit itself: Rank × PeerTimeout, so 0 for
// the owner, and, when this member's clock is far off the cluster's
// (farClock), that much more: ahead, its refreshes come due early by as
// much; behind, the rows it takes are dated after its now, and its plans
// from them come due at times its clock does not read right. A nil
// *Peer waits 0.
func (p *Peer) FallbackDelay(unit string) time.Duration {
	if p == nil {
		return 0
	}
	r := p.Rank(unit)
	d := time.Duration(r) * p.cfg.PeerTimeout
	if off := p.ClockOffset().Abs(); r > 0 && off > farClock {
		d += off
	}
	return d
}

// PeerTimeout is the configured wait between one rank and the next.
func (p *Peer) PeerTimeout() time.Duration {
	if p == nil {
		return 0
	}
	return p.cfg.PeerTimeout
}

func (p *Peer) rank(unit string) (string, int) {
	return rankIn(p.standing.Load(), p.name, unit)
}
