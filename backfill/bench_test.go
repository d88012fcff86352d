package backfill_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/backfill"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// TestBackfillBenchmark measures the command as a user runs it, its flags
// parsed as package main parses them (run), in this process against the
// fake upstream, then promtool on its output. It prints calls per row,
// rows per second, the peak resident memory the command added to the
// process (VmHWM, reset before the run, less what the process held then),
// the file's size and the blocks' size on disk. The
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
	t.Setenv("T", "tok") // the configuration's token_env
	var extra []string   // the benchmark's metrics: outside the fake's catalog, served as told
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
		r := c.run(t, promtool, srv.URL, filepath.Join(dir, c.name))
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

func (c benchCase) run(t *testing.T, promtool, url, dir string) benchResult {
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
	to := time.Now().UTC().Add(-backfill.DefaultMargin).Truncate(time.Minute)
	from := to.AddDate(-c.years, 0, 0).Truncate(24 * time.Hour)
	out := filepath.Join(dir, "history.om")
	args := []string{"backfill", "--config.file=" + cfg, "--from=" + from.Format(time.DateOnly), "--to=" + to.Format(time.RFC3339),
		"--output=" + out, "--label=job=onchain_exporter", "--label=instance=host:9799"}
	if c.step > 0 {
		args = append(args, "--sample-interval="+c.step.String())
	}
	logs := &testtool.LogBuffer{}
	debug.FreeOSMemory()
	rss0, err := statusBytes("VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak resident memory: %v", err)
	}
	start := time.Now()
	code := run(args, logs, logs)
	took := time.Since(start)
	peak, err := statusBytes("VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	rss := peak - rss0
	if code != 0 {
		t.Fatalf("%s: exit code %d\n%s", c.name, code, logs.String())
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

// statusBytes reads a figure of /proc/self/status in bytes.
func statusBytes(name string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/self/status has no %s", name)
}
