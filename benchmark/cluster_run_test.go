package benchmark

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The cluster benchmark runs the freshness workload (a window's tuples,
// one provider case) on replicas that share their upstream calls
// (package cluster), each scraped by the same Prometheus-like scrapers,
// all on one simulated clock with one fake upstream. Gossip runs on the
// wall clock, in memberlist's goroutines, while the engines and the fake
// run on the simulated one: the driver moves the clock from timer to
// timer as runUntil does, and before each move it waits, in real time,
// until every row a member sent has been taken by every other running
// member (clusterSim.sync). Simulated time therefore never runs ahead of
// gossip: a member never sees --cluster.peer-timeout pass because a
// delta was still in a socket.

// ClusterKill is how the owner of the refresh units is stopped in the
// middle of a run.
type ClusterKill string

const (
	// KillNone stops nobody.
	KillNone ClusterKill = ""
	// KillLeave closes the owner's exporter and makes it leave the
	// cluster (a drain, a rolling upgrade): the others see it go at once
	// and its units move.
	KillLeave ClusterKill = "leave"
	// KillSilent closes the owner's exporter but keeps it a member (a
	// hung process, or one cut off from the upstream): the others fetch
	// its units once rank × --cluster.peer-timeout has passed.
	KillSilent ClusterKill = "silent"
)

// ClusterOptions are one run: the freshness workload of FreshnessOptions
// (Replicas is the number of scrapers, each scraping every member) on
// Members replicas.
type ClusterOptions struct {
	FreshnessOptions
	// Members is the number of replicas; 0 is one replica with cluster
	// mode off (the exporter as it runs alone), 1 a cluster of one.
	Members int
	// Kill stops the owner of the units KillAfter into the run.
	Kill      ClusterKill
	KillAfter time.Duration
	// PeerTimeout is --cluster.peer-timeout (0: clusterPeerTimeout).
	PeerTimeout time.Duration
	// Skew puts the clock of the last member off the true time by as
	// much: its engine's and its heartbeats' (a host whose clock is
	// wrong). The fake upstream keeps the true time.
	Skew time.Duration
}

// clusterPeerTimeout is --cluster.peer-timeout's default.
const clusterPeerTimeout = 15 * time.Second

// ClusterMember is what one replica served and sent.
type ClusterMember struct {
	Name string
	// Owned is the refresh units it owned when the run started.
	Owned  int
	Killed bool
	// Scrapes counts the scrapes it answered (by all scrapers).
	Scrapes int
	// MeanExcess and MaxExcess are the excess staleness of what its
	// scrapes served, over every scrape of every tuple, as Freshness
	// measures it.
	MeanExcess, MaxExcess time.Duration
	// MaxLate is the longest time from a row's publication to the first
	// scrape of this member that served it or a newer row.
	MaxLate time.Duration
	// LateAfterKill is MaxLate over the rows this member had not yet
	// served when the owner was killed.
	LateAfterKill time.Duration
	// Unserved and Missing are Freshness's, for this member (not
	// counted for a killed one); Missing counts the whole run, the first
	// scrapes and those before a kill included. MissingFrom and
	// MissingTo are how far into the run the first and the last of those
	// scrapes came.
	Unserved, Missing      int
	MissingFrom, MissingTo time.Duration
	// OwnerRefreshes and FallbackRefreshes are the refreshes it made
	// (onchain_exporter_cluster_refreshes_total); RowsReceived those it
	// took from peers (onchain_exporter_cluster_rows_received_total).
	OwnerRefreshes, FallbackRefreshes, RowsReceived int
	// Gossip of the rows' state, in bytes before memberlist's framing
	// (onchain_exporter_cluster_messages_{sent,received}_bytes_total):
	// deltas, and full states (push/pull, here only when members join).
	DeltaSent, DeltaReceived, FullSent, FullReceived float64
	// DeltaMessages counts the deltas it sent, once per member sent to,
	// retransmissions and relays included
	// (onchain_exporter_cluster_messages_sent_total).
	DeltaMessages int
	// DeltasByTCP counts the deltas too large for a gossip packet, sent
	// to each member over TCP instead
	// (onchain_exporter_cluster_oversized_messages_total{result="sent"}).
	DeltasByTCP int
}

// ClusterRun is the outcome of a run.
type ClusterRun struct {
	ClusterOptions
	Step time.Duration
	// Published is Freshness's: the rows the replicas had to deliver.
	Published int
	// Calls is every data API request of all members together.
	Calls     int64
	PerMember []ClusterMember
	// Gap is, after a kill, the longest time from a row's publication to
	// its first serving by a surviving member, over the rows not yet
	// served when the owner was killed.
	Gap time.Duration
	// HeapPerMember is the heap in use of the members at the end of a
	// run without a kill, divided by their number: what a garbage
	// collection frees once they are closed (in-process members share one
	// heap, so it is a mean).
	HeapPerMember uint64
	// FullState is the bytes of the full state a member took when it
	// joined at the end of a run without a kill (what a push/pull moves
	// each way), and JoinCalls the calls made meanwhile; JoinServes says
	// whether it then served every tuple's row as the first member did.
	FullState  float64
	JoinCalls  int64
	JoinServes bool
	// SyncTimeouts counts the moves of the clock made without every sent
	// row taken by every member (after clusterSyncWait of real time).
	SyncTimeouts int
	// Real is the run's wall-clock time.
	Real time.Duration
}

// CallsPerRow is upstream calls per published row, all members together.
func (r *ClusterRun) CallsPerRow() float64 {
	return float64(r.Calls) / float64(max(r.Published, 1))
}

// MeanExcess is the largest mean excess staleness of a member that ran
// to the end.
func (r *ClusterRun) MeanExcess() time.Duration {
	var worst time.Duration
	for _, m := range r.PerMember {
		if !m.Killed {
			worst = max(worst, m.MeanExcess)
		}
	}
	return worst
}

// DeltaBytesPerRow is the bytes of deltas all members sent per published
// row.
func (r *ClusterRun) DeltaBytesPerRow() float64 {
	var sent float64
	for _, m := range r.PerMember {
		sent += m.DeltaSent
	}
	return sent / float64(max(r.Published, 1))
}

// clusterSyncWait bounds each wait for gossip; past it the clock moves
// on and the run counts a sync timeout.
const clusterSyncWait = 10 * time.Second

// clusterMember is one running replica of a run.
type clusterMember struct {
	name string
	reg  *prometheus.Registry
	peer *cluster.Peer
	exp  *collector.Exporter
	// clients are its upstream clients, closed after its exporter.
	clients *upstream.Pool
	closed  bool // its exporter is closed: it serves and takes nothing
	left    bool // it left the cluster
	cfg     *config.Config
	// lost counts rows sent to it that it will never take (a sync
	// timeout): its expected count starts over from there.
	lost   int
	tracks []*clusterTrack
	out    ClusterMember
	sum    float64 // seconds of excess staleness
	n      int64
}

// clusterTrack follows one tuple on one member.
type clusterTrack struct {
	key, asset string
	served     map[time.Time]bool
	last       time.Time // the newest row served
}

// clusterCounts are a member's counters of the calls it shares.
type clusterCounts struct {
	sent, received, owned                            int // rows sent (refreshes), taken, units owned
	refused                                          int // peers' rows refused (taken no more often than sent)
	deltaSent, deltaReceived, fullSent, fullReceived float64
	fallbacks, owners, deltaMessages, byTCP          int
}

func (m *clusterMember) counts() clusterCounts {
	var c clusterCounts
	fams, err := m.reg.Gather()
	if err != nil {
		return c
	}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			v := mt.GetCounter().GetValue() + mt.GetGauge().GetValue()
			switch f.GetName() {
			case "onchain_exporter_cluster_refreshes_total":
				c.sent += int(v)
				if labelOf(mt, "role") == "fallback" {
					c.fallbacks += int(v)
				} else {
					c.owners += int(v)
				}
			case "onchain_exporter_cluster_rows_received_total":
				c.received += int(v)
			case "onchain_exporter_cluster_rows_refused_total":
				c.refused += int(v)
			case "onchain_exporter_cluster_units_owned":
				c.owned += int(v)
			case "onchain_exporter_cluster_oversized_messages_total":
				if labelOf(mt, "result") == "sent" {
					c.byTCP += int(v)
				}
			case "onchain_exporter_cluster_messages_sent_total":
				if labelOf(mt, "kind") == "delta" {
					c.deltaMessages += int(v)
				}
			case "onchain_exporter_cluster_messages_sent_bytes_total":
				if labelOf(mt, "kind") == "full" {
					c.fullSent += v
				} else {
					c.deltaSent += v
				}
			case "onchain_exporter_cluster_messages_received_bytes_total":
				if labelOf(mt, "kind") == "full" {
					c.fullReceived += v
				} else {
					c.deltaReceived += v
				}
			}
		}
	}
	return c
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// clusterSim is the replicas of a run on their clock and fake upstream.
type clusterSim struct {
	clock       *simclock.Clock
	fake        *fakeapi.Server
	yml         string // the configuration every member reads
	asset       string // the window's asset, for tuples that name none
	peerTimeout time.Duration
	members     []*clusterMember
	timeouts    int
}

// running are the members whose exporters run.
func (s *clusterSim) running() []*clusterMember {
	var out []*clusterMember
	for _, m := range s.members {
		if !m.closed {
			out = append(out, m)
		}
	}
	return out
}

// settle lets every running engine do what is due at the clock's time.
func (s *clusterSim) settle() {
	for _, m := range s.running() {
		m.exp.Settle()
	}
}

// delivered reports whether every running member has taken or refused
// every row the others sent: its rows received and refused equal the sum
// of the others' refreshes. Each sent row is taken or refused once by
// each other member (by its delta or a full state, whichever comes
// first: the push/pull of full states is hours apart); a member whose
// clock is off refuses what it cannot take, and the run goes on; a sync
// timeout writes off what was missing.
func (s *clusterSim) delivered(counts []clusterCounts) (bool, []int) {
	total := 0
	for _, c := range counts {
		total += c.sent
	}
	ok := true
	deficit := make([]int, len(s.members))
	for i, m := range s.members {
		if m.closed {
			continue
		}
		deficit[i] = total - counts[i].sent - m.lost - counts[i].received - counts[i].refused
		if deficit[i] > 0 {
			ok = false
		}
	}
	return ok, deficit
}

func (s *clusterSim) allCounts() []clusterCounts {
	out := make([]clusterCounts, len(s.members))
	for i, m := range s.members {
		out[i] = m.counts()
	}
	return out
}

// sync settles every engine, then waits in real time until gossip has
// delivered what they sent and settles again (a row taken replans the
// taker), until a settle sends nothing more. With cluster mode off it is
// a settle.
func (s *clusterSim) sync() {
	if len(s.members) == 1 && s.members[0].peer == nil {
		s.settle()
		return
	}
	for range 1000 {
		s.settle()
		before := s.allCounts()
		deadline := time.Now().Add(clusterSyncWait)
		counts := before
		for {
			ok, deficit := s.delivered(counts)
			if ok {
				break
			}
			if time.Now().After(deadline) {
				s.timeouts++
				for i, m := range s.members {
					m.lost += max(deficit[i], 0)
				}
				break
			}
			time.Sleep(time.Millisecond)
			counts = s.allCounts()
		}
		s.settle()
		after := s.allCounts()
		same := true
		for i := range after {
			if after[i].sent != before[i].sent || after[i].received != counts[i].received {
				same = false
			}
		}
		if same {
			return
		}
	}
}

// runUntil is runUntil for several members: the clock moves from timer to
// timer, and at each stop every member settles and gossip is delivered.
func (s *clusterSim) runUntil(end time.Time) {
	for range 100_000 {
		s.sync()
		next, ok := s.clock.Next()
		if !ok || next.After(end) {
			break
		}
		if next.After(s.clock.Now()) {
			s.clock.Set(next)
		} else {
			s.clock.Fire()
		}
	}
	if end.After(s.clock.Now()) {
		s.clock.Set(end)
	}
	s.sync()
}

// waitFor waits in real time for cond, bounded.
func waitFor(what string, cond func() bool) error {
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("after 30 s: %s", what)
		}
	}
	return nil
}

// clusterMemberConfig is a member on loopback with the flags' defaults
// but for faster gossip, probes and reconnects, so that a run waits for
// deltas milliseconds, not the default 200 ms gossip interval, and the
// periodic push/pull (real time) stays out of a run of simulated time.
func clusterMemberConfig(name string, peerTimeout time.Duration, peers ...string) cluster.Config {
	return cluster.Config{ListenAddress: "127.0.0.1:0", ClusterName: "bench", Name: name, Peers: peers,
		PeerTimeout: peerTimeout, GossipInterval: 20 * time.Millisecond, PushPullInterval: time.Hour,
		ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond,
		SettleTimeout: 5 * time.Second, ReconnectInterval: 200 * time.Millisecond}
}

// heapInUse is the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// RunCluster runs the members against the fake upstream, all on one
// simulated clock, scraped by o.Replicas scrapers each, and measures
// calls, the excess staleness each member served, gossip and memory.
func RunCluster(o ClusterOptions) (*ClusterRun, error) {
	spec, ok := windowSpecs[o.Window]
	if !ok {
		return nil, fmt.Errorf("no freshness runs for window %q", o.Window)
	}
	if o.PeerTimeout <= 0 {
		o.PeerTimeout = clusterPeerTimeout
	}
	if o.Kill != KillNone && o.Members < 2 {
		return nil, fmt.Errorf("a kill needs two members or more, not %d", o.Members)
	}
	began := time.Now()
	clk, fake, srv := o.upstream()
	defer srv.Close()
	start := clk.Now()
	yml := o.config(srv.URL, spec)
	s := &clusterSim{clock: clk, fake: fake, yml: yml, asset: spec.asset, peerTimeout: o.PeerTimeout}
	defer s.close()
	n := max(o.Members, 1)
	for i := range n {
		var skew time.Duration
		if i == n-1 {
			skew = o.Skew
		}
		if _, err := s.start(fmt.Sprintf("m%d", i+1), o.Members > 0, skew); err != nil {
			return nil, err
		}
	}
	cfg := s.members[0].cfg
	units := map[string]bool{}
	for _, t := range cfg.Tuples {
		units[t.Path+" "+t.Window] = true
	}
	if o.Members > 0 {
		// Every member sees every other, and they agree on the owners.
		if err := waitFor("every member seeing the others and owning its units", func() bool {
			owned := 0
			for _, m := range s.members {
				if len(m.peer.Members()) != n {
					return false
				}
				owned += m.counts().owned
			}
			return owned == len(units)
		}); err != nil {
			return nil, err
		}
	}
	for _, m := range s.members {
		m.out.Owned = m.counts().owned
	}
	if o.Members == 0 {
		s.members[0].out.Owned = len(units)
	}

	r := &ClusterRun{ClusterOptions: o, Step: fake.RowStep(spec.path, o.Window, s.members[0].tracks[0].asset)}
	killAt := start.Add(o.KillAfter)
	killed := o.Kill == KillNone
	var last time.Time
	offset := o.Interval / time.Duration(max(o.Replicas, 1))
	firstScrape := true
	for elapsed := time.Duration(0); elapsed < o.Duration; elapsed += o.Interval {
		for range o.Replicas {
			now := clk.Now()
			if !killed && !now.Before(killAt) {
				if err := s.kill(o.Kill, len(units)); err != nil {
					return nil, err
				}
				killed = true
			}
			if err := s.scrapeAll(firstScrape, start, now, o.Kill != KillNone && killed, cfg.TupleLabelNames, spec.path, o.Window); err != nil {
				return nil, err
			}
			firstScrape = false
			last = now
			s.runUntil(now.Add(offset))
		}
	}

	// What each member served, and what it had not served by the end.
	for _, m := range s.members {
		for _, tr := range m.tracks {
			end := fake.NewestVisible(spec.path, o.Window, tr.asset, last)
			for row := fake.NewestVisible(spec.path, o.Window, tr.asset, start); !row.After(end); row = row.Add(r.Step) {
				if m == s.members[0] {
					r.Published++
				}
				if m.out.Killed {
					continue
				}
				if row.Before(end) && !tr.served[row] {
					m.out.Unserved++
				}
				if row.After(tr.last) {
					late := last.Sub(fake.VisibleAt(spec.path, o.Window, tr.asset, row))
					m.out.MaxLate = max(m.out.MaxLate, late)
					if o.Kill != KillNone {
						m.out.LateAfterKill = max(m.out.LateAfterKill, late)
					}
				}
			}
		}
		if m.n > 0 {
			m.out.MeanExcess = time.Duration(m.sum / float64(m.n) * float64(time.Second))
		}
		if !m.out.Killed {
			r.Gap = max(r.Gap, m.out.LateAfterKill)
		}
		c := m.counts()
		m.out.OwnerRefreshes, m.out.FallbackRefreshes, m.out.RowsReceived = c.owners, c.fallbacks, c.received
		m.out.DeltaSent, m.out.DeltaReceived, m.out.FullSent, m.out.FullReceived = c.deltaSent, c.deltaReceived, c.fullSent, c.fullReceived
		m.out.DeltaMessages, m.out.DeltasByTCP = c.deltaMessages, c.byTCP
		r.PerMember = append(r.PerMember, m.out)
	}
	r.Calls = fake.Calls("data")
	r.SyncTimeouts = s.timeouts
	if o.Kill == KillNone {
		// Only the members are closed; the fake upstream and its server
		// are in both figures.
		with := heapInUse()
		if o.Members > 0 {
			if err := s.join(r, cfg.TupleLabelNames); err != nil {
				return nil, err
			}
		}
		s.close()
		s.members = nil
		if without := heapInUse(); with > without {
			r.HeapPerMember = (with - without) / uint64(n)
		}
	}
	r.Real = time.Since(began)
	return r, nil
}

// start starts a member and joins it to the first one; with cluster
// false, an exporter alone (cluster mode off). Its clock is off the true
// time by skew.
func (s *clusterSim) start(name string, clustered bool, skew time.Duration) (*clusterMember, error) {
	m := &clusterMember{name: name, reg: prometheus.NewRegistry(), out: ClusterMember{Name: name}}
	var err error
	var peers []string
	if len(s.members) > 0 && s.members[0].peer != nil {
		peers = []string{s.members[0].peer.Self().Address}
	}
	var clk clock.Clock = s.clock
	if skew != 0 {
		clk = skewedClock{s.clock, skew}
	}
	// Its clients, as a process's: the answers' Date is the cluster's
	// clock.
	m.clients = upstream.NewPool(m.reg, clk.Now, log.NewNopLogger())
	if clustered {
		cfg := clusterMemberConfig(name, s.peerTimeout, peers...)
		if skew != 0 {
			cfg.Clock = func() time.Time { return time.Now().Add(skew) }
		}
		cfg.Reference = m.clients.ClockOffset
		m.peer, err = cluster.Create(cfg, log.NewNopLogger(), m.reg)
		if err != nil {
			return nil, err
		}
	}
	// Each member parses the file, as its process would.
	m.cfg, err = config.Parse("cluster.yml", []byte(s.yml), func(string) string { return "bench" })
	if err == nil {
		m.exp, err = collector.New(m.cfg, log.NewNopLogger(), m.reg, collector.Options{Clock: clk, Peer: m.peer, Clients: m.clients})
	}
	if err != nil {
		_ = m.peer.Leave(time.Second)
		return nil, err
	}
	s.members = append(s.members, m)
	// A process reads the key's plan before it joins: its first answer
	// sets its offset from the provider's clock, the cluster's.
	if c := m.clients.Current(config.APIData); c != nil {
		c.ReadPlan(context.Background())
	}
	if err := m.peer.Join(context.Background()); err != nil && len(peers) > 0 {
		return nil, err
	}
	for _, t := range m.cfg.Tuples {
		asset := t.Params.Get("asset")
		if asset == "" {
			asset = s.asset
		}
		m.tracks = append(m.tracks, &clusterTrack{key: strings.Join(t.TupleLabelValues, "\xff"), asset: asset, served: map[time.Time]bool{}})
	}
	return m, nil
}

// close stops every member; it may be called again.
func (s *clusterSim) close() {
	for _, m := range s.members {
		if !m.closed {
			m.exp.Close()
			m.clients.Close()
			m.closed = true
		}
		if !m.left {
			_ = m.peer.Leave(time.Second)
			m.left = true
		}
	}
}

// join starts one more member at the end of a run: it takes the full
// state from a peer as it joins, and its first scrape (with the clock
// where it is) serves every tuple's row with no upstream call.
func (s *clusterSim) join(r *ClusterRun, names []string) error {
	calls := s.fake.Calls("data")
	m, err := s.start("joined", true, 0)
	if err != nil {
		return err
	}
	body, err := scrapeText(m.exp)
	if err != nil {
		return fmt.Errorf("the member that joined: %w", err)
	}
	got, err := servedRows(body, names)
	if err != nil {
		return err
	}
	body, err = scrapeText(s.members[0].exp)
	if err != nil {
		return err
	}
	want, err := servedRows(body, names)
	if err != nil {
		return err
	}
	r.JoinServes = len(got) == len(want) && len(got) == len(m.tracks)
	for k, v := range want {
		if !got[k].Equal(v) {
			r.JoinServes = false
		}
	}
	r.JoinCalls = s.fake.Calls("data") - calls
	r.FullState = m.counts().fullReceived
	return nil
}

// kill stops the member that owns the most units: its exporter closes,
// and it leaves or stays a silent member. After a leave the driver waits,
// in real time, until the others see it gone and own its units.
func (s *clusterSim) kill(how ClusterKill, units int) error {
	var owner *clusterMember
	most := -1
	for _, m := range s.members {
		if c := m.counts(); c.owned > most {
			owner, most = m, c.owned
		}
	}
	s.sync()
	owner.exp.Close()
	owner.clients.Close()
	owner.closed = true
	owner.out.Killed = true
	if how == KillSilent {
		return nil
	}
	err := owner.peer.Leave(time.Second)
	owner.left = true
	if err != nil {
		return fmt.Errorf("%s leaving: %w", owner.name, err)
	}
	live := s.running()
	return waitFor("the others seeing the owner gone and owning its units", func() bool {
		owned := 0
		for _, m := range live {
			if len(m.peer.Members()) != len(live) {
				return false
			}
			owned += m.counts().owned
		}
		return owned == units
	})
}

// scrapeAll scrapes every running member at now (the run began at
// start) and measures what each served. The first scrapes go to all members at once: a member's first
// scrape waits for its first fill, which a unit's owner makes and the
// others take from gossip.
func (s *clusterSim) scrapeAll(first bool, start, now time.Time, afterKill bool, names []string, path, window string) error {
	live := s.running()
	bodies := make([][]byte, len(live))
	errs := make([]error, len(live))
	if first {
		// The first fill comes by gossip, on the wall clock: a loaded
		// machine may take longer than a scrape's usual 10 s for it.
		var wg sync.WaitGroup
		for i, m := range live {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bodies[i], errs[i] = scrapeWithin(m.exp, "120")
			}()
		}
		wg.Wait()
	} else {
		for i, m := range live {
			bodies[i], errs[i] = scrapeText(m.exp)
		}
	}
	for i, m := range live {
		if errs[i] != nil {
			return fmt.Errorf("%s: scrape at %s: %w", m.name, now, errs[i])
		}
		served, err := servedRows(bodies[i], names)
		if err != nil {
			return fmt.Errorf("%s: scrape at %s: %w", m.name, now, err)
		}
		m.out.Scrapes++
		for _, tr := range m.tracks {
			row, ok := served[tr.key]
			if !ok {
				if m.out.Missing == 0 {
					m.out.MissingFrom = now.Sub(start)
				}
				m.out.Missing++
				m.out.MissingTo = now.Sub(start)
				continue
			}
			newest := s.fake.NewestVisible(path, window, tr.asset, now)
			if row.After(newest) {
				return fmt.Errorf("%s: scrape at %s served row %s, newer than the newest published (%s)", m.name, now, row, newest)
			}
			excess := newest.Sub(row)
			m.sum += excess.Seconds()
			m.n++
			m.out.MaxExcess = max(m.out.MaxExcess, excess)
			tr.served[row] = true
			if !tr.last.IsZero() {
				// Rows this scrape is the first to serve (or to pass).
				for x := tr.last.Add(s.fake.RowStep(path, window, tr.asset)); !x.After(row); x = x.Add(s.fake.RowStep(path, window, tr.asset)) {
					late := now.Sub(s.fake.VisibleAt(path, window, tr.asset, x))
					m.out.MaxLate = max(m.out.MaxLate, late)
					if afterKill {
						m.out.LateAfterKill = max(m.out.LateAfterKill, late)
					}
				}
			}
			if row.After(tr.last) {
				tr.last = row
			}
		}
	}
	return nil
}

// skewedClock is a member's clock off the true one by skew: it reads the
// true time plus skew, and a timer set for its time t fires when the true
// clock reaches t less skew.
type skewedClock struct {
	clock.Clock
	skew time.Duration
}

func (c skewedClock) Now() time.Time { return c.Clock.Now().Add(c.skew) }

func (c skewedClock) At(t time.Time, f func()) clock.Timer { return c.Clock.At(t.Add(-c.skew), f) }
