package cluster

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/hashicorp/memberlist"
	"github.com/prometheus/client_golang/prometheus"
)

// label is put on every packet and stream and checked on receipt, so an
// exporter pointed by mistake at an Alertmanager's or another program's
// gossip port is refused instead of joining it.
const label = "onchain_exporter"

// Member is one live member of the cluster.
type Member struct {
	Name    string
	Address string // IP:port of its gossip
}

// Peer is this process's membership of the cluster. A nil *Peer is cluster
// mode off: it answers as a cluster of one (it owns every unit, its
// channels send nothing).
type Peer struct {
	cfg    Config // defaults filled
	name   string
	logger log.Logger
	m      *metrics
	ml     *memberlist.Memberlist
	queue  *memberlist.TransmitLimitedQueue
	lookup lookupFunc

	// members is published on every membership change, sorted by name:
	// Owner and Members read it without a lock.
	members atomic.Pointer[[]Member]

	mu     sync.Mutex // guards live and failed
	live   map[string]Member
	failed map[string]failedPeer

	statesMu sync.RWMutex
	states   map[string]State

	oversized chan []byte
	stop      chan struct{}
	stopOnce  sync.Once
	joinOnce  sync.Once
	wg        sync.WaitGroup
	ready     chan struct{}
	readyOnce sync.Once
}

// failedPeer is a member that left or failed, asked to rejoin until
// ReconnectTimeout after it went.
type failedPeer struct {
	address string
	since   time.Time
}

// Create starts this member: it listens for gossip and answers other
// members, but joins nobody until Join. Register every State with AddState
// between Create and Join: the full state exchanged when joining holds
// only the keys registered by then.
//
// With cluster mode off (cfg.ListenAddress empty) Create returns a nil
// *Peer and no error. reg may be nil.
func Create(cfg Config, logger log.Logger, reg prometheus.Registerer) (*Peer, error) {
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
		cfg:       cfg,
		name:      cfg.Name,
		logger:    log.With(logger, "component", "cluster"),
		m:         newMetrics(reg),
		lookup:    net.DefaultResolver.LookupHost,
		live:      map[string]Member{},
		failed:    map[string]failedPeer{},
		states:    map[string]State{},
		oversized: make(chan []byte, oversizedQueue),
		stop:      make(chan struct{}),
		ready:     make(chan struct{}),
	}
	p.members.Store(&[]Member{})
	if p.name == "" {
		name, err := defaultName()
		if err != nil {
			return nil, fmt.Errorf("cluster member name: %w", err)
		}
		p.name = name
	}
	// Gossip to more members, and retransmit more, in a larger cluster;
	// at least 3, as memberlist's LAN default.
	retransmit := max(len(cfg.Peers)/2, 3)
	p.queue = &memberlist.TransmitLimitedQueue{
		NumNodes:       func() int { return len(*p.members.Load()) },
		RetransmitMult: retransmit,
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
	mc.Delegate, mc.Events, mc.Conflict = d, d, d
	mc.GossipInterval = cfg.GossipInterval
	mc.GossipNodes = retransmit
	mc.PushPullInterval = cfg.PushPullInterval
	mc.ProbeTimeout = cfg.ProbeTimeout
	mc.ProbeInterval = cfg.ProbeInterval
	mc.UDPBufferSize = maxGossipPacket
	mc.Label = label
	mc.Logger = stdlog.New(logWriter{p.logger}, "", 0)
	if cfg.KeyFile != "" {
		key, err := readKey(cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--cluster.encryption-key-file: %w", err)
		}
		mc.SecretKey = key
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	p.ml = ml
	p.registerGauges(reg)
	p.wg.Add(1)
	go p.sendOversized()
	level.Info(p.logger).Log("msg", "cluster member started", "name", p.name, "address", p.Self().Address,
		"encrypted", mc.SecretKey != nil, "peers", strings.Join(cfg.Peers, ","))
	return p, nil
}

// Join asks the addresses of Config.Peers to let this member in, which
// exchanges the full state with each, and starts asking again every
// ReconnectInterval: names are resolved again (a Service's new pods are
// joined) and failed members are retried until ReconnectTimeout. An error
// says no peer could be joined now; it is not fatal, as the member keeps
// trying and works alone meanwhile. Each address may take up to
// memberlist's TCP timeout (10 s) to fail; ctx bounds name resolution.
func (p *Peer) Join(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.joinOnce.Do(func() {
		p.wg.Add(1)
		go p.reconnect()
	})
	addrs, errs := resolvePeers(ctx, p.cfg.Peers, p.lookup)
	for _, err := range errs {
		level.Warn(p.logger).Log("msg", "cannot resolve a peer; trying again every --cluster.reconnect-interval", "err", err)
	}
	addrs = without(addrs, p.Self().Address)
	if len(addrs) == 0 {
		if len(p.cfg.Peers) > 0 && len(errs) > 0 {
			return errors.New("no address of --cluster.peer resolved")
		}
		return nil // the first member, or its own Service's only pod
	}
	n, err := p.ml.Join(addrs)
	if err != nil {
		p.m.rejoins.WithLabelValues("failure").Inc()
		return fmt.Errorf("join %s: %w", strings.Join(addrs, ","), err)
	}
	p.m.rejoins.WithLabelValues("success").Inc()
	level.Info(p.logger).Log("msg", "joined the cluster", "contacted", n, "of", len(addrs), "members", len(*p.members.Load()))
	return nil
}

// reconnect resolves the peers again and joins the addresses that are not
// live members, and retries failed members, every ReconnectInterval.
func (p *Peer) reconnect() {
	defer p.wg.Done()
	t := time.NewTicker(p.cfg.ReconnectInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.ReconnectInterval)
		addrs, errs := resolvePeers(ctx, p.cfg.Peers, p.lookup)
		cancel()
		for _, err := range errs {
			level.Debug(p.logger).Log("msg", "cannot resolve a peer", "err", err)
		}
		for _, a := range p.lost(addrs, time.Now()) {
			select {
			case <-p.stop:
				return
			default:
			}
			if _, err := p.ml.Join([]string{a}); err != nil {
				p.m.rejoins.WithLabelValues("failure").Inc()
				level.Debug(p.logger).Log("msg", "cannot join", "address", a, "err", err)
				continue
			}
			p.m.rejoins.WithLabelValues("success").Inc()
			level.Info(p.logger).Log("msg", "joined", "address", a)
		}
	}
}

// lost returns the addresses to join: those resolved and the failed
// members', less this member's and the live members'. It forgets failed
// members older than ReconnectTimeout.
func (p *Peer) lost(resolved []string, now time.Time) []string {
	self := p.Self().Address // before p.mu: memberlist locks, then calls memberJoined
	p.mu.Lock()
	defer p.mu.Unlock()
	skip := map[string]bool{self: true}
	for _, m := range p.live {
		skip[m.Address] = true
	}
	var out []string
	add := func(a string) {
		if !skip[a] {
			skip[a] = true
			out = append(out, a)
		}
	}
	for _, a := range resolved {
		add(a)
	}
	for name, f := range p.failed {
		if now.Sub(f.since) > p.cfg.ReconnectTimeout {
			delete(p.failed, name)
			continue
		}
		add(f.address)
	}
	return out
}

// Settle waits until the number of live members has stayed the same for
// three polls ten gossip intervals apart (2 s by default), or ctx ends, or
// SettleTimeout passes, whichever comes first, and then makes Ready true.
// A member that acts before it settles may fetch what a peer it has not
// heard of yet owns: a double call, never a missed one.
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

// Leave tells the other members this one is leaving, waiting up to timeout
// for the message to spread, and then stops all gossip. The others move
// its units at once instead of after failure detection. Leave is for
// shutdown: the Peer cannot be used again. A nil *Peer does nothing.
func (p *Peer) Leave(timeout time.Duration) error {
	if p == nil {
		return nil
	}
	var err error
	p.stopOnce.Do(func() {
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
}

// lookupFunc resolves a host name to addresses, as net.Resolver.LookupHost.
type lookupFunc func(ctx context.Context, host string) ([]string, error)

// resolvePeers turns host:port peers into IP:port addresses, every address
// a name resolves to, without duplicates. A name that does not resolve now
// is an error and is left out; the others are still returned.
func resolvePeers(ctx context.Context, peers []string, lookup lookupFunc) (addrs []string, errs []error) {
	seen := map[string]bool{}
	add := func(host, port string) {
		a := net.JoinHostPort(host, port)
		if !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	for _, peer := range peers {
		host, port, err := net.SplitHostPort(peer)
		if err != nil {
			errs = append(errs, fmt.Errorf("--cluster.peer %q: %w", peer, err))
			continue
		}
		if ip := net.ParseIP(host); ip != nil {
			add(ip.String(), port)
			continue
		}
		ips, err := lookup(ctx, host)
		if err == nil && len(ips) == 0 {
			err = errors.New("no address")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--cluster.peer %q: %w", peer, err))
			continue
		}
		for _, ip := range ips {
			if parsed := net.ParseIP(ip); parsed != nil {
				ip = parsed.String()
			}
			add(ip, port)
		}
	}
	return addrs, errs
}

func without(addrs []string, self string) []string {
	out := addrs[:0:0]
	for _, a := range addrs {
		if a != self {
			out = append(out, a)
		}
	}
	return out
}

// logWriter turns memberlist's log lines ("[WARN] memberlist: ...") into
// go-kit records: warnings and errors as warnings, the rest as debug.
type logWriter struct{ logger log.Logger }

func (w logWriter) Write(b []byte) (int, error) {
	msg := strings.TrimSpace(string(b))
	lvl := level.Debug
	if strings.HasPrefix(msg, "[WARN]") || strings.HasPrefix(msg, "[ERR]") {
		lvl = level.Warn
	}
	if i := strings.Index(msg, "] "); i >= 0 && strings.HasPrefix(msg, "[") {
		msg = strings.TrimPrefix(msg[i+2:], "memberlist: ")
	}
	lvl(w.logger).Log("msg", msg, "source", "memberlist")
	return len(b), nil
}
