package benchmark

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// skewCase is the hour window's run whose upstream publishes each row a
// constant 7 min after its hour (the exporter is not told).
func skewCase(t *testing.T) FreshnessOptions {
	t.Helper()
	for _, o := range FreshnessCases("hour", false) {
		if o.Policy == PolicySchedule && o.Delay.Base == windowSpecs["hour"].delay && o.Delay.Jitter == 0 && o.Delay.DropAt.IsZero() {
			return o
		}
	}
	t.Fatal("no hour case of a constant delay")
	return FreshnessOptions{}
}

// TestClusterClockSkew: a cluster one of whose members' clocks is 3 h or
// 19 h ahead (its engine's and its heartbeats') makes at most 1.1× the
// upstream calls of a healthy cluster over a simulated day of hour rows:
// the member far off owns nothing, takes the others' rows and waits for
// them as long as its clock is ahead. Two members (the chart's default),
// and three with ONCHAIN_BENCH_FULL=1. Before, a pair with one member 3 h
// ahead made 5.3× the calls of a healthy pair.
func TestClusterClockSkew(t *testing.T) {
	o := skewCase(t)
	sizes := []int{2}
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		sizes = append(sizes, 3)
	}
	for _, n := range sizes {
		healthy := runCluster(t, ClusterOptions{FreshnessOptions: o, Members: n})
		if healthy == nil {
			return
		}
		t.Logf("%d members, healthy: %d calls, %d rows published, members %s", n, healthy.Calls, healthy.Published, skewMembers(healthy))
		for _, skew := range []time.Duration{3 * time.Hour, 19 * time.Hour} {
			r := runCluster(t, ClusterOptions{FreshnessOptions: o, Members: n, Skew: skew})
			if r == nil {
				continue
			}
			ratio := float64(r.Calls) / float64(max(healthy.Calls, 1))
			t.Logf("%d members, the last %s ahead: %d calls (%.2f× healthy), mean excess staleness %s, members %s",
				n, skew, r.Calls, ratio, r.MeanExcess().Round(time.Second), skewMembers(r))
			if ratio > 1.1 {
				t.Errorf("%d members, one %s ahead: %d calls, %.2f× a healthy cluster's %d; want at most 1.1×", n, skew, r.Calls, ratio, healthy.Calls)
			}
		}
	}
}

// skewMembers says what each member did: refreshes as owner and as
// fallback, rows taken.
func skewMembers(r *ClusterRun) string {
	s := ""
	for _, m := range r.PerMember {
		s += fmt.Sprintf(" %s: %d owner, %d fallback, %d received;", m.Name, m.OwnerRefreshes, m.FallbackRefreshes, m.RowsReceived)
	}
	return s
}
