//go:build !race

package daytwo

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

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
	times    []time.Time // when the members were scraped: the rules are evaluated then
	late     []lateRow
	// tolerance is, per delay held back and window, what its due time
	// allowed past the learned release while it held (heldDues).
	tolerance map[string]time.Duration
	// What settle last read of each member's shared rows (and of which
	// start of it), and the rows it is owed by the others since.
	seen    map[*member]counts
	seenApp map[*member]*app.App
	owed    map[*member]float64
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
	return scrapeWithin(m, j, "5", accept) // a first scrape waits that long for the first fill
}

// scrapeWithin is scrape with the scrape timeout Prometheus announces, in
// seconds.
func scrapeWithin(m *member, j job, timeout, accept string) (string, error) {
	q := ""
	for _, c := range j.collect {
		q += "&collect[]=" + c
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+m.app.Addr()+"/metrics?"+strings.TrimPrefix(q, "&"), nil)
	req.Header.Set("Accept", accept)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
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
	r.times = append(r.times, at)
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

// wake scrapes every member as each job would, all at once, as
// Prometheus's first scrapes do: an engine calls nothing before a scrape
// asks for it, and a first scrape waits for the first fill (up to the
// scrape's timeout: the waits overlap).
func (r *run) wake() {
	var wg sync.WaitGroup
	for _, m := range r.members {
		if m.app == nil {
			continue
		}
		for _, j := range jobs {
			wg.Go(func() {
				if _, err := scrape(m, j, "text/plain;version=0.0.4"); err != nil {
					r.t.Error(err)
				}
			})
		}
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
			// A second's timeout: with the simulated clock still while
			// the members converge, the first fill ends only at the
			// first scrape's deadline (measured: 4.5 s of the 5 s, a
			// tenth of a short run's wall time, for nothing).
			body, err := scrapeWithin(m, jobs[0], "1", "text/plain;version=0.0.4")
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
// time, then waits in real time until gossip has carried every row a
// member fetched to the others (gossip runs on the wall clock, the
// members' waits for an owner's row on the simulated one: a row still in
// flight when the clock moves on would be fetched again as a fallback),
// and settles again, until a settle fetches nothing more.
func (r *run) settle() {
	for range 100 {
		for _, m := range r.members {
			if m.app != nil {
				m.app.Settle()
			}
		}
		if !r.deliver() {
			return
		}
	}
	r.t.Fatal("the members kept fetching after 100 settles at one time")
}

// counts are a member's counters of shared rows, from its /metrics: the
// rows it fetched (and sent) and the peers' rows it took or refused.
type counts struct{ sent, got float64 }

func (r *run) counts(m *member) (counts, error) {
	body, err := scrapeWithin(m, jobs[0], "1", "text/plain;version=0.0.4")
	if err != nil {
		return counts{}, err
	}
	var c counts
	for _, l := range strings.Split(body, "\n") {
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		switch {
		case err != nil:
		case strings.HasPrefix(l, "onchain_exporter_cluster_refreshes_total{"):
			c.sent += v
		case strings.HasPrefix(l, "onchain_exporter_cluster_rows_received_total{"),
			strings.HasPrefix(l, "onchain_exporter_cluster_rows_refused_total{"):
			c.got += v
		}
	}
	return c, nil
}

// deliver waits until every live member has taken or refused each row
// the others sent since it started, and reports whether any member
// fetched a row since the last call. Counters start again at a
// restart; a member's count of what it is owed starts at its start.
func (r *run) deliver() (fetched bool) {
	now := map[*member]counts{}
	for _, m := range r.members {
		if m.app == nil {
			continue
		}
		c, err := r.counts(m)
		if err != nil {
			r.t.Fatal(err)
		}
		now[m] = c
		last, seen := r.seen[m]
		if !seen || m.app != r.seenApp[m] || c.sent < last.sent {
			last = counts{} // started again
			r.owed[m] = 0
		}
		if d := c.sent - last.sent; d > 0 {
			fetched = true
			for _, o := range r.members {
				if o != m && o.app != nil {
					r.owed[o] += d
				}
			}
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		short := ""
		for m, c := range now {
			base := r.seen[m].got
			if m.app != r.seenApp[m] {
				base = 0
			}
			if c.got-base < r.owed[m] {
				short += fmt.Sprintf(" %s took %v of %v", m.name, c.got-base, r.owed[m])
			}
		}
		if short == "" {
			break
		}
		if time.Now().After(deadline) {
			// Written off, as a row lost in production would be: the
			// alerts then say what it cost.
			r.t.Logf("gossip did not deliver every row within 10 s:%s", short)
			break
		}
		time.Sleep(5 * time.Millisecond)
		for m := range now {
			c, err := r.counts(m)
			if err != nil {
				r.t.Fatal(err)
			}
			now[m] = counts{sent: now[m].sent, got: c.got}
		}
	}
	for m, c := range now {
		base := r.seen[m].got
		if m.app != r.seenApp[m] {
			base = 0
		}
		// Not below 0: a full state's rows repeat what was taken
		// (refused as older), and owe nothing later.
		r.owed[m] = max(0, r.owed[m]-(c.got-base))
		r.seen[m], r.seenApp[m] = c, m.app
	}
	return fetched
}

// checkAnswers holds every OpenMetrics answer of both members to the
// reference parser, the text answers' shapes to promtool check metrics
// and the delays to at least 0.
func (r *run) checkAnswers() {
	t := r.t
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
}

// testWriter logs what the members log at warn and above through t.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	if s := string(p); strings.Contains(s, "level=error") || strings.Contains(s, "level=warn") {
		w.t.Log(strings.TrimSpace(s))
	}
	return len(p), nil
}
