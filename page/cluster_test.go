package page

import (
	"fmt"
	"math"
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

// startPeer is a member on loopback that gossips fast, joined to peers,
// its metrics in reg.
func startPeer(t *testing.T, reg prometheus.Registerer, name string, peers ...string) *cluster.Peer {
	t.Helper()
	return startPeerWaiting(t, reg, 15*time.Second, name, peers...)
}

// startPeerWaiting is startPeer with a peer timeout of its own.
func startPeerWaiting(t *testing.T, reg prometheus.Registerer, peerTimeout time.Duration, name string, peers ...string) *cluster.Peer {
	t.Helper()
	p, err := cluster.Create(cluster.Config{ListenAddress: "127.0.0.1:0", ClusterName: "test", Name: name, Peers: peers,
		PeerTimeout: peerTimeout, GossipInterval: 20 * time.Millisecond, PushPullInterval: time.Hour,
		ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond,
		SettleTimeout: 5 * time.Second, ReconnectInterval: 200 * time.Millisecond}, log.NewNopLogger(), reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Join(t.Context()); err != nil && len(peers) > 0 {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Leave(time.Second) })
	return p
}

// In a cluster the page names the members, their health, the units each
// owns (every unit once), and each series' owner; its counts of members
// are /metrics' own. A member that runs another configuration is live
// but does not serve, and owns nothing.
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
	regA := prometheus.NewRegistry()
	pa := startPeer(t, regA, "member-a")
	a := newMember(t, srv.URL, fake, pa, yaml)
	pb := startPeer(t, prometheus.NewRegistry(), "member-b", pa.Self().Address)
	newMember(t, srv.URL, fake, pb, yaml)
	for deadline := time.Now().Add(30 * time.Second); len(pa.Members()) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("member-b never joined")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st := NewHandler(a.src).Build(Filter{}, "", 0, 100)
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
	for _, m := range st.Cluster.Members {
		switch {
		case !m.Serving || !m.Failed.IsZero():
			t.Errorf("member %s does not serve: %+v", m.Name, m)
		case m.Name == "member-a" && (!m.Self || m.HeartbeatAge != nil || m.SameConfig != nil):
			t.Errorf("this member: %+v", m)
		case m.Name == "member-b" && (m.Self || m.HeartbeatAge == nil || *m.HeartbeatAge < 0 || *m.HeartbeatAge > 10 ||
			m.SameConfig == nil || !*m.SameConfig || math.Abs(m.ClockOffset) > 1):
			t.Errorf("the other member: %+v", m)
		}
	}
	agree := func(st Status) {
		t.Helper()
		mfs, err := regA.Gather()
		if err != nil {
			t.Fatal(err)
		}
		gauge := map[string]float64{}
		for _, mf := range mfs {
			if len(mf.Metric) == 1 && mf.Metric[0].Gauge != nil {
				gauge[mf.GetName()] = mf.Metric[0].Gauge.GetValue()
			}
		}
		failed := 0
		for _, m := range st.Cluster.Members {
			if !m.Failed.IsZero() {
				failed++
			}
		}
		if float64(st.Cluster.Serving) != gauge["onchain_exporter_cluster_members"] ||
			float64(len(st.Cluster.Members)-failed) != gauge["onchain_exporter_cluster_live_members"] ||
			float64(failed) != gauge["onchain_exporter_cluster_failed_peers"] {
			t.Errorf("the page: %d serving, %d members, %d failed; /metrics: %v", st.Cluster.Serving, len(st.Cluster.Members), failed, gauge)
		}
	}
	agree(st)
	code, body := a.get(t, "/")
	if code != 200 || !contains(body, `id="cluster-table"`, "<bdi>member-b</bdi>", "<bdi>member-a</bdi> (this member)", "<td>serves</td>", "<td>the same</td>") {
		t.Errorf("the page does not show the cluster: HTTP %d", code)
	}

	// member-b runs another configuration: it stays live, stops serving
	// and owns nothing; member-a owns every unit.
	pb.SetConfigDigest("another configuration")
	for deadline := time.Now().Add(30 * time.Second); len(pa.Members()) != 1; {
		if time.Now().After(deadline) {
			t.Fatal("member-b still serves")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st = NewHandler(a.src).Build(Filter{}, "", 0, 100)
	if n := len(st.Cluster.Members); n != 2 || st.Cluster.Serving != 1 {
		t.Fatalf("after member-b's change: %+v", st.Cluster)
	}
	if b := st.Cluster.Members[1]; b.Name != "member-b" || b.Serving || b.Units != 0 || b.SameConfig == nil || *b.SameConfig {
		t.Errorf("member-b on another configuration: %+v", b)
	}
	if a := st.Cluster.Members[0]; a.Units != 6 {
		t.Errorf("member-a owns %d units, want all 6", a.Units)
	}
	agree(st)
	if _, body := a.get(t, "/"); !contains(body, "<td>live, does not serve</td>", "<td>another: owns nothing</td>") {
		t.Error("the page does not show member-b's other configuration")
	}
}

// A member whose owner of some units says nothing of them calls them
// itself after the peer timeout: the page lists those units as its
// fallbacks, by owner, and /metrics counts its fallback refreshes.
func TestPageShowsFallbacks(t *testing.T) {
	fake := fakeapi.New(fakeapi.Options{})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	regA := prometheus.NewRegistry()
	pa := startPeerWaiting(t, regA, 200*time.Millisecond, "member-a")
	a := newMember(t, srv.URL, fake, pa, func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  metrics:
    - path: /v1/btc/network-data/supply
      window: [hour, day]
      cache_ttl: 200ms
    - path: /v1/btc/market-data/open-interest
      window: [hour, day]
      exchange: binance
      cache_ttl: 200ms
`, u)
	})
	a.reg = regA
	// member-b serves (its heartbeats come) but runs no exporter: the
	// rows of the units it owns never come.
	startPeerWaiting(t, prometheus.NewRegistry(), 200*time.Millisecond, "member-b", pa.Self().Address)
	var st Status
	for deadline := time.Now().Add(30 * time.Second); ; {
		a.scrape(t)
		st = NewHandler(a.src).Build(Filter{}, "", 0, 100)
		if len(st.Cluster.Members) == 2 && st.Cluster.Members[1].Units > 0 && len(st.Cluster.Fallbacks) == st.Cluster.Members[1].Units {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("member-a never called every unit of member-b as a fallback: %+v", st.Cluster)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if b := st.Cluster.Members[1]; b.Name != "member-b" || b.Fallbacks != b.Units {
		t.Errorf("member-b: %+v", b)
	}
	for _, f := range st.Cluster.Fallbacks {
		if f.Owner != "member-b" || f.API != "data" || f.At.IsZero() {
			t.Errorf("a fallback: %+v", f)
		}
	}
	for _, s := range st.Series.Items {
		if s.Owner == "member-b" && (len(s.Answers) == 0 || s.Answers[0].By != "fallback") {
			t.Errorf("a series of member-b's: %+v", s.Answers)
		}
	}
	if v, ok := metricValue(a.scrape(t), `onchain_exporter_cluster_refreshes_total{api="data",role="fallback"}`); !ok || v < float64(len(st.Cluster.Fallbacks)) {
		t.Errorf("/metrics counts %v fallback refreshes, the page %d units called as a fallback", v, len(st.Cluster.Fallbacks))
	}
	if _, body := a.get(t, "/"); !contains(body, `id="fallback-table"`, "<td><bdi>member-b</bdi></td>") {
		t.Error("the page does not list the fallbacks")
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
