package benchmark

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// refusedEntry is an entry the professional plan refuses: it reads the
// market indicators at day only.
const refusedEntry = "    - path: /v1/btc/market-indicator/mvrv\n      window: hour\n"

// TestPlanRefusalBesideLiveSeries: the hour open-interest series of a key
// on the professional plan, without and with an entry the plan refuses
// in the file, the plan read at start as the exporter does. The live
// series cost the same calls per row and are as fresh; the refused
// endpoint costs no call (the plan is known before it is asked). Without
// the plan read (an upstream without the plan endpoint), the upstream's
// 403 holds it: at most one call per series at start and one a day.
func TestPlanRefusalBesideLiveSeries(t *testing.T) {
	duration := day
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		duration = 3 * day
	}
	base := FreshnessOptions{Window: "hour", Tuples: 4, Replicas: 2, Interval: 30 * time.Second, Duration: duration,
		Provider: "constant", Policy: "schedule", Plan: "professional"}
	base.Delay.Base = windowSpecs["hour"].delay
	run := func(extra string, readPlan bool) *Freshness {
		t.Helper()
		o := base
		o.Extra, o.ReadPlan = extra, readPlan
		f, err := RunFreshness(o)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	without := run("", true)
	with := run(refusedEntry, true)
	unread := run(refusedEntry, false)
	var b strings.Builder
	fmt.Fprintf(&b, "| file | plan read | live calls | live calls per row | live mean excess | refused endpoint's calls | plan reads |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range []struct {
		name string
		read bool
		f    *Freshness
	}{{"4 hour series", true, without}, {"4 hour series + refused entry", true, with}, {"4 hour series + refused entry", false, unread}} {
		fmt.Fprintf(&b, "| %s | %v | %d | %.2f | %s | %d | %d |\n", r.name, r.read, r.f.Calls, r.f.CallsPerRow(), r.f.MeanExcess.Round(time.Second), r.f.ExtraCalls, r.f.PlanReads)
	}
	t.Logf("%s of simulated time, the professional plan:\n%s", duration, b.String())

	// The same, within one call in a hundred (measured: 110 against 109
	// over a day; the excess is equal to the millisecond).
	same := func(a, b *Freshness) bool {
		d := a.MeanExcess - b.MeanExcess
		return a.Calls <= b.Calls+b.Calls/100+1 && b.Calls <= a.Calls+a.Calls/100+1 && d < time.Second && d > -time.Second
	}
	if !same(with, without) {
		t.Errorf("the live series cost %d calls with %s excess beside the refused entry, %d calls with %s without it",
			with.Calls, with.MeanExcess, without.Calls, without.MeanExcess)
	}
	if with.ExtraCalls != 0 || with.PlanReads != 1 {
		t.Errorf("with the plan read: %d calls to the refused endpoint, %d plan reads; want 0 and 1", with.ExtraCalls, with.PlanReads)
	}
	if days := int64(duration / day); unread.ExtraCalls < 1 || unread.ExtraCalls > days+1 {
		t.Errorf("without the plan read: %d calls to the refused endpoint in %d days; want one a day at most", unread.ExtraCalls, days)
	}
	if !same(unread, without) {
		t.Errorf("without the plan read the live series cost %d calls with %s excess, against %d and %s",
			unread.Calls, unread.MeanExcess, without.Calls, without.MeanExcess)
	}
}
