package cluster

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-kit/log/level"
	"github.com/hashicorp/memberlist"
)

const (
	// maxGossipPacket is the UDP payload, as Alertmanager's: under a
	// 1500-byte Ethernet MTU.
	maxGossipPacket = 1400
	// maxGossipMessage is the largest delta gossiped, larger ones go by
	// TCP: half a packet leaves room for framing, label and encryption.
	maxGossipMessage = maxGossipPacket / 2
	// Queue bounds; past them deltas are dropped (push/pull repairs them).
	oversizedQueue = 256
	maxQueued      = 4096 // pruned every pruneInterval
	pruneInterval  = time.Minute
	directQueue    = 4096
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

// AddState registers s under key, the same on every member and unique
// here (twice panics), before Join, and returns the Channel of its
// deltas. Gossip may be in the clear: s must never hold a credential. A
// nil *Peer returns a nil *Channel, whose Broadcast does nothing.
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

// Broadcast sends a delta to every other member: by gossip when it fits
// a packet (and directly in a small cluster, queueDirect), else over TCP.
// It does not block; a delta that cannot be queued is dropped and
// counted, and the next push/pull repairs it.
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

// queueDirect hands a gossiped delta to sendDirect when the other members
// are two to gossipNodes, so a packet to each costs what a gossip round
// costs. memberlist counts a delta's transmissions, not who got them: in
// a burst, its transmissions and relays could all miss one member
// (measured: 3 to 8 of 300 deltas missed one member of four). With one
// other member every transmission goes to it; in a larger cluster relays
// spread the delta.
func (p *Peer) queueDirect(msg []byte) {
	if n := len(*p.members.Load()) - 1; n < 2 || n > p.gossipNodes {
		return
	}
	select {
	case p.direct <- msg:
	default:
	}
}

// sendDirect sends each delta queueDirect queued to every other member.
func (p *Peer) sendDirect() {
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

// sendOversized sends each oversized delta to every other member over TCP,
// one at a time so that a burst opens at most one connection per member,
// and prunes the gossip queue.
func (p *Peer) sendOversized() {
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
				wg.Go(func() {
					if err := p.ml.SendReliable(n, msg); err != nil {
						p.m.oversized.WithLabelValues("failed").Inc()
						level.Debug(p.logger).Log("msg", "cannot send an oversized delta", "member", n.Name, "err", err)
						return
					}
					p.m.oversized.WithLabelValues("sent").Inc()
					p.m.sentMsg(kindDeltaLabel, msg)
				})
			}
			wg.Wait()
		}
	}
}
