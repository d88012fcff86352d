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

// TestClusterClockSkew: a cluster one of whose members' clocks is 3 h
// behind or 19 h ahead (its engine's and its heartbeats'; also 3 h ahead
// and 19 h behind, and three members, with ONCHAIN_BENCH_FULL=1) makes at
// most 1.1× the upstream calls of a healthy cluster over a simulated day
// of hour rows: the member far off owns nothing, takes the others' rows
// (dated after its now when it is behind) and waits for them as long as
// its clock is off. Before, a pair with one member 3 h ahead made 5.3×
// the calls of a healthy pair, and one 3 h behind 1.9× (it refused the
// owner's rows as dated ahead and fetched each itself, an hour late).
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
		skews := []time.Duration{-3 * time.Hour, 19 * time.Hour}
		if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
			skews = append(skews, 3*time.Hour, -19*time.Hour)
		}
		for _, skew := range skews {
			r := runCluster(t, ClusterOptions{FreshnessOptions: o, Members: n, Skew: skew})
			if r == nil {
				continue
			}
			ratio := float64(r.Calls) / float64(max(healthy.Calls, 1))
			t.Logf("%d members, the last %s off: %d calls (%.2f× healthy), mean excess staleness %s, members %s",
				n, skew, r.Calls, ratio, r.MeanExcess().Round(time.Second), skewMembers(r))
			if ratio > 1.1 {
				t.Errorf("%d members, one %s off: %d calls, %.2f× a healthy cluster's %d; want at most 1.1×", n, skew, r.Calls, ratio, healthy.Calls)
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
