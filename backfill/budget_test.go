package backfill

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// budgetConfig is six day series; {{BUDGET}} is the data API's
// daily_budget.
const budgetConfig = `data:
  url: "{{URL}}"
  token_env: T
  daily_budget: {{BUDGET}}
  metrics:
    - path: /v1/btc/market-data/open-interest
      exchange: [binance, bybit, okx, deribit, bitmex, kraken]
`

// liveNeed is what the live exporter needs a day of budgetConfig's
// series, by the forecast this package shares the budget with.
func liveNeed(t *testing.T) int {
	e := newEnv(t, strings.ReplaceAll(budgetConfig, "{{BUDGET}}", "100000"), nil)
	return shares(e.cfg)["data"].live
}

// TestBudgetLeavesTheLiveExportersShare: a daily_budget the live exporter
// needs whole leaves the backfill no call; one that leaves two calls a day
// lets it make one now (the budget's burst) and leaves the rest of the
// series for a later run, and a run started again the same day finds the
// day's count in the progress file and calls nothing.
func TestBudgetLeavesTheLiveExportersShare(t *testing.T) {
	live := liveNeed(t)
	if live < 6 {
		t.Fatalf("the live exporter needs %d calls a day for 6 day series", live)
	}

	e := newEnv(t, strings.ReplaceAll(budgetConfig, "{{BUDGET}}", fmt.Sprint(live)), nil)
	o := e.options(3)
	sum, err := Run(context.Background(), e.cfg, e.pool, o)
	if err != nil || sum.NotTried != 6 || sum.Complete || e.fake.Calls("data") != 0 {
		t.Fatalf("no share: %+v, %v, %d calls", sum, err, e.fake.Calls("data"))
	}
	if e.logs.Count("no more calls to this API", "0 left for backfill") != 1 {
		t.Errorf("the reason is not said:\n%s", e.logs.String())
	}
	var none strings.Builder
	if err := DryRun(&none, e.cfg, o); err != nil || !strings.Contains(none.String(), "0 left for backfill: a run calls nothing of it") ||
		strings.Contains(none.String(), "GET") || !strings.Contains(none.String(), "# 0 series, 0 calls") {
		t.Errorf("the dry run of an API with no share lists calls a run does not make (%v):\n%s", err, none.String())
	}

	e = newEnv(t, strings.ReplaceAll(budgetConfig, "{{BUDGET}}", fmt.Sprint(live+2)), nil)
	o = e.options(3)
	var dry strings.Builder
	if err := DryRun(&dry, e.cfg, o); err != nil || !strings.Contains(dry.String(), fmt.Sprintf("# data: daily_budget %d, of which the live exporter needs %d a day (its forecast and reserve): 2 left for backfill", live+2, live)) {
		t.Errorf("the dry run does not say the share (%v):\n%s", err, dry.String())
	}
	sum, err = Run(context.Background(), e.cfg, e.pool, o)
	if err != nil || sum.Written != 1 || sum.NotTried != 5 || e.fake.Calls("data") != 1 {
		t.Fatalf("a share of 2: %+v, %v, %d calls", sum, err, e.fake.Calls("data"))
	}
	if e.logs.Count("no more calls to this API", "daily_budget has no call left", "run again then") != 1 {
		t.Errorf("the stop is not said:\n%s", e.logs.String())
	}
	// Started again the same day (a new process: new clients).
	e.pool.Close()
	pool := upstream.NewPool(prometheus.NewRegistry(), func() time.Time { return now }, log.NewNopLogger())
	defer pool.Close()
	sum, err = Run(context.Background(), e.cfg, pool, o)
	if err != nil || sum.Already != 1 || sum.Written != 0 || e.fake.Calls("data") != 1 {
		t.Errorf("again the same day: %+v, %v, %d calls in all", sum, err, e.fake.Calls("data"))
	}
}
