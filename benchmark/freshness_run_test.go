package benchmark

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// Freshness is measured at every scrape, for every tuple, as the excess
// staleness: the time of the newest row the upstream had published at that
// moment minus the time of the row the exporter served (its
// onchain_data_timestamp_seconds). Zero means the exporter served the
// newest row there was; one window means it was one row behind. It is
// averaged over every scrape of every tuple, next to the upstream calls
// per published row, so that neither is bought with the other.

// FreshnessOptions are one simulated run: a window, the upstream's
// publication delay and the exporter's caching policy.
type FreshnessOptions struct {
	// Window is "min", "10min", "hour", "day" or "block" (btc blocks,
	// 10 min apart); it chooses the endpoint and tuples (windowSpecs).
	Window string
	Tuples int
	// Replicas scrape every Interval each, offset evenly within it, for
	// Duration of simulated time.
	Replicas           int
	Interval, Duration time.Duration
	// Provider names the upstream's publication Delay of the window.
	Provider string
	Delay    fakeapi.Delay
	// Policy names the exporter's caching: CacheTTL 0 is its own
	// schedule, anything else a cache_ttl on every entry.
	Policy   string
	CacheTTL time.Duration
	// Start is when the run starts (zero: simStart); the exporter starts
	// cold then.
	Start time.Time
	// Plan names the key's plan on the fake ("": premium, which reads
	// everything), ReadPlan has the exporter read it as it does at start
	// (package expand), and Extra is YAML of further entries beside the
	// window's tuples (plan.go); their calls are counted apart.
	Plan     string
	ReadPlan bool
	Extra    string
}

// Freshness is the outcome of a run.
type Freshness struct {
	FreshnessOptions
	// Step is the spacing of rows: the window, or the block interval.
	Step    time.Duration
	Scrapes int // by all replicas
	// Published counts, over all tuples, the rows the exporter had to
	// deliver: the row visible at the start and every row published
	// until the last scrape.
	Published int
	// Calls is every data API request the exporter made.
	Calls int64
	// MeanExcess and MaxExcess are the excess staleness over every scrape
	// of every tuple.
	MeanExcess, MaxExcess time.Duration
	// OwnExcess is the mean of the exporter's own figure,
	// onchain_exporter_excess_staleness_seconds, over every scrape; it is
	// there for the schedule only (HasOwn).
	OwnExcess time.Duration
	HasOwn    bool
	// Unserved counts published rows that a newer row replaced before any
	// scrape served them.
	Unserved int
	// Missing counts tuple scrapes that served no row time at all (they
	// are left out of the staleness).
	Missing int
	// ExtraCalls counts the calls of the Extra entries' paths, and
	// PlanReads the reads of the key's plan; neither is in Calls.
	ExtraCalls, PlanReads int64
}

// CallsPerRow is upstream calls per published row.
func (f *Freshness) CallsPerRow() float64 {
	return float64(f.Calls) / float64(max(f.Published, 1))
}

// windowSpec is what a window's runs scrape: an endpoint and a parameter
// per tuple, the provider's constant delay, and per mode the scrape
// interval, run length and number of tuples. The short mode (CI) keeps the
// scrape interval where the schedule's precision depends on it (min,
// 10min, block) and widens it where the target dwarfs it (hour, day).
// Tuples avoid the fake's series whose newest row lacks a value (bybit
// open interest) and the deprecated ftx: there the newest published row
// can never be served, and the measure would blame the schedule.
type windowSpec struct {
	path, asset string
	param       func(i int) string // the tuple's parameter lines
	delay       time.Duration
	full, short runSize
}

type runSize struct {
	interval, duration time.Duration
	tuples             int
}

var liveExchanges = []string{"all_exchange", "binance", "okx", "deribit", "bitmex", "gate_io", "huobi", "kraken", "bitfinex", "bitget"}

func exchangeParam(i int) string {
	return "      exchange: " + liveExchanges[i%len(liveExchanges)] + "\n"
}

const day = 24 * time.Hour

var windowSpecs = map[string]windowSpec{
	"min": {path: "/v1/btc/market-data/open-interest", asset: "btc", param: exchangeParam, delay: 20 * time.Second,
		full: runSize{2 * time.Second, 30 * time.Minute, 10}, short: runSize{2 * time.Second, 20 * time.Minute, 10}},
	"10min": {path: "/v2/network/events-count", param: func(i int) string { return "      asset: " + stablecoins[i%len(stablecoins)] + "\n" },
		delay: 2 * time.Minute, full: runSize{15 * time.Second, 6 * time.Hour, 6}, short: runSize{15 * time.Second, 6 * time.Hour, 6}},
	"hour": {path: "/v1/btc/market-data/open-interest", asset: "btc", param: exchangeParam, delay: 7 * time.Minute,
		full: runSize{15 * time.Second, 2 * day, 6}, short: runSize{30 * time.Second, day, 6}},
	"day": {path: "/v1/erc20/exchange-flows/reserve", asset: "erc20",
		param: func(i int) string {
			return fmt.Sprintf("      token: %s\n      exchange: %s\n", tokens[i%len(tokens)], liveExchanges[i/len(tokens)%len(liveExchanges)])
		},
		delay: 30 * time.Minute, full: runSize{time.Minute, 14 * day, 6}, short: runSize{5 * time.Minute, 10 * day, 6}},
	"block": {path: "/v1/btc/exchange-flows/netflow", asset: "btc", param: exchangeParam, delay: 2 * time.Minute,
		full: runSize{15 * time.Second, day, 4}, short: runSize{15 * time.Second, 12 * time.Hour, 4}},
}

// FreshnessWindows are the windows measured, shortest first.
var FreshnessWindows = []string{"min", "10min", "hour", "day", "block"}

// simStart is when every simulated run starts: off every window boundary.
var simStart = time.Date(2026, 11, 20, 0, 3, 7, 0, time.UTC)

// Exporter policies: its own schedule, and the two baselines.
const (
	PolicySchedule = "schedule"
	PolicyWindow   = "cache_ttl = window"
	PolicyNoCache  = "no cache (a call per scrape)"
)

// FreshnessCases are the runs of a window: each provider case (no delay;
// a constant delay the exporter is not told; that delay ±50 % per row; the
// delay dropping to a tenth halfway through; for fixed windows, rows shown
// from the start of their interval) against the exporter's
// schedule and the two baselines. full picks the full-size runs; the short
// ones (CI) run the baselines for the jittered delay only, and the
// no-cache one for the min window only: they are there to check the
// measure, and the no-cache one costs a call per tuple and scrape.
func FreshnessCases(window string, full bool) []FreshnessOptions {
	spec := windowSpecs[window]
	size := spec.short
	if full {
		size = spec.full
	}
	base := FreshnessOptions{Window: window, Tuples: size.tuples, Replicas: 2, Interval: size.interval, Duration: size.duration}
	d := spec.delay
	providers := []struct {
		name  string
		delay fakeapi.Delay
	}{
		{"none", fakeapi.Delay{}},
		{shortDur(d), fakeapi.Delay{Base: d}},
		{shortDur(d) + " ±50 %", fakeapi.Delay{Base: d, Jitter: 0.5}},
		{shortDur(d) + " → " + shortDur(d/10) + " halfway", fakeapi.Delay{Base: d, DropAt: simStart.Add(base.Duration / 2), After: d / 10}},
	}
	step := fakeapi.WindowDuration(window)
	if window == "block" {
		step = fakeapi.BlockInterval(spec.asset)
	} else {
		// A live upstream: a row shows (and grows) from the moment its
		// interval starts.
		providers = append(providers, struct {
			name  string
			delay fakeapi.Delay
		}{"as its interval starts", fakeapi.Delay{Base: -step}})
	}
	var cases []FreshnessOptions
	for _, p := range providers {
		for _, policy := range []struct {
			name string
			ttl  time.Duration
		}{{PolicySchedule, 0}, {PolicyWindow, step}, {PolicyNoCache, base.Interval / time.Duration(base.Replicas)}} {
			if !full && policy.ttl > 0 && p.delay.Jitter == 0 {
				continue
			}
			if !full && policy.name == PolicyNoCache && window != "min" {
				continue
			}
			o := base
			o.Provider, o.Delay, o.Policy, o.CacheTTL = p.name, p.delay, policy.name, policy.ttl
			cases = append(cases, o)
		}
	}
	return cases
}

// tupleTrack follows one tuple through a run.
type tupleTrack struct {
	key, asset string
	served     map[time.Time]bool // every row time a scrape served
}

// RunFreshness runs the exporter against the fake upstream, both on one
// simulated clock, and measures calls and excess staleness.
func RunFreshness(o FreshnessOptions) (*Freshness, error) {
	spec, ok := windowSpecs[o.Window]
	if !ok {
		return nil, fmt.Errorf("no freshness runs for window %q", o.Window)
	}
	clock, fake, srv := o.upstream()
	defer srv.Close()
	start := clock.Now()
	yml := o.config(srv.URL, spec) + o.Extra
	cfg, exp, err := o.exporter(yml, clock)
	if err != nil {
		return nil, err
	}
	defer exp.Close()
	var tracks []*tupleTrack
	extra := map[string]bool{}
	for _, t := range cfg.Tuples {
		if t.Path != spec.path {
			extra[t.Path] = true
			continue
		}
		asset := t.Params.Get("asset")
		if asset == "" {
			asset = spec.asset
		}
		tracks = append(tracks, &tupleTrack{key: strings.Join(t.TupleLabelValues, "\xff"), asset: asset, served: map[time.Time]bool{}})
	}
	if len(tracks) != o.Tuples {
		return nil, fmt.Errorf("%d tuples configured, %d asked for", len(tracks), o.Tuples)
	}

	f := &Freshness{FreshnessOptions: o, Step: fake.RowStep(spec.path, o.Window, tracks[0].asset)}
	var sum float64 // seconds: a sum of durations overflows in long runs
	var samples int64
	var ownSum float64
	var ownSamples int
	var last time.Time
	offset := o.Interval / time.Duration(max(o.Replicas, 1))
	for elapsed := time.Duration(0); elapsed < o.Duration; elapsed += o.Interval {
		for r := 0; r < o.Replicas; r++ {
			now := clock.Now()
			body, err := scrapeText(exp)
			if err != nil {
				return nil, fmt.Errorf("scrape at %s: %w", now, err)
			}
			served, err := servedRows(body, cfg.TupleLabelNames)
			if err != nil {
				return nil, fmt.Errorf("scrape at %s: %w", now, err)
			}
			f.Scrapes++
			if v, ok := ownExcess(body, o.Window); ok {
				ownSum += v
				ownSamples++
			}
			for _, tr := range tracks {
				row, ok := served[tr.key]
				if !ok {
					f.Missing++
					continue
				}
				newest := fake.NewestVisible(spec.path, o.Window, tr.asset, now)
				if row.After(newest) {
					return nil, fmt.Errorf("scrape at %s served row %s, newer than the newest published (%s): the fake and the measure disagree", now, row, newest)
				}
				excess := newest.Sub(row)
				sum += excess.Seconds()
				samples++
				f.MaxExcess = max(f.MaxExcess, excess)
				tr.served[row] = true
			}
			last = now
			runUntil(clock, exp, now.Add(offset))
		}
	}
	if samples > 0 {
		f.MeanExcess = time.Duration(sum / float64(samples) * float64(time.Second))
	}
	if ownSamples > 0 {
		f.OwnExcess, f.HasOwn = time.Duration(ownSum/float64(ownSamples)*float64(time.Second)), true
	}
	for _, tr := range tracks {
		end := fake.NewestVisible(spec.path, o.Window, tr.asset, last)
		for row := fake.NewestVisible(spec.path, o.Window, tr.asset, start); !row.After(end); row = row.Add(f.Step) {
			f.Published++
			if row.Before(end) && !tr.served[row] {
				f.Unserved++
			}
		}
	}
	f.PlanReads = fake.CallsFor(plan.Path)
	for path := range extra {
		f.ExtraCalls += fake.CallsFor(path)
	}
	f.Calls = fake.Calls("data") - f.ExtraCalls - f.PlanReads
	return f, nil
}

// runUntil moves the simulated clock to end, stopping at every timer the
// exporter's engines armed and letting them settle there: the production
// loop, run on simulated time, so that rows are fetched when the plan
// says, between scrapes.
func runUntil(clock *simclock.Clock, exp *collector.Exporter, end time.Time) {
	for i := 0; i < 100_000; i++ {
		exp.Settle()
		next, ok := clock.Next()
		if !ok || next.After(end) {
			break
		}
		if next.After(clock.Now()) {
			clock.Set(next)
		} else {
			clock.Fire()
		}
	}
	if end.After(clock.Now()) {
		clock.Set(end)
	}
	exp.Settle()
}

// ownExcess reads the exporter's own excess staleness of the data API's
// window from an exposition.
func ownExcess(body []byte, window string) (float64, bool) {
	prefix := []byte(`onchain_exporter_excess_staleness_seconds{api="data",window="` + window + `"} `)
	for line := range bytes.Lines(body) {
		if v, ok := bytes.CutPrefix(line, prefix); ok {
			x, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			return x, err == nil
		}
	}
	return 0, false
}

// servedFamily carries, per tuple, the time of the row served.
const servedFamily = "onchain_data_timestamp_seconds"

// servedRows reads the served row time of every tuple from an exposition,
// keyed by the tuple's label values in the order of names. Only the lines
// of servedFamily are parsed.
func servedRows(body []byte, names []string) (map[string]time.Time, error) {
	var text bytes.Buffer
	for line := range bytes.Lines(body) {
		rest, ok := bytes.CutPrefix(line, []byte("# HELP "))
		if !ok {
			rest, ok = bytes.CutPrefix(line, []byte("# TYPE "))
		}
		if !ok {
			rest = line
		}
		if s, ok := bytes.CutPrefix(rest, []byte(servedFamily)); ok && len(s) > 0 && (s[0] == '{' || s[0] == ' ') {
			text.Write(line)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(&text)
	if err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	values := make([]string, len(names))
	for _, m := range fams[servedFamily].GetMetric() {
		clear(values)
		for _, l := range m.GetLabel() {
			for i, n := range names {
				if l.GetName() == n {
					values[i] = l.GetValue()
				}
			}
		}
		out[strings.Join(values, "\xff")] = time.Unix(int64(m.GetGauge().GetValue()), 0).UTC()
	}
	return out, nil
}

// upstream starts the run's simulated clock and the fake upstream, which
// publishes the window's rows with the run's delay.
func (o FreshnessOptions) upstream() (*simclock.Clock, *fakeapi.Server, *httptest.Server) {
	start := simStart
	if !o.Start.IsZero() {
		start = o.Start
	}
	clock := simclock.New(start)
	fo := fakeapi.Options{Now: clock.Now, DataToken: "bench", Publish: map[string]fakeapi.Delay{o.Window: o.Delay}}
	if o.Plan != "" {
		p, err := fakeapi.ParseTier(o.Plan)
		if err != nil {
			panic(err) // a benchmark's own constant
		}
		fo.DataKeys, fo.Catalog = map[string]fakeapi.Tier{"bench": p}, fakeapi.CatalogFull
	}
	fake := fakeapi.New(fo)
	return clock, fake, httptest.NewServer(fake)
}

// config is the run's configuration against the fake at url: its tuples
// of the window, on a cache_ttl when the run sets one.
func (o FreshnessOptions) config(url string, spec windowSpec) string {
	var yml strings.Builder
	fmt.Fprintf(&yml, "data:\n  url: %s\n  token_env: T\n  concurrency: 8\n", url)
	if o.ReadPlan {
		// Left unset, rate_limit comes from the plan; the runs set it
		// high so that they measure the schedule alone, as they did
		// when the cap ran in real time (it now runs on the client's
		// clock, the simulated one here).
		yml.WriteString("  rate_limit: 1000\n")
	}
	yml.WriteString("  metrics:\n")
	for i := 0; i < o.Tuples; i++ {
		fmt.Fprintf(&yml, "    - path: %s\n      window: %s\n%s", spec.path, o.Window, spec.param(i))
		if o.CacheTTL > 0 {
			fmt.Fprintf(&yml, "      cache_ttl: %s\n", o.CacheTTL)
		}
	}
	return yml.String()
}
