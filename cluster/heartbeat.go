package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/go-kit/log/level"
)

// Heartbeats say which members serve. Each member sends every other live
// member its name, configuration digest (SetConfigDigest) and clock,
// every heartbeat interval and at once when one joins. Units are owned
// (owner.go) among this member and those whose heartbeat of the same
// digest came lately: one that says nothing or runs another
// configuration owns nothing, and the others fetch what it would own,
// twice at worst, never zero times.
//
// The heartbeats' clocks give the cluster's clock, which is not a vote
// anyone can join: it is the median of the clocks of the members this one
// trusts (itself; every serving member when encrypted, else those at an
// address --cluster.peer resolves to), the earlier of the middle two for
// an even count, as a clock ahead costs calls where one behind costs
// staleness. A serving member more than farClock off it owns no unit and
// ranks after every other (FallbackDelay).

// A member serves for serveTimeout heartbeat intervals after its last
// heartbeat, at least minServeTimeout: lost packets or a pause of the
// process do not move its units, which would cost calls twice;
// memberlist declares a member that stops for good failed anyway.
const (
	serveTimeout    = 4
	minServeTimeout = 10 * time.Second
)

// farClock is how far a member's clock may be off the cluster's and the
// member still own units: NTP keeps milliseconds, the alert fires past
// 10 s; past a minute its rows look late or early and its plans come due
// at the wrong time.
const farClock = time.Minute

// maxDigestBytes bounds a configuration digest.
const maxDigestBytes = 128

// heard is the last heartbeat of a member.
type heard struct {
	digest string
	at     time.Time     // when it came, this member's clock
	offset time.Duration // its clock less this member's, as it came
	// warned is its digest last logged as another's, at warnedAt.
	warned   string
	warnedAt time.Time
}

// otherConfigLogEvery is how often another digest is logged again when it
// changes: a member that flips between files is not logged every beat.
const otherConfigLogEvery = 10 * time.Minute

// heartbeatInterval is a probe interval, at least five gossip intervals.
func (c Config) heartbeatInterval() time.Duration {
	return max(5*c.GossipInterval, c.ProbeInterval)
}

// SetConfigDigest sets the digest of this member's configuration, sent in
// its heartbeats; members own units among those of the same digest. A nil
// *Peer does nothing.
func (p *Peer) SetConfigDigest(d string) {
	if p == nil {
		return
	}
	if len(d) > maxDigestBytes {
		d = d[:maxDigestBytes]
	}
	p.mu.Lock()
	changed := p.digest != d
	p.digest = d
	p.publishLocked(time.Now())
	p.mu.Unlock()
	if changed {
		p.beatNow()
	}
}

// beatNow asks the heartbeat loop to send at once.
func (p *Peer) beatNow() {
	select {
	case p.beat <- struct{}{}:
	default:
	}
}

func encodeHeartbeat(name, digest string, now time.Time) []byte {
	b := make([]byte, 0, 2+2*binary.MaxVarintLen64+len(name)+len(digest)+8)
	b = append(b, formatVersion, kindHeartbeat)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = binary.AppendUvarint(b, uint64(len(digest)))
	b = append(b, digest...)
	return binary.BigEndian.AppendUint64(b, uint64(now.UnixNano()))
}

func decodeHeartbeat(b []byte) (name, digest string, sent time.Time, err error) {
	rest, err := header(b, kindHeartbeat)
	if err != nil {
		return "", "", time.Time{}, err
	}
	n, rest, err := field(rest)
	if err != nil || len(n) == 0 || len(n) > maxNameBytes {
		return "", "", time.Time{}, errors.New("bad member name")
	}
	d, rest, err := field(rest)
	if err != nil || len(d) > maxDigestBytes {
		return "", "", time.Time{}, errors.New("bad digest")
	}
	if len(rest) != 8 {
		return "", "", time.Time{}, fmt.Errorf("%d bytes of time, want 8", len(rest))
	}
	return string(n), string(d), time.Unix(0, int64(binary.BigEndian.Uint64(rest))), nil
}

// heartbeats sends this member's heartbeat every interval and when asked
// (beatNow), and lets members whose heartbeats stopped stop serving.
func (p *Peer) heartbeats() {
	t := time.NewTicker(p.cfg.heartbeatInterval())
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		case <-p.beat:
		}
		p.mu.Lock()
		msg := encodeHeartbeat(p.name, p.digest, p.cfg.Clock())
		p.publishLocked(time.Now())
		p.mu.Unlock()
		for _, n := range p.others() {
			if err := p.ml.SendBestEffort(n, msg); err != nil {
				level.Debug(p.logger).Log("msg", "cannot send a heartbeat", "member", n.Name, "err", err)
			}
		}
	}
}

// receiveHeartbeat records a live member's heartbeat; another name's is
// dropped, which bounds what is kept.
func (p *Peer) receiveHeartbeat(b []byte) {
	name, digest, sent, err := decodeHeartbeat(b)
	if err != nil {
		p.m.invalid.WithLabelValues(kindHeartbeatLabel).Inc()
		level.Debug(p.logger).Log("msg", "cannot decode a heartbeat", "err", err)
		return
	}
	now := time.Now()
	p.mu.Lock()
	if _, ok := p.live[name]; !ok || name == p.name {
		p.mu.Unlock()
		return
	}
	prev, had := p.heard[name]
	h := heard{digest: digest, at: now, offset: sent.Sub(p.cfg.Clock()), warned: prev.warned, warnedAt: prev.warnedAt}
	var line []any
	switch {
	case digest == "":
		// A member starting: it does not serve here, unlogged.
	case digest != p.digest && (!had || prev.warned != digest) && (prev.warnedAt.IsZero() || now.Sub(prev.warnedAt) >= otherConfigLogEvery):
		h.warned, h.warnedAt = digest, now
		line = []any{"msg", "a member runs another configuration: it owns no unit here, and each fetches what the other would own until both run the same file",
			"member", name, "its_digest", digest, "this_digest", p.digest}
	case digest == p.digest && prev.warned != "":
		h.warned = ""
		line = []any{"msg", "a member runs this member's configuration again", "member", name, "digest", digest}
	}
	p.heard[name] = h
	p.publishLocked(now)
	p.mu.Unlock()
	switch {
	case len(line) > 0 && h.warned != "":
		level.Warn(p.logger).Log(line...)
	case len(line) > 0:
		level.Info(p.logger).Log(line...)
	}
}

// servingLocked returns the live members that serve at now, sorted as
// live is; the lock is held.
func (p *Peer) servingLocked(live []Member, now time.Time) []Member {
	timeout := max(serveTimeout*p.cfg.heartbeatInterval(), minServeTimeout)
	out := make([]Member, 0, len(live))
	for _, m := range live {
		if m.Name == p.name {
			out = append(out, m)
			continue
		}
		if h, ok := p.heard[m.Name]; ok && h.digest == p.digest && now.Sub(h.at) <= timeout {
			out = append(out, m)
		}
	}
	return out
}

// ClockOffset is this member's clock less the cluster's: the provider's
// (Config.Reference), else the trusted members' median as heartbeats
// measured it, network delay included. Two members cannot tell which of
// them is wrong; the provider's answers can. A nil *Peer returns 0.
func (p *Peer) ClockOffset() time.Duration {
	if p == nil {
		return 0
	}
	return time.Duration(p.offset.Load())
}

// ClusterTime is t on the cluster's clock: t less ClockOffset. A budget's
// day taken from it turns at the same moment on every member.
func (p *Peer) ClusterTime(t time.Time) time.Time {
	return t.Add(-p.ClockOffset())
}

// trustedLocked says whether member m's clock counts in the cluster's:
// m holds the key, or is at an address --cluster.peer resolves to.
func (p *Peer) trustedLocked(m Member) bool {
	return p.keyring != nil || p.expected[m.Address]
}

// clockOffsetLocked computes ClockOffset from the heartbeats of the
// trusted serving members; the lock is held.
func (p *Peer) clockOffsetLocked(serving []Member) time.Duration {
	if p.cfg.Reference != nil {
		if off, ok := p.cfg.Reference(); ok {
			return off
		}
	}
	offsets := []time.Duration{0} // this member's own clock
	for _, m := range serving {
		if h, ok := p.heard[m.Name]; ok && m.Name != p.name && p.trustedLocked(m) {
			offsets = append(offsets, h.offset)
		}
	}
	slices.Sort(offsets)
	return -offsets[(len(offsets)-1)/2]
}

// farLocked says which serving members' clocks are more than farClock off
// the cluster's; the lock is held.
func (p *Peer) farLocked(serving []Member, offset time.Duration) map[string]bool {
	far := map[string]bool{}
	for _, m := range serving {
		off := offset.Seconds() // its clock less the cluster's, in seconds
		if h, ok := p.heard[m.Name]; ok && m.Name != p.name {
			off += h.offset.Seconds()
			if h.offset == math.MaxInt64 || h.offset == math.MinInt64 {
				off = math.Inf(1) // a clock a peer gave past what a Duration holds
			}
		}
		if math.Abs(off) > farClock.Seconds() {
			far[m.Name] = true
		}
	}
	return far
}
