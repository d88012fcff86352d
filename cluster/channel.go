package cluster

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-kit/log/level"
	"github.com/hashicorp/memberlist"
)

const (
	// maxGossipPacket is the UDP payload memberlist fills with gossip, as
	// Alertmanager sets it: under a 1500-byte Ethernet MTU.
	maxGossipPacket = 1400
	// maxGossipMessage is the largest delta sent by gossip; a larger one
	// goes to each member over TCP. Half a packet leaves room for
	// memberlist's framing, the label and encryption.
	maxGossipMessage = maxGossipPacket / 2
	// oversizedQueue is how many oversized deltas may wait; more are
	// dropped and counted (push/pull repairs them).
	oversizedQueue = 256
	// maxQueued is how many deltas may wait for gossip before the oldest
	// are pruned, checked every pruneInterval.
	maxQueued     = 4096
	pruneInterval = time.Minute
)

// State is a piece of replicated state: each member holds a copy and
// merges what the others send.
type State interface {
	// MarshalBinary returns the whole state, sent to a member that joins
	// and exchanged with one random member every push/pull interval.
	MarshalBinary() ([]byte, error)
	// Merge merges a peer's whole state or one of its deltas. It must be
	// idempotent and commutative, since gossip may deliver a delta twice,
	// out of order, or after a full state that already holds it. b is
	// valid only during the call. Merge runs on memberlist's goroutines:
	// it must not block, and it must not call the Peer.
	Merge(b []byte) error
}

// Channel sends one State's deltas to every other member.
type Channel struct {
	p   *Peer
	key string
}

// AddState registers s under key and returns the Channel its deltas are
// broadcast through; a message from a peer under key is merged into s.
// Register every State before Join. key must be the same on every member
// and unique here (a second registration of a key panics).
//
// Gossip carries exactly the bytes s marshals and broadcasts, to every
// member and, without --cluster.encryption-key-file, in the clear: s must
// never hold a credential (an API key, a token, a header that carries
// one). A nil *Peer returns a nil *Channel, whose Broadcast does nothing.
func (p *Peer) AddState(key string, s State) *Channel {
	if p == nil {
		return nil
	}
	p.statesMu.Lock()
	defer p.statesMu.Unlock()
	if _, dup := p.states[key]; dup {
		panic(fmt.Sprintf("cluster: state %q registered twice", key))
	}
	p.states[key] = s
	return &Channel{p: p, key: key}
}

// Broadcast sends a delta to every other member, at least once while they
// can be reached: by gossip when it fits a packet (retransmitted a few
// times, and relayed by each member that merges it), else over TCP to
// each member. It does not block; a delta that
// cannot be queued is dropped and counted, and the next push/pull repairs
// it. The member that broadcasts does not receive its own delta. A nil
// *Channel does nothing.
func (c *Channel) Broadcast(b []byte) {
	if c == nil {
		return
	}
	msg := encodeDelta(c.key, b)
	if len(msg) <= maxGossipMessage {
		c.p.seen.add(digest(msg)) // not relayed when it comes back
		c.p.queue.QueueBroadcast(broadcast(msg))
		return
	}
	select {
	case c.p.oversized <- msg:
	default:
		c.p.m.oversized.WithLabelValues("dropped").Inc()
		level.Warn(c.p.logger).Log("msg", "oversized delta dropped: too many waiting", "key", c.key, "bytes", len(msg))
	}
}

// broadcast is a queued delta; none replaces another.
type broadcast []byte

func (b broadcast) Message() []byte                       { return b }
func (b broadcast) Invalidates(memberlist.Broadcast) bool { return false }
func (b broadcast) Finished()                             {}

// sendOversized sends each oversized delta to every other live member over
// TCP, one delta at a time so that a burst opens at most one connection
// per member, and prunes the gossip queue every pruneInterval.
func (p *Peer) sendOversized() {
	defer p.wg.Done()
	t := time.NewTicker(pruneInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if n := p.queue.NumQueued(); n > maxQueued {
				p.queue.Prune(maxQueued)
				p.m.pruned.Add(float64(n - maxQueued))
				level.Warn(p.logger).Log("msg", "gossip queue pruned", "queued", n, "limit", maxQueued)
			}
		case msg := <-p.oversized:
			var wg sync.WaitGroup
			for _, n := range p.others() {
				wg.Add(1)
				go func(n *memberlist.Node) {
					defer wg.Done()
					if err := p.ml.SendReliable(n, msg); err != nil {
						p.m.oversized.WithLabelValues("failed").Inc()
						level.Debug(p.logger).Log("msg", "cannot send an oversized delta", "member", n.Name, "err", err)
						return
					}
					p.m.oversized.WithLabelValues("sent").Inc()
					p.m.sent.WithLabelValues(kindDeltaLabel).Inc()
					p.m.sentBytes.WithLabelValues(kindDeltaLabel).Add(float64(len(msg)))
				}(n)
			}
			wg.Wait()
		}
	}
}
