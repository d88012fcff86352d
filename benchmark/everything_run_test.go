package benchmark

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
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

// "Everything about BTC": one pattern entry, /v1/btc/**, on the fake's
// full catalog for a key of a plan, beside a few entries named one by
// one, run on simulated time as the exporter runs (the plan and the
// discovery read at start by package expand, the engine between scrapes).

// EverythingOptions are one run.
type EverythingOptions struct {
	Plan string // the key's plan on the fake: professional, premium...
	// DailyBudget is the file's daily_budget; 0 leaves it to the plan.
	DailyBudget int
	Days        int
	// Interval is the scrape interval of the one Prometheus.
	Interval time.Duration
}

// Everything is what a run came to.
type Everything struct {
	EverythingOptions
	// Tuples expanded: by the pattern, and named one by one.
	PatternTuples, NamedTuples int
	// CallsPerDay is every data API call of each simulated UTC day (the
	// first from the start, 3 minutes past midnight); Refused counts the
	// calls the fake refused for the key's plan.
	CallsPerDay []int64
	Refused     int64
	// MaxPerHour is the most calls of any simulated hour.
	MaxPerHour int64
	// Planned is what the daily budget's plan spends a day: its series'
	// calls and the listing calls (the budget less its 10 % reserve, when
	// the configuration costs more).
	Planned float64
	// Excess is the mean excess staleness per window, of the named
	// series and of the pattern's (see Freshness).
	Excess map[string]map[string]time.Duration // "named"/"pattern" -> window -> mean
}

// everythingNamed are the entries named one by one beside the pattern.
const everythingNamed = `    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [binance, okx]
    - path: /v1/btc/exchange-flows/reserve
      window: day
      exchange: binance
`

// RunEverything runs the exporter on "everything about BTC" for Days of
// simulated time.
func RunEverything(o EverythingOptions) (*Everything, error) {
	clock := simclock.New(simStart)
	p, err := fakeapi.ParseTier(o.Plan)
	if err != nil {
		return nil, err
	}
	fake := fakeapi.New(fakeapi.Options{Now: clock.Now, DataKeys: map[string]fakeapi.Tier{"bench": p}, Catalog: fakeapi.CatalogFull})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	var yml strings.Builder
	// The file sets rate_limit high (it was a cap in real time, which a
	// simulated day passes in seconds; it now runs on the client's
	// clock, the simulated one here): these runs measure the budget and
	// the plan's refusals, and the plan's allowance is checked on the
	// calls of each simulated hour (MaxPerHour). RunFill runs at the
	// plan's rate.
	fmt.Fprintf(&yml, "data:\n  url: %s\n  token_env: T\n  concurrency: 8\n  rate_limit: 1000\n", srv.URL)
	if o.DailyBudget > 0 {
		fmt.Fprintf(&yml, "  daily_budget: %d\n", o.DailyBudget)
	}
	// The pattern's series may be polled less often than their rows
	// when the budget is short: a file whose patterns cost more than
	// daily_budget is refused otherwise.
	fmt.Fprintf(&yml, "  metrics:\n    - path: /v1/btc/**\n      coarsen: true\n%s", everythingNamed)
	cfg, err := config.Parse("everything.yml", []byte(yml.String()), func(string) string { return "bench" })
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	pool := upstream.NewPool(reg, clock.Now, log.NewNopLogger())
	x := expand.New(log.NewNopLogger(), expand.Options{Now: clock.Now, Clients: pool})
	if cfg, err = x.Start(context.Background(), cfg); err != nil {
		return nil, err
	}
	exp, err := collector.New(cfg, log.NewNopLogger(), reg, collector.Options{Clock: clock, Clients: pool})
	if err != nil {
		return nil, err
	}
	defer exp.Close()
	x.OnPlanChanged(exp.PlanChanged)

	ev := &Everything{EverythingOptions: o, Excess: map[string]map[string]time.Duration{}}
	if a, ok := exp.Plans()[config.APIData]; ok {
		ev.Planned = a.Planned + a.Listing
	}
	type track struct {
		key, path, window, asset, kind string
	}
	var tracks []track
	for _, t := range cfg.Tuples {
		kind := "named"
		if t.Entry != nil && t.Entry.Origin != nil {
			kind = "pattern"
			ev.PatternTuples++
		} else {
			ev.NamedTuples++
		}
		tracks = append(tracks, track{key: strings.Join(t.TupleLabelValues, "\xff"), path: t.Path, window: t.Window, asset: "btc", kind: kind})
	}
	sums := map[string]map[string]*struct {
		sum float64
		n   int
	}{}
	start := clock.Now()
	// Days are UTC days, as daily_budget counts them.
	dayEnd, hourEnd := start.Truncate(day).Add(day), start.Add(time.Hour)
	var before, hourBefore int64
	for now := start; now.Before(start.Add(time.Duration(o.Days) * day)); now = clock.Now() {
		body, err := scrapeText(exp)
		if err != nil {
			return nil, fmt.Errorf("scrape at %s: %w", now, err)
		}
		served, err := servedRows(body, cfg.TupleLabelNames)
		if err != nil {
			return nil, fmt.Errorf("scrape at %s: %w", now, err)
		}
		for _, tr := range tracks {
			row, ok := served[tr.key]
			newest := fake.NewestVisible(tr.path, tr.window, tr.asset, now)
			if !ok || newest.IsZero() {
				continue
			}
			if sums[tr.kind] == nil {
				sums[tr.kind] = map[string]*struct {
					sum float64
					n   int
				}{}
			}
			s := sums[tr.kind][tr.window]
			if s == nil {
				s = &struct {
					sum float64
					n   int
				}{}
				sums[tr.kind][tr.window] = s
			}
			s.sum += max(newest.Sub(row), 0).Seconds()
			s.n++
		}
		runUntil(clock, exp, now.Add(o.Interval))
		if !clock.Now().Before(hourEnd) {
			calls := fake.Calls("data")
			ev.MaxPerHour = max(ev.MaxPerHour, calls-hourBefore)
			hourBefore, hourEnd = calls, hourEnd.Add(time.Hour)
		}
		if !clock.Now().Before(dayEnd) {
			calls := fake.Calls("data")
			ev.CallsPerDay = append(ev.CallsPerDay, calls-before)
			before, dayEnd = calls, dayEnd.Add(day)
		}
	}
	for kind, ws := range sums {
		ev.Excess[kind] = map[string]time.Duration{}
		for w, s := range ws {
			ev.Excess[kind][w] = time.Duration(s.sum / float64(max(s.n, 1)) * float64(time.Second))
		}
	}
	ev.Refused = fake.Refused()
	return ev, nil
}
