package benchmark

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// The join benchmark (issue 34): a member joins a cluster whose first
// member serves every tuple, and takes every tuple's state from it by
// memberlist's push/pull. Both members are the exporter (package app, as
// the binary runs it: its HTTP server, its cluster transport, GOGC=50),
// each an App of this process with listeners of its own; the joiner's
// memory and CPU are the process's, above what it held before the joiner
// started. The file is one path, two windows (day, hour) and Tuples/2
// exchanges, against an upstream whose rows are those of the window in
// progress, so that nothing comes due during the join.

// JoinOptions are one join.
type JoinOptions struct {
	// Tuples is the number of tuples: Tuples/2 exchanges × 2 windows.
	Tuples int
	// Dir is a scratch directory (configuration, storage).
	Dir string
	// MaxStateBytes is --cluster.max-state-bytes of both members; 0
	// leaves the flag's default.
	MaxStateBytes int
	// Log receives both members' logs, warnings and errors (nil:
	// discarded).
	Log io.Writer
}

// JoinRun is what a join cost the joiner.
type JoinRun struct {
	JoinOptions
	// Fill is how long the first member took to serve every tuple (each
	// fetched), FirstCPU the process's CPU time until then, FirstRSS and
	// FirstHeap the resident memory and heap in use the first member
	// added to the process: what the joiner's figures compare with.
	Fill, FirstCPU      time.Duration
	FirstRSS, FirstHeap float64
	// Healthy is the time from the joiner's start to its first answer
	// on /-/healthy; FirstScrape to its first answer on /metrics;
	// Serves to the first scrape that served every tuple's row.
	Healthy, FirstScrape, Serves time.Duration
	// FullState is the bytes of full state the joiner received
	// (onchain_exporter_cluster_messages_received_bytes_total{kind="full"}),
	// FullRefused the full states it refused
	// (onchain_exporter_cluster_refused_total, every reason).
	FullState   float64
	FullRefused float64
	// Calls is the upstream calls the joiner made until it served every
	// tuple (onchain_exporter_cluster_refreshes_total).
	Calls float64
	// CPU is the process's user and system CPU time from the joiner's
	// start until it served every tuple (the first member's answer to
	// its push/pull included); RSS the resident memory the joiner added
	// to the process then, PeakRSS the peak it added (VmHWM, reset when
	// it started), Heap the heap in use it added (runtime.MemStats
	// HeapInuse).
	CPU          time.Duration
	RSS, PeakRSS int64
	Heap         float64
	// Real is the wall-clock time of the whole run.
	Real time.Duration
}

// joinMember is one exporter of the join.
type joinMember struct {
	app         *app.App
	web, gossip string
	started     time.Time
}

// processUse is what the process holds and has spent: resident memory,
// heap in use, CPU time.
type processUse struct {
	rss  int64
	heap uint64
	cpu  time.Duration
}

// use reads the process's use now.
func use() processUse {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rss, _ := RSS()
	return processUse{rss: rss, heap: m.HeapInuse, cpu: cpuTime()}
}

// RunJoin starts the first member, waits until it serves every tuple,
// then starts the joiner and measures it until it serves every tuple.
// The members read the upstream's token from BENCH_TOKEN (joinConfig).
func RunJoin(o JoinOptions) (*JoinRun, error) {
	began := time.Now()
	if o.Tuples < 2 {
		return nil, fmt.Errorf("a join of %d tuples: at least 2", o.Tuples)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(50)) // as package main sets it
	up := joinUpstream()
	defer up.Close()
	cfg := filepath.Join(o.Dir, "join.yml")
	if err := os.WriteFile(cfg, []byte(joinConfig(up.URL, o.Tuples)), 0o600); err != nil {
		return nil, err
	}
	r := &JoinRun{JoinOptions: o}
	debug.FreeOSMemory()
	before := use()
	first, err := startJoinMember(o, cfg, "first")
	if err != nil {
		return nil, err
	}
	defer first.app.Stop()
	fillBy := time.Now().Add(time.Minute + time.Duration(o.Tuples)*5*time.Millisecond)
	for {
		n, _, err := servedTuples(first.web, 60)
		if err == nil && n == o.Tuples {
			now := use()
			r.FirstHeap = float64(now.heap) - float64(before.heap)
			r.FirstRSS = float64(now.rss - before.rss)
			r.FirstCPU = now.cpu - before.cpu
			break
		}
		if time.Now().After(fillBy) {
			return nil, fmt.Errorf("the first member serves %d of %d tuples after %s: %v", n, o.Tuples, time.Since(first.started).Round(time.Second), err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	r.Fill = time.Since(first.started)

	debug.FreeOSMemory()
	before = use()
	if err := resetPeakRSS(); err != nil {
		return nil, err
	}
	joiner, err := startJoinMember(o, cfg, "joiner", first.gossip)
	if err != nil {
		return nil, err
	}
	defer joiner.app.Stop()
	// /-/healthy asked every 20 ms from the start, /metrics every
	// 200 ms (a scrape of 100 000 tuples takes a while itself) with a
	// scrape timeout of 5 s: a scrape waits that long at most for the
	// first fill, then answers with what is there.
	var healthy atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if resp, err := http.Get("http://" + joiner.web + "/-/healthy"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					healthy.Store(int64(time.Since(joiner.started)))
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		n, body, err := servedTuples(joiner.web, 5)
		if err == nil && r.FirstScrape == 0 {
			r.FirstScrape = time.Since(joiner.started)
		}
		if err == nil && n == o.Tuples {
			r.Serves = time.Since(joiner.started)
			now := use()
			r.CPU = now.cpu - before.cpu
			r.RSS = now.rss - before.rss
			peak, _ := statusKB("VmHWM")
			r.PeakRSS = peak - before.rss
			r.Heap = float64(now.heap) - float64(before.heap)
			r.FullState = metricSum(body, `onchain_exporter_cluster_messages_received_bytes_total{kind="full"}`)
			r.FullRefused = metricSum(body, "onchain_exporter_cluster_refused_total")
			r.Calls = metricSum(body, "onchain_exporter_cluster_refreshes_total")
			break
		}
		select {
		case err := <-joiner.app.Done():
			return nil, fmt.Errorf("the joiner stopped serving: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the joiner serves %d of %d tuples after 10 min: %v", n, o.Tuples, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	r.Healthy = time.Duration(healthy.Load())
	r.Real = time.Since(began)
	return r, nil
}

// joinConfig is one path, two windows, tuples/2 exchanges.
func joinConfig(url string, tuples int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "data:\n  url: %s\n  token_env: BENCH_TOKEN\n  concurrency: 16\n  max_tuples: %d\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      window: [day, hour]\n      exchange: [", url, tuples)
	for i := range tuples / 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "exchange_%06d", i)
	}
	b.WriteString("]\n")
	return b.String()
}

// joinUpstream answers open interest with the rows of the window in
// progress and the four before, on the wall clock; any other path is not
// found.
func joinUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/btc/market-data/open-interest" {
			http.NotFound(w, r)
			return
		}
		step, layout := 24*time.Hour, time.DateOnly
		if r.URL.Query().Get("window") == "hour" {
			step, layout = time.Hour, time.DateTime
		}
		newest := time.Now().UTC().Truncate(step)
		v := len(r.URL.RawQuery) * 1000
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":{"code":200,"message":"success"},"result":{"data":[`)
		for i := range 5 {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"date":%q,"open_interest":%d.5}`, newest.Add(-time.Duration(i)*step).Format(layout), v+i)
		}
		fmt.Fprint(w, `]}}`)
	}))
}

// startJoinMember starts a member serving on a free port of 127.0.0.1
// and gossiping on another, joining peers.
func startJoinMember(o JoinOptions, cfg, name string, peers ...string) (*joinMember, error) {
	gossip, err := freePort()
	if err != nil {
		return nil, err
	}
	storage := filepath.Join(o.Dir, name)
	if err := os.MkdirAll(storage, 0o700); err != nil {
		return nil, err
	}
	opts := app.DefaultOptions()
	addrs := []string{"127.0.0.1:0"}
	opts.Web.WebListenAddresses = &addrs
	opts.ConfigFile, opts.StoragePath, opts.StorageSet = cfg, storage, true
	if o.Log != nil {
		opts.Logger, opts.Slogger = app.NewLoggers(o.Log, "warn", "logfmt")
	}
	// The flags' defaults, as cluster.AddFlags gives them.
	opts.Cluster = &cluster.Config{ListenAddress: gossip, ClusterName: "bench", Name: name, Peers: peers, MaxStateBytes: o.MaxStateBytes}
	m := &joinMember{gossip: gossip, started: time.Now()}
	if m.app, err = app.New(opts); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := m.app.Start(); err != nil {
		m.app.Stop()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.web = m.app.Addr()
	return m, nil
}

// freePort is a free TCP port of 127.0.0.1 (memberlist takes the same
// number in UDP).
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// servedTuples scrapes a member and counts the tuples it serves a row of
// (their onchain_exporter_last_success_timestamp_seconds).
func servedTuples(addr string, timeout int) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.Itoa(timeout))
	c := http.Client{Timeout: time.Duration(timeout+5) * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	n := 0
	for line := range bytes.Lines(body) {
		if bytes.HasPrefix(line, []byte("onchain_exporter_last_success_timestamp_seconds{")) {
			n++
		}
	}
	return n, body, nil
}

// metricSum sums the samples of an exposition whose name, or name and
// first labels, start with prefix.
func metricSum(body []byte, prefix string) float64 {
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, strings.TrimSuffix(prefix, "}"))
		if !ok || (len(rest) > 0 && rest[0] != ' ' && rest[0] != '{' && rest[0] != '}' && rest[0] != ',') {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

// cpuTime is this process's user and system CPU time (/proc/self/stat,
// in clock ticks of 10 ms); 0 where it cannot be read.
func cpuTime() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// resetPeakRSS sets this process's peak resident memory (VmHWM) to what
// it holds now (Linux: /proc/self/clear_refs).
func resetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// statusKB reads a figure of /proc/self/status in bytes.
func statusKB(name string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(l, name+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/self/status has no %s", name)
}

// JoinInProcess is a join with both members in this process on the
// wall clock, for a logic check and a profile: the first member serves
// every one of tuples tuples, the second joins it. It returns how long the
// second member's Join took, the full states it received and their
// bytes, and the tuples it then served and the calls it made.
func JoinInProcess(tuples int) (join time.Duration, fullStates, fullBytes float64, served int, calls float64, err error) {
	up := joinUpstream()
	defer up.Close()
	yml := joinConfig(up.URL, tuples)
	var members []*clusterMember
	defer func() {
		for _, m := range members {
			m.exp.Close()
			_ = m.peer.Leave(time.Second)
		}
	}()
	start := func(name string, peers ...string) (*clusterMember, error) {
		m := &clusterMember{name: name, reg: prometheus.NewRegistry()}
		var err error
		if m.peer, err = cluster.Create(clusterMemberConfig(name, clusterPeerTimeout, peers...), log.NewNopLogger(), m.reg); err != nil {
			return nil, err
		}
		m.cfg, err = config.Parse("join.yml", []byte(yml), func(string) string { return "bench" })
		if err == nil {
			m.exp, err = collector.New(m.cfg, log.NewNopLogger(), m.reg, collector.Options{Peer: m.peer})
		}
		if err != nil {
			_ = m.peer.Leave(time.Second)
			return nil, err
		}
		members = append(members, m)
		return m, nil
	}
	first, err := start("first")
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	if err := first.peer.Join(context.Background()); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	body, err := scrapeWithin(first.exp, "120") // the first fill
	if err != nil {
		return 0, 0, 0, 0, 0, fmt.Errorf("the first member: %w", err)
	}
	if n := bytes.Count(body, []byte("\nonchain_exporter_last_success_timestamp_seconds{")); n != tuples {
		return 0, 0, 0, 0, 0, fmt.Errorf("the first member serves %d of %d tuples", n, tuples)
	}
	joiner, err := start("joiner", first.peer.Self().Address)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	began := time.Now()
	if err := joiner.peer.Join(context.Background()); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	join = time.Since(began)
	if body, err = scrapeWithin(joiner.exp, "120"); err != nil {
		return 0, 0, 0, 0, 0, fmt.Errorf("the joiner: %w", err)
	}
	served = bytes.Count(body, []byte("\nonchain_exporter_last_success_timestamp_seconds{"))
	c := joiner.counts()
	fams, err := joiner.reg.Gather()
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	for _, f := range fams {
		if f.GetName() == "onchain_exporter_cluster_messages_received_total" {
			for _, mt := range f.GetMetric() {
				if labelOf(mt, "kind") == "full" {
					fullStates += mt.GetCounter().GetValue()
				}
			}
		}
	}
	return join, fullStates, c.fullReceived, served, float64(c.sent), nil
}
