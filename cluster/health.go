package cluster

import (
	"slices"
	"strings"
	"time"
)

// MemberHealth is what this member knows of one member, for the
// operator's page.
type MemberHealth struct {
	Name       string
	Address    string
	Self       bool
	Serving    bool          // units are owned among it (Members)
	Heard      time.Time     // its last heartbeat, by this clock; zero: none
	Offset     time.Duration // its clock less this one's, delay included
	SameConfig bool          // its last heartbeat carried this digest
	Failed     time.Time     // since when, for a failed member still asked to rejoin
}

// Health returns the live members and the failed ones still asked to
// rejoin, sorted by name; a nil *Peer returns nil.
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
