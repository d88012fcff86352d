package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// The check at scale (issue 41): --config.check --config.check.upstream
// on a pattern of 10 000 {a,b,...} alternatives, and on a discovery of
// 85 000 paths, each run as the command runs it, reporting its seconds
// and the peaks of the heap and of the memory held while it ran (the
// upstream's included: it is served in process; benchCheck). The targets are 10 s and 200 MB; BENCHMARKS.md has
// the figures and the command.

// alternatives are n metrics of one category of btc, the words of the
// pattern's group and the paths the fake serves besides its catalog: words
// of 6 to 17 letters that share no common shape (a regexp factors
// metric-00001|metric-00002|... into almost nothing), as metric names.
func alternatives(n int) (words, paths []string) {
	r := rand.New(rand.NewPCG(41, 10_000))
	seen := map[string]bool{}
	for len(words) < n {
		b := make([]byte, 6+r.IntN(12))
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz-"[r.IntN(26+min(i, 1))]
		}
		if w := string(b); !seen[w] && !strings.HasSuffix(w, "-") {
			seen[w] = true
			words = append(words, w)
			paths = append(paths, "/v1/btc/bench-flows/"+w)
		}
	}
	return words, paths
}

func BenchmarkCheckAlternatives10000(b *testing.B) {
	words, paths := alternatives(10_000)
	u := newFakeUpstream(b, fakeapi.Options{DataToken: "bench-tok", ExtraPaths: paths})
	file := filepath.Join(b.TempDir(), "onchain.yml")
	writeFile(b, file, fmt.Sprintf("data:\n  url: %s\n  token_env: ONCHAIN_BENCH_CHECK\n  max_tuples: 20000\n  metrics:\n    - path: /v1/btc/bench-flows/{%s}\n",
		u.URL, strings.Join(words, ",")))
	b.Setenv("ONCHAIN_BENCH_CHECK", "bench-tok")
	benchCheck(b, file, "OK: "+file+": 10000 tuples")
}

// syntheticDiscovery serves a data API of n v1 paths: its discovery, in
// the data envelope, each path at day and hour, and a premium key's plan
// that lists every one of them, in the current dialect. Not the fake: the
// fake lists its exchanges with each path, and 85 000 such items are past
// what a client reads of one answer (upstream.MaxBody, 8 MiB); these are
// as short as an item can be, 7.2 MB.
func syntheticDiscovery(b *testing.B, n int) string {
	b.Helper()
	assets := []string{"btc", "eth", "xrp", "trx", "erc20", "stablecoin", "alt"}
	var disc bytes.Buffer
	disc.WriteString(`{"status": {"code": 200, "message": "success"}, "result": {"data": [`)
	p := &plan.Plan{Name: "PREMIUM", Paths: map[string]plan.Windows{}, Statics: []string{"/v1/discovery/endpoints"},
		RateLimit: plan.RateLimit{Token: 600, Window: "minute"}}
	for i := range n {
		path := fmt.Sprintf("/v1/%s/cat-%02d/metric-%05d", assets[i%len(assets)], (i/len(assets))%100, i)
		if i > 0 {
			disc.WriteByte(',')
		}
		fmt.Fprintf(&disc, `{"path":%q,"parameters":{"window":["day","hour"]}}`, path)
		p.Paths[path] = plan.Windows{"day": plan.Duration{}, "hour": plan.Duration{}}
	}
	disc.WriteString(`]}}`)
	planBody, err := json.Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/discovery/endpoints":
			_, _ = w.Write(disc.Bytes())
		case plan.Path:
			_, _ = w.Write(planBody)
		default:
			http.NotFound(w, r)
		}
	}))
	b.Cleanup(s.Close)
	return s.URL
}

func BenchmarkCheckDiscovery85000(b *testing.B) {
	url := syntheticDiscovery(b, 85_000)
	file := filepath.Join(b.TempDir(), "onchain.yml")
	writeFile(b, file, fmt.Sprintf("data:\n  url: %s\n  token_env: ONCHAIN_BENCH_CHECK\n  max_tuples: 100000\n  metrics:\n    - path: /v1/btc/cat-00/metric-00000\n    - path: /v1/**\n", url))
	b.Setenv("ONCHAIN_BENCH_CHECK", "bench-tok")
	benchCheck(b, file, "OK: "+file+": 85000 tuples")
}

// benchCheck runs the check of file against the upstream b.N times and
// fails unless its first line is want; it reports the seconds of a run
// and the CPU seconds of the process in it (the upstream's included; on
// a shared machine the steadier of the two), and of the run that held
// most, the peak of the heap's objects (garbage
// not yet collected included: what the process holds) and of the heap
// live after a collection (what it needs; steadier under load), and the
// peak of the memory the Go runtime held of the system (the heap's spans,
// free ones not yet returned included, stacks and the runtime's own:
// what the resident memory of a process running the check alone comes
// to, less its code) and, on Linux, of the process's resident memory
// (VmHWM, reset before the run; the test binary's and the upstream's
// included).
func benchCheck(b *testing.B, file, want string) {
	b.Helper()
	var peak, live, held, rss, cpu float64
	b.ResetTimer()
	for range b.N {
		var out, errOut bytes.Buffer
		debug.FreeOSMemory()
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // VmHWM from here
		stop := heapPeak()
		cpu0 := cpuSeconds()
		code := run([]string{"--config.check", "--config.check.upstream", "--config.file=" + file}, &out, &errOut)
		cpu += cpuSeconds() - cpu0
		p, l, h := stop()
		peak, live, held, rss = max(peak, p), max(live, l), max(held, h), max(rss, vmHWM())
		if first, _, _ := strings.Cut(out.String(), "\n"); code != 0 || first != want {
			b.Fatalf("exit %d, first line %q, want %q; stderr:\n%s", code, first, want, errOut.String())
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/check")
	b.ReportMetric(cpu/float64(b.N), "cpu-s/check")
	b.ReportMetric(peak/1e6, "peak-heap-MB")
	b.ReportMetric(live/1e6, "peak-live-MB")
	b.ReportMetric(held/1e6, "peak-held-MB")
	b.ReportMetric(rss/1e6, "peak-rss-MB")
}

// vmHWM is the peak resident memory of the process in bytes (Linux; 0
// elsewhere).
func vmHWM() float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 64)
			return n * 1024
		}
	}
	return 0
}

// cpuSeconds is the user and system CPU time of the process so far.
func cpuSeconds() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}

// heapPeak samples the heap every millisecond from a collection on, until
// the function it returns is called; that returns the most bytes of heap
// objects seen, of heap live after a collection, and of memory the
// runtime held of the system (all it mapped less what it returned).
func heapPeak() func() (objects, live, held float64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	var peak, peakLive, peakHeld atomic.Uint64
	read := func() {
		metrics.Read(s)
		for i, p := range []*atomic.Uint64{&peak, &peakLive, &peakHeld} {
			v := s[i].Value.Uint64()
			if i == 2 {
				v -= s[3].Value.Uint64()
			}
			if v > p.Load() {
				p.Store(v)
			}
		}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() (float64, float64, float64) {
		close(done)
		<-stopped
		runtime.GC() // the live heap of the run's last cycle
		read()
		return float64(peak.Load()), float64(peakLive.Load()), float64(peakHeld.Load())
	}
}
