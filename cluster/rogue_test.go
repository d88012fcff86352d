package cluster

import (
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// rogue is the hostile member the tests use: a bare memberlist node of the
// cluster's label that speaks this package's wire format by hand (the
// encoder of heartbeat.go, nothing else of the package). It joins and
// heartbeats what it is told (a captured configuration digest, a clock off
// by skew) every 100 ms to every member it knows: the word of anyone who
// reaches the port. (What it could send as rows is fuzzed: FuzzGossip
// here, FuzzPeerRows in package collector.)
type rogue struct {
	ml     *memberlist.Memberlist
	name   string
	mu     sync.Mutex
	digest string
	skew   time.Duration
	stop   chan struct{}
	done   sync.WaitGroup
	// known are the members it heard of, as nodes of its own (as
	// Peer.others): memberlist's Members are its own nodes, which it
	// changes under its lock while a sender would read them.
	known map[string]memberlist.Node
}

// rogueEvents keeps the rogue's known members; memberlist calls them with
// its lock held, so the node is read whole here.
type rogueEvents struct{ r *rogue }

func (e rogueEvents) NotifyJoin(n *memberlist.Node)   { e.r.heard(n, true) }
func (e rogueEvents) NotifyUpdate(n *memberlist.Node) { e.r.heard(n, true) }
func (e rogueEvents) NotifyLeave(n *memberlist.Node)  { e.r.heard(n, false) }

func (r *rogue) heard(n *memberlist.Node, live bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !live {
		delete(r.known, n.Name)
		return
	}
	r.known[n.Name] = memberlist.Node{Name: n.Name, Addr: slices.Clone(n.Addr), Port: n.Port}
}

// startRogue starts a rogue named name that joins join (when not empty)
// and heartbeats digest with a clock off by skew.
func startRogue(t *testing.T, name, join, digest string, skew time.Duration) *rogue {
	t.Helper()
	mc := memberlist.DefaultLANConfig()
	mc.Name, mc.BindAddr, mc.BindPort, mc.AdvertisePort = name, "127.0.0.1", 0, 0
	mc.Label = testLabel
	mc.EnableCompression = false // as the members: compressed gossip in the clear is refused
	mc.ProbeInterval, mc.ProbeTimeout, mc.GossipInterval = 200*time.Millisecond, 100*time.Millisecond, 20*time.Millisecond
	mc.LogOutput = &syncBuffer{}
	r := &rogue{name: name, digest: digest, skew: skew, stop: make(chan struct{}), known: map[string]memberlist.Node{}}
	mc.Events = rogueEvents{r}
	ml, err := memberlist.Create(mc)
	if err != nil {
		t.Fatal(err)
	}
	r.ml = ml
	t.Cleanup(func() {
		close(r.stop)
		r.done.Wait()
		_ = ml.Shutdown()
	})
	if join != "" {
		_, _ = ml.Join([]string{join}) // refused or not, it keeps knocking by its heartbeats
	}
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			r.beat()
			select {
			case <-r.stop:
				return
			case <-t.C:
			}
		}
	}()
	return r
}

// beat sends a heartbeat to every other member the rogue knows.
func (r *rogue) beat() {
	r.mu.Lock()
	msg := encodeHeartbeat(r.name, r.digest, time.Now().Add(r.skew))
	r.mu.Unlock()
	r.sendAll(msg)
}

func (r *rogue) sendAll(msg []byte) {
	r.mu.Lock()
	to := make([]memberlist.Node, 0, len(r.known))
	for _, n := range r.known {
		if n.Name != r.name {
			to = append(to, n)
		}
	}
	r.mu.Unlock()
	for i := range to {
		_ = r.ml.SendBestEffort(&to[i], msg)
	}
}

// freeAddress is a loopback address whose port was free a moment ago, for
// a member to come up at later (a pod's address the operator names).
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
}
