package cluster

import (
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log/level"
	"github.com/hashicorp/memberlist"
)

// Member is one live member of the cluster.
type Member struct {
	Name    string
	Address string // IP:port of its gossip
}

// Members returns the members that serve (heartbeat.go), this one
// included, sorted by name: units are owned and a budget's share counted
// among them. A nil *Peer returns nil.
func (p *Peer) Members() []Member {
	if p == nil {
		return nil
	}
	return append([]Member(nil), *p.serving.Load()...)
}

// others returns the other live members as nodes of their own:
// memberlist changes its own under its lock while a sender reads them.
func (p *Peer) others() []*memberlist.Node {
	var out []*memberlist.Node
	for _, m := range *p.members.Load() {
		if m.Name == p.name {
			continue
		}
		host, port, err := net.SplitHostPort(m.Address)
		ip := net.ParseIP(host)
		n, perr := strconv.ParseUint(port, 10, 16)
		if err != nil || ip == nil || perr != nil {
			continue
		}
		out = append(out, &memberlist.Node{Name: m.Name, Addr: ip, Port: uint16(n)})
	}
	return out
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

// memberJoined and memberLeft keep live, failed and the published
// members. memberlist calls them with its lock held: they must not call it.
func (p *Peer) memberJoined(n *memberlist.Node) {
	m := Member{Name: n.Name, Address: n.Address()}
	p.mu.Lock()
	if string(n.Meta) == metaLeaving {
		p.goodbye[n.Name] = true
	} else {
		delete(p.goodbye, n.Name) // back, or another under its name
	}
	_, known := p.live[n.Name]
	p.live[n.Name] = m
	delete(p.failed, n.Name)
	p.publishLocked(time.Now())
	p.mu.Unlock()
	if known {
		return
	}
	p.beatNow() // the newcomer hears at once that this member serves
	p.m.joins.Inc()
	if n.Name != p.name {
		level.Info(p.logger).Log("msg", "member joined", "member", n.Name, "address", m.Address)
	}
}

func (p *Peer) memberLeft(n *memberlist.Node) {
	if n.Name == p.name {
		return // this member's own Leave
	}
	// memberlist's Node does not tell a leave from a death: the
	// member's metadata does.
	p.mu.Lock()
	left := p.goodbye[n.Name] || string(n.Meta) == metaLeaving
	delete(p.goodbye, n.Name)
	delete(p.live, n.Name)
	delete(p.heard, n.Name)
	// A failed member is asked to rejoin (a restarted container keeps
	// its address); one that left is not: its address may soon be
	// another pod's.
	if !left {
		p.failed[n.Name] = failedPeer{address: n.Address(), since: time.Now()}
	}
	p.publishLocked(time.Now())
	p.mu.Unlock()
	p.m.leaves.Inc()
	what := "member failed"
	if left {
		what = "member left"
	}
	level.Info(p.logger).Log("msg", what, "member", n.Name, "address", n.Address())
}

// publishLocked publishes the live and serving members at now, their
// standing and the clock offset, and fires Changed when the lists
// changed; the lock is held.
func (p *Peer) publishLocked(now time.Time) {
	ms := slices.SortedFunc(maps.Values(p.live), func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	serving := p.servingLocked(ms, now)
	offset := p.clockOffsetLocked(serving)
	p.offset.Store(int64(offset))
	far := p.farLocked(serving, offset)
	var st standing
	for _, m := range serving {
		if far[m.Name] {
			st.far = append(st.far, m)
		} else {
			st.owners = append(st.owners, m)
		}
	}
	if far[p.name] != p.selfFar {
		p.selfFar = far[p.name]
		if p.selfFar {
			level.Warn(p.logger).Log("msg", "this member's clock is off the cluster's: it owns no unit and counts the budget on the cluster's day until its clock is set right (NTP)",
				"offset", offset.Round(time.Millisecond), "limit", farClock)
		} else {
			level.Info(p.logger).Log("msg", "this member's clock agrees with the cluster's again: it owns units", "offset", offset.Round(time.Millisecond))
		}
	}
	old := p.standing.Load()
	if slices.Equal(ms, *p.members.Load()) && slices.Equal(serving, *p.serving.Load()) &&
		slices.Equal(st.owners, old.owners) && slices.Equal(st.far, old.far) {
		return
	}
	p.members.Store(&ms)
	p.serving.Store(&serving)
	p.standing.Store(&st)
	next := make(chan struct{})
	close(*p.changed.Swap(&next))
}

// Changed returns a channel closed at the next change of the live,
// serving or owning members, when owners and ranks may have changed.
// Take a new one after each change. A nil *Peer's never fires.
func (p *Peer) Changed() <-chan struct{} {
	if p == nil {
		return nil
	}
	return *p.changed.Load()
}

// admits reports whether the member name at addr may be live. At most
// MaxMembers are, and the addresses --cluster.peer resolves to (the
// operator's word, where names are the peer's) keep their slots: another
// address is taken in only while the live members and the expected
// addresses not yet live stay within MaxMembers; an expected one always,
// up to MaxMembers plus the expected in all. So rogues cannot fill the
// slots and lock out a member the operator named.
func (p *Peer) admits(name, addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.live[name]; ok || name == p.name {
		return true
	}
	held := make(map[string]bool, len(p.live))
	for _, m := range p.live {
		held[m.Address] = true
	}
	if p.expected[addr] && !held[addr] {
		return len(p.live) < p.cfg.MaxMembers+len(p.expected)
	}
	kept := 0 // expected addresses no live member holds yet
	for a := range p.expected {
		if !held[a] {
			kept++
		}
	}
	return len(p.live)+1+kept <= p.cfg.MaxMembers
}

// setExpected keeps the addresses --cluster.peer resolved to but this
// member's: those whose slots are kept.
func (p *Peer) setExpected(addrs []string) {
	self := p.Self().Address // before p.mu: memberlist locks, then calls memberJoined
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expected = make(map[string]bool, len(addrs))
	for _, a := range addrs {
		if a != self {
			p.expected[a] = true
		}
	}
}
