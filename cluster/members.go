package cluster

import (
	"sort"
	"time"

	"github.com/go-kit/log/level"
	"github.com/hashicorp/memberlist"
)

// Member is one live member of the cluster.
type Member struct {
	Name    string
	Address string // IP:port of its gossip
}

// Members returns the live members, this one included, sorted by name.
// Suspected members count until they are declared failed. A nil *Peer
// returns nil.
func (p *Peer) Members() []Member {
	if p == nil {
		return nil
	}
	return append([]Member(nil), *p.members.Load()...)
}

// Self returns this member. A nil *Peer returns the zero Member.
func (p *Peer) Self() Member {
	if p == nil {
		return Member{}
	}
	n := p.ml.LocalNode()
	return Member{Name: n.Name, Address: n.Address()}
}

// Name returns this member's name; "" for a nil *Peer.
func (p *Peer) Name() string {
	if p == nil {
		return ""
	}
	return p.name
}

// memberJoined and memberLeft keep live, failed and the published members.
// memberlist calls them with its own lock held: they must not call it.
func (p *Peer) memberJoined(n *memberlist.Node) {
	m := Member{Name: n.Name, Address: n.Address()}
	p.mu.Lock()
	_, known := p.live[n.Name]
	p.live[n.Name] = m
	delete(p.failed, n.Name)
	p.publishLocked()
	p.mu.Unlock()
	if known {
		return
	}
	p.m.joins.Inc()
	if n.Name != p.name {
		level.Info(p.logger).Log("msg", "member joined", "member", n.Name, "address", m.Address)
	}
}

func (p *Peer) memberLeft(n *memberlist.Node) {
	if n.Name == p.name {
		return // this member's own Leave
	}
	p.mu.Lock()
	delete(p.live, n.Name)
	// memberlist does not say here whether it left or failed: retry both,
	// as Alertmanager does; a member that left for good refuses quickly.
	p.failed[n.Name] = failedPeer{address: n.Address(), since: time.Now()}
	p.publishLocked()
	p.mu.Unlock()
	p.m.leaves.Inc()
	level.Info(p.logger).Log("msg", "member left or failed", "member", n.Name, "address", n.Address())
}

func (p *Peer) publishLocked() {
	ms := make([]Member, 0, len(p.live))
	for _, m := range p.live {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	p.members.Store(&ms)
	next := make(chan struct{})
	close(*p.changed.Swap(&next))
}

// Changed returns a channel closed at the next change of the live
// members: a unit's owner and ranks may have changed, and a plan made on
// them may be made again. Take a new channel after each change. A nil
// *Peer returns a nil channel, which never fires.
func (p *Peer) Changed() <-chan struct{} {
	if p == nil {
		return nil
	}
	return *p.changed.Load()
}
