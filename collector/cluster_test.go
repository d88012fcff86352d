package collector

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// replica is one member of a test cluster: an exporter and its peer.
type replica struct {
	*env
	peer *cluster.Peer
}

// clusterConfig is a member on loopback that probes and gossips fast.
func clusterConfig(name string, peers ...string) cluster.Config {
	return cluster.Config{ListenAddress: "127.0.0.1:0", ClusterName: "test", Name: name, Peers: peers,
		PeerTimeout: 15 * time.Second, GossipInterval: 20 * time.Millisecond, PushPullInterval: time.Hour,
		ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond,
		SettleTimeout: 5 * time.Second, ReconnectInterval: 200 * time.Millisecond}
}

// startReplica starts a member on the shared fake and clock, joined to
// peers.
func startReplica(t *testing.T, name, yml string, up *testtool.Upstream, peers ...string) *replica {
	t.Helper()
	reg := prometheus.NewRegistry()
	p, err := cluster.Create(clusterConfig(name, peers...), log.NewNopLogger(), reg)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, clock: up.Clock, fake: up.Fake, srv: up.Srv, reg: reg}
	exp, err := New(e.parse(yml), log.NewNopLogger(), reg, Options{Clock: up.Clock, IdleAfter: neverIdle, Peer: p})
	if err != nil {
		t.Fatal(err)
	}
	e.exp = exp
	if err := p.Join(t.Context()); err != nil && len(peers) > 0 {
		t.Fatal(err)
	}
	r := &replica{env: e, peer: p}
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *replica) stop() {
	if r.peer == nil {
		return
	}
	r.exp.Close()
	_ = r.peer.Leave(time.Second)
	r.peer = nil
}

// eventually waits, in real time, for cond: gossip runs on the wall clock.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testtool.Until(t, 30*time.Second, what, cond)
}

// scrapeAside serves a scrape whose answer nobody reads, from a goroutine
// of its own: it wakes the member's engine (the first scrape waits for a
// first fill), and the test looks at what the members serve afterwards.
func scrapeAside(exp *Exporter) {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "60")
	exp.ServeHTTP(httptest.NewRecorder(), req)
}

// dataLines are the data series of a scrape.
func dataLines(body string) string {
	var out []string
	for _, l := range lines(body, "onchain_") {
		if !strings.HasPrefix(l, "onchain_exporter_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// round waits until the members have made the calls a round of due rows
// takes, then until every member serves the same new values.
func round(t *testing.T, members []*replica, old string, fake *fakeapi.Server, calls int64) {
	t.Helper()
	eventually(t, "the round's calls made", func() bool { return fake.Calls("data") >= calls })
	eventually(t, "the new rows served alike by every member", func() bool {
		first := ""
		for _, r := range members {
			r.exp.Settle()
			body := dataLines(r.serve("10"))
			if body == old || first != "" && body != first {
				return false
			}
			first = body
		}
		return true
	})
}

// TestClusterSharesCalls: three members share the calls of one
// configuration and each serves every series, the same values; when the
// owner of units leaves, the others take them over; a member that joins
// serves every series at once, with no call.
func TestClusterSharesCalls(t *testing.T) {
	up := testtool.StartFake(t, fakeapi.Options{})
	clk, fake := up.Clock, up.Fake
	a := startReplica(t, "a", supplyConfig, up)
	addr := a.peer.Self().Address
	b := startReplica(t, "b", supplyConfig, up, addr)
	c := startReplica(t, "c", supplyConfig, up, addr)
	all := []*replica{a, b, c}
	eventually(t, "three members seen by each", func() bool {
		return len(a.peer.Members()) == 3 && len(b.peer.Members()) == 3 && len(c.peer.Members()) == 3
	})
	tuples := int64(len(a.parse(supplyConfig).Tuples))

	// The first fill: each tuple is fetched once, by its unit's owner;
	// the others wait for its row (first scrapes wait for a first fill).
	for _, r := range all {
		go scrapeAside(r.exp)
	}
	want := ""
	eventually(t, "every member serving every series", func() bool {
		for _, r := range all {
			body := dataLines(r.serve("10"))
			if strings.Count(body, "onchain_supply{") != 2 || strings.Count(body, "onchain_open_interest") != 2 {
				return false
			}
		}
		return true
	})
	if got := fake.Calls("data"); got != tuples {
		t.Errorf("the first fill of %d tuples by three members made %d calls, want %d", tuples, got, tuples)
	}
	for _, r := range all {
		r.exp.Settle()
		body := dataLines(r.serve("10"))
		if want == "" {
			want = body
		} else if body != want {
			t.Errorf("members serve other values:\n%s\n---\n%s", want, body)
		}
	}

	// Two hours on, every tuple but the day's is due again: one call
	// each, as one exporter alone makes.
	due := tuples - 1
	calls := fake.Calls("data")
	clk.Add(2 * time.Hour)
	round(t, all, want, fake, calls+due)
	if got := fake.Calls("data") - calls; got != due {
		t.Errorf("a round of due rows cost %d calls across three members, want %d", got, due)
	}
	owned := 0.0
	for _, r := range all {
		owned += counter(r.serve("10"), `onchain_exporter_cluster_units_owned{api="data"}`)
	}
	if owned != 3 {
		t.Errorf("the members own %v units in all, want the configuration's 3", owned)
	}

	// The owner of the most units leaves: the others take its units over
	// and the next rows come at the next round, fetched once.
	var gone *replica
	most := -1.0
	for _, r := range all {
		if n := counter(r.serve("10"), `onchain_exporter_cluster_units_owned{api="data"}`); n > most {
			gone, most = r, n
		}
	}
	gone.stop()
	var left []*replica
	for _, r := range all {
		if r != gone {
			left = append(left, r)
		}
	}
	eventually(t, "two members seen", func() bool {
		return len(left[0].peer.Members()) == 2 && len(left[1].peer.Members()) == 2
	})
	before := dataLines(left[0].serve("10"))
	calls = fake.Calls("data")
	clk.Add(2 * time.Hour)
	round(t, left, before, fake, calls+due)
	if got := fake.Calls("data") - calls; got != due {
		t.Errorf("after the owner left, a round cost %d calls, want %d", got, due)
	}

	// A member that joins serves every series at once: no call.
	calls = fake.Calls("data")
	d := startReplica(t, "d", supplyConfig, up, left[0].peer.Self().Address)
	body := dataLines(d.serve("10"))
	if want := dataLines(left[0].serve("10")); body != want {
		t.Errorf("a member that joined serves\n%s\nwant\n%s", body, want)
	}
	if got := fake.Calls("data") - calls; got != 0 {
		t.Errorf("a member that joined made %d calls, want 0", got)
	}
	_ = config.APIData
}

// TestClusterFallsBackWhenTheOwnerIsSilent: a member whose unit's owner
// is alive to the cluster but sends nothing (hung, or cut off from the
// upstream) fetches the unit itself rank × peer timeout after it was
// due: a late row, never a missing one.
func TestClusterFallsBackWhenTheOwnerIsSilent(t *testing.T) {
	up := testtool.StartFake(t, fakeapi.Options{})
	clk, fake := up.Clock, up.Fake
	a := startReplica(t, "a", supplyConfig, up)
	b := startReplica(t, "b", supplyConfig, up, a.peer.Self().Address)
	eventually(t, "two members", func() bool { return len(a.peer.Members()) == 2 && len(b.peer.Members()) == 2 })
	go scrapeAside(a.exp)
	go scrapeAside(b.exp)
	eventually(t, "b serving every series", func() bool {
		body := dataLines(b.serve("10"))
		return strings.Count(body, "onchain_supply{") == 2 && strings.Count(body, "onchain_open_interest") == 2
	})
	a.exp.Settle()
	b.exp.Settle()
	// The silent one owns the unit of two tuples (open interest, binance
	// and bybit): the other falls back for both within one peer timeout,
	// not one timeout per tuple.
	const unit = "data /v1/btc/market-data/open-interest hour"
	if owner, _ := a.peer.Owner(unit); owner != a.peer.Name() {
		a, b = b, a
	}
	if owner, _ := b.peer.Owner(unit); owner != a.peer.Name() {
		t.Fatalf("the members disagree on the owner of %q", unit)
	}
	a.exp.Close() // a stays a member, and fetches nothing more
	before := dataLines(b.serve("10"))
	calls := fake.Calls("data")
	clk.Add(2 * time.Hour)
	b.exp.Settle()
	if got := counter(b.serve("10"), `onchain_exporter_cluster_refreshes_total{api="data",role="fallback"}`); got != 0 {
		t.Fatalf("b fell back %v times before the peer timeout", got)
	}
	clk.Add(15 * time.Second) // b's rank × --cluster.peer-timeout for a's units
	b.exp.Settle()
	body := b.serve("10")
	if dataLines(body) == before {
		t.Error("b serves the old rows after the owner's peer timeout")
	}
	if got := counter(body, `onchain_exporter_cluster_refreshes_total{api="data",role="fallback"}`); got == 0 {
		t.Error("no fallback refresh counted")
	}
	if got := fake.Calls("data") - calls; got != 3 {
		t.Errorf("a round with a silent owner cost %d calls, want 3 (each due tuple once)", got)
	}
}
