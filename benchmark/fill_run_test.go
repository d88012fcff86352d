package benchmark

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// "Everything the plan allows", filled at the plan's pace: one entry,
// path /v1/** with every window, exchange, token and symbol and
// coarsen: true, on the fake's full catalog for a key of a plan (premium:
// 10 102 series, rate_limit 540 a minute and daily_budget 777 600 from
// the plan), on simulated time from a cold start until every series has
// been asked once, and a while after.

// FillOptions are one run.
type FillOptions struct {
	Tier string // the key's plan on the fake: premium...
	// Path is the pattern; "" is /v1/**.
	Path string
	// RateLimit is the file's rate_limit; 0 leaves it to the plan.
	RateLimit float64
	// After is how long the run goes on once every series was asked.
	After time.Duration
	// Interval is the scrape interval of the one Prometheus.
	Interval time.Duration
	// HeapProfile, when set, is where a heap profile is written once
	// every series was asked.
	HeapProfile string
}

// Fill is what a run came to.
type Fill struct {
	FillOptions
	Tuples    int
	RateLimit float64 // in force, from the file or the plan
	// Filled is when the last series never asked was asked, from the
	// start (the first scrape), its answer being in by the next scrape;
	// Bound is 1.1 × Tuples / RateLimit.
	Filled, Bound time.Duration
	// CallsBefore are the data calls up to then (listing calls left
	// out), CallsAfter those of the run's last hour.
	CallsBefore, CallsAfter int64
	// Repeats are the calls up to then of a request asked before.
	Repeats int
	// MaxPerMinute is the most data calls in any 60 s window, of the
	// fill and the hour after it.
	MaxPerMinute int
	// Warnings and FillLines are the log lines at warn, and those that
	// say how far the fill is or that it is over; Closest is the
	// shortest time between two of the latter.
	Warnings, FillLines int
	FirstLine, Warning  string
	Closest             time.Duration
	// Served are the series with a value at the end.
	Served int
	// HeapPerTuple is the live heap once every series was asked, less
	// what is left of it once the exporter, its configuration and its
	// clients are dropped, per tuple (bytes); Heap is that live heap.
	// HeapEndPerTuple and HeapEnd are the same at the end of the run,
	// After later: the series then keep more answers.
	HeapPerTuple, HeapEndPerTuple float64
	Heap, HeapEnd                 uint64
	// Wall is the real time the run took.
	Wall time.Duration
}

// lineCounter counts log lines by what they hold: warnings (but the one
// line at start that says how the daily budget coarsens the plan), and
// the lines about the fill.
type lineCounter struct {
	now           func() time.Time
	mu            sync.Mutex
	warn, fills   int
	first, warned string
	// closest is the shortest time between two lines about the fill.
	closest time.Duration
	last    time.Time
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bytes.Contains(p, []byte("level=warn")) && !bytes.Contains(p, []byte("polling is coarsened")) {
		if l.warn == 0 {
			l.warned = strings.TrimSpace(string(p))
		}
		l.warn++
	}
	if bytes.Contains(p, []byte("filling:")) || bytes.Contains(p, []byte("filled:")) {
		if l.fills == 0 {
			l.first = strings.TrimSpace(string(p))
		}
		now := l.now()
		if l.fills > 0 && (l.closest == 0 || now.Sub(l.last) < l.closest) {
			l.closest = now.Sub(l.last)
		}
		l.fills, l.last = l.fills+1, now
	}
	return len(p), nil
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// RunFill runs the exporter on everything the plan allows until every
// series was asked once, and After more.
func RunFill(o FillOptions) (*Fill, error) {
	wall := time.Now()
	if o.HeapProfile != "" {
		// Every allocation sampled: the profile then says where each
		// byte of a tuple goes, not a sample of 512 KiB.
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1
	}
	if o.Path == "" {
		o.Path = "/v1/**"
	}
	clock := simclock.New(simStart)
	p, err := fakeapi.ParseTier(o.Tier)
	if err != nil {
		return nil, err
	}
	fake := fakeapi.New(fakeapi.Options{Now: clock.Now, DataKeys: map[string]fakeapi.Tier{"bench": p}, Catalog: fakeapi.CatalogFull})
	var (
		mu          sync.Mutex
		arrivals    []time.Time
		requests    []string
		counting    atomic.Bool
		filled      atomic.Bool
		recordUntil time.Time // guarded by mu
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if counting.Load() {
			// The calls of the fill and of the hour after it are timed
			// one by one; later ones only counted (sampled at each
			// scrape): the run's records stay the same size whatever
			// After is, and out of the heap a tuple.
			mu.Lock()
			if now := clock.Now(); !filled.Load() || now.Before(recordUntil) {
				arrivals = append(arrivals, now)
			}
			if !filled.Load() {
				requests = append(requests, r.URL.Path+"?"+r.URL.RawQuery)
			}
			mu.Unlock()
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	var yml strings.Builder
	fmt.Fprintf(&yml, "data:\n  url: %s\n  token_env: T\n  concurrency: 8\n  max_tuples: 100000\n", srv.URL)
	if o.RateLimit > 0 {
		fmt.Fprintf(&yml, "  rate_limit: %g\n", o.RateLimit)
	}
	fmt.Fprintf(&yml, "  metrics:\n    - path: %s\n      window: all\n      exchange: all\n      token: all\n      symbol: all\n      coarsen: true\n", o.Path)
	cfg, err := config.Parse("fill.yml", []byte(yml.String()), func(string) string { return "bench" })
	if err != nil {
		return nil, err
	}
	lines := &lineCounter{now: clock.Now}
	logger := log.NewLogfmtLogger(lines)
	reg := prometheus.NewRegistry()
	pool := upstream.NewPool(reg, clock.Now, logger)
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	x := expand.New(logger, expand.Options{Now: clock.Now, Clients: pool})
	if cfg, err = x.Start(context.Background(), cfg); err != nil {
		return nil, err
	}
	exp, err := collector.New(cfg, logger, reg, collector.Options{Clock: clock, Clients: pool})
	if err != nil {
		return nil, err
	}
	defer func() {
		if exp != nil {
			exp.Close()
		}
	}()
	f := &Fill{FillOptions: o, Tuples: len(cfg.Tuples), RateLimit: cfg.APIs[config.APIData].RateLimit}
	if f.RateLimit > 0 {
		f.Bound = time.Duration(1.1 * float64(f.Tuples) / f.RateLimit * float64(time.Minute))
	}
	counting.Store(true) // the start's listing calls are left out
	start := clock.Now()
	var end time.Time
	type callSample struct {
		at    time.Time
		calls int64
	}
	var samples []callSample
	for now := start; end.IsZero() || now.Before(end); now = clock.Now() {
		body, err := scrapeText(exp)
		if err != nil {
			return nil, fmt.Errorf("scrape at %s: %w", now, err)
		}
		unasked, ok := gauge(body, `onchain_exporter_tuples_unasked{api="data"} `)
		body = nil
		if ok && unasked == 0 && end.IsZero() {
			filled.Store(true)
			// The last first call, and what went before it: the calls
			// of the step after it are the fill's end, not its cost.
			mu.Lock()
			seen, last := map[string]bool{}, 0
			for i, q := range requests {
				if !seen[q] {
					seen[q], last = true, i
				}
			}
			f.Filled, f.CallsBefore = arrivals[last].Sub(start), int64(last+1)
			for _, q := range requests[:last] {
				if !seen[q] {
					f.Repeats++ // asked a second time
				}
				seen[q] = false
			}
			requests, recordUntil = nil, arrivals[last].Add(time.Hour)
			mu.Unlock()
			f.Heap = liveHeap()
			if o.HeapProfile != "" {
				if err := writeHeapProfile(o.HeapProfile); err != nil {
					return nil, err
				}
			}
			end = now.Add(o.After)
		}
		if now.Sub(start) > 24*time.Hour {
			return nil, fmt.Errorf("not filled after a day: %v series never asked", unasked)
		}
		samples = append(samples, callSample{now, fake.Calls(config.APIData)})
		step := o.Interval
		if end.IsZero() {
			step = min(step, 5*time.Second) // the time of the fill, to 5 s
		}
		runUntil(clock, exp, now.Add(step))
	}
	body, err := scrapeText(exp)
	if err != nil {
		return nil, err
	}
	for _, l := range lineOf(body, "onchain_exporter_last_success_timestamp_seconds{") {
		if !strings.HasSuffix(l, " 0") {
			f.Served++
		}
	}
	mu.Lock()
	a := slices.Clone(arrivals)
	mu.Unlock()
	slices.SortFunc(a, func(x, y time.Time) int { return x.Compare(y) })
	for i, j := 0, 0; i < len(a); i++ {
		for a[i].Sub(a[j]) >= time.Minute {
			j++
		}
		f.MaxPerMinute = max(f.MaxPerMinute, i-j+1)
	}
	hourAgo := clock.Now().Add(-time.Hour)
	for _, c := range samples {
		if !c.at.Before(hourAgo) {
			f.CallsAfter = fake.Calls(config.APIData) - c.calls
			break
		}
	}
	lines.mu.Lock()
	f.Warnings, f.FillLines, f.FirstLine, f.Warning, f.Closest = lines.warn, lines.fills, lines.first, lines.warned, lines.closest
	lines.mu.Unlock()
	f.HeapEnd = liveHeap()
	// What the exporter holds: the heap once every series was asked, less
	// what is left once the exporter, its configuration and clients are
	// gone (the fake, the run's own records).
	exp.Close()
	pool.Close()
	exp, cfg, x, pool, reg = nil, nil, nil, nil, nil
	after := liveHeap()

	f.HeapPerTuple = (float64(f.Heap) - float64(after)) / float64(max(f.Tuples, 1))
	f.HeapEndPerTuple = (float64(f.HeapEnd) - float64(after)) / float64(max(f.Tuples, 1))
	f.Wall = time.Since(wall)
	return f, nil
}

// writeHeapProfile writes the heap's profile to path.
func writeHeapProfile(path string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	return pprof.WriteHeapProfile(out)
}

// gauge reads one sample of an exposition, by the line's start.
func gauge(body []byte, prefix string) (float64, bool) {
	for line := range bytes.Lines(body) {
		if v, ok := bytes.CutPrefix(line, []byte(prefix)); ok {
			x, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			return x, err == nil
		}
	}
	return 0, false
}

// lineOf are the lines of an exposition that start with prefix.
func lineOf(body []byte, prefix string) []string {
	var out []string
	for line := range bytes.Lines(body) {
		if bytes.HasPrefix(line, []byte(prefix)) {
			out = append(out, strings.TrimSpace(string(line)))
		}
	}
	return out
}

// Table renders a run.
func (f *Fill) Table() string {
	return fmt.Sprintf("| %d | %g | %s | %s | %d | %d | %d | %d | %d | %.0f | %.0f |",
		f.Tuples, f.RateLimit, f.Filled.Round(time.Second), f.Bound.Round(time.Second), f.CallsBefore, f.Repeats,
		f.MaxPerMinute, f.Warnings, f.FillLines, f.HeapPerTuple, f.HeapEndPerTuple)
}
