package dashboards

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// Totals over exchanges count each asset once: an aggregate series
// (all_exchange, all_symbol) is taken where the file names it and its
// parts are summed where it does not, never both. The panels' own
// expressions run in promtool over series of the three kinds, scraped
// from one exporter and from a cluster of two scraped pod by pod (each
// member serves every series): the totals are the same.
func TestTotalsCountAggregatesOnce(t *testing.T) {
	promtool := testtool.Require(t, "install the Debian package prometheus", "promtool")
	type input struct {
		name, labels string
		v            float64
	}
	series := func(name, labels string, v float64) input { return input{name, labels, v} }
	scrapes := map[string][]string{
		"one exporter": {`job="onchain_exporter", instance="exporter:9799"`},
		"a cluster of two": {
			`job="onchain_exporter", instance="10.0.0.1:9799", pod="onchain-exporter-a"`,
			`job="onchain_exporter", instance="10.0.0.2:9799", pod="onchain-exporter-b"`,
		},
	}
	cases := []struct {
		file, panel string
		input       []input
		expect      []map[string]any
	}{
		{"onchain-overview.json", "Exchange reserves (USD)", []input{
			// BTC: the aggregate and two of its parts; 100 counts.
			series("onchain_exchange_reserve_usd", `asset="btc", window="day", exchange="all_exchange"`, 100),
			series("onchain_exchange_reserve_usd", `asset="btc", window="day", exchange="binance"`, 60),
			series("onchain_exchange_reserve_usd", `asset="btc", window="day", exchange="bybit"`, 30),
			// ETH: single exchanges only (exchange: all); 10 + 5.
			series("onchain_exchange_reserve_usd", `asset="eth", window="day", exchange="binance"`, 10),
			series("onchain_exchange_reserve_usd", `asset="eth", window="day", exchange="okx"`, 5),
			// ERC-20 tokens, each on its own: usdt 20, link 3.
			series("onchain_exchange_reserve_usd", `asset="erc20", window="day", token="usdt", exchange="all_exchange"`, 20),
			series("onchain_exchange_reserve_usd", `asset="erc20", window="day", token="usdt", exchange="binance"`, 7),
			series("onchain_exchange_reserve_usd", `asset="erc20", window="day", token="link", exchange="binance"`, 3),
		}, []map[string]any{{"labels": `{window="day"}`, "value": 138}}},
		{"onchain-overview.json", "Open interest (all exchanges)", []input{
			series("onchain_open_interest_usd", `asset="btc", window="hour", exchange="all_exchange"`, 1000),
			series("onchain_open_interest_usd", `asset="btc", window="hour", exchange="binance"`, 400),
			// ETH: no aggregate exchange; binance by its all_symbol (50),
			// bybit by the sum of its symbols (10 + 20).
			series("onchain_open_interest_usd", `asset="eth", window="hour", exchange="binance", symbol="all_symbol"`, 50),
			series("onchain_open_interest_usd", `asset="eth", window="hour", exchange="binance", symbol="eth_usdt"`, 30),
			series("onchain_open_interest_usd", `asset="eth", window="hour", exchange="bybit", symbol="eth_usd"`, 10),
			series("onchain_open_interest_usd", `asset="eth", window="hour", exchange="bybit", symbol="eth_usdt"`, 20),
		}, []map[string]any{
			{"labels": `{asset="btc", window="hour"}`, "value": 1000},
			{"labels": `{asset="eth", window="hour"}`, "value": 80},
		}},
		{"onchain-stablecoins.json", "Events by kind", []input{
			series("onchain_stablecoin_events", `asset="usdt", window="hour", kind="mint"`, 4),
			series("onchain_stablecoin_events", `asset="usdc", window="hour", kind="mint"`, 3),
			series("onchain_stablecoin_events", `asset="usdt", window="hour", kind="burn"`, 2),
		}, []map[string]any{
			{"labels": `{kind="burn"}`, "value": 2},
			{"labels": `{kind="mint"}`, "value": 7},
		}},
		{"onchain-exporter-health.json", "Series failing", []input{
			series("onchain_exporter_query_success", `api="data", endpoint="/v1/btc/network-data/supply", asset="btc", window="day"`, 0),
			series("onchain_exporter_query_success", `api="data", endpoint="/v1/btc/network-data/velocity", asset="btc", window="day"`, 1),
		}, []map[string]any{{"labels": `{}`, "value": 1}}},
		{"onchain-exporter-health.json", "Series configured", []input{
			series("onchain_exporter_tuples", `api="data"`, 40),
			series("onchain_exporter_tuples", `api="consensus"`, 2),
		}, []map[string]any{{"labels": `{}`, "value": 42}}},
	}
	var tests []map[string]any
	for scrape, targets := range scrapes {
		for _, tc := range cases {
			var in []map[string]string
			for _, s := range tc.input {
				for _, target := range targets {
					in = append(in, map[string]string{"series": fmt.Sprintf("%s{%s, %s}", s.name, target, s.labels), "values": fmt.Sprintf("%gx10", s.v)})
				}
			}
			// The stablecoins dashboard's window is a single value.
			expr := strings.ReplaceAll(withAllValues(panelExpr(t, tc.file, tc.panel)), `window=".*"`, `window="hour"`)
			tests = append(tests, map[string]any{
				"name":         tc.panel + ", " + scrape,
				"interval":     "1m",
				"input_series": in,
				"promql_expr_test": []map[string]any{{
					"expr": expr, "eval_time": "5m", "exp_samples": tc.expect,
				}},
			})
		}
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("rules.yml", map[string]any{"groups": []any{}})
	file := write("totals_test.yml", map[string]any{"rule_files": []string{"rules.yml"}, "evaluation_interval": "1m", "tests": tests})
	if out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}

// panelExpr returns the expression of the one target of a panel.
func panelExpr(t *testing.T, file, title string) string {
	t.Helper()
	for _, p := range allPanels(loadDashboards(t)[file].Panels) {
		if p.Title == title {
			if len(p.Targets) != 1 {
				t.Fatalf("%s: panel %q has %d targets, want 1", file, title, len(p.Targets))
			}
			return p.Targets[0].Expr
		}
	}
	t.Fatalf("%s: no panel %q", file, title)
	return ""
}

// withAllValues puts what Grafana sends for "All" (allValue .*) in place of
// every variable of a query.
func withAllValues(q string) string { return otherVarRE.ReplaceAllString(q, ".*") }

// A series without a label (BTC's reserve has no token) is shown by a
// panel filtered on that label only when the variable's All is .*, which
// matches the empty value; Grafana's default All (every value found, as a
// regex) would hide it. The target's labels (cluster, job, instance) are
// on every series: their All is .+, the community's convention
// (dashboard-linter's template rules).
func TestLabelVariablesShowSeriesWithoutTheLabel(t *testing.T) {
	for f, d := range loadDashboards(t) {
		for _, v := range d.Templating.List {
			want := ".*"
			if v.Name == "cluster" || v.Name == "job" || v.Name == "instance" {
				want = ".+"
			}
			if v.Type == "query" && v.IncludeAll && v.AllValue != want {
				t.Errorf("%s: variable %s: allValue %q, want %s", f, v.Name, v.AllValue, want)
			}
		}
	}
	if got := withAllValues(`x{token=~"$token", job=~"${job}"}`); got != `x{token=~".*", job=~".*"}` {
		t.Errorf("withAllValues: %s", strings.TrimSpace(got))
	}
}
