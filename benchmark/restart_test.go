package benchmark

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/persist"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// restartConfig lays out n distinct tuples the fake serves: four erc20
// exchange-flow endpoints, each token on each exchange, day and hour
// windows (308 per endpoint).
func restartConfig(url string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "data:\n  url: %s\n  token_env: T\n  concurrency: 8\n  max_tuples: %d\n  metrics:\n", url, n)
	paths := []string{"reserve", "addresses-count", "netflow", "inflow"}
	for i := 0; i < n; i++ {
		w, rest := []string{"day", "hour"}[i%2], i/2
		tok, rest := tokens[rest%len(tokens)], rest/len(tokens)
		ex, rest := exchanges[rest%len(exchanges)], rest/len(exchanges)
		fmt.Fprintf(&b, "    - path: /v1/erc20/exchange-flows/%s\n      window: %s\n      token: %s\n      exchange: %s\n", paths[rest%len(paths)], w, tok, ex)
	}
	return b.String()
}

// restartRun is one start of the exporter: the upstream calls from start
// to the end of the first scrape, and how long that took.
type restartRun struct {
	name    string
	calls   int64
	elapsed time.Duration
	series  int
}

// startAndScrape starts an exporter on dir ("" keeps nothing), scrapes it
// once, lets the refreshes that were due end, and stops it (which saves
// the state).
func startAndScrape(name, yml, dir string, fake *fakeapi.Server, clock *simclock.Clock) (restartRun, error) {
	fake.ResetCalls()
	begin := time.Now()
	var store collector.Keeper
	if s := persist.New(state.OpenStore(dir, log.NewNopLogger()), log.NewNopLogger()); s != nil {
		store = s
	}
	_, exp, err := newExporter("restart.yml", yml, collector.Options{Clock: clock, Store: store})
	if err != nil {
		return restartRun{}, err
	}
	defer exp.Close()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "60")
	rec := httptest.NewRecorder()
	exp.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return restartRun{}, fmt.Errorf("%s: HTTP %d", name, rec.Code)
	}
	elapsed := time.Since(begin)
	exp.Settle() // the refreshes the scrape woke, due at the start: its cost
	r := restartRun{name: name, calls: fake.Calls("data"), elapsed: elapsed}
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(l, "onchain_") && !strings.HasPrefix(l, "onchain_exporter_") {
			r.series++ // data and per-tuple series
		}
	}
	return r, nil
}

// TestRestartCost measures what a restart costs with 1 200 tuples: the
// upstream calls from start to the first full scrape, without and with
// --storage.path, at once and an hour later (hour rows are due then, day
// rows are not). The logic is asserted (no call on a restart with nothing
// due); the times are printed, not asserted. ONCHAIN_BENCH_FULL=1 gives
// the fake upstream 50 ms of latency, so that the times mean something.
func TestRestartCost(t *testing.T) {
	const n = 1200
	var latency time.Duration
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		latency = 50 * time.Millisecond
	}
	clock := simclock.New(time.Date(2026, 11, 20, 12, 20, 0, 0, time.UTC))
	// netflow and inflow are real erc20 endpoints outside the fake's
	// catalog: it serves them as it is told.
	fake := fakeapi.New(fakeapi.Options{Now: clock.Now, DataToken: "bench", Latency: latency,
		ExtraPaths: []string{"/v1/erc20/exchange-flows/netflow", "/v1/erc20/exchange-flows/inflow"}})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	yml := restartConfig(srv.URL, n)
	dir := t.TempDir()

	var runs []restartRun
	for _, step := range []struct {
		name, dir string
		advance   time.Duration
	}{
		{"first start, empty storage", dir, 0},
		{"restart without storage", "", time.Minute},
		{"restart with storage", dir, 0},
		{"restart with storage, 1 h later", dir, time.Hour},
	} {
		clock.Add(step.advance)
		r, err := startAndScrape(step.name, yml, step.dir, fake, clock)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	var size int64
	if fi, err := os.Stat(filepath.Join(dir, "data.json")); err == nil {
		size = fi.Size()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-34s %8s %8s %12s\n", "start", "calls", "series", "to 1st scrape")
	for _, r := range runs {
		fmt.Fprintf(&b, "%-34s %8d %8d %12s\n", r.name, r.calls, r.series, r.elapsed.Round(time.Millisecond))
	}
	t.Logf("%d tuples, upstream latency %v, concurrency 8, state file %d KiB:\n%s", n, latency, size>>10, b.String())

	if runs[0].calls != n || runs[1].calls != n {
		t.Errorf("a start without state made %d and %d calls, want %d", runs[0].calls, runs[1].calls, n)
	}
	if runs[2].calls != 0 {
		t.Errorf("a restart with storage and nothing due made %d calls, want 0", runs[2].calls)
	}
	if runs[3].calls != n/2 {
		t.Errorf("a restart an hour later made %d calls, want %d (the hour tuples)", runs[3].calls, n/2)
	}
	if runs[2].series != runs[0].series || runs[0].series == 0 {
		t.Errorf("the restart served %d data series, the first start %d", runs[2].series, runs[0].series)
	}
}
