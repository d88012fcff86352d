package benchmark

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// reloadSize is what a run of TestReloadUnderLoad does.
type reloadSize struct {
	latency time.Duration // of every upstream answer
	scrape  time.Duration // between two scrapes
	// reloads of each phase, and the time between two reloads of the
	// unchanged file and of the changing one.
	reloads              int
	unchangedGap, addGap time.Duration
}

const openInterest, netflow = "/v1/btc/market-data/open-interest", "/v1/btc/exchange-flows/netflow"

// reloadFiles are the two configurations: 12 day tuples of open interest
// (measured: nothing is due in the day, so every call on their path is
// the reloads'), 2 netflow tuples on a cache_ttl of 1 s (calls in flight
// most of the time, as in the measurement), and, in the grown
// file, 4 open interest tuples more.
func reloadFiles(url string) (base, grown string) {
	base = fmt.Sprintf(`data:
  url: %s
  token_env: T
  concurrency: 16
  metrics:
    - path: %s
      window: day
      exchange: [all_exchange, binance, okx, deribit, bitmex, gate_io]
      symbol: [all_symbol, btc_usd]
    - path: %s
      window: day
      cache_ttl: 1s
      exchange: [binance, okx]
`, url, openInterest, netflow)
	grown = base + fmt.Sprintf(`    - path: %s
      window: day
      exchange: [huobi, kraken, bitfinex, bitget]
      symbol: all_symbol
`, openInterest)
	return base, grown
}

// keptTuples are the open interest tuples of both files, served by every
// scrape; the grown file adds addedPerReload.
const keptTuples, addedPerReload = 12, 4

// reloadPhase is what one phase of reloads measured.
type reloadPhase struct {
	name    string
	reloads int
	added   int   // tuples the phase's reloads added
	calls   int64 // upstream calls on the measured path during the phase
	// background are the calls of the cache_ttl tuples meanwhile.
	background int64
	// scrapes are the scrape durations; awaited marks those that started
	// within an upstream call's length after a reload that added tuples
	// (the scrape waits for the first fill of new tuples, within its
	// deadline, by design).
	scrapes []time.Duration
	awaited []bool
	failed  []string
	apply   []time.Duration // SafeConfig.Reload: read, parse, ApplyConfig
}

// TestReloadUnderLoad reloads the configuration as SIGHUP does
// (config.SafeConfig.Reload: the file read and parsed afresh, then
// Exporter.ApplyConfig) while another goroutine scrapes, against an
// upstream that answers every call late, in real time: first reloads of
// an unchanged file, then of a file that alternately adds and removes
// tuples. It reports the scrapes' p50, p99 and max and the upstream calls
// the reloads caused. The short mode (CI) asserts the logic only: an
// unchanged file causes no call, an added tuple exactly one, no scrape
// fails and every scrape serves the tuples in force throughout.
// ONCHAIN_BENCH_FULL=1 runs the case: a 3 s upstream, scrapes
// every 250 ms, 50 reloads of each kind.
func TestReloadUnderLoad(t *testing.T) {
	size := reloadSize{latency: 200 * time.Millisecond, scrape: 50 * time.Millisecond, reloads: 4,
		unchangedGap: 100 * time.Millisecond, addGap: 300 * time.Millisecond}
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		size = reloadSize{latency: 3 * time.Second, scrape: 250 * time.Millisecond, reloads: 50,
			unchangedGap: time.Second, addGap: 4 * time.Second}
	}
	fake := fakeapi.New(fakeapi.Options{DataToken: "bench", Latency: size.latency})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	baseYML, grownYML := reloadFiles(srv.URL)
	base, grown := filepath.Join(dir, "base.yml"), filepath.Join(dir, "grown.yml")
	for f, yml := range map[string]string{base: baseYML, grown: grownYML} {
		if err := os.WriteFile(f, []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var file atomic.Value // the file the next reload reads
	file.Store(base)
	load := func() (*config.Config, error) {
		f := file.Load().(string)
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		return config.Parse(f, b, func(string) string { return "bench" })
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	exp, err := collector.New(cfg, log.NewNopLogger(), reg, collector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	safe := config.NewSafeConfig(reg, load, exp.ApplyConfig)
	safe.Loaded(cfg)

	// The first fill, before the clock starts, as after any start.
	for filled := false; !filled; {
		body, err := scrapeText(exp)
		if err != nil {
			t.Fatal(err)
		}
		filled = strings.Contains(string(body), `onchain_exporter_scrape_collector_success{collector="data"} 1`)
	}

	// The scraper: every size.scrape, into the phase under way.
	var mu sync.Mutex
	var phase *reloadPhase
	var addedAt []time.Time // when the reloads that added tuples ended
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(size.scrape)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			start := time.Now()
			body, err := scrapeText(exp)
			took := time.Since(start)
			problem := ""
			if err != nil {
				problem = err.Error()
			} else if n := strings.Count(string(body), "\nonchain_open_interest_usd{"); n < keptTuples || n > keptTuples+addedPerReload {
				problem = fmt.Sprintf("%d open interest series, want %d to %d", n, keptTuples, keptTuples+addedPerReload)
			}
			mu.Lock()
			if p := phase; p != nil {
				awaited := false
				for _, a := range addedAt {
					awaited = awaited || (!start.Before(a.Add(-size.scrape)) && start.Before(a.Add(size.latency+size.scrape)))
				}
				p.scrapes = append(p.scrapes, took)
				p.awaited = append(p.awaited, awaited)
				if problem != "" {
					p.failed = append(p.failed, problem)
				}
			}
			mu.Unlock()
		}
	}()
	defer func() {
		close(stop)
		<-done
	}()

	run := func(p *reloadPhase, gap time.Duration, fileOf func(i int) string) {
		before, bgBefore := fake.CallsFor(openInterest), fake.CallsFor(netflow)
		mu.Lock()
		phase, addedAt = p, nil
		mu.Unlock()
		start := time.Now()
		for i := 0; i < p.reloads; i++ {
			time.Sleep(time.Until(start.Add(time.Duration(i) * gap)))
			f := fileOf(i)
			grows := f == grown && file.Load().(string) == base
			file.Store(f)
			t0 := time.Now()
			if err := safe.Reload(); err != nil {
				t.Fatalf("reload %d: %v", i, err)
			}
			p.apply = append(p.apply, time.Since(t0))
			if grows {
				p.added += addedPerReload
				mu.Lock()
				addedAt = append(addedAt, time.Now())
				mu.Unlock()
			}
		}
		// The scrapes after the last reload, and the calls it started.
		time.Sleep(gap + size.latency + size.scrape)
		mu.Lock()
		phase = nil
		mu.Unlock()
		p.calls = fake.CallsFor(openInterest) - before
		p.background = fake.CallsFor(netflow) - bgBefore
	}
	unchanged := &reloadPhase{name: "unchanged file", reloads: size.reloads}
	run(unchanged, size.unchangedGap, func(int) string { return base })
	changing := &reloadPhase{name: "file adding and removing 4 tuples", reloads: size.reloads}
	run(changing, size.addGap, func(i int) string {
		if i%2 == 0 {
			return grown
		}
		return base
	})

	for _, p := range []*reloadPhase{unchanged, changing} {
		t.Log(p.summary())
		if len(p.failed) > 0 {
			t.Errorf("%s: %d of %d scrapes failed, the first: %s", p.name, len(p.failed), len(p.scrapes), p.failed[0])
		}
		if want := int64(p.added); p.calls != want {
			t.Errorf("%s: %d upstream calls on %s during %d reloads adding %d tuples, want %d (one per added tuple)",
				p.name, p.calls, openInterest, p.reloads, p.added, want)
		}
		if len(p.scrapes) == 0 {
			t.Errorf("%s: no scrape during the reloads", p.name)
		}
	}
}

// summary is a phase's line of figures.
func (p *reloadPhase) summary() string {
	var rest, waited []time.Duration
	for i, d := range p.scrapes {
		if p.awaited[i] {
			waited = append(waited, d)
		} else {
			rest = append(rest, d)
		}
	}
	fig := func(ds []time.Duration) string {
		if len(ds) == 0 {
			return "none"
		}
		ds = slices.Clone(ds)
		mx := slices.Max(ds)
		over := 0
		for _, d := range ds {
			if d > 100*time.Millisecond {
				over++
			}
		}
		return fmt.Sprintf("%d scrapes: p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d over 100 ms",
			len(ds), Percentile(ds, 0.5), Percentile(ds, 0.99), float64(mx.Microseconds())/1000, over)
	}
	s := fmt.Sprintf("%s, %d reloads (%d tuples added): %d upstream calls on the measured path (%d of the cache_ttl tuples meanwhile); reload p50 %.2f ms, max %.2f ms\n  all %s",
		p.name, p.reloads, p.added, p.calls, p.background, Percentile(slices.Clone(p.apply), 0.5), Percentile(slices.Clone(p.apply), 1), fig(p.scrapes))
	if p.added > 0 {
		s += fmt.Sprintf("\n  started within a call's length after a reload that added tuples: %s\n  the others: %s", fig(waited), fig(rest))
	}
	return s
}
