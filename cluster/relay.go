package cluster

import "sync"

// With memberlist's queue alone a delta in a burst can miss a member
// (measured: 12 of 100), so each member relays a delta the first time it
// merges one, as Alertmanager's states do, and it spreads by epidemic.
// Oversized deltas (sent to every member) and deltas in a cluster of two
// are not relayed.

// seenSize is how many recent deltas a member remembers; one that comes
// back later is relayed once more, no harm done.
const seenSize = 4096

// seenSet is a fixed-size set of message digests, oldest forgotten first.
type seenSet struct {
	mu   sync.Mutex
	ring [seenSize]uint64
	next int
	set  map[uint64]struct{}
}

// add records d and reports whether it was not already there.
func (s *seenSet) add(d uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = make(map[uint64]struct{}, seenSize)
	}
	if _, ok := s.set[d]; ok {
		return false
	}
	if len(s.set) == seenSize {
		delete(s.set, s.ring[s.next])
	}
	s.ring[s.next] = d
	s.next = (s.next + 1) % seenSize
	s.set[d] = struct{}{}
	return true
}

// digest is FNV-1a over b, mixed as weight is.
func digest(b []byte) uint64 { return mix(fnv1a(fnvOffset, b)) }
