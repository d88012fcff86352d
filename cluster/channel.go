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
	// directQueue is how many deltas may wait to be sent to each member
	// at once; more go by gossip alone.
	directQueue = 4096
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
// times, and relayed by each member that merges it; in a cluster whose
// gossip rounds go to every member, also sent to each member at once:
// sendDirect), else over TCP to each member. It does not block; a delta
// that cannot be queued is dropped and counted, and the next push/pull
// repairs it. The member that broadcasts does not receive its own delta.
// A nil *Channel does nothing.
func (c *Channel) Broadcast(b []byte) {
	if c == nil {
		return
	}
	msg := encodeDelta(c.key, b)
	if len(msg) <= maxGossipMessage {
		c.p.seen.add(digest(msg)) // not relayed when it comes back
		c.p.queue.QueueBroadcast(broadcast(msg))
		c.p.queueDirect(msg)
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

// queueDirect hands a delta that gossip carries to sendDirect, when the
// other members are two to gossipNodes: each gossip round goes to all of
// them anyway, so a packet to each costs what a round costs. memberlist's
// queue counts a delta's transmissions, not the members they went to: in
// a burst (a first fill, a window's rows due together) each round hands
// different deltas to its targets, and a delta's few transmissions and
// its relays could all miss one member (measured: 3 to 8 of a burst of
// 300 deltas a packet each missed one member of four), which then never
// had the row until a push/pull or its own fallback call. With one other
// member every transmission goes to it; in a larger cluster relays spread
// the delta. A delta that finds the queue full goes by gossip alone.
func (p *Peer) queueDirect(msg []byte) {
	if n := len(*p.members.Load()) - 1; n < 2 || n > p.gossipNodes {
		return
	}
	select {
	case p.direct <- msg:
	default:
	}
}

// sendDirect sends each delta queueDirect queued to every other live
// member in one packet (best effort: gossip repeats it).
func (p *Peer) sendDirect() {
	defer p.wg.Done()
	for {
		select {
		case <-p.stop:
			return
		case msg := <-p.direct:
			for _, n := range p.others() {
				if err := p.ml.SendBestEffort(n, msg); err != nil {
					level.Debug(p.logger).Log("msg", "cannot send a delta", "member", n.Name, "err", err)
					continue
				}
				p.m.sentMsg(kindDeltaLabel, msg)
			}
		}
	}
}

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
					p.m.sentMsg(kindDeltaLabel, msg)
				}(n)
			}
			wg.Wait()
		}
	}
}
