//go:build !race

// Package daytwo runs the exporter as the Helm chart's default deploys it
// and holds what must stay true after the first scrape, over simulated
// days: two members of one cluster, the two scrape jobs of
// examples/prometheus.yml, a file whose key's plan refuses one entry,
// block, hour and day windows and the Indicator and Consensus APIs.
package daytwo

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/internal/testtool"
)

// proKey is the data API key of the run, on the professional plan: it
// reads /v1/btc/market-indicator/mvrv at day only.
const proKey = "day-two-professional-key"

const configTemplate = `
data:
  url: "{{URL}}"
  token_file: "{{DIR}}/data-token"
  metrics:
    - path: /v1/btc/network-data/supply
      window: [block, hour, day]
    - path: /v1/btc/market-indicator/mvrv # the plan reads it at day only
      window: [hour, day]
    - path: /v1/btc/exchange-flows/{reserve,netflow}
      exchange: [binance]
      window: day
indicator:
  url: "{{URL}}/indicator"
  token_file: "{{DIR}}/data-token"
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: [NASDAQ:AAPL]
consensus:
  url: "{{URL}}/consensus"
  token_file: "{{DIR}}/data-token"
  max_staleness: 1d
  metrics:
    - path: /consensus
      asset: bitcoin
      days: 7
`

// The reload adds an entry.
const reloadedEntry = `    - path: /v1/btc/market-data/open-interest
      exchange: [binance]
      window: hour
`

// job is a scrape job of examples/prometheus.yml: its collect[] and the
// families it drops (metric_relabel_configs).
type job struct {
	name    string
	collect []string
	drop    *regexp.Regexp
}

var jobs = []job{
	{name: "onchain_exporter", collect: []string{"data"}},
	{name: "onchain_exporter_daily", collect: []string{"indicator", "consensus"},
		drop: regexp.MustCompile(`^(onchain_exporter_(upstream_.+|stale_values_served_total|api_errors_total|api_paused|ratelimit_.+|daily_quota_.+|daily_budget_calls|daily_calls_used|daily_calls_used_here|cluster_.+|forecast_calls_per_day|coarsening_factor|tuples|tuples_due|tuples_unasked|calls_held_back_total|config_.+|build_info|expansion_.+|publication_delay_seconds|row_delay_seconds|row_due_timestamp_seconds|excess_staleness_seconds)|go_.+|process_.+|promhttp_.+)$`)},
}

// member is one replica: its app, its storage, name and cluster
// address (kept across restarts, as a pod's), and its peers'.
type member struct {
	name, storage, cluster string
	app                    *app.App
	peers                  []string
}

// freeAddr is a loopback address with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type run struct {
	t        *testing.T
	up       *testtool.Upstream
	cfgFile  string
	members  []*member
	answers  []answer // OpenMetrics answers, for the reference parser
	parser   *referenceParser
	shapes   map[[32]byte]bool
	promtool string
	findings []string
	rec      *recording
	negative []string
}

func (r *run) start(m *member) {
	r.t.Helper()
	addrs, systemd, webConfig := []string{"127.0.0.1:0"}, false, ""
	o := app.DefaultOptions()
	o.ConfigFile, o.StoragePath, o.StorageSet = r.cfgFile, m.storage, true
	o.Web.WebListenAddresses, o.Web.WebSystemdSocket, o.Web.WebConfigFile = &addrs, &systemd, &webConfig
	o.Clock = r.up.Clock
	o.Logger = log.NewLogfmtLogger(log.NewSyncWriter(testWriter{r.t}))
	o.Cluster = &cluster.Config{ListenAddress: m.cluster, ClusterName: "day-two", Name: m.name, Peers: m.peers,
		PeerTimeout: 15 * time.Second, GossipInterval: 20 * time.Millisecond, PushPullInterval: time.Minute,
		ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond,
		SettleTimeout: time.Second, ReconnectInterval: 200 * time.Millisecond}
	a, err := app.New(o)
	if err != nil {
		r.t.Fatalf("member %s: %v", m.name, err)
	}
	if err := a.Start(); err != nil {
		r.t.Fatalf("member %s: %v", m.name, err)
	}
	m.app = a
}

func (r *run) stop(m *member) {
	if m.app != nil {
		m.app.Stop()
		m.app = nil
	}
}

// scrape asks a member as a job's scrape would, in format accept.
func (r *run) scrape(m *member, j job, accept string) string {
	r.t.Helper()
	body, err := scrape(m, j, accept)
	if err != nil {
		r.t.Fatal(err)
	}
	return body
}

func scrape(m *member, j job, accept string) (string, error) {
	q := ""
	for _, c := range j.collect {
		q += "&collect[]=" + c
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+m.app.Addr()+"/metrics?"+strings.TrimPrefix(q, "&"), nil)
	req.Header.Set("Accept", accept)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "5") // a first scrape waits that long for the first fill
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("scraping %s: %w", m.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("scraping %s: %d %s", m.name, resp.StatusCode, b)
	}
	return string(b), nil
}

// dropped is body without the families the job drops.
func dropped(body string, drop *regexp.Regexp) string {
	if drop == nil {
		return body
	}
	var out []string
	for _, l := range strings.Split(body, "\n") {
		name := l
		if strings.HasPrefix(l, "# ") {
			if f := strings.Fields(l); len(f) >= 3 {
				name = f[2]
			}
		} else if i := strings.IndexAny(l, "{ "); i >= 0 {
			name = l[:i]
		}
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if drop.MatchString(name) || drop.MatchString(base) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// nonNegative are families whose every sample must be at least 0.
var nonNegative = regexp.MustCompile(`^onchain_exporter_(publication_delay_seconds|excess_staleness_seconds|row_delay_seconds_(sum|count|bucket))\{`)

// observe scrapes every live member as each job would and keeps what the
// checks need.
func (r *run) observe(at time.Time) {
	r.t.Helper()
	stamp := at.UTC().Format("Jan 2 15:04")
	for _, m := range r.members {
		target := map[string]string{"namespace": "markets", "instance": m.name + ":9799", "pod": "onchain-exporter-" + m.name}
		for _, j := range jobs {
			target["job"] = j.name
			if m.app == nil {
				r.rec.add(r.t, at, target, "")
				continue
			}
			om := r.scrape(m, j, "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.7,text/plain;version=0.0.4;q=0.3")
			r.answers = append(r.answers, answer{at: stamp, member: m.name, job: j.name})
			r.parser.parse(r.t, om)
			text := r.scrape(m, j, "text/plain;version=0.0.4")
			if s := shape(text); !r.shapes[s] {
				r.shapes[s] = true
				if f := promtoolFindings(r.t, r.promtool, text); f != "" {
					r.findings = append(r.findings, fmt.Sprintf("%s %s job %s:\n%s", stamp, m.name, j.name, f))
				}
			}
			for _, l := range strings.Split(text, "\n") {
				if nonNegative.MatchString(l) {
					if v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64); err == nil && v < 0 {
						r.negative = append(r.negative, stamp+" "+m.name+": "+l)
					}
				}
			}
			r.rec.add(r.t, at, target, dropped(text, j.drop))
		}
	}
}

// wake scrapes every member at once, as Prometheus's first scrapes do:
// an engine calls nothing before a scrape asks for it, and a first scrape
// waits for the first fill.
func (r *run) wake() {
	var wg sync.WaitGroup
	for _, m := range r.members {
		if m.app == nil {
			continue
		}
		wg.Go(func() {
			if _, err := scrape(m, jobs[0], "text/plain;version=0.0.4"); err != nil {
				r.t.Error(err)
			}
		})
	}
	wg.Wait()
}

// converge waits, in real time, until every live member sees every live
// member: a member joins in a second in production, while the simulated
// clock would run on for hours meanwhile.
func (r *run) converge() {
	r.t.Helper()
	live := 0
	for _, m := range r.members {
		if m.app != nil {
			live++
		}
	}
	want := fmt.Sprintf("onchain_exporter_cluster_members %d\n", live)
	seen := map[string]string{}
	deadline := time.Now().Add(60 * time.Second)
	for {
		all := true
		for _, m := range r.members {
			if m.app == nil {
				continue
			}
			body, err := scrape(m, jobs[0], "text/plain;version=0.0.4")
			if err != nil || !strings.Contains(body, want) {
				all = false
				seen[m.name] = strings.Join(testtool.Lines(body, "onchain_exporter_cluster_members"), "; ")
			}
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("after 60 s the members do not see %d members: %v", live, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settle lets every live member's engines do what is due at the clock's
// time, and gossip carry their rows (gossip runs on the wall clock).
func (r *run) settle() {
	for _, m := range r.members {
		if m.app != nil {
			m.app.Settle()
		}
	}
	time.Sleep(10 * time.Millisecond)
	for _, m := range r.members {
		if m.app != nil {
			m.app.Settle()
		}
	}
}

// TestDayTwo runs the chart's default for a simulated week and holds
// every answer of both members to the OpenMetrics reference parser and
// promtool check metrics, every delay the exporter learned to at least 0,
// and the shipped rules (examples/alerts.yml, evaluated by Prometheus's
// engine on what the two jobs would have stored) to this: in the steady
// state with a refused entry, nothing fires; each fault the run injects
// (a provider outage, a member lost) raises its documented alerts once,
// not once per member or job, and none of them pages.
func TestDayTwo(t *testing.T) {
	promtool := testtool.Require(t, "apt-get install -y prometheus", "promtool")
	groups := loadRules(t, "../examples/alerts.yml")
	up := testtool.StartFake(t, fakeapi.Options{
		DataKeys: map[string]fakeapi.Tier{proKey: fakeapi.TierProfessional},
		Catalog:  fakeapi.CatalogFull,
		Publish: map[string]fakeapi.Delay{
			"hour": {Base: 4 * time.Minute, Jitter: 0.5},
			"day":  {Base: 50 * time.Minute, Jitter: 0.5},
		},
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data-token"), []byte(proKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yml := strings.NewReplacer("{{URL}}", up.Srv.URL, "{{DIR}}", dir).Replace(configTemplate)
	cfgFile := filepath.Join(dir, "onchain.yml")
	if err := os.WriteFile(cfgFile, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &run{t: t, up: up, cfgFile: cfgFile, shapes: map[[32]byte]bool{}, promtool: promtool, rec: newRecording(t, groups),
		parser: startReferenceParser(t)}
	a := &member{name: "a", storage: filepath.Join(dir, "a"), cluster: freeAddr(t)}
	b := &member{name: "b", storage: filepath.Join(dir, "b"), cluster: freeAddr(t)}
	a.peers, b.peers = []string{b.cluster}, []string{a.cluster}
	r.members = []*member{a, b}
	t0 := time.Now()
	r.start(a)
	r.start(b)
	t.Logf("members started: %v", time.Since(t0).Round(time.Millisecond))
	t.Cleanup(func() {
		for _, m := range r.members {
			r.stop(m)
		}
	})

	const step = 10 * time.Minute
	start := up.Clock.Now()
	day := func(d int, h int) time.Time {
		return start.Add(time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour)
	}
	type window struct {
		what     string
		from, to time.Time
	}
	outage := window{"provider outage", day(2, 10), day(2, 12)}
	lost := window{"member b lost", day(3, 14), day(3, 16)}
	reloadAt, restartAt := day(4, 9), day(5, 9)
	end := day(7, 0)

	began := time.Now()
	r.converge()
	r.wake()
	t.Logf("woken: %v", time.Since(began).Round(time.Millisecond))
	r.settle()
	t.Logf("settled: %v", time.Since(began).Round(time.Millisecond))
	r.observe(up.Clock.Now())
	t.Logf("members up and first fill: %v", time.Since(began).Round(time.Millisecond))
	for now := start.Add(step); !now.After(end); now = now.Add(step) {
		up.Clock.Set(now)
		switch {
		case now.Equal(outage.from):
			up.Fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Status503})
		case now.Equal(outage.to):
			up.Fake.ClearFaults()
		case now.Equal(lost.from):
			r.stop(b)
		case now.Equal(lost.to):
			r.start(b)
			r.wake()
			r.converge()
		case now.Equal(reloadAt):
			if err := os.WriteFile(cfgFile, []byte(strings.Replace(yml, "indicator:\n", reloadedEntry+"indicator:\n", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, m := range r.members { // the ConfigMap changed: each pod reloads
				if err := m.app.Reload(); err != nil {
					t.Fatalf("reload of %s: %v", m.name, err)
				}
			}
			r.converge()
		case now.Equal(restartAt):
			r.stop(a)
			r.start(a)
			r.wake()
			r.converge()
		}
		r.settle()
		r.observe(now)
	}

	t.Logf("the run: %v", time.Since(began).Round(time.Millisecond))
	began = time.Now()
	// Every OpenMetrics answer of both members, through the reference
	// parser.
	bad := 0
	verdicts := r.parser.results(t)
	if len(verdicts) != len(r.answers) {
		t.Fatalf("%d verdicts of the reference parser for %d answers", len(verdicts), len(r.answers))
	}
	for i, v := range verdicts {
		if v != "ok" {
			if bad++; bad <= 5 {
				t.Errorf("%s: the reference parser refuses the answer: %s", r.answers[i], v)
			}
		}
	}
	if bad > 5 {
		t.Errorf("... and %d more answers refused", bad-5)
	}
	t.Logf("%d OpenMetrics answers parsed, %d answer shapes checked by promtool, %d samples recorded", len(r.answers), len(r.shapes), r.rec.samples)
	for _, f := range r.findings {
		t.Errorf("promtool check metrics: %s", f)
	}
	for i, n := range r.negative {
		if i == 5 {
			t.Errorf("... and %d more", len(r.negative)-5)
			break
		}
		t.Errorf("a delay below 0: %s", n)
	}

	t.Logf("the checks: %v", time.Since(began).Round(time.Millisecond))
	began = time.Now()
	// The shipped rules on what Prometheus would have stored.
	fired := evalAlerts(t, groups, r.rec, start, end, step)
	t.Logf("the rules: %v", time.Since(began).Round(time.Millisecond))
	injected := []window{outage, lost}
	grace := 30 * time.Minute // an alert resolves within its rate window after the fault
	hits := map[string]int{}
	for _, f := range fired {
		t.Logf("fired: %s (%s)", f, f.severity)
		if f.name == "OnchainSeriesDeprecated" {
			continue // the fake marks some series deprecated: info
		}
		if f.severity == "critical" {
			t.Errorf("paged: %s", f)
		}
		var in *window
		for i := range injected {
			w := &injected[i]
			if !f.from.Before(w.from) && f.from.Before(w.to.Add(grace)) {
				in = w
			}
		}
		if in == nil && f.severity != "info" {
			t.Errorf("fired outside any injected fault: %s", f)
			continue
		}
		if in != nil {
			hits[in.what+" "+f.name]++
			t.Logf("%s: %s", in.what, f)
		}
	}
	for key, n := range hits {
		if n > 1 {
			t.Errorf("%s fired %d times, want once (not per member or job)", key, n)
		}
	}
	for _, w := range injected {
		found := false
		for key := range hits {
			if strings.HasPrefix(key, w.what+" ") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s raised no alert", w.what)
		}
	}
}

// testWriter logs what the members log at warn and above through t.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	if s := string(p); strings.Contains(s, "level=error") || strings.Contains(s, "level=warn") {
		w.t.Log(strings.TrimSpace(s))
	}
	return len(p), nil
}
