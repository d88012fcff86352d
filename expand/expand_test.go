package expand_test

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// listing asks the fake directly for a listing endpoint's rows.
func listing(t *testing.T, e *env, path, rows string) []map[string]any {
	t.Helper()
	var root map[string]any
	testtool.FetchJSON(t, e.Srv.URL+path, &root)
	node, _ := decode.Lookup(root, rows)
	var out []map[string]any
	for _, it := range node.([]any) {
		out = append(out, it.(map[string]any))
	}
	e.Fake.ResetCalls()
	return out
}

// discovered is what the fake's discovery lists for param on one path,
// read without the exporter's code.
func discovered(items []map[string]any, path, param string) []string {
	var out []string
	for _, it := range items {
		if it["path"] == path {
			for _, v := range it["parameters"].(map[string]any)[param].([]any) {
				out = append(out, v.(string))
			}
		}
	}
	return out
}

func tupleKeys(cfg *config.Config) map[string]*config.Tuple {
	out := map[string]*config.Tuple{}
	for _, tp := range cfg.Tuples {
		out[tp.Key] = tp
	}
	return out
}

// openInterestAll is open interest on every exchange the v1 discovery
// lists.
const openInterestAll = testtool.DataSection + `    - path: /v1/btc/market-data/open-interest
      exchange: all
`

const discoveryConfig = openInterestAll + `    - path: /v1/btc/market-data/open-interest
      exchange: binance
      window: [day, hour]
    - path: /v1/erc20/exchange-flows/reserve
      token: all
      exchange: binance
    - path: /v1/{asset}/network-data/supply
      asset: all
    - path: /v2/network/events-count
      asset: all
      chain: ethereum
`

func TestExpandThroughDataDiscovery(t *testing.T) {
	e := newEnv(t, discoveryConfig, fakeapi.Options{})
	v1 := listing(t, e, "/v1/discovery/endpoints", "result.data")
	v2 := listing(t, e, "/v2/discovery/endpoints", "result.data")
	exchanges := discovered(v1, "/v1/btc/market-data/open-interest", "exchange")
	tokens := discovered(v1, "/v1/erc20/exchange-flows/reserve", "token")
	stablecoins := discovered(v2, "/v2/network/events-count", "asset")
	var supplyAssets []string
	for _, it := range v1 {
		if p := it["path"].(string); strings.HasSuffix(p, "/network-data/supply") {
			supplyAssets = append(supplyAssets, strings.Split(p, "/")[2])
		}
	}
	if len(exchanges) < 3 || len(tokens) < 3 || len(stablecoins) < 3 || len(supplyAssets) == 0 {
		t.Fatalf("the fake's discovery lists too little: %v %v %v %v", exchanges, tokens, stablecoins, supplyAssets)
	}
	// all leaves out the aggregate and the deprecated exchange.
	if !slices.Contains(exchanges, "all_exchange") || !slices.Contains(exchanges, "ftx") {
		t.Fatalf("the fake's discovery no longer lists all_exchange and ftx: %v", exchanges)
	}
	exchanges = slices.DeleteFunc(exchanges, func(ex string) bool { return ex == "all_exchange" || ex == "ftx" })

	logs := &testtool.LogBuffer{}
	x := expand.New(log.NewLogfmtLogger(logs), expand.Options{Now: e.Clock.Now})
	cfg, err := x.Expand(context.Background(), e.parse(discoveryConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got := discoveryCalls(e); got != 2 {
		t.Errorf("%d discovery calls, want one per version", got)
	}
	if got := e.Fake.CallsFor(plan.Path); got != 1 {
		t.Errorf("%d reads of the key's plan, want 1", got)
	}
	// exchange: all and exchange: binance meet on binance/day: kept once.
	want := len(exchanges) + 1 + len(tokens) + len(supplyAssets) + len(stablecoins)
	if len(cfg.Tuples) != want {
		t.Errorf("%d tuples, want %d", len(cfg.Tuples), want)
	}
	byKey := tupleKeys(cfg)
	for _, ex := range exchanges {
		tp := byKey["data /v1/btc/market-data/open-interest?exchange="+ex+"&window=day"]
		if tp == nil || tp.Entry.Key != "data.metrics[0]" {
			t.Errorf("exchange %s: tuple %v", ex, tp)
		}
	}
	for _, tok := range tokens {
		if byKey["data /v1/erc20/exchange-flows/reserve?exchange=binance&token="+tok+"&window=day"] == nil {
			t.Errorf("no reserve tuple for token %s", tok)
		}
	}
	for _, a := range stablecoins {
		tp := byKey["data /v2/network/events-count?asset="+a+"&chain=ethereum&window=day"]
		if tp == nil || !reflect.DeepEqual(tp.LabelValues[:2], []string{a, "day"}) {
			t.Errorf("events-count %s: %v", a, tp)
		}
	}
	for _, a := range supplyAssets {
		if byKey["data /v1/"+a+"/network-data/supply?window=day"] == nil {
			t.Errorf("no supply tuple for %s", a)
		}
	}
	if n := logs.Count("level=info", "param=exchange", "listed=all", "count="+strconv.Itoa(len(exchanges)),
		"name one to have it", `left_out="all_exchange (aggregate), ftx (deprecated)"`); n != 1 {
		t.Errorf("%d info lines with the exchange count and what all leaves out:\n%s", n, logs.String())
	}
	for _, ex := range []string{"all_exchange", "ftx"} {
		if tp := byKey["data /v1/btc/market-data/open-interest?exchange="+ex+"&window=day"]; tp != nil {
			t.Errorf("exchange: all asks for %s", ex)
		}
	}
	if n := logs.Count("level=info", "api=data", "tuples="+strconv.Itoa(want)); n != 1 {
		t.Errorf("%d info lines with the tuple count", n)
	}

	// Reused within the hour; fetched again after; the last good answer
	// stands in when discovery fails.
	if _, err := x.Expand(context.Background(), e.parse(discoveryConfig)); err != nil || discoveryCalls(e) != 2 {
		t.Errorf("second expansion within the hour: %v, %d calls", err, discoveryCalls(e))
	}
	goodAt := x.State()["data"].LastSuccess
	if st := x.State()["data"]; !st.OK || st.LastError != "" || st.Waiting != 0 || !goodAt.Equal(e.Clock.Now()) {
		t.Errorf("state after good expansions: %+v", st)
	}
	e.Clock.Add(61 * time.Minute)
	e.Fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Unauthorized})
	again, err := x.Expand(context.Background(), e.parse(discoveryConfig))
	if err != nil || len(again.Tuples) != want {
		t.Errorf("with discovery failing after a good answer: %v (%d tuples)", err, len(again.Tuples))
	}
	// Both lists are asked for at once: the second may be on its way
	// when the first is refused and the key paused.
	if n := discoveryCalls(e); n < 3 || n > 4 || logs.Count("level=warn", "last good answer") != 2 {
		t.Errorf("%d calls, %d warnings: discovery must be tried, then its last answer used", n, logs.Count("level=warn", "last good answer"))
	}
	// Served from the last good lists, but failing: the retry goes on.
	if st := x.State()["data"]; st.OK || !strings.Contains(st.LastError, "unauthorized (HTTP 401)") || st.Waiting != 0 || !st.LastSuccess.Equal(goodAt) {
		t.Errorf("state with the last good lists standing in: %+v", st)
	}

	// Nothing cached: the entries that need discovery wait, the rest is
	// served; an upstream failure is no configuration error.
	fresh := expand.New(log.NewNopLogger())
	partial, err := fresh.Expand(context.Background(), e.parse(discoveryConfig))
	if err != nil {
		t.Fatalf("discovery failing with nothing cached: %v", err)
	}
	if got := tupleKeys(partial); len(got) != 2 || got["data /v1/btc/market-data/open-interest?exchange=binance&window=hour"] == nil {
		t.Errorf("served while discovery fails: %v", got)
	}
	// Both listings are asked for at once: whichever is refused first
	// pauses the key, and the other then reports the pause it met.
	if st := fresh.State()["data"]; st.OK || st.Waiting != 4 || !st.LastSuccess.IsZero() ||
		!strings.Contains(st.LastError, "/discovery/endpoints: unauthorized (HTTP 401)") {
		t.Errorf("state with nothing cached: %+v", st)
	}
}

func TestExpandErrors(t *testing.T) {
	e := newEnv(t, "data:\n  url: \"{{URL}}\"\n  token_env: T\n  metrics:\n    - path: /v1/btc/network-data/supply\n", fakeapi.Options{})
	exchanges := discovered(listing(t, e, "/v1/discovery/endpoints", "result.data"), "/v1/btc/market-data/open-interest", "exchange")
	exchanges = slices.DeleteFunc(exchanges, func(ex string) bool { return config.LeftOutOfAll(config.APIData, "exchange", ex) != "" })
	for _, tc := range []struct{ yml, want string }{
		{"data:\n  url: \"{{URL}}\"\n  token_env: T\n  max_tuples: 5\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      exchange: all\n",
			"test.yml:1: data.max_tuples: the metrics list expands to " + strconv.Itoa(len(exchanges)) + " series, more than max_tuples (5)"},
		{"data:\n  url: \"{{URL}}\"\n  token_env: T\n  metrics:\n    - path: /v1/btc/exchange-flows/netflow\n      token: all\n",
			`test.yml:6: data.metrics[0].token: cannot expand "all": /v1/discovery/endpoints lists no token values for /v1/btc/exchange-flows/netflow`},
		{"data:\n  url: \"{{URL}}\"\n  token_env: T\n  metrics:\n    - path: /v1/btc/exchange-flows/whatever\n      exchange: all\n",
			`test.yml:6: data.metrics[0].exchange: cannot expand "all": /v1/discovery/endpoints lists no endpoint /v1/btc/exchange-flows/whatever`},
		{"indicator:\n  url: \"{{URL}}/indicator\"\n  token_env: T\n  metrics:\n    - path: /api/equities/{equity}/pbr-band\n      equity: KRX:005930\n      order: all\n",
			`test.yml:7: indicator.metrics[0].order: "all" cannot be expanded: the indicator API lists values for equity only`},
		{"consensus:\n  url: \"{{URL}}/consensus\"\n  metrics:\n    - path: /consensus\n      asset: [btc, dogecoin]\n",
			`test.yml:5: consensus.metrics[0].asset: "dogecoin" is not an asset of /assets (known: bitcoin, ethereum, solana, ripple)`},
	} {
		_, err := expand.New(log.NewNopLogger()).Expand(context.Background(), e.parse(tc.yml))
		if err == nil || err.Error() != tc.want {
			t.Errorf("error:\n got %v\nwant %s", err, tc.want)
		}
	}
}

// equity: all through the public /api/equities; consensus assets by name
// or ticker become one tuple labelled with the canonical key.
func TestExpandIndicatorAndConsensus(t *testing.T) {
	yml := "\n" + allEquities + `consensus:
  url: "{{URL}}/consensus"
  metrics:
    - path: /consensus
      asset: [Bitcoin, xbt, ETH]
    - path: /analyst-views
      asset: all
`
	e := newEnv(t, yml, fakeapi.Options{IndicatorToken: testToken})
	var equities, assets []string
	for _, r := range listing(t, e, "/indicator/api/equities", "data") {
		equities = append(equities, r["id"].(string))
	}
	for _, r := range listing(t, e, "/consensus/assets", "data") {
		assets = append(assets, r["key"].(string))
	}
	cfg, err := expand.New(log.NewNopLogger(), expand.Options{Now: e.Clock.Now}).Expand(context.Background(), e.parse(yml))
	if err != nil {
		t.Fatal(err)
	}
	if e.Fake.Calls("indicator") != 1 || e.Fake.Calls("consensus") != 1 {
		t.Errorf("calls: indicator %d, consensus %d; want one listing each", e.Fake.Calls("indicator"), e.Fake.Calls("consensus"))
	}
	byKey := tupleKeys(cfg)
	for _, eq := range equities {
		if tp := byKey["indicator /api/equities/"+eq+"/pbr-band?"]; tp == nil || !tp.Keyed {
			t.Errorf("equity %s: %v", eq, tp)
		}
	}
	if got, want := len(cfg.APIs[config.APIConsensus].Tuples), 2+len(assets); got != want {
		t.Errorf("%d consensus tuples, want %d (Bitcoin and xbt are one)", got, want)
	}
	// Sent as the key, labelled with the ticker the data API uses.
	for key, ticker := range map[string]string{"bitcoin": "btc", "ethereum": "eth"} {
		tp := byKey["consensus /consensus?asset="+key]
		if tp == nil {
			t.Errorf("no consensus tuple for %s", key)
		} else if tp.Query().Get("asset") != key || !reflect.DeepEqual(tp.LabelValues, []string{ticker}) || tp.TupleLabelValues[2] != ticker {
			t.Errorf("consensus tuple for %s: query %v, labels %v, tuple labels %v", key, tp.Query(), tp.LabelValues, tp.TupleLabelValues)
		}
	}
	for _, a := range assets {
		if byKey["consensus /analyst-views?asset="+a] == nil {
			t.Errorf("no analyst-views tuple for %s", a)
		}
	}

	e.serve(cfg)
	body := e.scrape("10")
	if seriesValue(body, "onchain_consensus_score", "asset", "btc") == "" || seriesValue(body, "onchain_consensus_score", "asset", "eth") == "" ||
		strings.Contains(body, `asset="Bitcoin"`) || strings.Contains(body, `asset="bitcoin"`) {
		t.Errorf("consensus series not labelled with the ticker:\n%s", strings.Join(lines(body, "onchain_consensus_score"), "\n"))
	}
	if n := e.Fake.CallsFor("/consensus/consensus"); n != 2 || seriesValue(body, "onchain_exporter_query_success", "endpoint", "/consensus", "asset", "btc") != "1" {
		t.Errorf("%d /consensus calls; the key must be what is sent and answered", n)
	}
	if n := len(lines(body, "onchain_equity_close_price")); n != len(equities) {
		t.Errorf("%d close price series, want %d", n, len(equities))
	}
}

// Nothing to resolve: the configuration comes back with the same tuples,
// with no call but the read of the data API key's plan, which gives the
// rate_limit and daily_budget the file does not set.
func TestExpandWithoutListsMakesNoCall(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	cfg := e.parse(supplyConfig)
	got, err := expand.New(log.NewNopLogger()).Expand(context.Background(), cfg)
	plans := e.Fake.CallsFor(plan.Path)
	if err != nil || !slices.Equal(got.Tuples, cfg.Tuples) || e.Fake.Calls("data") != plans || plans != 1 {
		t.Fatalf("expanded = same tuples %v, err %v, %d calls, %d of them the plan's", slices.Equal(got.Tuples, cfg.Tuples), err, e.Fake.Calls("data"), plans)
	}
	if a := got.APIs[config.APIData]; a.LimitsFromPlan == "" || a.RateLimit <= 0 || a.DailyBudget <= 0 {
		t.Errorf("limits not taken from the plan: %q rate_limit %v daily_budget %d", a.LimitsFromPlan, a.RateLimit, a.DailyBudget)
	}
	if cfg.APIs[config.APIData].RateLimit != 0 {
		t.Error("the configuration loaded was changed in place")
	}
}

// discoveryCalls counts the calls of the data API's discovery endpoints.
func discoveryCalls(e *env) int64 {
	return e.Fake.CallsFor("/v1/discovery/endpoints") + e.Fake.CallsFor("/v2/discovery/endpoints")
}

// TestStartKeepsServingWhatTheListsDoNotBlame: at start, a list that shows
// the file wrong for one API (discovery lists more exchanges than
// max_tuples lets "all" take, /assets does not know an asset) keeps that
// API's expanded entries waiting; its other entries and the other APIs go
// in, and nothing fails.
func TestStartKeepsServingWhatTheListsDoNotBlame(t *testing.T) {
	e := newEnv(t, "data:\n  url: \"{{URL}}\"\n  token_env: T\n  metrics:\n    - path: /v1/btc/network-data/supply\n", fakeapi.Options{})
	yml := `
data:
  url: "{{URL}}"
  token_env: T
  max_tuples: 3
  metrics:
    - path: /v1/btc/network-data/supply
    - path: /v1/btc/market-data/open-interest
      exchange: all
consensus:
  url: "{{URL}}/consensus"
  metrics:
    - path: /consensus
      asset: [btc, dogecoin]
indicator:
  url: "{{URL}}/indicator"
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: KRX:005930
`
	if _, err := expand.New(log.NewNopLogger()).Expand(context.Background(), e.parse(yml)); err == nil {
		t.Fatal("a reload of this file would be refused; the test needs lists that show it wrong")
	}
	x := expand.New(log.NewNopLogger())
	cfg, err := x.Start(context.Background(), e.parse(yml))
	if err != nil {
		t.Fatalf("start failed on the upstream's lists: %v", err)
	}
	got := tupleKeys(cfg)
	if got["data /v1/btc/network-data/supply?window=day"] == nil || got["indicator /api/equities/KRX:005930/pbr-band?"] == nil {
		t.Errorf("entries that need no list are not served: %v", got)
	}
	for k := range got {
		if strings.Contains(k, "open-interest") || strings.HasPrefix(k, "consensus") {
			t.Errorf("an entry the lists blame went in: %s", k)
		}
	}
	if st := x.State(); st["data"].Waiting == 0 || st["consensus"].Waiting == 0 {
		t.Errorf("the blamed entries are not waiting: %+v", st)
	}
}
