package benchmark

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// TestFreshness runs every window against every provider case, with the
// exporter's own schedule and the two baselines, and holds the schedule to
// its targets: at most 1.2 upstream calls per published row, a mean excess
// staleness of at most a tenth of the window (15 min for day rows), and no
// published row left unserved. The baselines are reported, not held to
// targets; they check the measure itself: without a cache every scrape
// calls upstream for every tuple and serves the newest published row.
// CI runs the short mode as a logic check, with ciSlack on the targets;
// ONCHAIN_BENCH_FULL=1 runs the full mode, holds the targets themselves,
// and prints the tables (with -v). The runs of a window go in
// parallel, each on its own simulated clock, fake upstream and exporter.
func TestFreshness(t *testing.T) {
	full := os.Getenv("ONCHAIN_BENCH_FULL") != ""
	slack := ciSlack
	if full {
		slack = 1
	}
	for _, w := range FreshnessWindows {
		runs := runCases(t, w, FreshnessCases(w, full), func(t *testing.T, f *Freshness) {
			if f.Policy != PolicySchedule {
				return
			}
			for _, m := range f.Misses(slack) {
				t.Errorf("%s window, upstream delay %s, exporter's schedule: %s", w, f.Provider, m)
			}
			checkOwnFigure(t, f)
		})
		if runs[0] != nil {
			t.Logf("%s window, %d tuples, %v simulated, two replicas:\n%s", w, runs[0].Tuples, runs[0].Duration, FreshnessTable(runs))
		}
	}
}

// runCases runs cases in parallel as the subtests of name, each on its own
// simulated clock, fake upstream and exporter; each run is checked with
// checkMeasure, then with check. It returns the runs in the order of
// cases, nil where a run failed.
func runCases(t *testing.T, name string, cases []FreshnessOptions, check func(*testing.T, *Freshness)) []*Freshness {
	runs := make([]*Freshness, len(cases))
	t.Run(name, func(t *testing.T) {
		for i, o := range cases {
			t.Run(o.Provider+"/"+o.Policy, func(t *testing.T) {
				t.Parallel()
				f, err := RunFreshness(o)
				if err != nil {
					t.Fatal(err)
				}
				runs[i] = f
				checkMeasure(t, f)
				check(t, f)
			})
		}
	})
	return runs
}

// ciSlack widens the calls and staleness targets in the short mode: its
// runs are shorter, so the first rows, polled while the delay is being
// learned, weigh more; and the order in which concurrent refreshes end
// still moves a few calls from run to run. A schedule that regresses
// (late by a fixed guess, or polling blind) misses by far more.
const ciSlack = 1.25

// checkMeasure fails when a run's figures cannot be right, whatever the
// exporter's schedule.
func checkMeasure(t *testing.T, f *Freshness) {
	t.Helper()
	if f.Missing > 0 {
		t.Errorf("%d tuple scrapes served no row time", f.Missing)
	}
	if least := f.Tuples * (int(f.Duration/f.Step) - 1); f.Published < least {
		t.Errorf("%d published rows, want at least %d", f.Published, least)
	}
	if f.MeanExcess < 0 || f.MeanExcess > f.MaxExcess {
		t.Errorf("mean excess staleness %v outside [0, max %v]", f.MeanExcess, f.MaxExcess)
	}
	if f.Policy != PolicyNoCache {
		return
	}
	// A cache_ttl of the gap between scrapes: the engine calls once per
	// scrape, just before it, as an exporter without a cache would.
	if want := int64(f.Scrapes * f.Tuples); f.Calls < want*99/100 || f.Calls > want*101/100+int64(f.Tuples) {
		t.Errorf("%d calls for %d tuple scrapes: a cache_ttl of the scrape gap no longer means a call per scrape", f.Calls, want)
	}
	if f.MeanExcess > f.Step/100 || f.Unserved != 0 {
		t.Errorf("calling on every scrape left a mean excess staleness of %s and %d rows unserved; the measure is wrong", fmtDur(f.MeanExcess), f.Unserved)
	}
}

// checkOwnFigure holds the exporter's own excess staleness gauge to the
// measured one: an estimate (it knows only what its polls told it), but
// within a factor of three, give or take 5 % of the window. An exporter
// late by a fixed guess it never tests would show nothing there.
func checkOwnFigure(t *testing.T, f *Freshness) {
	t.Helper()
	if !f.HasOwn {
		t.Errorf("%s window, upstream delay %s: no onchain_exporter_excess_staleness_seconds in the scrapes", f.Window, f.Provider)
		return
	}
	give := f.Step / 20
	if f.OwnExcess < f.MeanExcess/3-give || f.OwnExcess > 3*f.MeanExcess+give {
		t.Errorf("%s window, upstream delay %s: the exporter's own excess staleness, %s on average, is not within a factor of 3 (± %s) of the measured %s",
			f.Window, f.Provider, fmtDur(f.OwnExcess), fmtDur(give), fmtDur(f.MeanExcess))
	}
}

// TestServedRows reads the served row time per tuple, by its labels in
// any order, and nothing from families that merely share the prefix.
func TestServedRows(t *testing.T) {
	body := []byte(`# HELP onchain_data_timestamp_seconds_lag Not the family.
# TYPE onchain_data_timestamp_seconds_lag gauge
onchain_data_timestamp_seconds_lag{api="data",exchange="okx"} 5
# HELP onchain_data_timestamp_seconds Time of the row the values come from.
# TYPE onchain_data_timestamp_seconds gauge
onchain_data_timestamp_seconds{exchange="okx",api="data"} 1.7955e+09
onchain_data_timestamp_seconds{api="data",exchange="binance"} 1795500060
onchain_open_interest_usd{api="data",exchange="okx"} 3e+09
`)
	got, err := servedRows(body, []string{"api", "exchange"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"data\xffokx": 1795500000, "data\xffbinance": 1795500060}
	if len(got) != len(want) {
		t.Fatalf("got %d tuples, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k].Unix() != v {
			t.Errorf("%q: %v, want %d", k, got[k], v)
		}
	}
}

// TestFreshnessIssueCase is the case the freshness work started from, as a
// user measured it: ten min-window open-interest tuples, two replicas
// scraping every 2 s for 4.5 minutes, an upstream that shows each
// minute's row as the minute starts. The schedule before made 0.75 calls
// per published row, served rows 40.6 s stale on average and left one row
// in four unserved; the targets hold here too, without slack.
func TestFreshnessIssueCase(t *testing.T) {
	o := FreshnessOptions{Window: "min", Tuples: 10, Replicas: 2, Interval: 2 * time.Second, Duration: 270 * time.Second,
		Provider: "as its interval starts", Delay: fakeapi.Delay{Base: -time.Minute}, Policy: PolicySchedule}
	f, err := RunFreshness(o)
	if err != nil {
		t.Fatal(err)
	}
	checkMeasure(t, f)
	for _, m := range f.Misses(1) {
		t.Error(m)
	}
	checkOwnFigure(t, f)
	t.Logf("%d published rows, %d calls (%.2f per row), mean excess staleness %s, %d unserved; the exporter's own figure %s",
		f.Published, f.Calls, f.CallsPerRow(), fmtDur(f.MeanExcess), f.Unserved, fmtDur(f.OwnExcess))
}

// TestFreshnessLoneSeries runs the schedule's cases with one series per
// endpoint: no leader to share misses with, so fewer probes, slower
// learning and every learning poll its own. The full mode prints the
// table (BENCHMARKS.md) and holds looser bounds: every published row
// served, at most 1.5 calls per row, a mean excess staleness within a
// fifth of the window. CI runs the short mode with ciSlack on the bounds:
// a short run of one series is mostly learning.
func TestFreshnessLoneSeries(t *testing.T) {
	full := os.Getenv("ONCHAIN_BENCH_FULL") != ""
	slack := ciSlack
	if full {
		slack = 1
	}
	for _, w := range FreshnessWindows {
		var cases []FreshnessOptions
		for _, o := range FreshnessCases(w, full) {
			if o.Policy == PolicySchedule {
				o.Tuples = 1
				cases = append(cases, o)
			}
		}
		runs := runCases(t, w, cases, func(t *testing.T, f *Freshness) {
			if r := f.CallsPerRow(); r > 1.5*slack || float64(f.MeanExcess) > float64(f.Step/5)*slack || (f.Unserved > 0 && f.Interval < f.Step) {
				t.Errorf("%s window, upstream delay %s, one series: %.2f calls per row, %s mean excess staleness, %d rows unserved",
					w, f.Provider, r, fmtDur(f.MeanExcess), f.Unserved)
			}
		})
		t.Logf("%s window, one series, %v simulated, two replicas:\n%s", w, cases[0].Duration, FreshnessTable(runs))
	}
}

// TestFreshnessLateDay runs day rows published 3 h after their interval
// (constant, ±50 %, dropping to 18 min halfway), the six reserve tuples
// over two weeks, against the schedule. It shows what is out of reach: a
// jittered 3 h delay spreads rows over 3 h, and finding each within 15 min
// would take more polls than 1.2 calls per row pay. It holds the calls
// and the unserved rows to their targets, and prints the staleness
// (BENCHMARKS.md). CI runs the short mode (ten days, five-minute scrapes)
// with ciSlack on the calls.
func TestFreshnessLateDay(t *testing.T) {
	full := os.Getenv("ONCHAIN_BENCH_FULL") != ""
	slack := ciSlack
	if full {
		slack = 1
	}
	const d = 3 * time.Hour
	var cases []FreshnessOptions
	for _, o := range FreshnessCases("day", full) {
		if o.Policy != PolicySchedule || o.Delay.Base <= 0 {
			continue
		}
		o.Delay.Base = d
		if !o.Delay.DropAt.IsZero() {
			o.Delay.After = d / 10
		}
		o.Provider = strings.NewReplacer("30 min", "3 h", "3 min", "18 min").Replace(o.Provider)
		cases = append(cases, o)
	}
	runs := runCases(t, "day", cases, func(t *testing.T, f *Freshness) {
		if r := f.CallsPerRow(); r > TargetCallsPerRow*slack || f.Unserved > 0 {
			t.Errorf("upstream delay %s: %.2f calls per row, %d rows unserved", f.Provider, r, f.Unserved)
		}
	})
	t.Logf("day window, delay 3 h, %d tuples, %v simulated, two replicas:\n%s", cases[0].Tuples, cases[0].Duration, FreshnessTable(runs))
}
