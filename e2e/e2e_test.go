package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

const dataToken, indicatorToken = "e2e-data-token", "e2e-indicator-token"

// Data tuples of exporterConfig: open interest on 11 exchanges and ftx,
// 6 BTC and ETH reserves and an ERC-20 one, 2 supply series, events.
const dataTuples = 11 + 1 + 6 + 1 + 2 + 1

// The test runs once per payload dialect of the fake's Indicator and
// Analyst Consensus APIs: the exporter, given no rows: or time_key:, must
// serve the same series from each. dialectEnv (a or b) runs one only.
const dialectEnv = "ONCHAIN_E2E_DIALECT"

// dataSection opens the data API's section of the tests' configurations:
// the fake upstream ({{URL}}) with the credential in E2E_DATA_TOKEN.
const dataSection = `data:
  url: "{{URL}}"
  token_env: E2E_DATA_TOKEN
  timeout: 2s
  metrics:
`

// exporterConfig is the exporter's configuration; {{URL}} is the fake
// upstream. cache_ttl 1s makes every scrape refresh every series, so a
// fault switched on in the fake shows at the next scrape. exchange: all
// stands for the ten exchanges the fake lists besides the aggregate
// all_exchange (named here) and the deprecated ftx, whose series (named
// on its own, rows ending in 2022) must not page. The BTC and ETH
// reserves are outside the catalog, the ERC-20 one in it: one family.
const exporterConfig = dataSection + `    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [all, all_exchange]
      cache_ttl: 1s
    - path: /v1/btc/market-data/open-interest
      window: day
      exchange: ftx
    - path: /v1/{asset}/exchange-flows/reserve
      asset: [btc, eth]
      exchange: [all_exchange, binance, bybit]
      cache_ttl: 1s
    - path: /v1/erc20/exchange-flows/reserve
      token: usdt
      exchange: binance
      cache_ttl: 1s
    - path: /v1/{asset}/network-data/supply
      asset: btc
      window: [day, block]
      cache_ttl: 1s
    - path: /v2/network/events-count
      asset: usdt
      window: hour
      cache_ttl: 1s
indicator:
  url: "{{URL}}/indicator"
  token_env: E2E_INDICATOR_TOKEN
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: all
consensus:
  url: "{{URL}}/consensus"
  metrics:
    - path: /consensus
      asset: Bitcoin
    - path: /analyst-views
      asset: btc
`

// prometheusConfig scrapes the collectors through collect[], as
// examples/prometheus.yml does, at 1s so the test stays short.
const prometheusConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [rules.yml]
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["{{AM}}"]
scrape_configs:
  - job_name: onchain_exporter
    params:
      collect[]: [data, indicator, consensus]
    static_configs:
      - targets: ["{{EXPORTER}}"]
`

const alertmanagerConfig = `route:
  receiver: webhook
  group_by: [alertname, api]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: webhook
    webhook_configs:
      - url: "{{WEBHOOK}}"
        send_resolved: true
`

// forRE matches the for: durations of alerts.yml.
var forRE = regexp.MustCompile(`(?m)^(\s+for:)\s*\S+\s*$`)

// testRules returns examples/alerts.yml with every for: set to 0s: the
// real expressions, labels and annotations, without the minutes of pending
// that would not fit a bounded test.
func testRules(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !forRE.Match(b) {
		t.Fatal("examples/alerts.yml: no for: to rewrite")
	}
	return forRE.ReplaceAllString(string(b), "${1} 0s")
}

func fill(tmpl string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(tmpl)
}

func TestPrometheusAlertmanagerEndToEnd(t *testing.T) {
	prom := testtool.Require(t, "install the Debian package prometheus", "prometheus")
	promtool := testtool.Require(t, "install the Debian package prometheus", "promtool")
	am := testtool.Require(t, "install the Debian package prometheus-alertmanager", "prometheus-alertmanager", "alertmanager")
	t.Setenv("E2E_DATA_TOKEN", dataToken)
	t.Setenv("E2E_INDICATOR_TOKEN", indicatorToken)

	dialects := fakeapi.Dialects
	if v := os.Getenv(dialectEnv); v != "" {
		d, err := fakeapi.ParseDialect(v)
		if err != nil {
			t.Fatalf("%s: %v", dialectEnv, err)
		}
		dialects = []fakeapi.Dialect{d}
	}
	for _, d := range dialects {
		t.Run("dialect="+d.String(), func(t *testing.T) { endToEnd(t, prom, promtool, am, d) })
	}
}

// endToEnd runs the exporter (in process), Prometheus and Alertmanager
// against a fake upstream whose Indicator and Consensus payloads are in
// dialect.
func endToEnd(t *testing.T, prom, promtool, am string, dialect fakeapi.Dialect) {
	dir := t.TempDir()
	// A limit for a run that hangs, not a figure: one dialect takes about
	// 15 s.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The fake upstream runs in the test: the test owns its fault switch.
	up := testtool.StartFake(t, fakeapi.Options{Now: time.Now, DataToken: dataToken, IndicatorToken: indicatorToken, Dialect: dialect})
	fake, upstream := up.Fake, up.Srv
	hook := &webhook{}
	hookSrv := httptest.NewServer(hook)
	t.Cleanup(hookSrv.Close)

	cfg := writeFile(t, dir, "onchain.yml", fill(exporterConfig, "{{URL}}", upstream.URL))
	exp := startExporter(t, dir, "exporter", cfg, nil)
	promAddr, amAddr := freeAddr(t), freeAddr(t)
	expAddr, expURL, promURL, amURL := exp.addr, exp.url, "http://"+promAddr, "http://"+amAddr

	amCfg := writeFile(t, dir, "alertmanager.yml", fill(alertmanagerConfig, "{{WEBHOOK}}", hookSrv.URL+"/"))
	start(t, dir, "alertmanager", am, nil,
		"--config.file="+amCfg, "--storage.path="+filepath.Join(dir, "am-data"),
		"--web.listen-address="+amAddr, "--cluster.listen-address=")

	writeFile(t, dir, "rules.yml", testRules(t))
	promCfg := writeFile(t, dir, "prometheus.yml", fill(prometheusConfig, "{{AM}}", amAddr, "{{EXPORTER}}", expAddr))
	run(ctx, t, promtool, "check", "config", promCfg)
	start(t, dir, "prometheus", prom, nil,
		"--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "prom-data"),
		"--web.listen-address="+promAddr, "--rules.alert.resend-delay=1s")

	for _, u := range []string{expURL + "/-/healthy", amURL + "/-/ready", promURL + "/-/ready"} {
		eventually(ctx, t, "waiting for "+u, func() error { _, err := get(ctx, u); return err })
	}

	if !t.Run("target up", func(t *testing.T) {
		expectSeries(ctx, t, promURL, `up{job="onchain_exporter"} == 1`, 1, map[string]string{"instance": expAddr})
	}) {
		return
	}
	if !t.Run("series with labels", func(t *testing.T) {
		oi := expectSeries(ctx, t, promURL, `onchain_open_interest_usd`, 11,
			map[string]string{"job": "onchain_exporter", "asset": "btc", "window": "hour"})
		if got := labelValues(oi, "exchange"); !strings.Contains(got, "all_exchange,binance,") || strings.Contains(got, "ftx") {
			t.Errorf("onchain_open_interest_usd exchanges: got %s, want those discovery lists, all_exchange as named, no ftx", got)
		}
		reserves := expectSeries(ctx, t, promURL, `onchain_exchange_reserve`, 7, map[string]string{"window": "day"})
		if got := labelValues(reserves, "asset"); got != "btc,btc,btc,erc20,eth,eth,eth" {
			t.Errorf("onchain_exchange_reserve assets: got %s, want BTC, ETH and ERC-20 in one family", got)
		}
		ev := expectSeries(ctx, t, promURL, `onchain_stablecoin_events`, 5, map[string]string{"asset": "usdt", "window": "hour"})
		if got := labelValues(ev, "kind"); got != "burn,issue,mint,redeem,transfer" {
			t.Errorf("onchain_stablecoin_events kinds: got %s", got)
		}
		expectSeries(ctx, t, promURL, `onchain_data_block_height > 0`, 1, map[string]string{"asset": "btc", "window": "block"})
		expectSeries(ctx, t, promURL, `onchain_exporter_query_success == 1`, dataTuples, map[string]string{"api": "data"})
		expectSeries(ctx, t, promURL, `onchain_supply`, 2, map[string]string{"asset": "btc"})
	}) {
		return
	}
	if !t.Run("indicator and consensus series", func(t *testing.T) {
		views := expectSeries(ctx, t, promURL, `onchain_analyst_views`, 3, map[string]string{"asset": "btc"})
		if got := labelValues(views, "stance"); got != "bearish,bullish,neutral" {
			t.Errorf("onchain_analyst_views stances: got %s", got)
		}
		expectSeries(ctx, t, promURL, `onchain_consensus_score`, 1, map[string]string{"asset": "btc"})
		expectSeries(ctx, t, promURL, `onchain_equity_close_price`, 6, nil)
		expectSeries(ctx, t, promURL, `onchain_data_timestamp_seconds{api="consensus"} > 0`, 2, nil)
		expectSeries(ctx, t, promURL, `onchain_exporter_query_success == 1`, 2, map[string]string{"api": "consensus"})
		expectSeries(ctx, t, promURL, `onchain_exporter_query_success == 1`, 6, map[string]string{"api": "indicator"})
	}) {
		return
	}
	if !t.Run("dashboard totals count aggregates once", func(t *testing.T) {
		checkTotals(ctx, t, promURL)
	}) {
		return
	}
	if !t.Run("healthy exporter fires only OnchainSeriesDeprecated", func(t *testing.T) {
		// The ftx series is years behind, and marked deprecated: it is
		// told once (info), and OnchainDataStale leaves it out.
		expectSeries(ctx, t, promURL, `onchain_data_timestamp_seconds{exchange="ftx"} < 1700000000`, 1, nil)
		expectSeries(ctx, t, promURL, `ALERTS{alertstate="firing", alertname="OnchainSeriesDeprecated"}`, 1,
			map[string]string{"exchange": "ftx", "window": "day", "severity": "info"})
		// Rules were evaluated on healthy data for a few seconds by now.
		time.Sleep(3 * time.Second)
		firing, err := query(ctx, promURL, `ALERTS{alertstate="firing", alertname=~"Onchain.*", alertname!="OnchainSeriesDeprecated"}`)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range firing {
			t.Errorf("firing on a healthy exporter: %v", s.Metric)
		}
	}) {
		return
	}

	authAlert := map[string]string{"api": "data", "job": "onchain_exporter", "severity": "critical"}
	if !t.Run("unauthorized fires OnchainUpstreamAuthFailing", func(t *testing.T) {
		fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Unauthorized})
		expectSeries(ctx, t, promURL, `onchain_exporter_api_errors_total{code="unauthorized"} > 0`, 1, map[string]string{"api": "data"})
		eventually(ctx, t, "webhook: firing OnchainUpstreamAuthFailing", func() error {
			return hook.received("OnchainUpstreamAuthFailing", "firing", authAlert)
		})
	}) {
		return
	}
	t.Run("recovery resolves it", func(t *testing.T) {
		fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.FaultNone})
		// A 401 pauses the API for 30 minutes; a reload (the runbook's
		// step after fixing the credential) lifts the pause.
		if _, err := post(ctx, expURL+"/-/reload"); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, "webhook: resolved OnchainUpstreamAuthFailing", func() error {
			return hook.received("OnchainUpstreamAuthFailing", "resolved", authAlert)
		})
		expectSeries(ctx, t, promURL, `onchain_exporter_query_success == 1`, dataTuples, map[string]string{"api": "data"})
	})
}

// run runs a command and fails the test with its output on error.
func run(ctx context.Context, t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

// expectSeries waits until q returns exactly n series, each carrying the
// given labels, and returns them.
func expectSeries(ctx context.Context, t *testing.T, promURL, q string, n int, labels map[string]string) []sample {
	t.Helper()
	var got []sample
	eventually(ctx, t, "query "+q, func() error {
		res, err := query(ctx, promURL, q)
		if err != nil {
			return err
		}
		var match []sample
		for _, s := range res {
			ok := true
			for k, v := range labels {
				ok = ok && s.Metric[k] == v
			}
			if ok {
				match = append(match, s)
			}
		}
		if len(match) != n {
			return fmt.Errorf("%d series with labels %v, want %d (all: %v)", len(match), labels, n, res)
		}
		got = match
		return nil
	})
	return got
}

// labelValues returns the sorted values of a label, comma-separated.
func labelValues(ss []sample, name string) string {
	var vs []string
	for _, s := range ss {
		vs = append(vs, s.Metric[name])
	}
	sort.Strings(vs)
	return strings.Join(vs, ",")
}
