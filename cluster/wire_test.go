package cluster

import (
	"encoding/base64"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// udpCounter counts the bytes a member writes to UDP, as they leave it:
// labelled, encrypted, several messages to a packet.
type udpCounter struct {
	memberlist.NodeAwareTransport
	bytes, packets *atomic.Int64
}

func (t *udpCounter) WriteTo(b []byte, addr string) (time.Time, error) {
	t.bytes.Add(int64(len(b)))
	t.packets.Add(1)
	return t.NodeAwareTransport.WriteTo(b, addr)
}

func (t *udpCounter) WriteToAddress(b []byte, addr memberlist.Address) (time.Time, error) {
	t.bytes.Add(int64(len(b)))
	t.packets.Add(1)
	return t.NodeAwareTransport.WriteToAddress(b, addr)
}

// What a burst of 100 rows of 200 bytes costs on the wire in an encrypted
// cluster of three, by gossip alone (no push/pull): the figures are
// logged; the test asks that gossip deliver at least 190 of the 200
// deliveries (measured: 3 misses in 2000), and that a quiet cluster's own
// traffic (probes) be told apart from the rows'.
func TestGossipBytesOnTheWire(t *testing.T) {
	key := writeKey(t, []byte(base64.StdEncoding.EncodeToString(randomBytes(t, 32))))
	var bytes, packets atomic.Int64
	wrap := func(nt memberlist.NodeAwareTransport) memberlist.NodeAwareTransport {
		return &udpCounter{NodeAwareTransport: nt, bytes: &bytes, packets: &packets}
	}
	cfg := func(name string, peers ...string) Config {
		c := testConfig(name, peers...)
		c.KeyFile = key
		return c
	}
	a := createWith(t, cfg("a"), wrap)
	var all = []*member{a}
	for _, name := range []string{"b", "c"} {
		m := createWith(t, cfg(name, a.address()), wrap)
		if err := m.Join(t.Context()); err != nil {
			t.Fatal(err)
		}
		all = append(all, m)
	}
	eventually(t, "all three see a, b, c", seeAll(all, "a", "b", "c"))

	// The cluster's own traffic over one second, for scale.
	b0, p0, t0 := bytes.Load(), packets.Load(), time.Now()
	time.Sleep(time.Second)
	quiet := float64(bytes.Load()-b0) / time.Since(t0).Seconds()
	t.Logf("a quiet cluster of 3 (probe interval %s): %.0f bytes/s, %.0f packets/s on UDP", all[0].cfg.ProbeInterval, quiet, float64(packets.Load()-p0)/time.Since(t0).Seconds())

	const n, size = 100, 200
	var rows []string
	b1, p1, t1 := bytes.Load(), packets.Load(), time.Now()
	for i := 0; i < n; i++ {
		// Random text: memberlist compresses packets, and rows of one
		// letter would measure the compressor.
		row := fmt.Sprintf("%03d%s", i, base64.StdEncoding.EncodeToString(randomBytes(t, size))[:size-3])
		rows = append(rows, row)
		a.ch.Broadcast([]byte(row))
	}
	eventually(t, "every queue is empty", func() bool {
		for _, m := range all {
			if m.queue.NumQueued() > 0 {
				return false
			}
		}
		return true
	})
	took := time.Since(t1)
	sent, pk := float64(bytes.Load()-b1)-quiet*took.Seconds(), packets.Load()-p1
	delivered := 0
	for _, m := range all[1:] {
		for _, r := range rows {
			if m.state.has(r) {
				delivered++
			}
		}
	}
	t.Logf("%d rows of %d bytes: gossip done in %s, %d of %d deliveries, %.0f bytes on UDP by all three (%.0f per row, %.1f per row per member), %d packets",
		n, size, took.Round(time.Millisecond), delivered, 2*n, sent, sent/n, sent/n/3, pk)
	if delivered < 2*n-10 {
		t.Errorf("gossip delivered %d of %d", delivered, 2*n)
	}
}

// In a cluster of two a delta is not relayed: the only other member is the
// one that sent it.
func TestNoRelayBetweenTwo(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	eventually(t, "a and b see each other", seeAll([]*member{a, b}, "a", "b"))
	a.ch.Broadcast([]byte("row"))
	eventually(t, "b merges the row", func() bool { return b.state.has("row") })
	eventually(t, "a's queue is empty", func() bool { return a.queue.NumQueued() == 0 })
	if got := b.counter(t, "onchain_exporter_cluster_messages_relayed_total"); got != 0 {
		t.Errorf("b relayed %v deltas", got)
	}
	if got := b.queue.NumQueued(); got != 0 {
		t.Errorf("b queued %d deltas", got)
	}
}
