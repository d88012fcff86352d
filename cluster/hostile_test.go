package cluster

import (
	"encoding/base64"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// Two clusters of different names stay apart when one's member comes up
// at the address of the other's departed member (a pod address reused):
// the first keeps knocking at the address, the newcomer's cluster refuses
// it, counts it and logs it once. With one label for every cluster, the
// two became one.
func TestClusterNamesStayApart(t *testing.T) {
	named := func(cluster, name string, peers ...string) Config {
		c := testConfig(name, peers...)
		c.ClusterName = cluster
		return c
	}
	a1 := start(t, named("staging", "a1"))
	a2 := start(t, named("staging", "a2", a1.address()))
	eventually(t, "a1 and a2 form staging", seeAll([]*member{a1, a2}, "a1", "a2"))
	reused := a2.address()
	a2.kill() // failed, not left: a1 asks its address to rejoin
	eventually(t, "a1 sees a2 fail", seeAll([]*member{a1}, "a1"))

	at := named("production", "b1-at-a2s-address")
	at.ListenAddress = reused
	b1 := start(t, at)
	b2 := start(t, named("production", "b2", b1.address()))
	eventually(t, "b1 and b2 form production", seeAll([]*member{b1, b2}, "b1-at-a2s-address", "b2"))
	eventually(t, "b1 refuses a1's knocks", func() bool {
		return b1.counter(t, "onchain_exporter_cluster_messages_refused_total", "reason", "cluster_name") > 0
	})
	time.Sleep(2 * time.Second) // ten reconnect intervals of a1
	if got := strings.Join(a1.names(), ","); got != "a1" {
		t.Errorf("a1 sees %s; want staging alone", got)
	}
	for _, m := range []*member{b1, b2} {
		if got := strings.Join(m.names(), ","); got != "b1-at-a2s-address,b2" {
			t.Errorf("%s sees %s; want production alone", m.Name(), got)
		}
	}
	logs := b1.logs.String()
	if n := strings.Count(logs, "refused gossip from another cluster"); n != 1 {
		t.Errorf("b1 logged the other cluster %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs, `label=onchain_exporter:staging`) {
		t.Errorf("b1's log does not name the other cluster:\n%s", logs)
	}
}

// A member that left is not asked to rejoin; one that failed is, until
// --cluster.reconnect-timeout, which is minutes, not hours.
func TestLeftMembersAreNotRetried(t *testing.T) {
	a := start(t, testConfig("a"))
	a.memberLeft(&memberlist.Node{Name: "gone", Addr: []byte{127, 0, 0, 9}, Port: 1, Meta: []byte(metaLeaving)})
	a.memberLeft(&memberlist.Node{Name: "crashed", Addr: []byte{127, 0, 0, 8}, Port: 1})
	now := time.Now()
	if got := a.lost(nil, now); len(got) != 1 || got[0] != "127.0.0.8:1" {
		t.Errorf("addresses retried: %v, want the crashed member's alone", got)
	}
	if d := (Config{}).withDefaults().ReconnectTimeout; d > 15*time.Minute {
		t.Errorf("a failed member's address is retried for %s by default", d)
	}
	if got := a.lost(nil, now.Add(a.cfg.ReconnectTimeout+time.Second)); len(got) != 0 {
		t.Errorf("after the reconnect timeout: %v retried", got)
	}
}

// Without a key, a member says so at start: a warning and a gauge.
func TestClearGossipIsShown(t *testing.T) {
	a := start(t, testConfig("a"))
	if got := a.counter(t, "onchain_exporter_cluster_encrypted"); got != 0 || a.Encrypted() {
		t.Errorf("encrypted = %v (Encrypted %v) in the clear", got, a.Encrypted())
	}
	if !strings.Contains(a.logs.String(), "gossip is in the clear") {
		t.Errorf("no warning at start:\n%s", a.logs.String())
	}
	cfg := testConfig("b")
	cfg.KeyFile = writeKey(t, []byte(base64.StdEncoding.EncodeToString(randomBytes(t, 32))))
	b := start(t, cfg)
	if got := b.counter(t, "onchain_exporter_cluster_encrypted"); got != 1 || !b.Encrypted() {
		t.Errorf("encrypted = %v (Encrypted %v) with a key", got, b.Encrypted())
	}
	if strings.Contains(b.logs.String(), "gossip is in the clear") {
		t.Error("a member with a key warns of clear gossip")
	}
}

// A key is rotated on running members with no partition: the new key is
// added beside the old, made primary, and the old removed, each step on
// every member before the next. Each step, a delta still reaches every
// member; at the end a member with the old key alone is refused.
func TestKeyRotationWithoutPartition(t *testing.T) {
	oldKey := base64.StdEncoding.EncodeToString(randomBytes(t, 32))
	newKey := base64.StdEncoding.EncodeToString(randomBytes(t, 32))
	var files []string
	var all []*member
	for i, name := range []string{"a", "b", "c"} {
		cfg := testConfig(name)
		cfg.KeyFile = writeKey(t, []byte(oldKey+"\n"))
		if i > 0 {
			cfg.Peers = []string{all[0].address()}
		}
		files = append(files, cfg.KeyFile)
		all = append(all, start(t, cfg))
	}
	eventually(t, "a, b and c together", seeAll(all, "a", "b", "c"))
	steps := []struct {
		name, content string
		keys          float64
	}{
		{"new beside old", oldKey + "\n" + newKey + "\n", 2},
		{"new primary", newKey + "\n" + oldKey + "\n", 2},
		{"old removed", newKey + "\n", 1},
	}
	for i, step := range steps {
		// One member at a time, as a Secret reaches pods one by one.
		for j, f := range files {
			if err := os.WriteFile(f, []byte(step.content), 0o600); err != nil {
				t.Fatal(err)
			}
			m := all[j]
			eventually(t, m.Name()+" installs "+step.name, func() bool {
				return m.counter(t, "onchain_exporter_cluster_encryption_keys") == step.keys &&
					m.counter(t, "onchain_exporter_cluster_encryption_key_reloads_total", "result", "success") == float64(i+1)
			})
			row := step.name + " after " + m.Name()
			all[0].ch.Broadcast([]byte(row))
			eventually(t, "every member merges "+row, func() bool {
				return all[1].state.has(row) && all[2].state.has(row)
			})
		}
	}
	for _, m := range all {
		if got := m.counter(t, "onchain_exporter_cluster_peer_leaves_total"); got != 0 {
			t.Errorf("%s saw %v members leave during the rotation", m.Name(), got)
		}
	}
	cfg := testConfig("stale", all[0].address())
	cfg.KeyFile = writeKey(t, []byte(oldKey))
	stale := create(t, cfg)
	if err := stale.Join(t.Context()); err == nil {
		t.Error("a member with the removed key joined")
	}
}

// No more members than --cluster.max-members are taken in; the one past
// it is refused and counted, and works alone.
func TestMaxMembers(t *testing.T) {
	cfg := func(name string, peers ...string) Config {
		c := testConfig(name, peers...)
		c.MaxMembers = 2
		return c
	}
	a := start(t, cfg("a"))
	b := start(t, cfg("b", a.address()))
	eventually(t, "a and b", seeAll([]*member{a, b}, "a", "b"))
	c := create(t, cfg("c", a.address()))
	_ = c.Join(t.Context())
	eventually(t, "a refuses c", func() bool {
		return a.counter(t, "onchain_exporter_cluster_messages_refused_total", "reason", "members") > 0
	})
	time.Sleep(time.Second)
	if got := strings.Join(a.names(), ","); got != "a,b" {
		t.Errorf("a sees %s past --cluster.max-members 2", got)
	}
	// Logged once per host, not once per message: a flood of members
	// does not flood the log.
	warned := 0
	for _, line := range strings.Split(a.logs.String(), "\n") {
		if strings.Contains(line, "level=warn") && (strings.Contains(line, "member past") || strings.Contains(line, "ignoring alive")) {
			warned++
		}
	}
	if warned > 2 {
		t.Errorf("a logged %d warnings for one refused member:\n%s", warned, a.logs.String())
	}
}

// A delta or a full state past its bound is refused before it is read,
// and counted.
func TestOversizedMessagesRefused(t *testing.T) {
	cfg := func(name string, peers ...string) Config {
		c := testConfig(name, peers...)
		c.MaxDeltaBytes = 4096
		return c
	}
	a := start(t, cfg("a"))
	b := start(t, cfg("b", a.address()))
	eventually(t, "a and b", seeAll([]*member{a, b}, "a", "b"))
	big := strings.Repeat("x", 10000)
	a.ch.Broadcast([]byte(big))
	eventually(t, "b refuses the 10000-byte delta", func() bool {
		return b.counter(t, "onchain_exporter_cluster_messages_refused_total", "reason", "delta_size") == 1
	})
	if b.state.has(big) {
		t.Error("b merged a delta past its bound")
	}

	// A full state past --cluster.max-state-bytes: c's join brings a's
	// state of 20000 bytes to a member that takes 16000.
	a.state.add(strings.Repeat("y", 20000))
	small := testConfig("c", a.address())
	small.MaxStateBytes = 16000
	c := start(t, small)
	eventually(t, "c refuses a's full state", func() bool {
		return c.counter(t, "onchain_exporter_cluster_messages_refused_total", "reason", "state_size") > 0 ||
			c.counter(t, "onchain_exporter_cluster_messages_refused_total", "reason", "stream_size") > 0
	})
	if c.state.has(strings.Repeat("y", 20000)) {
		t.Error("c merged a full state past its bound")
	}
}

// Compressed gossip in the clear (memberlist's default, which expands a
// message up to 40 MiB whatever its size on the wire) is refused before
// memberlist expands it: this cluster's members do not compress.
func TestCompressedGossipRefusedInTheClear(t *testing.T) {
	a := start(t, testConfig("a"))
	mc := memberlist.DefaultLANConfig() // EnableCompression: true
	mc.Name, mc.BindAddr, mc.BindPort, mc.AdvertisePort = "zip", "127.0.0.1", 0, 0
	mc.Label = testLabel
	mc.LogOutput = &syncBuffer{}
	ml, err := memberlist.Create(mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ml.Shutdown() })
	if _, err := ml.Join([]string{a.address()}); err == nil {
		t.Error("a compressing member joined")
	}
	if got := a.counter(t, "onchain_exporter_cluster_messages_refused_total", "reason", "compressed"); got == 0 {
		t.Error("no compressed stream refused")
	}
	if got := strings.Join(a.names(), ","); got != "a" {
		t.Errorf("a sees %s", got)
	}
}

// Through memberlist itself: a member that leaves is seen to have left
// and is not asked to rejoin; one killed is seen to have failed and is.
func TestALeaveIsNotAFailure(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	c := start(t, testConfig("c", a.address()))
	eventually(t, "a sees a, b, c", seeAll([]*member{a}, "a", "b", "c"))
	bAddr, cAddr := b.address(), c.address()
	if err := b.Leave(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	c.kill()
	eventually(t, "a sees only a", seeAll([]*member{a}, "a"))
	logs := a.logs.String()
	if !strings.Contains(logs, `msg="member left" member=b`) {
		t.Errorf("b left, but a did not log it as such:\n%s", logs)
	}
	if !strings.Contains(logs, `msg="member failed" member=c`) {
		t.Errorf("c was killed, but a did not log it as failed:\n%s", logs)
	}
	got := a.lost(nil, time.Now())
	if slices.Contains(got, bAddr) || !slices.Contains(got, cAddr) {
		t.Errorf("addresses a retries: %v, want c's (%s) and not b's (%s)", got, cAddr, bAddr)
	}
}
