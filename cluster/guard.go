package cluster

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log/level"
	"github.com/hashicorp/memberlist"
)

// The guard stands between memberlist and the network: it refuses another
// cluster's packets and streams, and bounds what the gossip port can make
// this member hold (memberlist's own limits, 20 MiB of state and 128
// push/pulls at once, stay above these).
const (
	// maxStreams is how many incoming streams are open at once; their
	// bytes are bounded apart.
	maxStreams = 64
	// streamBudget is how many full-sized streams' bytes all streams may
	// hold at once.
	streamBudget = 2
	// streamOverhead is what a stream may carry beside the states: the
	// member list (about 100 bytes a member), framing, encryption.
	streamOverhead   = 1 << 20
	peekTimeout      = 5 * time.Second // for a stream's label
	maxLoggedSources = 64              // refusals logged once each, then counted
)

// Refusal reasons, the label "reason" of messages_refused_total.
const (
	refusedClusterName = "cluster_name" // another cluster's label
	refusedStreams     = "streams"      // too many streams, or bytes, at once
	refusedStreamSize  = "stream_size"  // a stream past its bound
	refusedStateSize   = "state_size"   // a full state past --cluster.max-state-bytes
	refusedDeltaSize   = "delta_size"   // a delta past its bound
	refusedMembers     = "members"      // a member past --cluster.max-members
	refusedCompressed  = "compressed"   // compressed gossip in the clear
)

// memberlist's message types that matter here: a compressed message
// expands up to 40 MiB whatever its size on the wire, and a CRC header
// (4 bytes) may come before it in a packet.
const (
	compressMsg = 9
	hasCrcMsg   = 12
)

// compressed reports whether a message in the clear is compressed: this
// cluster's members do not compress (peer.go), so it comes from elsewhere
// and is refused before memberlist expands it. (Encrypted, only a holder
// of the key could send one.)
func compressed(b []byte) bool {
	if len(b) > 5 && b[0] == hasCrcMsg {
		b = b[5:]
	}
	return len(b) > 0 && b[0] == compressMsg
}

// guardTransport filters what the wrapped transport receives.
type guardTransport struct {
	memberlist.NodeAwareTransport
	p        *Peer
	label    string
	maxBytes int64
	inflight atomic.Int64 // bytes read by streams not yet closed
	packets  chan *memberlist.Packet
	streams  chan net.Conn
	slots    chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

func newGuard(t memberlist.NodeAwareTransport, p *Peer) *guardTransport {
	g := &guardTransport{
		NodeAwareTransport: t,
		p:                  p,
		label:              p.cfg.label(),
		maxBytes:           int64(p.cfg.MaxStateBytes) + streamOverhead,
		packets:            make(chan *memberlist.Packet),
		streams:            make(chan net.Conn),
		slots:              make(chan struct{}, maxStreams),
		stop:               make(chan struct{}),
	}
	g.wg.Go(g.filterPackets)
	g.wg.Go(g.filterStreams)
	return g
}

// PacketCh implements memberlist.Transport: the packets of this cluster.
func (g *guardTransport) PacketCh() <-chan *memberlist.Packet { return g.packets }

// StreamCh implements memberlist.Transport: the streams of this cluster.
func (g *guardTransport) StreamCh() <-chan net.Conn { return g.streams }

// Shutdown implements memberlist.Transport. The wrapped transport stops
// first, while the filters still drain it.
func (g *guardTransport) Shutdown() error {
	err := g.NodeAwareTransport.Shutdown()
	g.stopOnce.Do(func() { close(g.stop) })
	g.wg.Wait()
	return err
}

// DialAddressTimeout implements memberlist.NodeAwareTransport: the
// answer on a stream this member opens is bounded too.
func (g *guardTransport) DialAddressTimeout(addr memberlist.Address, timeout time.Duration) (net.Conn, error) {
	conn, err := g.NodeAwareTransport.DialAddressTimeout(addr, timeout)
	if err != nil {
		return nil, err
	}
	return g.bounded(conn, addr.Addr), nil
}

// DialTimeout implements memberlist.Transport, as memberlist's
// NetTransport does: DialAddressTimeout without a name.
func (g *guardTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return g.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

func (g *guardTransport) bounded(conn net.Conn, from string) *boundedConn {
	return &boundedConn{Conn: conn, g: g, left: g.maxBytes, free: func() {}, from: from}
}

func (g *guardTransport) filterPackets() {
	in := g.NodeAwareTransport.PacketCh()
	for {
		select {
		case <-g.stop:
			return
		case pkt := <-in:
			body, label, err := memberlist.RemoveLabelHeaderFromPacket(pkt.Buf)
			if err == nil && label != g.label {
				g.p.refuse(refusedClusterName, pkt.From.String(), "label", label)
				continue
			}
			if err == nil && g.p.keyring == nil && compressed(body) {
				g.p.refuse(refusedCompressed, pkt.From.String())
				continue
			}
			select {
			case g.packets <- pkt:
			case <-g.stop:
				return
			}
		}
	}
}

func (g *guardTransport) filterStreams() {
	in := g.NodeAwareTransport.StreamCh()
	for {
		select {
		case <-g.stop:
			return
		case conn := <-in:
			select {
			case g.slots <- struct{}{}:
			default:
				g.p.refuse(refusedStreams, conn.RemoteAddr().String(), "limit", maxStreams)
				_ = conn.Close()
				continue
			}
			g.wg.Go(func() { g.checkStream(conn) })
		}
	}
}

// checkStream hands a stream of this cluster's label on, bounded; its
// slot is freed when memberlist closes it.
func (g *guardTransport) checkStream(conn net.Conn) {
	from := conn.RemoteAddr().String()
	free := func() { <-g.slots }
	drop := func() {
		_ = conn.Close()
		free()
	}
	_ = conn.SetReadDeadline(time.Now().Add(peekTimeout))
	peeked, label, err := peekLabel(conn)
	if err != nil || label != g.label {
		if err == nil {
			g.p.refuse(refusedClusterName, from, "label", label)
		}
		drop()
		return
	}
	if g.p.keyring == nil {
		// The message type, in the clear: a compressed stream is refused.
		var typ [1]byte
		if _, err := io.ReadFull(conn, typ[:]); err != nil || typ[0] == compressMsg {
			if err == nil {
				g.p.refuse(refusedCompressed, from)
			}
			drop()
			return
		}
		peeked = append(peeked, typ[0])
	}
	_ = conn.SetReadDeadline(time.Time{})
	bc := g.bounded(conn, from)
	bc.peeked, bc.free = peeked, free
	select {
	case g.streams <- bc:
	case <-g.stop:
		_ = bc.Close()
	}
}

// peekLabel reads a stream's label header (a byte 244, a length byte, the
// label; "" without one) and returns the bytes read, to be read again.
func peekLabel(conn net.Conn) (peeked []byte, label string, err error) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(conn, head[:1]); err != nil {
		return nil, "", err
	}
	const hasLabel = 244 // memberlist's hasLabelMsg
	if head[0] != hasLabel {
		return head[:1], "", nil
	}
	if _, err := io.ReadFull(conn, head[1:2]); err != nil {
		return nil, "", err
	}
	l := make([]byte, head[1])
	if _, err := io.ReadFull(conn, l); err != nil {
		return nil, "", err
	}
	return append(head, l...), string(l), nil
}

var (
	errStreamTooLong = errors.New("stream longer than the cluster's bound")
	errStreamsFull   = errors.New("streams hold the cluster's bound of bytes")
)

// boundedConn replays the peeked bytes, then reads at most left bytes,
// each counted in the guard's budget until the stream closes.
type boundedConn struct {
	net.Conn
	g         *guardTransport
	from      string
	peeked    []byte
	left      int64
	held      int64 // bytes read, counted in g.inflight
	free      func()
	closeOnce sync.Once
	refused   bool
}

func (c *boundedConn) Read(b []byte) (int, error) {
	if len(c.peeked) > 0 {
		n := copy(b, c.peeked)
		c.peeked = c.peeked[n:]
		return n, nil
	}
	if c.left <= 0 {
		c.refuseOnce(refusedStreamSize, "limit_bytes", c.g.maxBytes)
		return 0, errStreamTooLong
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	want := int64(len(b))
	if c.g.inflight.Add(want) > streamBudget*c.g.maxBytes {
		c.g.inflight.Add(-want)
		c.refuseOnce(refusedStreams, "limit_bytes", streamBudget*c.g.maxBytes)
		return 0, errStreamsFull
	}
	n, err := c.Conn.Read(b)
	c.g.inflight.Add(int64(n) - want)
	c.held += int64(n)
	c.left -= int64(n)
	return n, err
}

func (c *boundedConn) refuseOnce(reason string, kv ...any) {
	if !c.refused {
		c.refused = true
		c.g.p.refuse(reason, c.from, kv...)
	}
}

func (c *boundedConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		c.g.inflight.Add(-c.held)
		c.free()
	})
	return err
}

// refuse counts a refusal and logs it once per reason and host, for the
// first maxLoggedSources: a flood cannot fill the log or the memory.
func (p *Peer) refuse(reason, from string, kv ...any) {
	p.m.refused.WithLabelValues(reason).Inc()
	host := from
	if h, _, err := net.SplitHostPort(from); err == nil {
		host = h // a stream comes from a new port each time
	}
	key := reason + " " + host
	p.refusedMu.Lock()
	_, logged := p.refusedLogged[key]
	first := !logged && len(p.refusedLogged) < maxLoggedSources
	if first {
		p.refusedLogged[key] = struct{}{}
	}
	p.refusedMu.Unlock()
	if first {
		level.Warn(p.logger).Log(append([]any{"msg", refusalMessage[reason], "reason", reason, "from", from}, kv...)...)
	}
}

// refusalMessage is the log line of each reason; its keys are every reason.
var refusalMessage = map[string]string{
	refusedClusterName: "refused gossip from another cluster (--cluster.label differs); logged once per host",
	refusedStreams:     "refused a gossip stream: too many, or too many bytes, at once; logged once per host",
	refusedStreamSize:  "cut a gossip stream past its bound (--cluster.max-state-bytes); logged once per host",
	refusedStateSize:   "refused a peer's full state past --cluster.max-state-bytes; logged once per member",
	refusedDeltaSize:   "refused a delta past its bound; logged once per member",
	refusedMembers:     "refused a member past --cluster.max-members; logged once per member",
	refusedCompressed:  "refused compressed gossip in the clear (this cluster's members do not compress); logged once per host",
}
