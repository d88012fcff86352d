package cluster

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
)

// testCluster is the name of the tests' clusters (--cluster.label).
const testCluster = "test"

// testLabel is what the packets of the tests' clusters carry.
const testLabel = labelPrefix + ":" + testCluster

// testConfig is a member on loopback with a free port, probing and
// gossiping fast so that tests wait seconds, not minutes. The push/pull
// interval is long: a test that sees a full state arrive sees the one of
// a join, not the periodic one.
func testConfig(name string, peers ...string) Config {
	return Config{
		ListenAddress:     "127.0.0.1:0",
		ClusterName:       testCluster,
		Name:              name,
		Peers:             peers,
		PeerTimeout:       time.Second,
		GossipInterval:    20 * time.Millisecond,
		PushPullInterval:  time.Hour,
		ProbeInterval:     200 * time.Millisecond,
		ProbeTimeout:      100 * time.Millisecond,
		SettleTimeout:     10 * time.Second,
		ReconnectInterval: 200 * time.Millisecond,
	}
}

// member is a started Peer with a set-of-strings State under "rows".
type member struct {
	*Peer
	state *setState
	ch    *Channel
	reg   *prometheus.Registry
	logs  *syncBuffer
}

// start creates a member, registers its state and joins its peers; it
// fails the test if the join fails while peers are given.
func start(t *testing.T, cfg Config) *member {
	t.Helper()
	m := create(t, cfg)
	if err := m.Join(t.Context()); err != nil {
		t.Fatalf("%s: join: %v", cfg.Name, err)
	}
	return m
}

// create creates a member and registers its state, without joining.
func create(t *testing.T, cfg Config) *member {
	t.Helper()
	return createWith(t, cfg, nil)
}

// createWith is create with memberlist's transport wrapped.
func createWith(t *testing.T, cfg Config, wrap wrapTransport) *member {
	t.Helper()
	m := &member{state: newSetState(), reg: prometheus.NewRegistry(), logs: &syncBuffer{}}
	p, err := newPeer(cfg, log.NewLogfmtLogger(m.logs), m.reg, wrap)
	if err != nil {
		t.Fatalf("%s: create: %v", cfg.Name, err)
	}
	m.Peer = p
	m.ch = p.AddState("rows", m.state)
	t.Cleanup(func() {
		_ = p.Leave(time.Second)
		if t.Failed() {
			t.Logf("log of %s:\n%s", cfg.Name, m.logs.String())
		}
	})
	return m
}

// kill stops a member without telling the others, as a crash would.
func (p *Peer) kill() {
	p.stopOnce.Do(func() {
		close(p.stop)
		_ = p.ml.Shutdown()
		p.wg.Wait()
	})
}

func (m *member) address() string { return m.Self().Address }

// names returns the names of the live members m sees.
func (m *member) names() []string {
	var out []string
	for _, x := range m.Members() {
		out = append(out, x.Name)
	}
	return out
}

// counter reads one counter of m's registry.
func (m *member) counter(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, x := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range x.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metric
				}
			}
			if x.GetCounter() != nil {
				return x.GetCounter().GetValue()
			}
			return x.GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s%v", name, labels)
	return 0
}

// eventually waits for cond, generously: the deadline is for a broken
// build, not a measure of speed.
func eventually(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not true after 30s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// seeAll reports whether every member sees exactly the given names, live
// and serving (Members: their heartbeats came).
func seeAll(ms []*member, names ...string) func() bool {
	want := strings.Join(names, ",")
	return func() bool {
		for _, m := range ms {
			if strings.Join(m.names(), ",") != want || strings.Join(m.liveNames(), ",") != want {
				return false
			}
		}
		return true
	}
}

// liveNames returns the names of the live members m sees, serving or
// not.
func (m *member) liveNames() []string {
	var out []string
	for _, x := range *m.members.Load() {
		out = append(out, x.Name)
	}
	return out
}

// setState is a grow-only set of strings: Merge is a union, idempotent
// and commutative, as the package asks of a State.
type setState struct {
	mu     sync.Mutex
	items  map[string]bool
	merges int
}

func newSetState() *setState { return &setState{items: map[string]bool{}} }

func (s *setState) add(items ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		s.items[it] = true
	}
}

func (s *setState) has(items ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		if !s.items[it] {
			return false
		}
	}
	return true
}

func (s *setState) MarshalBinary() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.items))
	for k := range s.items {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return []byte(strings.Join(keys, "\n")), nil
}

func (s *setState) Merge(b []byte) error {
	if bytes.ContainsRune(b, 0) {
		return fmt.Errorf("a NUL byte in %q", b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.merges++
	if len(b) == 0 {
		return nil
	}
	for _, it := range strings.Split(string(b), "\n") {
		s.items[it] = true
	}
	return nil
}

// syncBuffer is a log that memberlist's goroutines may write after a test
// ends, which testing.T's log does not allow.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
