package cluster

import (
	"context"
	"fmt"
	stdlog "log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/hashicorp/memberlist"
	"github.com/prometheus/client_golang/prometheus"
)

// Peer is this process's membership of the cluster. A nil *Peer is
// cluster mode off: a cluster of one.
type Peer struct {
	cfg    Config // defaults filled
	name   string
	logger log.Logger
	m      *metrics
	ml     *memberlist.Memberlist
	queue  *memberlist.TransmitLimitedQueue
	lookup lookupFunc

	// members, serving and standing are published on every change,
	// sorted by name, and read without a lock.
	members atomic.Pointer[[]Member]
	changed atomic.Pointer[chan struct{}] // closed and replaced with members

	mu     sync.Mutex // guards live, failed, heard, digest and expected
	live   map[string]Member
	failed map[string]failedPeer
	heard  map[string]heard // last heartbeat of each live member
	// goodbye are the live members leaving (not failing); leaving is
	// this member's.
	goodbye  map[string]bool
	leaving  atomic.Bool
	digest   string
	expected map[string]bool // addresses whose slots are kept (members.go)

	// offset is ClockOffset in nanoseconds; selfFar (guarded by mu) says
	// this member's clock is far off the cluster's.
	serving  atomic.Pointer[[]Member]
	standing atomic.Pointer[standing]
	offset   atomic.Int64
	selfFar  bool
	beat     chan struct{} // beatNow

	statesMu sync.RWMutex
	states   map[string]State

	refusedMu     sync.Mutex
	refusedLogged map[string]struct{} // guard.go

	keyring *memberlist.Keyring // nil in the clear
	keysSum [32]byte            // of the keys last installed

	seen        seenSet // recent deltas, relayed once
	oversized   chan []byte
	direct      chan []byte // queueDirect
	gossipNodes int         // members a gossip round goes to
	stop        chan struct{}
	stopOnce    sync.Once
	joinOnce    sync.Once
	joining     atomic.Int32 // joins under way
	wg          sync.WaitGroup
	ready       chan struct{}
	readyOnce   sync.Once
}

// failedPeer is a failed member, asked to rejoin until ReconnectTimeout.
type failedPeer struct {
	address string
	since   time.Time
}

// Create starts this member, which listens and answers but joins nobody
// until Join; register every State in between. With cluster mode off it
// returns a nil *Peer and no error. reg may be nil.
func Create(cfg Config, logger log.Logger, reg prometheus.Registerer) (*Peer, error) {
	return newPeer(cfg, logger, reg, nil)
}

// wrapTransport lets a test put itself between memberlist and the network.
type wrapTransport func(memberlist.NodeAwareTransport) memberlist.NodeAwareTransport

func newPeer(cfg Config, logger log.Logger, reg prometheus.Registerer, wrap wrapTransport) (*Peer, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = log.NewNopLogger()
	}
	p := &Peer{
		cfg:           cfg,
		logger:        log.With(logger, "component", "cluster"),
		m:             newMetrics(reg),
		lookup:        net.DefaultResolver.LookupHost,
		live:          map[string]Member{},
		failed:        map[string]failedPeer{},
		goodbye:       map[string]bool{},
		heard:         map[string]heard{},
		beat:          make(chan struct{}, 1),
		states:        map[string]State{},
		oversized:     make(chan []byte, oversizedQueue),
		direct:        make(chan []byte, directQueue),
		refusedLogged: map[string]struct{}{},
		stop:          make(chan struct{}),
		ready:         make(chan struct{}),
	}
	p.members.Store(&[]Member{})
	p.serving.Store(&[]Member{})
	p.standing.Store(&standing{})
	changed := make(chan struct{})
	p.changed.Store(&changed)
	name, saved, err := memberName(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster member name: %w", err)
	}
	p.name = name
	if cfg.Name == "" && cfg.NameFile != "" && !saved {
		level.Warn(p.logger).Log("msg", "cannot keep the member name in the storage directory; a restart will be a new member", "file", cfg.NameFile)
	}
	// More in a larger cluster; at least memberlist's LAN default.
	p.gossipNodes = max(len(cfg.Peers)/2, 3)
	p.queue = &memberlist.TransmitLimitedQueue{
		NumNodes: func() int { return len(*p.members.Load()) },
		// 4 × ⌈log10(n+1)⌉ sends, memberlist's own figure. 3, as
		// Alertmanager's, lost about 3 in 100 deltas of a burst even
		// with relays; 4 lost 3 in 2000.
		RetransmitMult: 4,
	}

	mc := memberlist.DefaultLANConfig()
	mc.Name = p.name
	host, port, _ := splitAddress(cfg.ListenAddress, true) // validated
	if host == "" {
		host = "0.0.0.0"
	}
	mc.BindAddr, mc.BindPort = host, port
	if cfg.AdvertiseAddress != "" {
		host, port, _ := splitAddress(cfg.AdvertiseAddress, false) // validated
		mc.AdvertiseAddr, mc.AdvertisePort = host, port
	}
	d := &delegate{p}
	mc.Delegate, mc.Events, mc.Conflict, mc.Alive, mc.Merge = d, d, d, d, d
	mc.GossipInterval = cfg.GossipInterval
	mc.GossipNodes = p.gossipNodes
	mc.PushPullInterval = cfg.PushPullInterval
	mc.ProbeTimeout = cfg.ProbeTimeout
	mc.ProbeInterval = cfg.ProbeInterval
	mc.UDPBufferSize = maxGossipPacket
	// No compression: a compressed message expands to up to 40 MiB, past
	// every bound of guard.go; what moves is small, and encrypted anyway.
	mc.EnableCompression = false
	mc.Label = cfg.label()
	mc.Logger = stdlog.New(newLogWriter(p.logger), "", 0)
	if cfg.KeyFile != "" {
		keys, err := readKeys(cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--cluster.encryption-key-file: %w", err)
		}
		if p.keyring, err = memberlist.NewKeyring(keys[1:], keys[0]); err != nil {
			return nil, fmt.Errorf("--cluster.encryption-key-file: %w", err)
		}
		mc.Keyring = p.keyring
		p.keysSum = keysSum(keys)
	}
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{
		BindAddrs: []string{mc.BindAddr}, BindPort: mc.BindPort, Logger: mc.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if mc.BindPort == 0 {
		mc.BindPort = nt.GetAutoBindPort()
	}
	if cfg.AdvertiseAddress == "" {
		mc.AdvertisePort = mc.BindPort // not memberlist's default, 7946
	}
	var t memberlist.NodeAwareTransport = nt
	if wrap != nil {
		t = wrap(t)
	}
	guard := newGuard(t, p)
	mc.Transport = guard
	ml, err := memberlist.Create(mc)
	if err != nil {
		_ = guard.Shutdown()
		return nil, fmt.Errorf("cluster: %w", err)
	}
	p.ml = ml
	p.registerGauges(reg)
	p.wg.Go(p.sendOversized)
	p.wg.Go(p.sendDirect)
	p.wg.Go(p.heartbeats)
	level.Info(p.logger).Log("msg", "cluster member started", "name", p.name, "address", p.Self().Address,
		"cluster", cfg.ClusterName, "encrypted", p.keyring != nil, "peers", strings.Join(cfg.Peers, ","))
	if p.keyring == nil {
		level.Warn(p.logger).Log("msg", "gossip is in the clear: anyone who reaches the gossip port can read it, join and change what every member serves; set --cluster.encryption-key-file (docs/operations.md)",
			"listen_address", cfg.ListenAddress)
	}
	return p, nil
}

// Settle waits until the number of live members stays the same for three
// polls ten gossip intervals apart, or ctx ends, or SettleTimeout passes,
// then makes Ready true. Acting before, a member may fetch what a peer it
// has not heard of owns: a double call, never a missed one.
func (p *Peer) Settle(ctx context.Context) {
	if p == nil {
		return
	}
	defer p.readyOnce.Do(func() { close(p.ready) })
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, p.cfg.SettleTimeout)
	defer cancel()
	t := time.NewTicker(10 * p.cfg.GossipInterval)
	defer t.Stop()
	last, stable := -1, 0
	for stable < 3 {
		select {
		case <-ctx.Done():
			level.Warn(p.logger).Log("msg", "cluster not settled; going on", "members", last, "elapsed", time.Since(start).Round(time.Millisecond))
			return
		case <-p.stop:
			return
		case <-t.C:
		}
		n := len(*p.members.Load())
		if n == last {
			stable++
			continue
		}
		last, stable = n, 0
	}
	level.Info(p.logger).Log("msg", "cluster settled", "members", last, "elapsed", time.Since(start).Round(time.Millisecond))
}

// Ready reports whether Settle has returned. A nil *Peer is always ready.
func (p *Peer) Ready() bool {
	if p == nil {
		return true
	}
	select {
	case <-p.ready:
		return true
	default:
		return false
	}
}

// Leave tells the others this member is leaving, so they move its units
// at once, waiting up to timeout for it to spread, and stops all gossip.
// The Peer cannot be used again. A nil *Peer does nothing.
func (p *Peer) Leave(timeout time.Duration) error {
	if p == nil {
		return nil
	}
	var err error
	p.stopOnce.Do(func() {
		// Goodbye first: memberlist's leave reaches the others as a
		// death, and only the metadata says it was not (memberLeft).
		p.leaving.Store(true)
		if e := p.ml.UpdateNode(timeout); e != nil {
			level.Debug(p.logger).Log("msg", "cannot say goodbye before leaving", "err", e)
		}
		close(p.stop)
		err = p.ml.Leave(timeout)
		if e := p.ml.Shutdown(); err == nil {
			err = e
		}
		p.wg.Wait()
		level.Info(p.logger).Log("msg", "left the cluster")
	})
	return err
}
