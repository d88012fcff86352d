package budget

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// What the engine sets from a budget, a forecast and its plan, and what a
// reload that drops an API leaves.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	now := day0.Add(6 * time.Hour)

	data := New(10000, now)
	data.Take(now)
	data.Take(now)
	consensus := New(0, now)
	consensus.ObserveUpstream(100, 40, now) // its free plan's quota
	free := New(0, now)

	f := Forecast(parse(t, head+`  daily_budget: 10000
  metrics:
    - path: /v2/network/events-count
      asset: [usdt, usdc]
      window: block
    - path: /v1/btc/exchange-flows/netflow
      window: [hour, day]
    - path: /v1/btc/exchange-flows/netflow
      window: min
`)).APIs[0]
	m.Observe("data", data, now)
	m.Observe("consensus", consensus, now)
	m.Observe("indicator", free, now)
	m.SetForecast(f)
	// 9 000 less the listing call and the min, hour and day rows
	// (1 512, 25.2, 1.05) leaves 7 460.75 for the 14 400 block rows.
	m.SetAllotment("data", f.Allotment)

	want := `
# HELP onchain_exporter_coarsening_factor Rows of its window per poll under the daily budget's plan, on average (1: every row; 2.5: alternately every 2nd and 3rd row); the largest among a window's spacings.
# TYPE onchain_exporter_coarsening_factor gauge
onchain_exporter_coarsening_factor{api="data",window="block"} 1.93010086125
onchain_exporter_coarsening_factor{api="data",window="day"} 1
onchain_exporter_coarsening_factor{api="data",window="hour"} 1
onchain_exporter_coarsening_factor{api="data",window="min"} 1
# HELP onchain_exporter_daily_budget_calls Upstream calls the API may make on the current UTC day: the smaller of daily_budget and the upstream's X-Daily-Limit; absent when neither applies.
# TYPE onchain_exporter_daily_budget_calls gauge
onchain_exporter_daily_budget_calls{api="consensus"} 100
onchain_exporter_daily_budget_calls{api="data"} 10000
# HELP onchain_exporter_daily_calls_used Upstream calls of the API counted on the current UTC day (every call: refreshes, retries, listing), or the upstream's X-Daily-Used when higher, by every member of a cluster; resets at 00:00 UTC.
# TYPE onchain_exporter_daily_calls_used gauge
onchain_exporter_daily_calls_used{api="consensus"} 40
onchain_exporter_daily_calls_used{api="data"} 2
onchain_exporter_daily_calls_used{api="indicator"} 0
# HELP onchain_exporter_daily_calls_used_here Upstream calls of the API this member made on the current UTC day; daily_calls_used when it runs alone; resets at 00:00 UTC.
# TYPE onchain_exporter_daily_calls_used_here gauge
onchain_exporter_daily_calls_used_here{api="consensus"} 40
onchain_exporter_daily_calls_used_here{api="data"} 2
onchain_exporter_daily_calls_used_here{api="indicator"} 0
# HELP onchain_exporter_forecast_calls_per_day Upstream calls a day the configuration in force costs, per configured endpoint (path as written) and listing endpoint, after expansion, before any cut of the daily budget.
# TYPE onchain_exporter_forecast_calls_per_day gauge
onchain_exporter_forecast_calls_per_day{api="data",endpoint="/v1/btc/exchange-flows/netflow"} 1538.25
onchain_exporter_forecast_calls_per_day{api="data",endpoint="/v1/discovery/endpoints"} 1
onchain_exporter_forecast_calls_per_day{api="data",endpoint="/v2/network/events-count"} 15120
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}

	// A reload: the plan no longer cuts, the min entry is gone, the
	// consensus API is no longer configured.
	f = Forecast(parse(t, head+"  daily_budget: 100000\n  metrics:\n    - path: /v2/network/events-count\n      asset: [usdt, usdc]\n      window: block\n")).APIs[0]
	m.SetForecast(f)
	// 9 000 less the listing call and the min, hour and day rows
	// (1 512, 25.2, 1.05) leaves 7 460.75 for the 14 400 block rows.
	m.SetAllotment("data", f.Allotment)
	m.Forget("consensus")
	want = `
# HELP onchain_exporter_coarsening_factor Rows of its window per poll under the daily budget's plan, on average (1: every row; 2.5: alternately every 2nd and 3rd row); the largest among a window's spacings.
# TYPE onchain_exporter_coarsening_factor gauge
onchain_exporter_coarsening_factor{api="data",window="block"} 1
# HELP onchain_exporter_forecast_calls_per_day Upstream calls a day the configuration in force costs, per configured endpoint (path as written) and listing endpoint, after expansion, before any cut of the daily budget.
# TYPE onchain_exporter_forecast_calls_per_day gauge
onchain_exporter_forecast_calls_per_day{api="data",endpoint="/v2/network/events-count"} 15120
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "onchain_exporter_coarsening_factor", "onchain_exporter_forecast_calls_per_day"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.used); n != 2 {
		t.Errorf("%d daily_calls_used series after consensus was dropped, want 2", n)
	}
}
