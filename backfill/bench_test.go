package backfill

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// TestBackfillBenchmark measures the command as a user runs it: the
// binary against the fake upstream in this process, then promtool on its
// output. It prints calls per row, rows per second, the command's peak
// resident memory, the file's size and the blocks' size on disk. The
// full set runs with ONCHAIN_BENCH_FULL=1 (minutes, gigabytes of disk);
// results go to BENCHMARKS.md ("Backfill"). Without it (CI) the smallest
// case runs, so that the harness itself stays working. ONCHAIN_BENCH_CASES
// picks cases by name.
func TestBackfillBenchmark(t *testing.T) {
	full := os.Getenv("ONCHAIN_BENCH_FULL") != ""
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is needed: install the Debian package prometheus")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "onchain_exporter")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var extra []string // the benchmark's metrics: outside the fake's catalog, served as told
	for _, m := range benchMetrics(1000) {
		extra = append(extra, "/v1/btc/bench/"+m)
	}
	fake := fakeapi.New(fakeapi.Options{DataToken: "tok", ExtraPaths: extra})
	srv := httptest.NewServer(fake)
	defer srv.Close()

	cases := []benchCase{
		{name: "day-1000x5y", window: "day", series: 1000, years: 5},
		{name: "hour-1000x5y", window: "hour", series: 1000, years: 5, noBlocks: true},
		{name: "hour-100x5y", window: "hour", series: 100, years: 5},
		{name: "day-10x1y", window: "day", series: 10, years: 1},
		{name: "day-10x1y-1m", window: "day", series: 10, years: 1, step: time.Minute},
	}
	want := os.Getenv("ONCHAIN_BENCH_CASES")
	if !full && want == "" {
		want = "day-10x1y"
	}
	fmt.Println("| case | series × rows | calls | calls per row | time | rows/s | peak RSS | file | promtool | blocks | bytes per sample |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range cases {
		if want != "" && !strings.Contains(","+want+",", ","+c.name+",") {
			continue
		}
		fake.ResetCalls()
		r := c.run(t, bin, promtool, srv.URL, filepath.Join(dir, c.name))
		r.calls, r.listing = fake.Calls("data"), fake.CallsFor("/v1/discovery/endpoints")
		fmt.Println(r)
		os.RemoveAll(filepath.Join(dir, c.name))
	}
}

type benchCase struct {
	name, window  string
	series, years int
	step          time.Duration
	noBlocks      bool // the file is too large for promtool here
}

type benchResult struct {
	c                    benchCase
	rows, samples, calls int64
	listing              int64 // of the calls: the expansion's listing
	took, promtool       time.Duration
	rss, file, blocks    int64
}

func (r benchResult) String() string {
	blocks, promtool, perSample := "–", "–", "–"
	if r.blocks > 0 {
		blocks, promtool = mib(r.blocks), r.promtool.Round(time.Second).String()
		perSample = fmt.Sprintf("%.2f", float64(r.blocks)/float64(r.samples))
	}
	return fmt.Sprintf("| %s | %d × %d | %d (%d listing) | %.6f | %s | %.0f | %s | %s | %s | %s | %s |", r.c.name, r.c.series, r.rows/int64(r.c.series),
		r.calls, r.listing, float64(r.calls)/float64(r.rows), r.took.Round(time.Second), float64(r.rows)/r.took.Seconds(), mib(r.rss), mib(r.file), promtool, blocks, perSample)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

var doneRE = regexp.MustCompile(`rows=(\d+) samples=(\d+)`)

func (c benchCase) run(t *testing.T, bin, promtool, url, dir string) benchResult {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	yml := fmt.Sprintf("data:\n  url: %s\n  token_env: T\n  max_tuples: 5000\n  metrics:\n    - path: /v1/btc/bench/{metric}\n      metric: [%s]\n      window: %s\n",
		url, strings.Join(benchMetrics(c.series), ", "), c.window)
	cfg := filepath.Join(dir, "onchain.yml")
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	to := time.Now().UTC().Add(-DefaultMargin).Truncate(time.Minute)
	from := to.AddDate(-c.years, 0, 0).Truncate(24 * time.Hour)
	out := filepath.Join(dir, "history.om")
	args := []string{"backfill", "--config.file=" + cfg, "--from=" + from.Format(time.DateOnly), "--to=" + to.Format(time.RFC3339),
		"--output=" + out, "--label=job=onchain_exporter", "--label=instance=host:9799"}
	if c.step > 0 {
		args = append(args, "--sample-interval="+c.step.String())
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "T=tok")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peak := watchPeak(cmd.Process.Pid)
	err := cmd.Wait()
	took := time.Since(start)
	rss := peak()
	if err != nil {
		t.Fatalf("%s: %v\n%s", c.name, err, logs.String())
	}
	m := doneRE.FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("%s: no summary line:\n%s", c.name, logs.String())
	}
	r := benchResult{c: c, took: took, rss: rss}
	r.rows, _ = strconv.ParseInt(m[1], 10, 64)
	r.samples, _ = strconv.ParseInt(m[2], 10, 64)
	if st, err := os.Stat(out); err == nil {
		r.file = st.Size()
	}
	if c.noBlocks {
		return r
	}
	blocks := filepath.Join(dir, "blocks")
	start = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", "--max-block-duration=8760h", out, blocks).CombinedOutput(); err != nil {
		t.Fatalf("%s: promtool: %v\n%s", c.name, err, out)
	}
	r.promtool = time.Since(start)
	filepath.Walk(blocks, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			r.blocks += info.Size()
		}
		return nil
	})
	return r
}

func benchMetrics(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("m%04d", i)
	}
	return out
}

// watchPeak reads the peak resident memory of a process (VmHWM) until
// the returned function is called, and returns it in bytes. The process's
// own figure: the rusage of a child started by os/exec counts the parent's
// memory it shared before exec.
func watchPeak(pid int) func() int64 {
	var peak atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	read := func() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if kb*1024 > peak.Load() {
					peak.Store(kb * 1024)
				}
			}
		}
	}
	go func() {
		defer close(done)
		for {
			read()
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() int64 { close(stop); <-done; return peak.Load() }
}
