package state_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/persist"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// restartConfig is the harness's supply and open interest, the latter on
// every exchange discovery lists: a restart has a listing answer to reuse.
const restartConfig = testtool.DataSection + `    - path: /v1/btc/network-data/supply
      window: [day, block]
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: all
`

// restartRig runs exporters one after another on one storage directory
// against one fake upstream, as restarts of one process would.
type restartRig struct {
	t     *testing.T
	clock *simclock.Clock
	fake  *fakeapi.Server
	srv   *httptest.Server
	dir   string
	every time.Duration // Options.SaveInterval
}

func newRestartRig(t *testing.T) *restartRig {
	u := testtool.StartFake(t, fakeapi.Options{})
	return &restartRig{t: t, clock: u.Clock, fake: u.Fake, srv: u.Srv, dir: t.TempDir()}
}

// running is one exporter process: its store, expander and exporter.
type running struct {
	exp      *collector.Exporter
	pool     *upstream.Pool
	logs     *testtool.LogBuffer
	expander *expand.Expander
	parse    func() *config.Config
}

// start runs an exporter on yml with the credential token, as main does.
func (r *restartRig) start(yml, token string) *running {
	r.t.Helper()
	logs := &testtool.LogBuffer{}
	logger := log.NewLogfmtLogger(logs)
	store := persist.New(state.OpenStore(r.dir, logger), logger)
	reg := prometheus.NewRegistry()
	pool := upstream.NewPool(reg, r.clock.Now, logger)
	pool.OnClient(store.Keep)
	opts := collector.Options{Clock: r.clock, Clients: pool, Store: store, SaveInterval: r.every}
	parse := func() *config.Config { return testtool.ConfigToken(r.t, r.srv.URL, yml, token) }
	xopts := expand.Options{Now: r.clock.Now, Clients: pool, Store: store}
	cfg, err := expand.New(logger, xopts).Expand(context.Background(), parse())
	if err != nil {
		r.t.Fatal(err)
	}
	exp, err := collector.New(cfg, logger, reg, opts)
	if err != nil {
		r.t.Fatal(err)
	}
	run := &running{exp: exp, pool: pool, logs: logs, expander: expand.New(logger, xopts), parse: parse}
	r.t.Cleanup(run.stop)
	return run
}

func (p *running) stop() {
	p.exp.Close()
	p.pool.Close()
}

// dataLines scrapes, lets the refreshes the scrape woke end, and returns
// the data series the scrape served, sorted.
func (p *running) dataLines(t *testing.T) []string {
	t.Helper()
	body := testtool.Serve(t, p.exp, "")
	p.exp.Settle()
	var out []string
	for _, l := range lines(body, "onchain_") {
		if !strings.HasPrefix(l, "onchain_exporter_") {
			out = append(out, l)
		}
	}
	return out
}

func TestRestartServesSavedStateWithoutCalls(t *testing.T) {
	r := newRestartRig(t)
	first := r.start(restartConfig, testToken)
	want := first.dataLines(t)
	if r.fake.Calls("data") == 0 || len(want) < 10 {
		t.Fatalf("the first run made %d calls and served %d series", r.fake.Calls("data"), len(want))
	}
	first.stop()

	r.fake.ResetCalls()
	second := r.start(restartConfig, testToken)
	got := second.dataLines(t)
	// A start reads the key's plan (the provider's answer sets it, not
	// the state file's): that call alone.
	if n, p := r.fake.Calls("data"), r.fake.CallsFor(plan.Path); n != p || p != 1 {
		t.Errorf("the restart made %d upstream calls with nothing due, %d of them the plan's; want the plan's one\n%s", n, p, second.logs)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the restart serves other series:\n got %d: %s\nwant %d: %s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	second.stop()

	// Two hours later the hour rows are due, but the discovery answer the
	// last run kept is not: the last run would have reused it for a day.
	r.clock.Add(2 * time.Hour)
	r.fake.ResetCalls()
	later := r.start(restartConfig, testToken)
	later.dataLines(t)
	if n := r.fake.CallsFor("/v1/discovery/endpoints"); n != 0 || r.fake.Calls("data") == 0 {
		t.Errorf("a restart 2 h later made %d discovery calls (want 0) and %d calls in all (want the due rows)", n, r.fake.Calls("data"))
	}
	later.stop()

	// A new timeout, rate_limit or TLS setting is the same account: what
	// was learned stands.
	r.fake.ResetCalls()
	tuned := r.start(strings.Replace(restartConfig, "token_env: T", "token_env: T\n  timeout: 7s\n  rate_limit: 1000", 1), testToken)
	tuned.dataLines(t)
	if n := r.fake.Calls("data") - r.fake.CallsFor(plan.Path); n != 0 {
		t.Errorf("a new timeout and rate_limit cost %d calls besides the plan's read; want 0\n%s", n, tuned.logs)
	}
	tuned.stop()

	// A tuple whose request changed is fetched; the others are not.
	r.fake.ResetCalls()
	changed := strings.Replace(restartConfig, "window: [day, block]", "window: [day, block]\n      cache_ttl: 1h\n      fields: {supply: {scale: 2}}", 1)
	third := r.start(changed, testToken)
	third.dataLines(t)
	if n := r.fake.CallsFor("/v1/btc/network-data/supply"); n != 2 {
		t.Errorf("the changed tuples made %d calls, want 2", n)
	}
	if n := r.fake.CallsFor("/v1/btc/market-data/open-interest"); n != 0 {
		t.Errorf("unchanged tuples made %d calls, want 0", n)
	}
	third.stop()

	// Another credential: the API's saved state does not apply (its
	// listing answers neither, so the fake's refusal of the credential
	// is kept out of the way).
	r.fake.ResetCalls()
	fourth := r.start(strings.Replace(changed, "exchange: all", "exchange: binance", 1), "another-token")
	fourth.dataLines(t)
	if n := r.fake.Calls("data"); n == 0 {
		t.Error("the API whose credential changed made no calls")
	}
	if !strings.Contains(fourth.logs.String(), "address, auth or credential changed") {
		t.Errorf("no warning about the changed identity:\n%s", fourth.logs)
	}
	fourth.stop()
	for _, f := range stateFiles(t, r.dir) {
		data, _ := os.ReadFile(f)
		if bytes.Contains(data, []byte(testToken)) || bytes.Contains(data, []byte("another-token")) {
			t.Errorf("%s holds the credential", f)
		}
	}
}

// A series that was failing when the last run stopped says so on the
// next run's page from its start, before any call of its own: when the
// last refresh was and what it failed with.
func TestRestartSaysWhyASeriesWasFailing(t *testing.T) {
	r := newRestartRig(t)
	const supply = "/v1/btc/network-data/supply"
	r.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Status503, PathPrefix: supply})
	first := r.start(restartConfig, testToken)
	first.dataLines(t)
	first.stop()

	second := r.start(restartConfig, testToken)
	var said string
	for _, a := range second.exp.View() {
		for _, s := range a.Series {
			if s.Tuple.Path == supply && s.Tuple.Window == "day" {
				said = s.LastError
			}
		}
	}
	if !strings.Contains(said, "the last refresh before this process started") || !strings.Contains(said, "failed") {
		t.Errorf("a restarted member's page says of a series that was failing: %q; want when the last refresh was and why it failed", said)
	}
}

// Saves run beside scrapes, refreshes, reloads and expansion.
func TestSaveWhileScrapingAndReloading(t *testing.T) {
	r := newRestartRig(t)
	r.every = time.Millisecond
	run := r.start(restartConfig, testToken)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			run.dataLines(t)
			r.clock.Add(10 * time.Minute)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			cfg, err := run.expander.Expand(context.Background(), run.parse())
			if err != nil {
				t.Error(err)
				return
			}
			if err := run.exp.ApplyConfig(cfg); err != nil {
				t.Error(err)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	wg.Wait()
	run.stop()
	if files := stateFiles(t, r.dir); len(files) != 1 {
		t.Errorf("files after saving: %v", files)
	}
}

// stateFiles lists every file under dir but the budget's reservations
// (budget-API.json): the fake's key is on a plan whose rate limit gives
// the API a daily budget, so every run reserves its calls there.
func stateFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "budget-") && strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}
