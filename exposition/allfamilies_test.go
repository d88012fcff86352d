package exposition_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// everyPathYAML asks for every path of the fake's full catalog on a
// premium key, in every window: patterns over /v1 and /v2 with the
// parameters that required ones need (a token, the two sides of an
// inter-entity flow, a fund), and every Indicator and Analyst Consensus
// endpoint of the built-in catalog.
const everyPathYAML = `
data:
  url: "{{URL}}"
  token_env: T
  concurrency: 16
  rate_limit: 100000
  daily_budget: 100000000
  max_tuples: 100000
  metrics:
    - path: /v1/**
      exclude: [/v1/*/inter-entity-flows/*, /v1/*/fund-data/*]
      window: all
      coarsen: true
      token: usdt
    - path: /v1/*/inter-entity-flows/*
      window: all
      coarsen: true
      from_exchange: binance
      to_exchange: okx
      from_miner: f2pool
      to_miner: antpool
    - path: /v1/*/fund-data/*
      coarsen: true
      symbol: [all_symbol, gbtc, ethe]
    - path: /v2/**
      window: all
      coarsen: true
      asset: [usdt, btc]
indicator:
  url: "{{URL}}/indicator"
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: "KRX:005930"
consensus:
  url: "{{URL}}/consensus"
  token_env: T
  metrics:
    - path: /consensus
      asset: btc
    - path: /consensus
      asset: eth
      days: 30
    - path: /analyst-views
      asset: btc
    - path: /calls
      asset: btc
    - path: /analysts/top
      asset: btc
      limit: 5
    - path: /analysts/{handle}
      handle: chain_oracle
`

// An answer that holds every path of the fake's full catalog, and every
// endpoint of the built-in catalog, reads clean in both of the
// ecosystem's strict readers: promtool check metrics has no finding on
// it, the OpenMetrics reference parser takes it, each family has a HELP
// written for it (none a placeholder), the families whose unit is known
// say it (# UNIT), and no series carries a label it does not have.
func TestEveryFamilyAPlanCanProduce(t *testing.T) {
	python := testtool.StrictPython(t)
	u := testtool.StartFake(t, fakeapi.Options{Catalog: fakeapi.CatalogFull}) // its DataToken is a premium key
	cfg, err := expand.New(log.NewNopLogger()).Expand(context.Background(), u.Config(t, everyPathYAML))
	if err != nil {
		t.Fatal(err)
	}
	exp, err := collector.New(cfg, log.NewNopLogger(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	text := testtool.Scrape(t, exp, "120")
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	rec := httptest.NewRecorder()
	exp.ServeHTTP(rec, req)
	om := rec.Body.String()

	// Every path: each one discovery lists, and each of the built-in
	// catalog, has a series refreshed without error.
	ok := map[string]bool{}
	for _, l := range testtool.Lines(text, "onchain_exporter_query_success{") {
		if strings.HasSuffix(l, " 1") {
			_, rest, _ := strings.Cut(l, `endpoint="`)
			path, _, _ := strings.Cut(rest, `"`)
			ok[path] = true
		}
	}
	var listed []string
	for _, v := range []string{"v1", "v2"} {
		var d struct {
			Result struct {
				Data []struct {
					Path string `json:"path"`
				} `json:"data"`
			} `json:"result"`
		}
		testtool.FetchJSON(t, u.Srv.URL+"/"+v+"/discovery/endpoints", &d)
		for _, item := range d.Result.Data {
			listed = append(listed, item.Path)
		}
	}
	if len(listed) < 200 {
		t.Fatalf("the full catalog lists %d paths", len(listed))
	}
	for _, p := range listed {
		if !ok[p] {
			t.Errorf("%s: no series refreshed", p)
		}
	}
	for _, ep := range config.Endpoints {
		if !slices.ContainsFunc(cfg.Tuples, func(tp *config.Tuple) bool { return tp.Endpoint == ep && ok[tp.Path] }) {
			t.Errorf("%s %s: no series refreshed", ep.API, ep.Template)
		}
	}

	if findings := testtool.PromtoolCheckMetrics(t, text); findings != "" {
		t.Errorf("promtool check metrics:\n%s", findings)
	}
	fams, complaint := testtool.ParseOpenMetrics(t, python, om)
	if complaint != "" {
		t.Fatalf("the OpenMetrics reference parser refuses the answer: %s", complaint)
	}
	data, units := 0, map[string]int{}
	for _, f := range fams {
		if !strings.HasPrefix(f.Name, "onchain_") || strings.HasPrefix(f.Name, "onchain_exporter_") {
			continue
		}
		data++
		if f.Help == "" || strings.HasPrefix(f.Help, "Field ") || strings.Contains(f.Help, "not in the built-in catalog") {
			t.Errorf("%s: HELP %q is not written for it", f.Name, f.Help)
		}
		if f.Unit != "" {
			units[f.Unit]++
		}
	}
	n := 0
	for _, c := range units {
		n += c
	}
	t.Logf("%d paths listed, %d tuples; %d data families, each with HELP, %d with a unit %v", len(listed), len(cfg.Tuples), data, n, units)
	if units["usd"] == 0 || units["seconds"] == 0 || units["ratio"] == 0 || units["bytes"] == 0 {
		t.Errorf("units %v: a base unit the catalog has is not said", units)
	}

	// A series' labels are its own, on the data families and the
	// per-tuple ones: none is written empty for a parameter another
	// entry has.
	for _, l := range testtool.Lines(text, "onchain_") {
		perTuple := strings.HasPrefix(l, "onchain_exporter_query_") || strings.HasPrefix(l, "onchain_exporter_last_success_timestamp_seconds{")
		if strings.Contains(l, `=""`) && (perTuple || !strings.HasPrefix(l, "onchain_exporter_")) {
			t.Errorf("an empty label: %s", l)
		}
	}
}
