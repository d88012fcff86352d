package collector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// dialectsConfig reads every Indicator and Analyst Consensus endpoint of
// the catalog, through the listing endpoints (equity: all, asset names),
// with no rows:, time_key: or labels: anywhere.
const dialectsConfig = `
indicator:
  url: "{{URL}}/indicator"
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: all
consensus:
  url: "{{URL}}/consensus"
  token_env: T
  metrics:
    - path: /consensus
      asset: [Bitcoin, eth]
    - path: /consensus
      asset: btc
      days: 30
    - path: /analyst-views
      asset: all
    - path: /calls
      asset: [bitcoin, ethereum]
    - path: /analysts/top
      asset: bitcoin
      limit: 5
    - path: /analysts/{handle}
      handle: [chain_oracle, macro_mira]
`

// served is what an exposition says about the upstream's data: every data
// family, the row times and whether each query worked; not the exporter's
// own request counters and durations, which differ by answer size.
func served(body string) []string {
	var out []string
	for _, l := range lines(body, "onchain_") {
		if !strings.HasPrefix(l, "onchain_exporter_") || strings.HasPrefix(l, "onchain_exporter_query_success") ||
			strings.HasPrefix(l, "onchain_exporter_api_errors_total") {
			out = append(out, l)
		}
	}
	return out
}

// dialectRun expands dialectsConfig against a fake of dialect d, scrapes
// it twice six minutes apart, and returns the second exposition and the
// log.
func dialectRun(t *testing.T, d fakeapi.Dialect) (string, *testtool.LogBuffer) {
	t.Helper()
	e := newEnv(t, dialectsConfig, fakeapi.Options{Dialect: d, IndicatorToken: testToken})
	logs := &testtool.LogBuffer{}
	logger := log.NewLogfmtLogger(logs)
	cfg, err := expand.New(logger, expand.Options{Now: e.clock.Now}).Expand(context.Background(), e.parse(dialectsConfig))
	if err != nil {
		t.Fatalf("dialect %s: %v", d, err)
	}
	e.exp.Close()
	if e.exp, err = New(cfg, logger, prometheus.NewRegistry(), Options{Clock: e.clock, IdleAfter: neverIdle}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.exp.Close)
	e.scrape("10")
	e.clock.Add(6 * time.Minute)
	return e.scrape("10"), logs
}

// With no rows: or time_key: in the file, the exporter serves the same
// series with the same values and row times from either dialect, and
// every query succeeds.
func TestSameSeriesFromEitherDialect(t *testing.T) {
	bodyA, _ := dialectRun(t, fakeapi.DialectA)
	bodyB, logsB := dialectRun(t, fakeapi.DialectB)
	a, b := served(bodyA), served(bodyB)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("the dialects give different expositions:\n A %s\n B %s", strings.Join(a, "\n A "), strings.Join(b, "\n B "))
	}
	for _, l := range lines(bodyB, "onchain_exporter_query_success") {
		if !strings.HasSuffix(l, " 1") {
			t.Errorf("dialect b: %s", l)
		}
	}
	for family, n := range map[string]int{
		"onchain_analyst_views{": 4 * 3, "onchain_analyst_calls{": 2 * 2, "onchain_equity_pbr_band_price{": 6 * 5,
		"onchain_consensus_score{": 3, "onchain_analyst_top_rank{": 5, "onchain_analyst_followers{": 2,
		"onchain_data_timestamp_seconds{": 6 + 3 + 4 + 2 + 2, // every tuple but the top list, whose rows have no time
	} {
		if got := len(lines(bodyB, family)); got != n {
			t.Errorf("%d series of %s, want %d", got, family, n)
		}
	}

	// Each shape found is logged once, at info, with what to pin.
	for _, want := range [][]string{
		{"endpoint=/api/equities", "rows=."},
		{"endpoint=/assets", "rows=."},
		{"endpoint=/api/equities/{equity}/pbr-band", "rows=items", "time_key=timestamp"},
		{"endpoint=/consensus", "entry=consensus.metrics[0]", "rows=.", "time_key=updated_at"},
		{"endpoint=/consensus", "entry=consensus.metrics[1]", "rows=history", "time_key=as_of"},
		{"endpoint=/analyst-views", "rows=.", "time_key=as_of", "counted_by=direction", `labels_from="stance=direction"`},
		{"endpoint=/calls", "rows=calls", "time_key=updated_at", "counted_by=direction"},
		{"endpoint=/analysts/top", "rows=results"},
		{"endpoint=/analysts/{handle}", "rows=.", "time_key=updated_at"},
	} {
		if n := logsB.Count(append([]string{"level=info", `msg="payload shape detected"`}, want...)...); n != 1 {
			t.Errorf("%d info lines with %v, want 1", n, want)
		}
	}
	if !strings.Contains(logsB.String(), "rows=results time_key=\n") {
		t.Error("the top list's rows have no time, and the log does not say so")
	}
}
