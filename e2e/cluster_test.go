package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// clusterConfig is the configuration of TestClusterEndToEnd: ten data
// tuples in six refresh units (an endpoint and window each), every one
// refreshed every 3 s (cache_ttl) so that rounds come due within the test.
const clusterConfig = dataSection + `    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [all_exchange, binance, bybit]
      cache_ttl: 3s
    - path: /v1/{asset}/exchange-flows/reserve
      asset: [btc, eth]
      exchange: [all_exchange, binance]
      cache_ttl: 3s
    - path: /v1/{asset}/network-data/supply
      asset: btc
      window: [day, block]
      cache_ttl: 3s
    - path: /v2/network/events-count
      asset: usdt
      window: hour
      cache_ttl: 3s
`

// clusterTuples is the number of tuples of clusterConfig.
const clusterTuples = 3 + 2*2 + 2 + 1

// peerTimeout is the members' --cluster.peer-timeout: short, so that a
// dead owner's rows are fetched by the survivor within the test.
const peerTimeout = 2 * time.Second

// countingUpstream is the fake upstream with a count of the requests of
// each tuple (path and query, the credential left out) and of all, and
// apart from them the listing calls (discovery), which each member makes
// for itself at start.
type countingUpstream struct {
	fake      http.Handler
	mu        sync.Mutex
	byRequest map[string]int
	total     int
	listing   int
}

func (u *countingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	q.Del("api_key")
	u.mu.Lock()
	if strings.Contains(r.URL.Path, "/discovery/") {
		u.listing++
	} else {
		u.byRequest[r.URL.Path+"?"+q.Encode()]++
		u.total++
	}
	u.mu.Unlock()
	u.fake.ServeHTTP(w, r)
}

// listings returns the number of listing calls.
func (u *countingUpstream) listings() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.listing
}

// counts returns a copy of the per-request counts and the total.
func (u *countingUpstream) counts() (map[string]int, int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := make(map[string]int, len(u.byRequest))
	for k, v := range u.byRequest {
		m[k] = v
	}
	return m, u.total
}

func newCountingUpstream(t *testing.T) (*countingUpstream, string) {
	t.Helper()
	u := &countingUpstream{byRequest: map[string]int{}}
	up := testtool.StartFake(t, fakeapi.Options{Now: time.Now, DataToken: dataToken}, func(fake http.Handler) http.Handler {
		u.fake = fake
		return u
	})
	return u, up.Srv.URL
}

// member is one exporter of the test and, in cluster mode, its gossip
// key file.
type member struct {
	*exporter
	gossip, keyFile string
}

// scrape returns the body of /metrics with the collectors given
// ("indicator" selects none here: the exporter's own metrics only, and
// the data engine is not woken by it).
func (m *member) scrape(ctx context.Context, collect string) (string, error) {
	b, err := get(ctx, m.url+"/metrics?collect[]="+url.QueryEscape(collect))
	return string(b), err
}

// sampleSum sums the samples of a family whose labels include every one
// given (name="value" pairs).
func sampleSum(body, family string, labels ...string) (float64, bool) {
	sum, found := 0.0, false
	for _, line := range strings.Split(body, "\n") {
		name, rest, _ := strings.Cut(line, " ")
		series := name
		if i := strings.IndexByte(line, '{'); i >= 0 && i < len(name) {
			j := strings.LastIndexByte(line, '}')
			if j < 0 {
				continue
			}
			name, series, rest = line[:i], line[i:j+1], strings.TrimSpace(line[j+1:])
		}
		if name != family || !allIn(series, labels) {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(rest + " x")[0], 64)
		if err != nil {
			continue
		}
		sum, found = sum+v, true
	}
	return sum, found
}

func allIn(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// dataSeries returns the data series of a scrape (not the exporter's own),
// sorted, each with its value.
func dataSeries(body string) []string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "onchain_") && !strings.HasPrefix(line, "onchain_exporter_") {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// seriesNames returns the series of data lines without their values.
func seriesNames(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l[:strings.LastIndexByte(l, ' ')]
	}
	return out
}

// servesEverything checks that a scrape of the data collector has every
// tuple's series, each from a successful refresh.
func servesEverything(ctx context.Context, m *member) ([]string, error) {
	body, err := m.scrape(ctx, "data")
	if err != nil {
		return nil, err
	}
	ok, _ := sampleSum(body, "onchain_exporter_query_success", `api="data"`)
	if int(ok) != clusterTuples {
		return nil, fmt.Errorf("%s: %g of %d tuples served from a successful refresh", m.name, ok, clusterTuples)
	}
	data := dataSeries(body)
	if len(data) < clusterTuples {
		return nil, fmt.Errorf("%s: %d data series", m.name, len(data))
	}
	return data, nil
}

// scrapeLoop scrapes each member's data every 500 ms until ctx ends, as
// Prometheus scrapes every pod: the engine calls upstream only while it is
// scraped.
func scrapeLoop(ctx context.Context, members ...*member) {
	for _, m := range members {
		go func() {
			for ctx.Err() == nil {
				_, _ = m.scrape(ctx, "data")
				select {
				case <-ctx.Done():
				case <-time.After(500 * time.Millisecond):
				}
			}
		}()
	}
}

// TestClusterEndToEnd runs two exporters in cluster mode on one fake
// upstream, beside a lone exporter on a fake of its own with the same
// configuration, each an App of this process with listeners of its own:
// the first fill of the pair fetches each tuple once across the two; both
// serve every series with the same values; over the same rounds the pair
// calls upstream about as often as the lone exporter does, not twice as
// often; and when the member owning more units dies without a goodbye,
// the other keeps serving every series and fetches every tuple as it
// comes due.
//
// The death is a SIGKILL's as the survivor sees it: the member's gossip
// key is changed in its key file (--cluster.encryption-key-file, read
// again every --cluster.reconnect-interval), so that from then on nothing
// it sends, its leave message included, can be read by the survivor, nor
// anything the survivor sends by it; then it is stopped. The survivor
// finds it out by its probes, as it would a killed process.
func TestClusterEndToEnd(t *testing.T) {
	// A limit for a run that hangs, not a figure: it takes about 30 s.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	t.Setenv("E2E_DATA_TOKEN", dataToken)

	pairUp, pairURL := newCountingUpstream(t)
	loneUp, loneURL := newCountingUpstream(t)
	pairCfg := writeFile(t, dir, "pair.yml", fill(clusterConfig, "{{URL}}", pairURL))
	loneCfg := writeFile(t, dir, "lone.yml", fill(clusterConfig, "{{URL}}", loneURL))

	// Gossip on loopback, encrypted with one key, probing fast so that
	// a dead member is found out in a second or two.
	key := gossipKey(t)
	startMember := func(name, cfg string, gossip string, peers ...string) *member {
		m := &member{gossip: gossip}
		m.exporter = startExporter(t, dir, name, cfg, func(o *app.Options) {
			o.StoragePath = ""
			if gossip == "" {
				return
			}
			m.keyFile = writeFile(t, dir, name+".key", key)
			o.Cluster = &cluster.Config{ListenAddress: gossip, ClusterName: "e2e", Name: name, Peers: peers,
				PeerTimeout: peerTimeout, GossipInterval: 50 * time.Millisecond,
				ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond,
				ReconnectInterval: time.Second, SettleTimeout: 2 * time.Second, KeyFile: m.keyFile}
		})
		return m
	}
	gossipA, gossipB := freeAddr(t), freeAddr(t)
	a := startMember("a", pairCfg, gossipA)
	b := startMember("b", pairCfg, gossipB, gossipA)
	lone := startMember("lone", loneCfg, "")
	pair := []*member{a, b}

	// The members find each other before anything is scraped: no data
	// scrape yet, so no engine calls upstream.
	for _, m := range pair {
		eventually(ctx, t, m.name+" sees two members", func() error {
			body, err := m.scrape(ctx, "indicator")
			if err != nil {
				return err
			}
			if n, _ := sampleSum(body, "onchain_exporter_cluster_members"); n != 2 {
				return fmt.Errorf("onchain_exporter_cluster_members %g", n)
			}
			return nil
		})
	}
	if byRequest, total := pairUp.counts(); total != 0 {
		t.Fatalf("%d upstream calls of tuples before any scrape: %v", total, byRequest)
	}
	t.Logf("listing calls at start: the pair %d, the lone exporter %d", pairUp.listings(), loneUp.listings())

	// The first fill: each tuple fetched once across the two, each member
	// serving every series.
	scraping, stopScraping := context.WithCancel(ctx)
	defer stopScraping()
	scrapeLoop(scraping, a, b, lone)
	for _, m := range pair {
		eventually(ctx, t, m.name+" serves every tuple", func() error { _, err := servesEverything(ctx, m); return err })
	}
	// Counted at once: the next round is due 3 s after the fill.
	byRequest, total := pairUp.counts()
	if len(byRequest) != clusterTuples || total != clusterTuples {
		t.Errorf("the first fill of %d tuples by two members: %d calls of %d requests, want each tuple once: %v", clusterTuples, total, len(byRequest), byRequest)
	}
	eventually(ctx, t, "lone serves every tuple", func() error { _, err := servesEverything(ctx, lone); return err })

	// Every series, the same values, on both members, and the same series
	// as the lone exporter serves.
	eventually(ctx, t, "both members serve the same series and values", func() error {
		sa, err := servesEverything(ctx, a)
		if err != nil {
			return err
		}
		sb, err := servesEverything(ctx, b)
		if err != nil {
			return err
		}
		sl, err := servesEverything(ctx, lone)
		if err != nil {
			return err
		}
		if !slices.Equal(sa, sb) {
			return fmt.Errorf("a and b differ:\n%s\n--\n%s", strings.Join(sa, "\n"), strings.Join(sb, "\n"))
		}
		if !slices.Equal(seriesNames(sa), seriesNames(sl)) {
			return fmt.Errorf("the pair's series differ from the lone exporter's:\n%s\n--\n%s", strings.Join(seriesNames(sa), "\n"), strings.Join(seriesNames(sl), "\n"))
		}
		return nil
	})

	// Rounds of refreshes: the pair's calls against the lone exporter's
	// over the same span, four rounds of the lone one. The two run on
	// their own phases, so the pair may have had a round more or less;
	// a pair that did not share would have made twice as many.
	_, pair0 := pairUp.counts()
	_, lone0 := loneUp.counts()
	eventually(ctx, t, "four rounds of the lone exporter", func() error {
		if _, n := loneUp.counts(); n < lone0+4*clusterTuples {
			return fmt.Errorf("%d calls of %d", n-lone0, 4*clusterTuples)
		}
		return nil
	})
	_, pair1 := pairUp.counts()
	_, lone1 := loneUp.counts()
	pairCalls, loneCalls := pair1-pair0, lone1-lone0
	t.Logf("over the same span: the pair made %d upstream calls, the lone exporter %d (%.2f×)", pairCalls, loneCalls, float64(pairCalls)/float64(loneCalls))
	if pairCalls > loneCalls+clusterTuples || pairCalls < loneCalls-clusterTuples {
		t.Errorf("the pair made %d calls while the lone exporter made %d; want as many, give or take one round of %d", pairCalls, loneCalls, clusterTuples)
	}
	// What the members say of it.
	owned := map[*member]float64{}
	for _, m := range pair {
		body, err := m.scrape(ctx, "indicator")
		if err != nil {
			t.Fatal(err)
		}
		owned[m], _ = sampleSum(body, "onchain_exporter_cluster_units_owned", `api="data"`)
		asOwner, _ := sampleSum(body, "onchain_exporter_cluster_refreshes_total", `role="owner"`)
		fallback, _ := sampleSum(body, "onchain_exporter_cluster_refreshes_total", `role="fallback"`)
		received, _ := sampleSum(body, "onchain_exporter_cluster_rows_received_total")
		sent, _ := sampleSum(body, "onchain_exporter_cluster_messages_sent_bytes_total")
		sentN, _ := sampleSum(body, "onchain_exporter_cluster_messages_sent_total")
		t.Logf("%s: owns %g units, %g refreshes as owner, %g as fallback, %g rows received, %g gossip messages sent (%.0f bytes)",
			m.name, owned[m], asOwner, fallback, received, sentN, sent)
	}

	// The member that owns more units (a if equal) dies without a
	// goodbye: the other keeps serving every series, takes the units and
	// fetches every tuple as it comes due.
	dead, survivor := a, b
	if owned[b] > owned[a] {
		dead, survivor = b, a
	}
	dead.die(ctx, t)
	// Counted once it is stopped: what it fetched while dying is not
	// the survivor's.
	before, _ := pairUp.counts()
	if _, err := servesEverything(ctx, survivor); err != nil {
		t.Errorf("right after %s died: %v", dead.name, err)
	}
	eventually(ctx, t, survivor.name+" owns every unit alone", func() error {
		body, err := survivor.scrape(ctx, "indicator")
		if err != nil {
			return err
		}
		n, _ := sampleSum(body, "onchain_exporter_cluster_members")
		units, _ := sampleSum(body, "onchain_exporter_cluster_units_owned", `api="data"`)
		if n != 1 || units != owned[a]+owned[b] {
			return fmt.Errorf("%g members, %g of %g units owned", n, units, owned[a]+owned[b])
		}
		return nil
	})
	// What the dead member sent after its key changed, its leave message
	// included, the survivor could not read: it found the death out by
	// its probes.
	if l := survivor.logged(t); !strings.Contains(l, "no installed keys could decrypt the message from="+dead.gossip) {
		t.Errorf("%s read everything %s sent: the death was not without a goodbye\n%s", survivor.name, dead.name, l)
	}
	eventually(ctx, t, survivor.name+" fetches every tuple after the death", func() error {
		now, _ := pairUp.counts()
		var missing []string
		for req, n := range before {
			if now[req] <= n {
				missing = append(missing, req)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("not fetched again: %v", missing)
		}
		return nil
	})
	if _, err := servesEverything(ctx, survivor); err != nil {
		t.Errorf("after the death: %v", err)
	}
	body, err := survivor.scrape(ctx, "indicator")
	if err != nil {
		t.Fatal(err)
	}
	fallback, _ := sampleSum(body, "onchain_exporter_cluster_refreshes_total", `role="fallback"`)
	t.Logf("%s dead; %s now owns every unit, %g refreshes as fallback in all", dead.name, survivor.name, fallback)
}

// gossipKey is a new gossip key: 32 random bytes in base64, as
// --cluster.encryption-key-file takes one.
func gossipKey(t *testing.T) string {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(k) + "\n"
}

// die ends a member as SIGKILL would for the others: its key file gets a
// key of its own, and once it has put that key in force (its next
// --cluster.reconnect-interval) it is stopped; the others can read
// nothing it sends from then on, its leave message included.
func (m *member) die(ctx context.Context, t *testing.T) {
	t.Helper()
	if err := os.WriteFile(m.keyFile, []byte(gossipKey(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, m.name+" takes its new gossip key", func() error {
		body, err := m.scrape(ctx, "indicator")
		if err != nil {
			return err
		}
		if n, _ := sampleSum(body, "onchain_exporter_cluster_encryption_key_reloads_total", `result="success"`); n < 1 {
			return fmt.Errorf("%g key reloads", n)
		}
		return nil
	})
	m.stop()
}
