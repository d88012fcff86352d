package page

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// startPeer is a member on loopback that gossips fast, joined to peers.
func startPeer(t *testing.T, name string, peers ...string) *cluster.Peer {
	t.Helper()
	p, err := cluster.Create(cluster.Config{ListenAddress: "127.0.0.1:0", Name: name, Peers: peers,
		PeerTimeout: 15 * time.Second, GossipInterval: 20 * time.Millisecond, PushPullInterval: time.Hour,
		ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond,
		SettleTimeout: 5 * time.Second, ReconnectInterval: 200 * time.Millisecond}, log.NewNopLogger(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Join(t.Context()); err != nil && len(peers) > 0 {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Leave(time.Second) })
	return p
}

// In a cluster the page names the members, the units each owns (every
// unit once), and each series' owner.
func TestPageOfACluster(t *testing.T) {
	fake := fakeapi.New(fakeapi.Options{})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	yaml := func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: [hour, day]
      exchange: [binance, okx]
    - path: /v1/btc/network-data/supply
      window: [hour, day]
    - path: /v1/eth/network-data/supply
      window: [hour, day]
`, u)
	}
	pa := startPeer(t, "member-a")
	a := newMember(t, srv.URL, fake, pa, yaml)
	pb := startPeer(t, "member-b", pa.Self().Address)
	newMember(t, srv.URL, fake, pb, yaml)
	for deadline := time.Now().Add(30 * time.Second); len(pa.Members()) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("member-b never joined")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st := NewHandler(a.src).Build(Filter{}, 0, 100)
	if st.Cluster == nil || st.Cluster.Self != "member-a" || len(st.Cluster.Members) != 2 {
		t.Fatalf("the cluster: %+v", st.Cluster)
	}
	units := 0
	for _, m := range st.Cluster.Members {
		units += m.Units
	}
	if units != 6 { // three paths at two windows
		t.Errorf("the members own %d units, want every one of the 6 once: %+v", units, st.Cluster.Members)
	}
	for _, s := range st.Series.Items {
		if !slices.Contains([]string{"member-a", "member-b"}, s.Owner) {
			t.Errorf("series %s: owner %q", s.Key, s.Owner)
		}
	}
	code, body := a.get(t, "/")
	if code != 200 || !contains(body, `id="cluster-table"`, "member-b") {
		t.Errorf("the page does not show the cluster: HTTP %d", code)
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
