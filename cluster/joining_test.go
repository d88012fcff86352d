package cluster

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
)

// gateState is a setState whose Merge of a non-empty state waits for
// its gate, and says whether its Peer was joining then.
type gateState struct {
	*setState
	p             *Peer
	gate          chan struct{}
	merging       atomic.Bool
	joiningInside atomic.Bool
}

func (g *gateState) Merge(b []byte) error {
	if len(b) > 0 {
		g.joiningInside.Store(g.p.Joining())
		g.merging.Store(true)
		<-g.gate
	}
	return g.setState.Merge(b)
}

// TestJoinInBackground: JoinInBackground returns at once, before the
// peer's full state is merged; Joining is true from the call until the
// join, the merge of that full state included, has ended, and Changed
// fires when it ends.
func TestJoinInBackground(t *testing.T) {
	a := start(t, testConfig("a"))
	a.state.add("a-row")
	p, err := newPeer(testConfig("b", a.address()), log.NewNopLogger(), prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Leave(time.Second) })
	g := &gateState{setState: newSetState(), p: p, gate: make(chan struct{})}
	p.AddState("rows", g)
	if p.Joining() {
		t.Fatal("joining before a join")
	}
	p.JoinInBackground(t.Context())
	if !p.Joining() {
		t.Fatal("not joining when JoinInBackground returns")
	}
	eventually(t, "a's full state being merged", g.merging.Load)
	if !g.joiningInside.Load() || !p.Joining() {
		t.Errorf("joining while a's full state is merged: %v, %v; want true", g.joiningInside.Load(), p.Joining())
	}
	changed := p.Changed()
	close(g.gate)
	eventually(t, "the join ended", func() bool { return !p.Joining() })
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Error("Changed did not fire when the join ended")
	}
	if !g.has("a-row") {
		t.Error("a's row not merged")
	}
	var nilPeer *Peer
	nilPeer.JoinInBackground(t.Context())
	if nilPeer.Joining() {
		t.Error("a nil Peer joining")
	}
}
