package benchmark

import (
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// budgetWindows are the endpoints of the budget runs, one per window, so
// that the fake's calls per path are the calls per window.
var budgetWindows = []struct {
	window, path, asset, param string
	tuples                     int
}{
	{"min", "/v1/btc/market-data/open-interest", "btc", "exchange", 2},
	{"10min", "/v2/network/events-count", "", "asset", 2},
	{"hour", "/v1/btc/network-data/supply", "btc", "", 1},
	{"day", "/v1/erc20/exchange-flows/reserve", "erc20", "token", 8},
}

// BudgetRun is one simulated run of the budget configuration.
type BudgetRun struct {
	Budget int
	// Days are the calls of each whole UTC day; MaxHour the most calls
	// in one clock hour.
	Days    []int64
	MaxHour int64
	// Calls, per window, after the first day (the cold start's: the
	// first fill, learning the delays); Excess the mean excess staleness
	// per window and Gap the longest time a series went without a new
	// row served, per window, after the first day too; FirstGap the
	// longest such wait that ended in the first day.
	Calls    map[string]int64
	Excess   map[string]time.Duration
	Gap      map[string]time.Duration
	FirstGap map[string]time.Duration
	Plan     budget.Allotment
	Cfg      *config.Config
}

func budgetYAML(url string, daily int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "data:\n  url: %s\n  token_env: T\n  concurrency: 8\n", url)
	if daily > 0 {
		fmt.Fprintf(&b, "  daily_budget: %d\n", daily)
	}
	b.WriteString("  metrics:\n")
	for _, w := range budgetWindows {
		for i := 0; i < w.tuples; i++ {
			fmt.Fprintf(&b, "    - path: %s\n      window: %s\n", w.path, w.window)
			switch w.param {
			case "exchange":
				fmt.Fprintf(&b, "      exchange: %s\n", liveExchanges[i+1])
			case "asset":
				fmt.Fprintf(&b, "      asset: %s\n", stablecoins[i])
			case "token":
				fmt.Fprintf(&b, "      token: %s\n      exchange: binance\n", tokens[i])
			}
		}
	}
	return b.String()
}

// budgetScrapeInterval is how often each of the two replicas of RunBudget
// scrapes: together, every half minute.
const budgetScrapeInterval = time.Minute

// RunBudget simulates three UTC days of the budget configuration, two
// replicas scraping every minute, the engine run at its planned times.
func RunBudget(daily int, days int) (*BudgetRun, error) {
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	clock := simclock.New(start)
	fake := fakeapi.New(fakeapi.Options{Now: clock.Now, DataToken: "bench"})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	cfg, exp, err := newExporter("budget.yml", budgetYAML(srv.URL, daily), collector.Options{Clock: clock})
	if err != nil {
		return nil, err
	}
	defer exp.Close()
	run := &BudgetRun{Budget: daily, Cfg: cfg, Calls: map[string]int64{}, Excess: map[string]time.Duration{},
		Gap: map[string]time.Duration{}, FirstGap: map[string]time.Duration{}}
	for _, f := range budget.Forecast(cfg).APIs {
		run.Plan = f.Allotment
	}
	type track struct {
		window, path, asset string
		last                time.Time // served row
		since               time.Time // when it was first served
	}
	tracks := make([]*track, len(cfg.Tuples))
	for i, t := range cfg.Tuples {
		tracks[i] = &track{window: t.Window, path: t.Path, asset: t.Asset()}
	}
	sums, counts := map[string]float64{}, map[string]int{}
	dayStart, hourStart := fake.Calls("data"), fake.Calls("data")
	const interval = budgetScrapeInterval
	firstDay := map[string]int64{}
	for now := start; now.Before(start.Add(time.Duration(days) * 24 * time.Hour)); now = now.Add(interval / 2) {
		if now.Minute() == 0 && now.Second() == 0 && now != start {
			// The calls of the hour that ends, without those due at its
			// end (they are the next hour's).
			runUntil(clock, exp, now.Add(-time.Millisecond))
			c := fake.Calls("data")
			run.MaxHour = max(run.MaxHour, c-hourStart)
			hourStart = c
			if now.Hour() == 0 {
				run.Days = append(run.Days, c-dayStart)
				dayStart = c
				if len(run.Days) == 1 {
					for _, w := range budgetWindows {
						firstDay[w.window] = fake.CallsFor(w.path)
					}
				}
			}
		}
		// Scrapes come 7 s past the half minute, off the instants the
		// fake publishes at (a scrape at the very instant a row appears
		// would count it as missed, however soon it is fetched).
		at := now.Add(7 * time.Second)
		warm := at.After(start.Add(24 * time.Hour))
		runUntil(clock, exp, at)
		body, err := scrapeText(exp)
		if err != nil {
			return nil, err
		}
		served, err := servedRows(body, cfg.TupleLabelNames)
		if err != nil {
			return nil, err
		}
		for i, t := range cfg.Tuples {
			tr := tracks[i]
			row, ok := served[strings.Join(t.TupleLabelValues, "\xff")]
			if !ok {
				continue
			}
			if !row.Equal(tr.last) {
				if !tr.since.IsZero() {
					gaps := run.Gap
					if !warm {
						gaps = run.FirstGap
					}
					gaps[tr.window] = max(gaps[tr.window], at.Sub(tr.since))
				}
				tr.last, tr.since = row, at
			}
			if !warm {
				continue
			}
			newest := fake.NewestVisible(tr.path, tr.window, tr.asset, at)
			sums[tr.window] += newest.Sub(row).Seconds()
			counts[tr.window]++
		}
	}
	end := start.Add(time.Duration(days) * 24 * time.Hour)
	runUntil(clock, exp, end.Add(-time.Millisecond))
	run.Days = append(run.Days, fake.Calls("data")-dayStart) // the last day
	for w, n := range counts {
		run.Excess[w] = time.Duration(sums[w] / float64(n) * float64(time.Second))
	}
	// Calls per window after the first day: the cold start (first fill,
	// learning the delays) is the first day's.
	for _, w := range budgetWindows {
		run.Calls[w.window] = fake.CallsFor(w.path) - firstDay[w.window]
	}
	return run, nil
}

// budgetShares are the budgets TestBudget runs under, as a share of the
// natural cost: half and a quarter.
var budgetShares = []int{2, 4}

// TestBudget runs the budget configuration for three days (two in short
// mode) without a budget and then with half and a quarter of its natural
// cost as daily_budget, and holds each budgeted run to its bounds
// (checkBudgetRun); the calls, excess staleness and waits per window are
// counted after the first day, the cold start's (the first fill, learning
// the delays), whose longest waits the table shows apart. It also holds
// --config.check's forecast within 10 % of the unbudgeted calls per
// window.
func TestBudget(t *testing.T) {
	days := 3
	if os.Getenv("ONCHAIN_BENCH_FULL") == "" {
		days = 2
	}
	free, err := RunBudget(0, days)
	if err != nil {
		t.Fatal(err)
	}
	natural := int64(0)
	for _, d := range free.Days {
		natural = max(natural, d)
	}
	forecast := map[string]float64{}
	for _, f := range budget.Forecast(free.Cfg).APIs {
		for _, e := range f.Entries {
			for _, w := range e.Windows {
				forecast[w.Window] += w.CallsPerDay
			}
		}
	}
	for _, w := range budgetWindows {
		perDay := float64(free.Calls[w.window]) / float64(days-1)
		if f := forecast[w.window]; f < perDay*0.9 || f > perDay*1.1 {
			t.Errorf("%s: forecast %.0f calls a day, measured %.0f without a budget: not within 10 %%", w.window, f, perDay)
		}
	}
	var b strings.Builder
	b.WriteString("| budget | window | forecast a day | calls a day, no budget | mean excess staleness, no budget | coarsening | calls a day, budget | mean excess staleness, budget | longest wait for a new row, budget | the same, first day |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, share := range budgetShares {
		daily := int(natural) / share
		capped, err := RunBudget(daily, days)
		if err != nil {
			t.Fatal(err)
		}
		checkBudgetRun(t, capped)
		// What the log line says each window gets is what it got.
		planned := map[string]float64{}
		for _, g := range capped.Plan.Groups {
			planned[g.Window] += g.Planned
		}
		for _, w := range budgetWindows {
			got := float64(capped.Calls[w.window]) / float64(days-1)
			if p := planned[w.window]; got < p*0.9 || got > p*1.1 {
				t.Errorf("daily_budget %d, %s: %.0f calls a day, the plan says %.0f: not within 10 %%", daily, w.window, got, p)
			}
		}
		factors := capped.Plan.WindowFactors()
		for _, w := range budgetWindows {
			fmt.Fprintf(&b, "| %d (1/%d) | %s | %.0f | %.0f | %s | %s | %.0f | %s | %s | %s |\n", daily, share, w.window, forecast[w.window],
				float64(free.Calls[w.window])/float64(days-1), fmtDur(free.Excess[w.window]),
				budget.FormatFactor(max(1, factors[w.window])), float64(capped.Calls[w.window])/float64(days-1),
				fmtDur(capped.Excess[w.window]), fmtDur(capped.Gap[w.window]), fmtDur(capped.FirstGap[w.window]))
		}
		t.Logf("%d days, daily_budget %d (1/%d of the natural %d); calls per day %v (%s of the budget), most in an hour %d; plan: %s",
			days, daily, share, natural, capped.Days, spentShares(capped), capped.MaxHour, capped.Plan.Summary(3))
	}
	t.Logf("\n%s", b.String())
}

// checkBudgetRun holds a budgeted run to its bounds: no day over the
// budget, and every day after the first (the cold start's) at least 95 %
// of the 90 % that the 10 % reserve leaves; no clock hour past a 24th of
// the budget plus 25 %; after the first day, no series waiting for a new
// row longer than its window times its coarsening rounded up, plus a
// window for where in it the row lands, plus the wait for a call the
// budget's pace held back (86 400 s / budget), plus a scrape interval: the
// wait is measured between the scrapes that first serve two rows, and
// each may come up to an interval after its row (half an interval was
// allowed before, and a run beside the day-two harness on a loaded
// machine measured 10 min 30 s against its 10 min 12 s).
func checkBudgetRun(t *testing.T, run *BudgetRun) {
	t.Helper()
	daily := run.Budget
	for i, d := range run.Days {
		if d > int64(daily) {
			t.Errorf("daily_budget %d, day %d: %d calls", daily, i+1, d)
		}
		// The plan aims at all the reserve leaves (90 %, measured 90.0–
		// 90.4 %); a call more or less must not fail the check, so it
		// holds the plan to 95 % of that, which whole factors missed
		// (76 % and 82 % of the budget).
		if leaves := 0.9 * float64(daily); i > 0 && float64(d) < 0.95*leaves {
			t.Errorf("daily_budget %d, day %d: %d calls, %.1f %% of the budget: less than 95 %% of the 90 %% the reserve leaves", daily, i+1, d, 100*float64(d)/float64(daily))
		}
	}
	if most := int64(float64(daily) / 24 * 1.25); run.MaxHour > most+1 {
		t.Errorf("daily_budget %d: %d calls in one hour, at most %d (a 24th of the budget plus 25 %%)", daily, run.MaxHour, most)
	}
	factors := run.Plan.WindowFactors()
	pace := 24 * time.Hour / time.Duration(daily)
	for _, w := range budgetWindows {
		step := plan.WindowDuration(w.window)
		k := time.Duration(math.Ceil(max(1, factors[w.window])))
		if limit := k*step + step + pace + budgetScrapeInterval; run.Gap[w.window] > limit {
			t.Errorf("daily_budget %d, %s: a series waited %v for a new row, more than its window × %d plus a window, plus %v for a call the pace held back and the %v between two scrapes",
				daily, w.window, run.Gap[w.window], k, pace, budgetScrapeInterval)
		}
	}
}

// spentShares are the calls of each day as a share of the budget.
func spentShares(run *BudgetRun) string {
	var out []string
	for _, d := range run.Days {
		out = append(out, fmt.Sprintf("%.1f %%", 100*float64(d)/float64(run.Budget)))
	}
	return strings.Join(out, ", ")
}
