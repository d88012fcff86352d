package budget

import "time"

// A cluster's members share one daily budget (package cluster). Each
// gossips the calls it counted today; every member's budget counts the
// others' calls against the limit and takes them out of its pacing
// bucket, so that daily_budget and its pace hold for the cluster while
// its members can talk. A member that can see fewer members than the
// cluster had today spends at most its share of that membership: cut off,
// it cannot know what the others spend.

// peerCount is what one other member said it counted on a UTC day.
type peerCount struct {
	day  time.Time
	used int
}

// ObservePeer takes the count of calls another member made on the UTC day
// of day, as it gossiped it, and returns how many calls it added since
// the last count. They are taken out of this member's bucket too (which
// may then wait to refill).
func (b *Budget) ObservePeer(member string, day time.Time, used int, now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.advance(now)
	d := midnight(day)
	if !d.Equal(b.day) || used < 0 {
		return 0 // another day's count: nothing of today's
	}
	if b.peers == nil {
		b.peers = map[string]peerCount{}
	}
	prev := b.peers[member]
	if prev.day.Equal(d) && used <= prev.used {
		return 0
	}
	added := used
	if prev.day.Equal(d) {
		added -= prev.used
	}
	b.peers[member] = peerCount{day: d, used: used}
	if l > 0 {
		b.tokens = max(b.tokens-float64(added), -burst(l))
	}
	return added
}

// SetShare says how many members this one can see (seen) out of the most
// the cluster had today (of): below it, its own calls are capped at that
// share of the limit. 1 of 1 (or 0 of 0) lifts the cap.
func (b *Budget) SetShare(seen, of int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen, b.of = seen, of
}

// peersUsed is the calls the other members counted today; the lock is
// held and the day advanced.
func (b *Budget) peersUsed() int {
	n := 0
	for _, p := range b.peers {
		if p.day.Equal(b.day) {
			n += p.used
		}
	}
	return n
}

// ownCap is the most calls this member may make today on its own: the
// limit, or its share of it while it sees fewer members than the cluster
// had (at least one call); the lock is held.
func (b *Budget) ownCap(l int) int {
	if l == 0 || b.of <= 1 || b.seen >= b.of || b.seen <= 0 {
		return l
	}
	return max(1, l*b.seen/b.of)
}

// Own is the number of calls this member made on now's UTC day (Used
// adds the other members' in a cluster).
func (b *Budget) Own(now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	return b.used
}
