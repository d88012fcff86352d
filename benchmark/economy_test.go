package benchmark

import (
	"os"
	"testing"
	"time"
)

// TestEconomy is the logic check that runs in CI: a small set of tuples
// over a whole simulated day, two replicas scraping every 15 s, must cost
// at most 1.5 upstream calls per new row in every window kind.
// ONCHAIN_BENCH_FULL=1 runs the full-size simulation and prints its table.
func TestEconomy(t *testing.T) {
	o := EconomyOptions{Day: 4, Hour: 4, Block: 1, FastBlock: 1, Replicas: 2, Interval: 15 * time.Second, Duration: 72 * time.Hour}
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		o.Day, o.Hour, o.FastBlock = 100, 33, 10 // as many distinct tuples as the fake serves
	}
	e, err := RunEconomy(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d scrapes over %v:\n%s", e.Scrapes, o.Duration, e.Table())
	for _, r := range append(e.Rows, e.Total()) {
		if r.NewRows == 0 || r.Calls == 0 {
			t.Errorf("%s: %d rows, %d calls: nothing was measured", r.Kind, r.NewRows, r.Calls)
		}
		if r.Ratio() > 1.5 {
			t.Errorf("%s: %d calls for %d new rows (%.2f per row, target 1.5)", r.Kind, r.Calls, r.NewRows, r.Ratio())
		}
	}
}

// TestEconomyLatePublisher: rows appear later than the schedule's first
// guess (hour rows 25 min and day rows 3 h after their interval closes, the
// guess being 10 min and 1 h). The delay is learned from missed polls: the
// first late row costs a few extra calls, the following ones one each. CI
// runs two days of hour rows; the full run two weeks of day and hour rows.
func TestEconomyLatePublisher(t *testing.T) {
	o := EconomyOptions{Hour: 2, Replicas: 2, Interval: 15 * time.Second, Duration: 48 * time.Hour,
		Lags: map[string]time.Duration{"hour": 25 * time.Minute, "day": 3 * time.Hour}}
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		o.Day, o.Hour, o.Interval, o.Duration = 100, 33, time.Minute, 14*24*time.Hour
	}
	e, err := RunEconomy(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d scrapes over %v:\n%s", e.Scrapes, o.Duration, e.Table())
	for _, r := range append(e.Rows, e.Total()) {
		if r.NewRows == 0 || r.Ratio() > 1.5 {
			t.Errorf("%s: %d calls for %d new rows (%.2f per row, target 1.5)", r.Kind, r.Calls, r.NewRows, r.Ratio())
		}
	}
}
