package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A burst of deltas, each filling a gossip packet, reaches every member
// of four with no push/pull to repair what gossip misses. memberlist's
// queue counts a delta's transmissions, not the members they went to:
// in a burst, each gossip round hands different deltas to its targets,
// and a delta's few transmissions (and its relays) could all go to the
// others. A member then never had the row: a tuple of the first fill
// not served until its fallback, rank × peer timeout later (the cluster
// benchmark's "tuple scrapes without a row"). Each delta now goes to
// every member once at once, and gossip repeats it.
func TestBurstReachesEveryMember(t *testing.T) {
	cfg := func(name string, peers ...string) Config {
		c := testConfig(name, peers...)
		c.GossipInterval = 10 * time.Millisecond
		return c // push/pull an hour away: only gossip delivers
	}
	a := start(t, cfg("a"))
	all := []*member{a}
	for _, name := range []string{"b", "c", "d"} {
		all = append(all, start(t, cfg(name, a.address())))
	}
	eventually(t, "all four see a, b, c, d", seeAll(all, "a", "b", "c", "d"))

	// 650 bytes: one delta a gossip packet (maxGossipPacket).
	const n, size = 300, 650
	var rows []string
	for i := range n {
		row := fmt.Sprintf("%04d%s", i, strings.Repeat("r", size-4))
		rows = append(rows, row)
		a.ch.Broadcast([]byte(row))
	}
	eventually(t, "every queue empty", func() bool {
		for _, m := range all {
			if m.counter(t, "onchain_exporter_cluster_messages_queued") != 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(200 * time.Millisecond) // the last packets in flight
	for _, m := range all[1:] {
		missed := 0
		for _, r := range rows {
			if !m.state.has(r) {
				missed++
			}
		}
		if missed > 0 {
			t.Errorf("%s missed %d of %d deltas of a burst", m.Name(), missed, n)
		}
	}
}
