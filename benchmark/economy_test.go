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
	o := EconomyOptions{Day: 4, Hour: 4, Block: 1, FastBlock: 1, Replicas: 2, Interval: 15 * time.Second, Duration: 24 * time.Hour}
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		o.Day, o.Hour, o.FastBlock = 100, 60, 10
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
