package cluster

import (
	"slices"
	"strings"
	"time"
)

// MemberHealth is what this member knows of one member of the cluster, for
// the operator's page: whether it serves and, for another member, its
// last heartbeat, its clock and whether it runs this member's
// configuration.
type MemberHealth struct {
	Name    string
	Address string
	Self    bool
	// Serving: units are owned among it (Members).
	Serving bool
	// Heard is when its last heartbeat came, by this member's clock;
	// zero when none came (or it is this member).
	Heard time.Time
	// Offset is its clock less this member's, as its last heartbeat
	// measured it, network delay included.
	Offset time.Duration
	// SameConfig says its last heartbeat carried this member's
	// configuration digest (SetConfigDigest); false when none came.
	SameConfig bool
	// Failed is set for a member that failed or left, asked to rejoin
	// until --cluster.reconnect-timeout: since when.
	Failed time.Time
}

// Health returns the live members, this one included, and the failed
// ones still asked to rejoin, sorted by name. It takes the member lists'
// lock for a copy; a nil *Peer returns nil.
func (p *Peer) Health() []MemberHealth {
	if p == nil {
		return nil
	}
	serving := map[string]bool{}
	for _, m := range *p.serving.Load() {
		serving[m.Name] = true
	}
	p.mu.Lock()
	out := make([]MemberHealth, 0, len(p.live)+len(p.failed))
	for name, m := range p.live {
		h := MemberHealth{Name: name, Address: m.Address, Self: name == p.name, Serving: serving[name]}
		if hb, ok := p.heard[name]; ok && !h.Self {
			h.Heard, h.Offset, h.SameConfig = hb.at, hb.offset, hb.digest == p.digest
		}
		out = append(out, h)
	}
	for name, f := range p.failed {
		if _, live := p.live[name]; !live {
			out = append(out, MemberHealth{Name: name, Address: f.address, Failed: f.since})
		}
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b MemberHealth) int { return strings.Compare(a.Name, b.Name) })
	return out
}
