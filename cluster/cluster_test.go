package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func units(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("data/price/%d", i)
	}
	return out
}

// owners returns the owner of each unit as m sees it, and checks that
// the ranks of the members seen form 0..n-1 for each unit.
func owners(t *testing.T, ms []*member, us []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, u := range us {
		var ranks []int
		for i, m := range ms {
			owner, r := m.Owner(u)
			if i == 0 {
				out[u] = owner
			} else if owner != out[u] {
				t.Fatalf("unit %s: %s says %s owns it, %s says %s", u, ms[0].Name(), out[u], m.Name(), owner)
			}
			if (r == 0) != (owner == m.Name()) {
				t.Fatalf("unit %s: %s has rank %d, owner %s", u, m.Name(), r, owner)
			}
			if got := m.FallbackDelay(u); got != time.Duration(r)*m.PeerTimeout() {
				t.Fatalf("unit %s: %s waits %s at rank %d", u, m.Name(), got, r)
			}
			ranks = append(ranks, r)
		}
		slices.Sort(ranks)
		for i, r := range ranks {
			if r != i {
				t.Fatalf("unit %s: ranks %v, want 0..%d", u, ranks, len(ms)-1)
			}
		}
	}
	return out
}

// Three members agree on the owner of every unit; when one leaves, only
// the units it owned move, and they are about a third.
func TestOwnersAgreeAndOnlyTheLeaversUnitsMove(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	c := start(t, testConfig("c", a.address()))
	all := []*member{a, b, c}
	took := eventually(t, "all three see a, b, c", seeAll(all, "a", "b", "c"))
	t.Logf("three members see each other %s after the last join", took)

	us := units(100)
	before := owners(t, all, us)
	count := map[string]int{}
	for _, o := range before {
		count[o]++
	}
	t.Logf("units owned: %v", count)
	for _, name := range []string{"a", "b", "c"} {
		if count[name] < 15 || count[name] > 50 {
			t.Errorf("%s owns %d of 100 units; want about a third", name, count[name])
		}
	}

	if err := c.Leave(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	took = eventually(t, "a and b see only a, b", seeAll(all[:2], "a", "b"))
	t.Logf("a leave is seen %s after Leave returns", took)
	after := owners(t, all[:2], us)
	moved := 0
	for _, u := range us {
		if after[u] == before[u] {
			continue
		}
		moved++
		if before[u] != "c" {
			t.Errorf("unit %s moved from %s to %s, but c left", u, before[u], after[u])
		}
	}
	if moved != count["c"] {
		t.Errorf("%d units moved, want the %d that c owned", moved, count["c"])
	}
	if got := a.counter(t, "onchain_exporter_cluster_peer_leaves_total"); got != 1 {
		t.Errorf("a counted %v leaves, want 1", got)
	}
}

// A member that stops without leaving is declared failed, and its units
// move to the members ranked next.
func TestKilledMemberIsRemovedAndItsUnitsMove(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	c := start(t, testConfig("c", a.address()))
	all := []*member{a, b, c}
	eventually(t, "all three see a, b, c", seeAll(all, "a", "b", "c"))
	us := units(100)
	before := owners(t, all, us)
	second := map[string]string{} // the member of rank 1, as a sees it
	for _, u := range us {
		for _, m := range all {
			if m.Rank(u) == 1 {
				second[u] = m.Name()
			}
		}
	}

	c.kill()
	took := eventually(t, "a and b declare c failed", seeAll(all[:2], "a", "b"))
	t.Logf("a killed member is removed %s after it stops", took)
	after := owners(t, all[:2], us)
	for _, u := range us {
		switch {
		case before[u] == "c" && after[u] != second[u]:
			t.Errorf("unit %s: c owned it, now %s, want %s (rank 1)", u, after[u], second[u])
		case before[u] != "c" && after[u] != before[u]:
			t.Errorf("unit %s moved from %s to %s", u, before[u], after[u])
		}
	}
	for _, m := range all[:2] {
		if got := m.counter(t, "onchain_exporter_cluster_peer_leaves_total"); got != 1 {
			t.Errorf("%s counted %v leaves, want 1", m.Name(), got)
		}
		if got := m.counter(t, "onchain_exporter_cluster_failed_peers"); got != 1 {
			t.Errorf("%s retries %v failed peers, want 1", m.Name(), got)
		}
	}
}

// The address of a failed member is asked to rejoin: a member that comes
// back there is joined though it was given no peer to join, as a
// partition heals.
func TestFailedMembersAddressIsRetried(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	eventually(t, "a and b see each other", seeAll([]*member{a, b}, "a", "b"))
	addr := b.address()
	b.kill()
	eventually(t, "a declares b failed", seeAll([]*member{a}, "a"))

	cfg := testConfig("b2")
	cfg.ListenAddress = addr
	b2 := start(t, cfg)
	took := eventually(t, "a rejoins b2 at b's address", seeAll([]*member{a, b2}, "a", "b2"))
	t.Logf("the failed member's address rejoined %s after a new member listens there", took)
}

// A broadcast reaches every other member, by gossip when it fits a packet
// and over TCP when it does not; the sender does not merge its own.
func TestBroadcastReachesAllMembers(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	c := start(t, testConfig("c", a.address()))
	all := []*member{a, b, c}
	eventually(t, "all three see a, b, c", seeAll(all, "a", "b", "c"))

	a.ch.Broadcast([]byte("row-1"))
	took := eventually(t, "b and c merge row-1", func() bool { return b.state.has("row-1") && c.state.has("row-1") })
	t.Logf("a delta reaches two members %s after Broadcast", took)
	sent := a.counter(t, "onchain_exporter_cluster_messages_sent_bytes_total", "kind", "delta")
	n := a.counter(t, "onchain_exporter_cluster_messages_sent_total", "kind", "delta")
	t.Logf("a 5-byte delta: %v messages, %v bytes sent so far (retransmissions included)", n, sent)

	big := strings.Repeat("x", 5000)
	a.ch.Broadcast([]byte(big))
	eventually(t, "b and c merge the 5000-byte delta", func() bool { return b.state.has(big) && c.state.has(big) })
	eventually(t, "a counts two oversized sends", func() bool {
		return a.counter(t, "onchain_exporter_cluster_oversized_messages_total", "result", "sent") == 2
	})
	if a.state.has("row-1") || a.state.has(big) {
		t.Error("a merged its own broadcast")
	}
	for _, m := range all[1:] {
		if got := m.counter(t, "onchain_exporter_cluster_messages_invalid_total", "kind", "delta"); got != 0 {
			t.Errorf("%s counted %v invalid deltas", m.Name(), got)
		}
	}
}

// A member that joins late has the others' whole state when Join
// returns, by the join's push/pull; the others get its state too.
func TestLateJoinerReceivesFullState(t *testing.T) {
	a := create(t, testConfig("a"))
	a.state.add("a-row")
	if err := a.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	b := create(t, testConfig("b", a.address()))
	b.state.add("b-row")
	if err := b.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a has b's row", func() bool { return a.state.has("b-row") })

	c := create(t, testConfig("c", a.address()))
	c.state.add("c-row")
	if err := c.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !c.state.has("a-row", "b-row") {
		t.Fatalf("c has not merged a's and b's rows when Join returns: %s", mustMarshal(t, c.state))
	}
	eventually(t, "a has c's row", func() bool { return a.state.has("c-row") })
	t.Logf("full state received by c: %v bytes", c.counter(t, "onchain_exporter_cluster_messages_received_bytes_total", "kind", "full"))
	if got := c.counter(t, "onchain_exporter_cluster_messages_received_total", "kind", "full"); got < 1 {
		t.Errorf("c counted %v full states received", got)
	}
}

func mustMarshal(t *testing.T, s State) string {
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeKey(t *testing.T, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// Members with the same key form a cluster; a member without the key, or
// with another, cannot join it.
func TestEncryptedClusterRefusesOtherKeys(t *testing.T) {
	raw := randomBytes(t, 32)
	keyA := writeKey(t, raw)
	keyB := writeKey(t, []byte(base64.StdEncoding.EncodeToString(raw)+"\n")) // the same key, base64
	other := writeKey(t, []byte(base64.StdEncoding.EncodeToString(randomBytes(t, 16))))

	ca := testConfig("a")
	ca.KeyFile = keyA
	a := start(t, ca)
	cb := testConfig("b", a.address())
	cb.KeyFile = keyB
	b := start(t, cb)
	eventually(t, "a and b see each other", seeAll([]*member{a, b}, "a", "b"))
	a.ch.Broadcast([]byte("secret-row"))
	eventually(t, "b merges a's delta", func() bool { return b.state.has("secret-row") })

	plain := create(t, testConfig("plain", a.address()))
	if err := plain.Join(t.Context()); err == nil {
		t.Error("a member without the key joined an encrypted cluster")
	}
	co := testConfig("other", a.address())
	co.KeyFile = other
	o := create(t, co)
	if err := o.Join(t.Context()); err == nil {
		t.Error("a member with another key joined the cluster")
	}
	for _, m := range []*member{a, b} {
		if got := m.names(); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("%s sees %v", m.Name(), got)
		}
	}
	for _, m := range []*member{plain, o} {
		if got := m.names(); !slices.Equal(got, []string{m.Name()}) {
			t.Errorf("%s sees %v", m.Name(), got)
		}
		if m.state.has("secret-row") {
			t.Errorf("%s has the cluster's row", m.Name())
		}
	}
}

// A peer given by name joins through what the name resolves to: the real
// resolver's "localhost".
func TestPeerByNameJoins(t *testing.T) {
	a := start(t, testConfig("a"))
	_, port, _ := net.SplitHostPort(a.address())
	b := start(t, testConfig("b", net.JoinHostPort("localhost", port)))
	eventually(t, "a and b see each other", seeAll([]*member{a, b}, "a", "b"))
}

// A name that does not resolve yet is resolved again every reconnect
// interval, and joined once it does (a Service whose pods start later).
func TestPeerNameResolvedAgain(t *testing.T) {
	a := start(t, testConfig("a"))
	host, port, _ := net.SplitHostPort(a.address())
	var ready atomic.Bool
	var lookups atomic.Int32
	b := create(t, testConfig("b", net.JoinHostPort("pods.test", port)))
	b.lookup = func(_ context.Context, name string) ([]string, error) {
		lookups.Add(1)
		if name != "pods.test" || !ready.Load() {
			return nil, errors.New("no such host")
		}
		return []string{host}, nil
	}
	if err := b.Join(t.Context()); err == nil {
		t.Fatal("Join succeeded with no address resolved")
	}
	eventually(t, "the name is looked up again", func() bool { return lookups.Load() >= 2 })
	ready.Store(true)
	eventually(t, "a and b see each other", seeAll([]*member{a, b}, "a", "b"))
	if got := b.counter(t, "onchain_exporter_cluster_join_attempts_total", "result", "success"); got < 1 {
		t.Errorf("b counted %v successful joins", got)
	}
}

// Settle returns once the member count is stable, and Ready follows.
func TestSettle(t *testing.T) {
	a := start(t, testConfig("a"))
	b := start(t, testConfig("b", a.address()))
	if b.Ready() {
		t.Fatal("ready before Settle")
	}
	b.Settle(t.Context())
	if !b.Ready() {
		t.Fatal("not ready after Settle")
	}
	if got := b.counter(t, "onchain_exporter_cluster_settled"); got != 1 {
		t.Errorf("settled = %v", got)
	}
	if got := b.names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("b settled seeing %v", got)
	}
}

// Cluster mode off: Create returns a nil *Peer that answers as a cluster
// of one.
func TestOffIsAClusterOfOne(t *testing.T) {
	p, err := Create(Config{}, nil, nil)
	if err != nil || p != nil {
		t.Fatalf("Create(off) = %v, %v; want nil, nil", p, err)
	}
	if owner, r := p.Owner("u"); owner != "" || r != 0 {
		t.Errorf("Owner = %q, %d", owner, r)
	}
	if p.Rank("u") != 0 || p.FallbackDelay("u") != 0 || p.Members() != nil || !p.Ready() || p.Name() != "" {
		t.Error("a nil *Peer is not a cluster of one")
	}
	ch := p.AddState("rows", newSetState())
	ch.Broadcast([]byte("x"))
	p.Settle(t.Context())
	if err := p.Join(t.Context()); err != nil {
		t.Error(err)
	}
	if err := p.Leave(time.Second); err != nil {
		t.Error(err)
	}
}
