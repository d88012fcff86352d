package cluster

import (
	"slices"
	"time"
)

// Ownership is rendezvous hashing: the member with the highest
// weight(member, unit) owns the unit, ranks following the weights down.
// Every member computes the same ranks from the same names, with no vote;
// a member that leaves moves only its units, one that joins takes about
// 1/n. Changing weight is a protocol change: members of two versions
// disagree, which costs fallback calls (never a gap).

// FNV-1a, then murmur3's finalizer: FNV alone spreads names that differ
// in one trailing character poorly.
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

// standing is the serving members split by their clocks, each sorted by
// name: owners, and far (farClock off), who rank after every owner.
type standing struct {
	owners, far []Member
}

// rank returns the owner of unit among members and how many rank before
// self; no members at all makes self the owner.
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

// rankIn is rank over a standing: a far self ranks after every owner.
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

// Owner returns the owner of unit among the serving members whose clocks
// agree with the cluster's, and this member's rank for it (0: the owner):
// rank r acts in the owner's place r × PeerTimeout past the unit's due
// time. While views differ (a join, a failure, a partition, a rolling
// change) two members may both rank 0: twice, never zero times. A nil
// *Peer owns every unit: "", 0.
func (p *Peer) Owner(unit string) (owner string, rank int) {
	if p == nil {
		return "", 0
	}
	return rankIn(p.standing.Load(), p.name, unit)
}

// Ahead says whether serving member ranks before this member for unit:
// a row it fetched as a fallback is as good as the owner's here.
func (p *Peer) Ahead(member, unit string) bool {
	if p == nil || member == p.name {
		return false
	}
	st := p.standing.Load()
	is := func(m Member) bool { return m.Name == member }
	if !slices.ContainsFunc(st.owners, is) && !slices.ContainsFunc(st.far, is) {
		return false
	}
	_, mine := rankIn(st, p.name, unit)
	_, theirs := rankIn(st, member, unit)
	return theirs < mine
}

// Rank returns this member's rank for unit, as Owner does.
func (p *Peer) Rank(unit string) int {
	_, r := p.Owner(unit)
	return r
}

// FallbackDelay is how long past a unit's due time this member waits
// before it fetches it: Rank × PeerTimeout, plus its clock's offset when
// far off the cluster's, as its plans then come due off by as much.
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
