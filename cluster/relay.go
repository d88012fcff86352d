package cluster

import "sync"

// Gossip hands each queued delta to a few random members, a few times:
// with memberlist's queue alone, a delta in a burst can miss a member
// (measured: 12 of a burst of 100 deltas missed one of two members). So each member
// relays a delta the first time it merges one, as Alertmanager's states
// do, and a delta spreads by epidemic instead of from its sender alone.
// seen remembers recent deltas so that none is relayed twice. Oversized
// deltas are not relayed: their sender sent them to every member; nor is
// any delta in a cluster of two, where the only other member sent it.
// Relays alone still missed a member now and then (3 of 2000 deliveries
// in a burst); where every gossip round reaches every member, the sender
// also sends each delta to each member at once (queueDirect, channel.go).

// seenSize is how many recent deltas a member remembers; a delta that
// comes back after that many others is relayed once more, no harm done.
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
