package benchmark

import (
	"os"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// ColdStartCases are the cold starts measured: per window, an upstream
// with no delay, with the window's constant delay, and one that shows a
// row from the start of its interval (live), the exporter started three
// quarters into an interval (the worst place for a live upstream: its
// first answer says only that rows are there within 45 s of a minute's
// start), scraped by two replicas for the first five rows.
func ColdStartCases() []FreshnessOptions {
	var out []FreshnessOptions
	for _, w := range []string{"min", "10min", "hour", "day"} {
		spec := windowSpecs[w]
		step := fakeapi.WindowDuration(w)
		start := simStart.Truncate(step).Add(step * 3 / 4)
		for _, p := range []struct {
			name  string
			delay fakeapi.Delay
		}{{"none", fakeapi.Delay{}}, {shortDur(spec.delay), fakeapi.Delay{Base: spec.delay}}, {"as its interval starts", fakeapi.Delay{Base: -step}}} {
			out = append(out, FreshnessOptions{Window: w, Tuples: spec.short.tuples, Replicas: 2, Interval: spec.short.interval,
				Duration: 5*step + step/4, Provider: p.name, Delay: p.delay, Policy: PolicySchedule, Start: start})
		}
	}
	return out
}

// ColdStartTarget is the most mean excess staleness over the first five
// rows after a cold start: 15 % of the window.
const ColdStartTarget = 0.15

// TestColdStart holds every cold start to ColdStartTarget and prints the
// table (BENCHMARKS.md, "Cold start").
func TestColdStart(t *testing.T) {
	slack := ciSlack
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		slack = 1
	}
	runs := runCases(t, "cold", ColdStartCases(), func(t *testing.T, f *Freshness) {
		if share := float64(f.MeanExcess) / float64(f.Step); share > ColdStartTarget*slack {
			t.Errorf("%s window, upstream delay %s: mean excess staleness over the first rows %s, %.1f %% of the window, target %.0f %%",
				f.Window, f.Provider, fmtDur(f.MeanExcess), 100*share, 100*ColdStartTarget)
		}
	})
	t.Logf("cold start three quarters into an interval, first five rows, two replicas:\n%s", FreshnessTable(runs))
}
