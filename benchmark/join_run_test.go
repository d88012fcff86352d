package benchmark

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// The join benchmark (issue 34): a member joins a cluster whose first
// member serves every tuple, and takes every tuple's state from it by
// memberlist's push/pull. Both members are the exporter's binary, each a
// process of its own, so that the joiner's memory, CPU and HTTP listener
// are its own. The file is one path, two windows (day, hour) and
// Tuples/2 exchanges, against an upstream whose rows are those of the
// window in progress, so that nothing comes due during the join.

// JoinOptions are one join.
type JoinOptions struct {
	// Tuples is the number of tuples: Tuples/2 exchanges × 2 windows.
	Tuples int
	// Bin is the exporter binary both members run.
	Bin string
	// Dir is a scratch directory (configuration, storage).
	Dir string
	// MaxStateBytes is --cluster.max-state-bytes of both members; 0
	// leaves the flag's default.
	MaxStateBytes int
	// Log receives both members' logs (nil: discarded).
	Log io.Writer
}

// JoinRun is what a join cost the joiner.
type JoinRun struct {
	JoinOptions
	// Fill is how long the first member took to serve every tuple (each
	// fetched), FirstCPU its CPU time until then, FirstRSS and FirstHeap
	// its resident memory and heap in use then: what the joiner's figures
	// compare with.
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
	// CPU is the joiner's user and system CPU time until it served
	// every tuple; RSS its resident memory then, PeakRSS its peak
	// (VmHWM), Heap its heap in use (go_memstats_heap_inuse_bytes).
	CPU          time.Duration
	RSS, PeakRSS int64
	Heap         float64
	// Real is the wall-clock time of the whole run.
	Real time.Duration
}

// joinMember is one exporter process.
type joinMember struct {
	cmd         *exec.Cmd
	web, gossip string
	done        chan struct{}
	started     time.Time
}

// RunJoin starts the first member, waits until it serves every tuple,
// then starts the joiner and measures it until it serves every tuple.
func RunJoin(o JoinOptions) (*JoinRun, error) {
	began := time.Now()
	if o.Tuples < 2 {
		return nil, fmt.Errorf("a join of %d tuples: at least 2", o.Tuples)
	}
	up := joinUpstream()
	defer up.Close()
	cfg := filepath.Join(o.Dir, "join.yml")
	if err := os.WriteFile(cfg, []byte(joinConfig(up.URL, o.Tuples)), 0o600); err != nil {
		return nil, err
	}
	r := &JoinRun{JoinOptions: o}
	first, err := startJoinMember(o, cfg, "first")
	if err != nil {
		return nil, err
	}
	defer first.stop()
	fillBy := time.Now().Add(time.Minute + time.Duration(o.Tuples)*5*time.Millisecond)
	for {
		n, body, err := servedTuples(first.web, 60)
		if err == nil && n == o.Tuples {
			r.FirstHeap = metricSum(body, "go_memstats_heap_inuse_bytes")
			rss, _ := rssOf("/proc/" + strconv.Itoa(first.cmd.Process.Pid) + "/status")
			r.FirstRSS = float64(rss)
			r.FirstCPU, _ = cpuOf(first.cmd.Process.Pid)
			break
		}
		if time.Now().After(fillBy) {
			return nil, fmt.Errorf("the first member serves %d of %d tuples after %s: %v", n, o.Tuples, time.Since(first.started).Round(time.Second), err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	r.Fill = time.Since(first.started)

	joiner, err := startJoinMember(o, cfg, "joiner", first.gossip)
	if err != nil {
		return nil, err
	}
	defer joiner.stop()
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
			r.CPU, _ = cpuOf(joiner.cmd.Process.Pid)
			r.RSS, _ = rssOf("/proc/" + strconv.Itoa(joiner.cmd.Process.Pid) + "/status")
			r.PeakRSS, _ = statusKB(joiner.cmd.Process.Pid, "VmHWM")
			r.FullState = metricSum(body, `onchain_exporter_cluster_messages_received_bytes_total{kind="full"}`)
			r.FullRefused = metricSum(body, "onchain_exporter_cluster_refused_total")
			r.Calls = metricSum(body, "onchain_exporter_cluster_refreshes_total")
			r.Heap = metricSum(body, "go_memstats_heap_inuse_bytes")
			break
		}
		select {
		case <-joiner.done:
			return nil, errors.New("the joiner exited")
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

// startJoinMember starts a member listening on free ports of 127.0.0.1,
// joining peers.
func startJoinMember(o JoinOptions, cfg, name string, peers ...string) (*joinMember, error) {
	web, err := freePort()
	if err != nil {
		return nil, err
	}
	gossip, err := freePort()
	if err != nil {
		return nil, err
	}
	storage := filepath.Join(o.Dir, name)
	if err := os.MkdirAll(storage, 0o700); err != nil {
		return nil, err
	}
	args := []string{"--config.file=" + cfg, "--web.listen-address=" + web, "--log.level=warn",
		"--storage.path=" + storage, "--cluster.listen-address=" + gossip, "--cluster.label=bench", "--cluster.peer-name=" + name}
	for _, p := range peers {
		args = append(args, "--cluster.peer="+p)
	}
	if o.MaxStateBytes > 0 {
		args = append(args, "--cluster.max-state-bytes="+strconv.Itoa(o.MaxStateBytes))
	}
	cmd := exec.Command(o.Bin, args...)
	cmd.Env = append(os.Environ(), "BENCH_TOKEN=bench")
	cmd.Stdout, cmd.Stderr = o.Log, o.Log
	m := &joinMember{cmd: cmd, web: web, gossip: gossip, done: make(chan struct{}), started: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(m.done) }()
	return m, nil
}

// stop kills the process and waits for it.
func (m *joinMember) stop() {
	_ = m.cmd.Process.Kill()
	<-m.done
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

// cpuOf is a process's user and system CPU time (/proc/<pid>/stat, in
// clock ticks of 10 ms).
func cpuOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// statusKB reads a figure of /proc/<pid>/status in bytes.
func statusKB(pid int, name string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(l, name+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, name)
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
