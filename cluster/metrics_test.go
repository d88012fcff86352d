package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A burst of 100 deltas of 200 bytes reaches both other members of three,
// by gossip and relays, and push/pull for the few that gossip misses; the
// figures logged are what it costs. The metrics pass promlint.
func TestGossipOfManyDeltas(t *testing.T) {
	cfg := func(name string, peers ...string) Config {
		c := testConfig(name, peers...)
		c.PushPullInterval = time.Second
		return c
	}
	a := start(t, cfg("a"))
	b := start(t, cfg("b", a.address()))
	c := start(t, cfg("c", a.address()))
	all := []*member{a, b, c}
	eventually(t, "all three see a, b, c", seeAll(all, "a", "b", "c"))

	const n, size = 100, 200
	var rows []string
	for i := 0; i < n; i++ {
		row := fmt.Sprintf("%03d%s", i, strings.Repeat("r", size-3))
		rows = append(rows, row)
		a.ch.Broadcast([]byte(row))
	}
	took := eventually(t, "b and c merge all 100 deltas", func() bool { return b.state.has(rows...) && c.state.has(rows...) })
	eventually(t, "a's queue is empty", func() bool { return a.counter(t, "onchain_exporter_cluster_messages_queued") == 0 })
	sent := a.counter(t, "onchain_exporter_cluster_messages_sent_total", "kind", "delta")
	bytes := a.counter(t, "onchain_exporter_cluster_messages_sent_bytes_total", "kind", "delta")
	t.Logf("%d deltas of %d bytes reached 2 members in %s: %v sends, %.0f bytes from the sender (%.0f bytes and %.1f sends per delta; %d bytes of framing each)",
		n, size, took, sent, bytes, bytes/n, sent/n, len(encodeDelta("rows", nil)))
	for _, m := range all[1:] {
		got := m.counter(t, "onchain_exporter_cluster_messages_received_total", "kind", "delta")
		if got < n {
			t.Errorf("%s received %v deltas, want at least %d", m.Name(), got, n)
		}
		t.Logf("%s received %v deltas for %d broadcast and relayed %v", m.Name(), got, n, m.counter(t, "onchain_exporter_cluster_messages_relayed_total"))
	}
	if sent < 2*n {
		t.Errorf("a sent %v deltas, want at least one to each of 2 members for each of %d", sent, n)
	}

	problems, err := testutil.GatherAndLint(a.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	mfs, err := a.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "onchain_exporter_cluster_") || mf.GetHelp() == "" {
			t.Errorf("metric %s: name or help", mf.GetName())
		}
	}
	t.Logf("%d metric families", len(mfs))
}

// Changed fires when the members change, and only then.
func TestChangedFiresOnMembershipChange(t *testing.T) {
	a := start(t, testConfig("a"))
	ch := a.Changed()
	select {
	case <-ch:
		t.Fatal("Changed fired with no change")
	default:
	}
	b := start(t, testConfig("b", a.address()))
	waitClosed(t, ch, "b's join")
	eventually(t, "a sees b", seeAll([]*member{a}, "a", "b"))
	ch = a.Changed()
	if err := b.Leave(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, ch, "b's leave")
	eventually(t, "a sees only a", seeAll([]*member{a}, "a"))
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("Changed did not fire within 30s of %s", what)
	}
}
