package benchmark

import (
	"os"
	"testing"
	"time"
)

// TestFirstFillOfEverything: everything the premium plan allows (10 102
// series of /v1/**, rate_limit 540 a minute from the plan) from a cold
// start on simulated time: every series is asked once within 1.1 times
// the series over the rate, with no call repeated before, within the rate
// in every minute, without a warning line, and with at most one line a
// minute about the fill. Without ONCHAIN_BENCH_FULL, /v1/btc/** alone.
func TestFirstFillOfEverything(t *testing.T) {
	o := FillOptions{Tier: "premium", Path: "/v1/btc/**", After: 10 * time.Minute, Interval: 30 * time.Second,
		HeapProfile: os.Getenv("ONCHAIN_HEAP_PROFILE")}
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		o.Path = "/v1/**"
	}
	if d, err := time.ParseDuration(os.Getenv("ONCHAIN_FILL_AFTER")); err == nil {
		o.After = d // the heap a tuple once the series keep more answers
	}
	f, err := RunFill(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("| series | rate_limit | last first value | bound | calls before | repeats | most in 60 s | warnings | lines about the fill | heap a tuple, filled | heap a tuple, %s later |\n%s", o.After, f.Table())
	t.Logf("served %d, %d calls in the last hour, live heap %d MiB then %d MiB, run %s; %s", f.Served, f.CallsAfter, f.Heap>>20, f.HeapEnd>>20, f.Wall.Round(time.Second), f.FirstLine)
	if f.RateLimit <= 0 || f.Tuples < 100 {
		t.Fatalf("rate_limit %v, %d series: the plan gave no rate", f.RateLimit, f.Tuples)
	}
	if f.Filled > f.Bound {
		t.Errorf("the last first value after %v, over 1.1 × %d / %v a minute = %v", f.Filled, f.Tuples, f.RateLimit, f.Bound)
	}
	if f.Repeats > 0 {
		t.Errorf("%d calls repeated a request before every series was asked once", f.Repeats)
	}
	if f.MaxPerMinute > int(f.RateLimit) {
		t.Errorf("%d calls within 60 s, over rate_limit %v", f.MaxPerMinute, f.RateLimit)
	}
	if f.Warnings > 0 {
		t.Errorf("%d warning lines, the first: %s", f.Warnings, f.Warning)
	}
	if f.FillLines > 1 && f.Closest < time.Minute {
		t.Errorf("%d lines about the fill, two of them %v apart: more than one a minute", f.FillLines, f.Closest)
	}
}
