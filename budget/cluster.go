package budget

import (
	"cmp"
	"fmt"
	"maps"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

// A cluster's members share one daily budget: each gossips its day's
// count, and every member counts the others' against the limit. A member
// that sees fewer members than the cluster had today spends at most its
// share: cut off, it cannot know what the others spend.
//
// A count is another member's word, bounded by what it can have spent:
// only serving members count (SetMembers), each at most its own bucket's
// allowance since the day began and the day's limit, all together at most
// what the most members serving at once today can have spent, at most
// maxPeerNames members a day. What is past a bound is cut and counted by
// reason (PeerRefusals). The others' calls never drain this member's own
// bucket: nobody's word holds its calls.

// Reasons a peer's count is refused or cut, the keys of PeerRefusals.
const (
	// PeerNegative is a count below zero, refused.
	PeerNegative = "negative"
	// PeerPace is a count past what a member's bucket allowed since the
	// day began, cut to it.
	PeerPace = "pace"
	// PeerLimit is a count past the day's limit, cut to it.
	PeerLimit = "limit"
	// PeerMembers is a count of a member past maxPeerNames, refused.
	PeerMembers = "members"
	// PeerNotServing is a count from a name that is not a serving member
	// (SetMembers), refused: anyone can gossip a name.
	PeerNotServing = "not_serving"
)

// peerReasons are the reasons, in the order the metrics list them.
var peerReasons = []string{PeerNegative, PeerPace, PeerLimit, PeerMembers, PeerNotServing}

const (
	// maxPeerNames is the most members a day counts: past a day of
	// rolling updates' replacements, few enough that a flood costs nothing.
	maxPeerNames = 64
	// unlimitedPeerRate and unlimitedPeerBurst bound a member's count
	// without a daily limit (where counts only show in daily_calls_used).
	unlimitedPeerRate  = 1000
	unlimitedPeerBurst = 1000
)

// peerCount is another member's count of a UTC day as far as believed.
type peerCount struct {
	day  time.Time
	used int
}

// ObservePeer takes another member's gossiped count of the UTC day of day
// and returns how many calls it added to the cluster's count, within the
// bounds above. A refusal is logged (SetLogger).
func (b *Budget) ObservePeer(member string, day time.Time, used int, now time.Time) int {
	b.mu.Lock()
	added, refused := b.observePeerLocked(member, day, used, now)
	logger := b.logger
	b.mu.Unlock()
	for _, r := range refused {
		r.log(logger)
	}
	return added
}

// observePeerLocked is ObservePeer under the lock, returning the
// refusals to log after it is released.
func (b *Budget) observePeerLocked(member string, day time.Time, used int, now time.Time) (int, []refusal) {
	l := b.advance(now)
	var refused []refusal
	refuse := func(reason string, kept int) {
		if r, ok := b.refusePeer(member, reason, used, kept, l, now); ok {
			refused = append(refused, r)
		}
	}
	if used < 0 {
		refuse(PeerNegative, 0)
		return 0, refused
	}
	if !b.serving[member] {
		refuse(PeerNotServing, 0)
		return 0, refused
	}
	d := midnight(day)
	if !d.Equal(b.day) {
		return 0, nil // another day's count: nothing of today's
	}
	prev, ok := b.peers[member]
	if !ok || !prev.day.Equal(d) {
		// Yesterday's count stays beside today's until a day later: it
		// tells who took a share (ownCap).
		yesterday := b.day.Add(-24 * time.Hour)
		today := 0
		maps.DeleteFunc(b.peers, func(_ string, p peerCount) bool {
			if p.day.Equal(b.day) {
				today++
			}
			return p.day.Before(yesterday)
		})
		if today >= maxPeerNames {
			refuse(PeerMembers, 0)
			return 0, refused
		}
		prev = peerCount{day: d}
	}
	if used <= prev.used {
		return 0, nil
	}
	accepted := used
	if most := b.dayAllowance(l, now); accepted > most {
		accepted = most
		refuse(PeerPace, accepted)
	}
	if cap := peerCap(l); accepted > cap {
		accepted = cap
		refuse(PeerLimit, accepted)
	}
	if accepted <= prev.used {
		return 0, refused
	}
	before := b.peersUsed(l, now)
	b.peers[member] = peerCount{day: d, used: accepted}
	return max(b.peersUsed(l, now)-before, 0), refused
}

// dayAllowance is the most calls one member can have made since the day
// began: a bucket's room and refill under l (every member runs the same
// budget), or the unlimited rate; the lock is held.
func (b *Budget) dayAllowance(l int, now time.Time) int {
	s := max(now.Add(b.shift(now)).Sub(b.day).Seconds(), 0)
	r, room := float64(unlimitedPeerRate), float64(unlimitedPeerBurst)
	if l > 0 {
		r, room = rate(l), burst(l)
	}
	return int(min(room+r*s, MaxDailyCalls))
}

// peerCap is the most one member may count on a day: the limit, or
// MaxDailyCalls, so that no sum overflows.
func peerCap(l int) int { return min(cmp.Or(l, MaxDailyCalls), MaxDailyCalls) }

// refusePeer counts a refusal and says whether to log it: not within
// refusalLogEvery of the last, nor past maxLoggedRefusals members and
// reasons (a flood is counted, not logged); the lock is held.
func (b *Budget) refusePeer(member, reason string, used, kept, l int, now time.Time) (refusal, bool) {
	if b.peerRefused == nil {
		b.peerRefused = map[string]int{}
	}
	b.peerRefused[reason]++
	if b.logger == nil {
		return refusal{}, false
	}
	k := refusalKey{member, reason}
	if at, ok := b.logged[k]; ok && now.Sub(at) < refusalLogEvery && !now.Before(at) {
		return refusal{}, false
	}
	if len(b.logged) >= maxLoggedRefusals {
		maps.DeleteFunc(b.logged, func(_ refusalKey, at time.Time) bool {
			return now.Sub(at) >= refusalLogEvery || now.Before(at)
		})
		if len(b.logged) >= maxLoggedRefusals {
			return refusal{}, false
		}
	}
	b.logged[k] = now
	return refusal{member: member, reason: reason, used: used, kept: kept, limit: l}, true
}

// SetLogger sets where the peers' counts refused or cut are logged, at
// warn, once an hour per member and reason at most; nil logs none.
func (b *Budget) SetLogger(logger log.Logger) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.logger = logger
}

const (
	// refusalLogEvery: a rogue member gossips a count with every row.
	refusalLogEvery = time.Hour
	// maxLoggedRefusals bounds the members and reasons remembered.
	maxLoggedRefusals = 4 * maxPeerNames
	// maxShownName bounds a member's name in a log line: it came from
	// gossip.
	maxShownName = 64
)

// refusalKey is a member and a reason its count was refused for.
type refusalKey struct{ member, reason string }

// refusal is one refusal to log.
type refusal struct {
	member, reason    string
	used, kept, limit int
}

func (r refusal) log(logger log.Logger) {
	why := ""
	switch r.reason {
	case PeerNegative:
		why = "a count below zero is no count; refused"
	case PeerMembers:
		why = fmt.Sprintf("more than %d members counted calls today; refused", maxPeerNames)
	case PeerPace:
		why = fmt.Sprintf("more calls than a member's pace lets it make since its last count; cut to %d", r.kept)
	case PeerLimit:
		why = fmt.Sprintf("more calls than the day's limit of %d; cut to it", r.limit)
	}
	name := r.member
	if len(name) > maxShownName {
		name = name[:maxShownName] + "..."
	}
	level.Warn(logger).Log("msg", "a member's count of the day's calls was refused or cut (logged once an hour per member and reason; onchain_exporter_cluster_peer_counts_refused_total counts each)",
		"member", name, "reason", r.reason, "count", r.used, "why", why)
}

// PeerRefusals returns how many peers' counts were refused or cut since
// the budget was made, by reason.
func (b *Budget) PeerRefusals() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.peerRefused)
}

// SetMembers says which other members serve now, whose counts are taken,
// and the most members, this one included, that served at once today:
// seeing fewer, this member is capped at its share (ownCap). None and 0
// is a member alone.
func (b *Budget) SetMembers(others []string, most int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.serving = make(map[string]bool, len(others))
	for _, m := range others {
		b.serving[m] = true
	}
	b.seen, b.of = len(others)+1, most
}

// peersUsed is the other members' calls today, at most what they can
// have spent; the lock is held and the day advanced.
func (b *Budget) peersUsed(l int, now time.Time) int {
	n := 0
	for _, p := range b.peers {
		if p.day.Equal(b.day) {
			n += p.used
		}
	}
	others := max(b.of, b.seen) - 1
	if n == 0 || others <= 0 {
		return 0
	}
	return min(n, others*b.dayAllowance(l, now))
}

// ownCap is the most calls this member may make today: the limit, or
// its share while it sees fewer members than the cluster had (at least
// one call); the lock is held. Members that made no calls today or
// yesterday take no share.
func (b *Budget) ownCap(l int) int {
	of := b.of
	if n := 1 + b.peersCalling(); of > n {
		of = n
	}
	if l == 0 || of <= 1 || b.seen >= of || b.seen <= 0 {
		return l
	}
	return max(1, l*b.seen/of)
}

// peersCalling is how many other members counted calls today or
// yesterday; the lock is held.
func (b *Budget) peersCalling() int {
	yesterday := b.day.Add(-24 * time.Hour)
	n := 0
	for _, p := range b.peers {
		if !p.day.Before(yesterday) && p.used > 0 {
			n++
		}
	}
	return n
}

// Own is the calls this member made on now's UTC day.
func (b *Budget) Own(now time.Time) int {
	_, used := b.OwnDay(now)
	return used
}

// DayStart is when the budget's day began, on the clock of now: its UTC
// midnight on the day's clock (SetClock).
func (b *Budget) DayStart(now time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	shift := b.shift(now)
	return midnight(now.Add(shift)).Add(-shift)
}

// OwnDay is the UTC day the budget counts at now and the calls this
// member made on it: what it gossips to the others' ObservePeer.
func (b *Budget) OwnDay(now time.Time) (day time.Time, used int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	return b.day, b.used
}
