package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestDerivedNames(t *testing.T) {
	for _, tc := range []struct {
		api, path, field string
		name             string
		scale            float64
	}{
		{APIData, "/v1/btc/exchange-flows/netflow", "netflow_total", "exchange_netflow", 1},
		{APIData, "/v1/btc/exchange-flows/inflow", "inflow_top10", "exchange_inflow_top10", 1},
		{APIData, "/v1/btc/exchange-flows/reserve", "reserve", "exchange_reserve", 1},
		{APIData, "/v1/eth/exchange-flows/reserve", "reserve_usd", "exchange_reserve_usd", 1},
		{APIData, "/v1/btc/miner-flows/reserve", "reserve", "miner_reserve", 1},
		{APIData, "/v1/btc/market-data/price-usd", "value", "market_price_usd", 1},
		{APIData, "/v1/btc/network-data/hashrate", "value", "network_hashrate", 1},
		{APIData, "/v1/btc/network-indicator/nvt", "nvt", "network_indicator_nvt", 1},
		{APIData, "/v1/btc/flow-indicator/exchange-whale-ratio", "exchange_whale_ratio", "flow_indicator_exchange_whale_ratio", 1},
		{APIData, "/v1/btc/network-indicator/pnl-supply", "supply_in_profit_percent", "network_indicator_pnl_supply_supply_in_profit_ratio", 0.01},
		{APIData, "/v1/btc/inter-entity-flows/miner-to-exchange", "flow_total", "inter_entity_miner_to_exchange_flow", 1},
		{APIData, "/v2/indicator/demand/apparent-demand", "apparent_demand", "demand_apparent_demand", 1},
		{APIData, "/v2/network/events-count", "events_other_count", "network_events_count_events_other", 1},
		{APIData, "/v1/9x/9data/9metric", "Field-Name!", "_9data_9metric_field_name", 1},
		{APIIndicator, "/api/equities/{equity}/per-band", "close", "indicator_per_band_close", 1},
		{APIConsensus, "/analysts/{handle}/stats", "accuracy_percent", "consensus_stats_accuracy_ratio", 0.01},
	} {
		name, scale, _ := derivedName(tc.api, tc.path, tc.field)
		if name != tc.name || scale != tc.scale {
			t.Errorf("%s %s field %s: %s scale %g, want %s scale %g", tc.api, tc.path, tc.field, name, scale, tc.name, tc.scale)
		}
		if !nameRE.MatchString(name) {
			t.Errorf("%s: %q is not a valid metric name", tc.path, name)
		}
	}
}

// One concept, one family and one label set on every asset: the BTC and
// ETH exchange reserves (outside the catalog) take the names of the ERC-20
// one, and the three are told apart by their labels.
func TestSameConceptSameFamilyOnEveryAsset(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/{asset}/exchange-flows/reserve
      asset: [btc, eth]
      exchange: binance
    - path: /v1/erc20/exchange-flows/reserve
      token: usdt
      exchange: binance
    - path: /v1/eth/market-data/open-interest
      exchange: binance
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tuples) != 4 {
		t.Fatalf("%d tuples", len(cfg.Tuples))
	}
	reserves := cfg.Tuples[:3]
	for _, tp := range reserves {
		if tp.LabelGroup() != reserves[0].LabelGroup() {
			t.Errorf("%s: label group %q, %s has %q", tp.Key, tp.LabelGroup(), reserves[0].Key, reserves[0].LabelGroup())
		}
		if !reflect.DeepEqual(tp.LabelNames(), []string{"asset", "window", "exchange", "token"}) {
			t.Errorf("%s: labels %v", tp.Key, tp.LabelNames())
		}
		if f := tp.Fields["reserve"]; f == nil || f.Name != "exchange_reserve" {
			t.Errorf("%s: reserve is %+v, want exchange_reserve", tp.Key, f)
		}
		if f := tp.Fields["reserve_usd"]; f == nil || f.Name != "exchange_reserve_usd" {
			t.Errorf("%s: reserve_usd is %+v, want exchange_reserve_usd", tp.Key, f)
		}
		if !tp.AllNumeric {
			t.Errorf("%s: fields outside the catalog are not exported", tp.Key)
		}
	}
	if btc := reserves[0]; btc.Endpoint != nil || btc.Asset() != "btc" || btc.LabelValues[3] != "" {
		t.Errorf("btc reserve: endpoint %v, asset %q, labels %v", btc.Endpoint, btc.Asset(), btc.LabelValues)
	}
	if f := cfg.Tuples[3].Fields["open_interest"]; f == nil || f.Name != "open_interest_usd" {
		t.Errorf("ETH open interest: %+v, want the catalog's open_interest_usd", f)
	}
	// A field the catalog does not name, on the same concept.
	if f := reserves[0].DerivedField("reserve_btc"); f.Name != "exchange_reserve_btc" || f.Type != "gauge" || f.Help == "" {
		t.Errorf("derived field %+v", f)
	}
}

// Two endpoints outside the catalog whose rows hold a field of one name
// give two families, with label sets of their own.
func TestSameFieldOnTwoEndpointsGivesTwoFamilies(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/market-data/price-usd
    - path: /v1/btc/network-data/hashrate
      window: hour
    - path: /v1/btc/miner-flows/reserve
      miner: f2pool
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	names, groups := map[string]bool{}, map[string]bool{}
	for _, tp := range cfg.Tuples {
		names[tp.DerivedField("value").Name] = true
		groups[tp.LabelGroup()] = true
	}
	if len(names) != 3 || len(groups) != 3 {
		t.Errorf("field value gives families %v in label groups %v; want three of each", names, groups)
	}
}

// A field listed under fields: without a name and outside the catalog is
// named by the rule; a counter's name ends in _total.
func TestListedFieldsOutsideTheCatalog(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/exchange-flows/inflow
      fields:
        inflow_total: {}
        inflow_mean: {type: counter}
        inflow_share_percent: {}
        inflow_top10: {name: top10_inflow}
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for field, f := range cfg.Tuples[0].Fields {
		got[field] = f.Name + " " + f.Type
	}
	want := map[string]string{
		"inflow_total":         "exchange_inflow gauge",
		"inflow_mean":          "exchange_inflow_mean_total counter",
		"inflow_share_percent": "exchange_inflow_share_ratio gauge",
		"inflow_top10":         "top10_inflow gauge",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	if s := cfg.Tuples[0].Fields["inflow_share_percent"].Scale; s != 0.01 {
		t.Errorf("a percent is scaled by %g, want 0.01", s)
	}
}

func TestCatalogConcepts(t *testing.T) {
	for c, e := range catalogByConcept {
		if got, ok := conceptOf(e.API, e.Template); !ok || got != c {
			t.Errorf("%s: concept %v, indexed as %v", e.Template, got, c)
		}
	}
	if e := namingEndpoint(APIData, "/v1/btc/exchange-flows/reserve"); e == nil || e.Template != "/v1/erc20/exchange-flows/reserve" {
		t.Errorf("BTC reserve names from %v", e)
	}
	if e := namingEndpoint(APIData, "/v1/btc/exchange-flows/netflow"); e != nil {
		t.Errorf("BTC netflow names from %s, which is another concept", e.Template)
	}
}

// endpointFor and conceptOf read a path segment by segment, as splitting
// it at every slash reads it.
func TestPathsReadBySegment(t *testing.T) {
	split := func(api, path string) *Endpoint {
		segs := strings.Split(path, "/")
		for _, e := range Endpoints {
			tm := strings.Split(e.Template, "/")
			if e.API != api || len(tm) != len(segs) {
				continue
			}
			match := true
			for i := range tm {
				if strings.HasPrefix(tm[i], "{") && segs[i] == "" || !strings.HasPrefix(tm[i], "{") && tm[i] != segs[i] {
					match = false
				}
			}
			if match {
				return e
			}
		}
		return nil
	}
	var paths []string
	for _, e := range Endpoints {
		for _, fill := range []string{"x", "", "{a}"} {
			p := placeholderRE.ReplaceAllString(e.Template, fill)
			paths = append(paths, p, p+"/", p+"/y", strings.TrimSuffix(p, "/"+fill), "/"+p, strings.ToUpper(p))
		}
	}
	paths = append(paths, "", "/", "//", "/v1", "/v1/btc", "/v1/btc/market-data", "/v1/btc/market-data/open-interest/x", "/v2/a/b", "/v2/a/b/c", "/v2/a/b/c/d", "v1/a/b/c")
	n := 0
	for _, p := range paths {
		for _, api := range APINames {
			if got, want := endpointFor(api, p), split(api, p); got != want {
				t.Errorf("%s %q: endpoint %v, split at every slash %v", api, p, got, want)
			} else if got != nil {
				n++
			}
			segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
			c, ok := conceptOf(api, p)
			wantOK := api == APIData && (len(segs) == 4 && segs[0] == "v1" || (len(segs) == 3 || len(segs) == 4) && segs[0] == "v2")
			if ok != wantOK || ok && c.metric != snake(segs[len(segs)-1]) {
				t.Errorf("%s %q: concept %v, %v; split at every slash: %v", api, p, c, ok, wantOK)
			}
		}
	}
	if n < len(Endpoints) {
		t.Errorf("%d paths of an endpoint, fewer than the %d endpoints", n, len(Endpoints))
	}
}
