package expand_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// TestExpansionWarnsOfParametersDiscoveryDoesNotList: once an expansion
// has read the data API's discovery, a parameter name or value it does not
// list for a tuple's path is a warning naming the line (the upstream
// would ignore it or refuse it), logged once however often the lists are
// read again. A path it does not list is an error (TestUnlistedPath).
func TestExpansionWarnsOfParametersDiscoveryDoesNotList(t *testing.T) {
	e := newEnv(t, openInterestAll, fakeapi.Options{})
	cfg := e.parse(openInterestAll + `    - path: /v1/btc/exchange-flows/netflow
      exchange: binance
      params:
        exchnge: okx
    - path: /v1/btc/exchange-flows/inflow
      exchange: binanse
`)
	var logs testtool.LogBuffer
	x := expand.New(log.NewLogfmtLogger(&logs))
	for i := 0; i < 2; i++ {
		if _, err := x.Expand(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	if n := logs.Count("level=warn", "does not list", "test.yml:11", "exchnge", `did you mean`); n != 1 {
		t.Errorf("%d warnings about exchnge, want 1:\n%s", n, logs.String())
	}
	if n := logs.Count("level=warn", "does not list", "test.yml:13", `value \"binanse\"`, `did you mean \"binance\"`); n != 1 {
		t.Errorf("%d warnings about the value binanse, want 1:\n%s", n, logs.String())
	}
	if n := logs.Count("does not list"); n != 2 || strings.Contains(logs.String(), "no parameter exchange ") {
		t.Errorf("%d warnings, want 2; a listed parameter or value was warned about:\n%s", n, logs.String())
	}

	// No "all" anywhere: a path outside the built-in catalog has
	// discovery read for it all the same, and nothing waits for it.
	alone := e.parse(`
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/exchange-flows/netflow
      exchange: binance
      params:
        exchnge: okx
`)
	var aloneLogs testtool.LogBuffer
	before := e.Fake.CallsFor("/v1/discovery/endpoints")
	out, err := expand.New(log.NewLogfmtLogger(&aloneLogs)).Expand(context.Background(), alone)
	if err != nil || len(out.Tuples) != 1 {
		t.Fatalf("expansion: %v, %d tuples", err, len(out.Tuples))
	}
	if n := aloneLogs.Count("level=warn", "does not list", "exchnge"); n != 1 || e.Fake.CallsFor("/v1/discovery/endpoints") != before+1 {
		t.Errorf("without all: %d warnings about exchnge, %d discovery calls:\n%s", n, e.Fake.CallsFor("/v1/discovery/endpoints")-before, aloneLogs.String())
	}
	// A path of the catalog needs no discovery.
	before = e.Fake.CallsFor("/v1/discovery/endpoints")
	if _, err := expand.New(log.NewNopLogger()).Expand(context.Background(), e.parse(supplyConfig)); err != nil || e.Fake.CallsFor("/v1/discovery/endpoints") != before {
		t.Errorf("a catalog path read discovery (%v)", err)
	}
}

// all leaves out what discovery lists beside the values proper (the
// aggregate all_exchange and all_symbol, the deprecated ftx), unless the
// entry names it, and the log says what it left out.
func TestAllLeavesOutAggregatesAndDeprecatedValues(t *testing.T) {
	const yml = `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      exchange: [all, ftx]
      symbol: all
`
	e := newEnv(t, yml, fakeapi.Options{})
	v1 := listing(t, e, "/v1/discovery/endpoints", "result.data")
	exchanges := discovered(v1, "/v1/btc/market-data/open-interest", "exchange")
	symbols := discovered(v1, "/v1/btc/market-data/open-interest", "symbol")
	if !slices.Contains(symbols, "all_symbol") || len(symbols) < 2 {
		t.Fatalf("the fake's discovery lists symbols %v", symbols)
	}
	var logs testtool.LogBuffer
	cfg, err := expand.New(log.NewLogfmtLogger(&logs)).Expand(context.Background(), e.parse(yml))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, tp := range cfg.Tuples {
		got[tp.Params.Get("exchange")] = true
		got[tp.Params.Get("symbol")] = true
	}
	if want := (len(exchanges) - 1) * (len(symbols) - 1); len(cfg.Tuples) != want {
		t.Errorf("%d tuples, want %d (every exchange but all_exchange, every symbol but all_symbol)", len(cfg.Tuples), want)
	}
	if !got["ftx"] || !got["binance"] || !got["btc_usdt"] || got["all_exchange"] || got["all_symbol"] {
		t.Errorf("values asked for: %v", got)
	}
	if n := logs.Count("level=info", "param=exchange", `left_out="all_exchange (aggregate)"`); n != 1 {
		t.Errorf("%d lines saying all_exchange was left out (and ftx, named, was not):\n%s", n, logs.String())
	}
	if n := logs.Count("level=info", "param=symbol", `left_out="all_symbol (aggregate)"`); n != 1 {
		t.Errorf("%d lines saying all_symbol was left out:\n%s", n, logs.String())
	}
}

// TestAddDiscoverySharesWhatPathsListAlike: paths that list the same
// parameters share one map of them, and a path listed again (by v1 and
// v2, or twice) has the values of both without changing the others'.
func TestAddDiscoverySharesWhatPathsListAlike(t *testing.T) {
	windows := func() map[string]any { return map[string]any{"window": []any{"day", "hour"}} }
	listing := config.Listing{}
	expand.AddDiscovery(listing, []map[string]any{
		{"path": "/v1/a", "parameters": windows()},
		{"path": "/v1/b", "parameters": windows()},
		{"path": "/v1/c", "parameters": windows(), "required_parameters": []any{"window", "asset"}},
		{"path": "/v1/d", "parameters": map[string]any{"window": []any{"hour", "day"}}},
		{"path": "/v1/f", "parameters": windows()},
	})
	expand.AddDiscovery(listing, []map[string]any{
		{"path": "/v1/b", "parameters": map[string]any{"window": []any{"block"}}, "assets": []any{"btc"}},
		{"path": "/v2/e", "parameters": windows()},
	})
	want := config.Listing{
		"/v1/a": {"window": {"day", "hour"}},
		"/v1/b": {"window": {"day", "hour", "block"}, "asset": {"btc"}},
		"/v1/c": {"window": {"day", "hour"}, "asset": nil},
		"/v1/d": {"window": {"hour", "day"}},
		"/v1/f": {"window": {"day", "hour"}},
		"/v2/e": {"window": {"day", "hour"}},
	}
	if !reflect.DeepEqual(listing, want) {
		t.Fatalf("listing %v, want %v", listing, want)
	}
	same := func(a, b string) bool {
		return reflect.ValueOf(listing[a]).UnsafePointer() == reflect.ValueOf(listing[b]).UnsafePointer()
	}
	if !same("/v1/a", "/v1/f") {
		t.Error("paths that list the same parameters do not share them")
	}
	if same("/v1/a", "/v1/b") || same("/v1/a", "/v1/d") {
		t.Error("paths that list different parameters share them")
	}
}
