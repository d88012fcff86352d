package dashboards

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// signalsYAML reads the paths of the signal pack (mixin/alerts/
// signal-list.libsonnet) from the fake upstream's full catalog: the
// families the signals dashboard and examples/signals.yml name.
const signalsYAML = `data:
  url: "{{URL}}"
  token_env: ONCHAIN_DEMO_DATA_TOKEN
  metrics:
    - path: /v1/btc/market-indicator/mvrv
    - path: /v1/btc/network-indicator/nupl
    - path: /v1/btc/network-indicator/puell-multiple
    - path: /v1/btc/market-indicator/sopr
    - path: /v1/btc/network-indicator/nvt-golden-cross
    - path: /v2/indicator/valuation/mvrv-z-score
      asset: btc
    - path: /v1/btc/exchange-flows/netflow
      exchange: binance
    - path: /v1/btc/exchange-flows/reserve
      exchange: binance
    - path: /v1/btc/flow-indicator/exchange-whale-ratio
      exchange: binance
    - path: /v1/btc/market-data/open-interest
      exchange: binance
    - path: /v1/btc/market-data/funding-rates
      exchange: binance
    - path: /v1/btc/market-indicator/estimated-leverage-ratio
      exchange: binance
    - path: /v2/network/events-count
      asset: usdt
    - path: /v1/btc/flow-indicator/stablecoins-ratio
      exchange: binance
    - path: /v1/btc/market-indicator/stablecoin-supply-ratio
    - path: /v1/btc/miner-flows/outflow
      miner: f2pool
    - path: /v1/btc/flow-indicator/mpi
`

// scrapeSignals scrapes an exporter on signalsYAML against the demo
// upstream serving its full catalog, and returns the answer.
func scrapeSignals() (string, string) {
	d, err := demo.Start(log.NewNopLogger())
	if err != nil {
		return "", "demo.Start: " + err.Error()
	}
	defer d.Close()
	d.Fake.SetCatalog(fakeapi.CatalogFull)
	cfg, err := config.Parse("signals.yml (dashboards/signals_test.go)", []byte(strings.ReplaceAll(signalsYAML, "{{URL}}", d.URL)), demo.Getenv)
	if err != nil {
		return "", "config.Parse: " + err.Error()
	}
	exp, err := collector.New(cfg, log.NewNopLogger(), prometheus.NewRegistry())
	if err != nil {
		return "", "collector.New: " + err.Error()
	}
	defer exp.Close()
	rec := httptest.NewRecorder()
	exp.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		return "", "scrape: " + rec.Result().Status + ": " + rec.Body.String()
	}
	return rec.Body.String(), ""
}

// addSignalFamilies adds the families of the signal pack's paths to
// names (exposed calls it).
func addSignalFamilies(names map[string]bool) string {
	body, msg := scrapeSignals()
	for n := range familyNames(strings.NewReader(body)) {
		names[n] = true
	}
	return msg
}

type signalRule struct {
	Alert string `yaml:"alert"`
	Expr  string `yaml:"expr"`
}

func readRules(t *testing.T, file string) []signalRule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Groups []struct {
			Rules []signalRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatal(err)
	}
	var out []signalRule
	for _, g := range rf.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// The family the late-row rules read (docs/signals.md, Late rows), which
// a first scrape need not show: taken as known here.
const rowDue = "onchain_exporter_row_due_timestamp_seconds"

// Every family the signal pack and the late-row rules name is one an
// exporter reading the pack's paths serves, and every endpoint a signal
// joins its row time on is one such an exporter labels its rows with.
func TestSignalRulesNameExposedMetrics(t *testing.T) {
	exp := exposed(t)
	body, msg := scrapeSignals()
	if msg != "" {
		t.Fatal(msg)
	}
	rules := readRules(t, "signals.yml")
	if len(rules) < 20 {
		t.Fatalf("examples/signals.yml: %d rules, want at least 20", len(rules))
	}
	endpointRE := regexp.MustCompile(`onchain_data_timestamp_seconds\{[^}]*endpoint=~"([^"]+)"`)
	for _, r := range append(rules, readRules(t, "late.yml")...) {
		names, err := metricNames(r.Expr)
		if err != nil {
			t.Errorf("%s: %v", r.Alert, err)
			continue
		}
		for _, n := range names {
			if familyOf(n, exp) == "" && n != rowDue {
				t.Errorf("%s: %s is not exposed by the exporter", r.Alert, n)
			}
		}
		for _, m := range endpointRE.FindAllStringSubmatch(r.Expr, -1) {
			re := regexp.MustCompile(`onchain_data_timestamp_seconds\{[^}]*endpoint="` + m[1] + `"`)
			if !re.MatchString(body) {
				t.Errorf("%s: no row time of an endpoint matching %s in the scrape", r.Alert, m[1])
			}
		}
	}
}

// joinRE finds a signal's join: `and on (labels)` before its row check.
var joinRE = regexp.MustCompile(`and on \(([^)]*)\)\s*\(\s*max without \([^)]*\) \(onchain_data_timestamp_seconds\{[^}]*endpoint=~"([^"]+)"`)

// Every series of a signal's family that the exporter serves finds the
// row time it joins on: a series of onchain_data_timestamp_seconds of a
// matching endpoint with the same values of the join's labels (those of
// the scrape; namespace and job are Prometheus's).
func TestSignalJoinsMatchTheExportersLabels(t *testing.T) {
	body, msg := scrapeSignals()
	if msg != "" {
		t.Fatal(msg)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	labelsOf := func(name string) []map[string]string {
		var out []map[string]string
		if fam := fams[name]; fam != nil {
			for _, m := range fam.GetMetric() {
				l := map[string]string{}
				for _, lp := range m.GetLabel() {
					l[lp.GetName()] = lp.GetValue()
				}
				out = append(out, l)
			}
		}
		return out
	}
	times := labelsOf("onchain_data_timestamp_seconds")
	for _, r := range readRules(t, "signals.yml") {
		names, err := metricNames(r.Expr)
		if err != nil || len(names) == 0 {
			t.Errorf("%s: %v", r.Alert, err)
			continue
		}
		m := joinRE.FindStringSubmatch(r.Expr)
		if m == nil {
			t.Errorf("%s: no join on the row time", r.Alert)
			continue
		}
		endpoint := regexp.MustCompile("^" + m[2] + "$")
		var on []string
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "namespace" && l != "job" && l != "cluster" {
				on = append(on, l)
			}
		}
		series := labelsOf(names[0])
		if len(series) == 0 {
			t.Errorf("%s: the scrape has no series of %s", r.Alert, names[0])
		}
		for _, v := range series {
			found := false
			for _, ts := range times {
				same := endpoint.MatchString(ts["endpoint"])
				for _, l := range on {
					same = same && ts[l] == v[l]
				}
				found = found || same
			}
			if !found {
				t.Errorf("%s: %s %v has no row time with the same %v", r.Alert, names[0], v, on)
			}
		}
	}
}
