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
	left := n.State == memberlist.StateLeft
	p.mu.Lock()
	delete(p.live, n.Name)
	// A member that failed is asked to rejoin at its address until
	// ReconnectTimeout: a restarted container keeps its address. One that
	// left said goodbye: its address may soon be another pod's, even
	// another cluster's, and is not knocked at.
	if !left {
		p.failed[n.Name] = failedPeer{address: n.Address(), since: time.Now()}
	}
	p.publishLocked()
	p.mu.Unlock()
	p.m.leaves.Inc()
	what := "member failed"
	if left {
		what = "member left"
	}
	level.Info(p.logger).Log("msg", what, "member", n.Name, "address", n.Address())
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

// admits reports whether the member name may be live: it is, or fewer
// than MaxMembers are (n is how many the caller adds).
func (p *Peer) admits(name string, n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.live[name]; ok || name == p.name {
		return true
	}
	return len(p.live)+n <= p.cfg.MaxMembers
}

// admitsAll reports whether the live members and names together are at
// most MaxMembers.
func (p *Peer) admitsAll(names []string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := map[string]bool{p.name: true}
	for n := range p.live {
		all[n] = true
	}
	for _, n := range names {
		all[n] = true
	}
	return len(all) <= p.cfg.MaxMembers
}
