package cluster

import (
	"errors"
	"maps"
	"slices"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/hashicorp/memberlist"
)

// delegate is what memberlist calls, kept off the Peer's exported methods.
type delegate struct{ p *Peer }

// NodeMeta implements memberlist.Delegate: metaLeaving once it leaves.
func (d *delegate) NodeMeta(limit int) []byte {
	if d.p.leaving.Load() && limit >= len(metaLeaving) {
		return []byte(metaLeaving)
	}
	return nil
}

// metaLeaving is the metadata of a member that leaves (Peer.Leave).
const metaLeaving = "leaving"

// NotifyMsg implements memberlist.Delegate: a heartbeat, or a delta by
// gossip or TCP; a gossiped delta is merged and relayed the first time
// only (relay.go).
func (d *delegate) NotifyMsg(b []byte) {
	p := d.p
	if len(b) >= 2 && b[0] == formatVersion && b[1] == kindHeartbeat {
		p.m.received.WithLabelValues(kindHeartbeatLabel).Inc()
		p.receiveHeartbeat(b)
		return
	}
	p.m.receivedMsg(kindDeltaLabel, b)
	if len(b) > p.cfg.MaxDeltaBytes {
		p.refuse(refusedDeltaSize, "", "bytes", len(b), "limit_bytes", p.cfg.MaxDeltaBytes)
		return
	}
	gossiped := len(b) <= maxGossipMessage
	if gossiped && !p.seen.add(digest(b)) {
		return
	}
	pt, err := decodeDelta(b)
	if err != nil {
		p.m.invalid.WithLabelValues(kindDeltaLabel).Inc()
		level.Debug(p.logger).Log("msg", "cannot decode a delta", "err", err)
		return
	}
	// memberlist may reuse b once NotifyMsg returns.
	pt.data = append([]byte(nil), pt.data...)
	if err := d.merge(pt); err != nil {
		p.m.invalid.WithLabelValues(kindDeltaLabel).Inc()
		logMerge(p, err).Log("msg", "cannot merge a delta", "key", pt.key, "err", err)
		return
	}
	// With two members the only one to relay to is the sender.
	if gossiped && len(*p.members.Load()) > 2 {
		p.m.relayed.Inc()
		p.queue.QueueBroadcast(broadcast(append([]byte(nil), b...)))
	}
}

// GetBroadcasts implements memberlist.Delegate: the deltas that fit.
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	msgs := d.p.queue.GetBroadcasts(overhead, limit)
	for _, m := range msgs {
		d.p.m.sentMsg(kindDeltaLabel, m)
	}
	return msgs
}

// LocalState implements memberlist.Delegate: every State for a push/pull;
// one that cannot marshal is left out and logged.
func (d *delegate) LocalState(bool) []byte {
	p := d.p
	p.statesMu.RLock()
	keys := slices.Sorted(maps.Keys(p.states))
	states := make([]State, len(keys))
	for i, k := range keys {
		states[i] = p.states[k]
	}
	p.statesMu.RUnlock()
	parts := make([]part, 0, len(keys))
	for i, s := range states {
		b, err := s.MarshalBinary()
		if err != nil {
			level.Warn(p.logger).Log("msg", "cannot marshal a state; the push/pull goes without it", "key", keys[i], "err", err)
			continue
		}
		parts = append(parts, part{key: keys[i], data: b})
	}
	b := encodeFull(parts)
	p.m.sentMsg(kindFullLabel, b)
	return b
}

// MergeRemoteState implements memberlist.Delegate: a peer's full state.
func (d *delegate) MergeRemoteState(b []byte, _ bool) {
	p := d.p
	p.m.receivedMsg(kindFullLabel, b)
	if len(b) > p.cfg.MaxStateBytes {
		p.refuse(refusedStateSize, "", "bytes", len(b), "limit_bytes", p.cfg.MaxStateBytes)
		return
	}
	parts, err := decodeFull(b)
	if err != nil {
		p.m.invalid.WithLabelValues(kindFullLabel).Inc()
		level.Warn(p.logger).Log("msg", "cannot decode a peer's full state", "err", err)
		return
	}
	for _, pt := range parts {
		pt.data = append([]byte(nil), pt.data...)
		if err := d.merge(pt); err != nil {
			p.m.invalid.WithLabelValues(kindFullLabel).Inc()
			logMerge(p, err).Log("msg", "cannot merge a peer's full state", "key", pt.key, "err", err)
		}
	}
}

// merge hands a part to the State registered under its key.
func (d *delegate) merge(pt part) error {
	d.p.statesMu.RLock()
	s, ok := d.p.states[pt.key]
	d.p.statesMu.RUnlock()
	if !ok {
		return errUnknownKey
	}
	return s.Merge(pt.data)
}

// logMerge logs a refused merge at warn, an unknown key (another
// version, or a push/pull before AddState) at debug.
func logMerge(p *Peer, err error) log.Logger {
	if errors.Is(err, errUnknownKey) {
		return level.Debug(p.logger)
	}
	return level.Warn(p.logger)
}

// NotifyJoin implements memberlist.EventDelegate.
func (d *delegate) NotifyJoin(n *memberlist.Node) { d.p.memberJoined(n) }

// NotifyLeave implements memberlist.EventDelegate.
func (d *delegate) NotifyLeave(n *memberlist.Node) { d.p.memberLeft(n) }

// NotifyUpdate implements memberlist.EventDelegate: an address change,
// or a member's goodbye.
func (d *delegate) NotifyUpdate(n *memberlist.Node) { d.p.memberJoined(n) }

// NotifyAlive implements memberlist.AliveDelegate: a new member needs a
// free slot (members.go).
func (d *delegate) NotifyAlive(n *memberlist.Node) error {
	if d.p.admits(n.Name, n.Address()) {
		return nil
	}
	d.p.refuse(refusedMembers, n.Address(), "member", n.Name, "limit", d.p.cfg.MaxMembers)
	return errTooManyMembers
}

// NotifyMerge implements memberlist.MergeDelegate: a merge none of whose
// members could be taken in is refused whole; otherwise each is judged
// by NotifyAlive, so a cluster with rogues past the slots can still be
// joined by a member whose slot is kept.
func (d *delegate) NotifyMerge(peers []*memberlist.Node) error {
	alive := 0
	for _, n := range peers {
		if n.State != memberlist.StateAlive && n.State != memberlist.StateSuspect {
			continue
		}
		alive++
		if d.p.admits(n.Name, n.Address()) {
			return nil
		}
	}
	if alive == 0 {
		return nil
	}
	d.p.refuse(refusedMembers, "", "members", alive, "limit", d.p.cfg.MaxMembers)
	return errTooManyMembers
}

var errTooManyMembers = errors.New("more members than --cluster.max-members")

// NotifyConflict implements memberlist.ConflictDelegate: two members
// claim one name; memberlist keeps the first.
func (d *delegate) NotifyConflict(existing, other *memberlist.Node) {
	level.Warn(d.p.logger).Log("msg", "two members claim one name; give each its own --cluster.peer-name", "name", existing.Name,
		"address", existing.Address(), "other_address", other.Address())
}
