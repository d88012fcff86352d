package config

import (
	"reflect"
	"testing"
)

// The collector checks the configuration against the data API's
// discovery listing: a parameter the listing lacks for a path is named
// with its file:line, entry and path.
func TestUnlistedParams(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/exchange-flows/netflow
      exchange: [binance, okx]
      exchnage_type: spot
      limit: 10
      params:
        windw: day
    - path: /v1/{asset}/exchange-flows/inflow
      asset: [btc, eth]
      side: in
    - path: /v1/btc/market-data/open-interest
      exchange: binance
      symbol: btc_usdt
    - path: /v1/btc/exchange-flows/outflow
      anything: x
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string][]string{
		"/v1/btc/exchange-flows/netflow":    {"window", "exchange", "exchange_type"},
		"/v1/btc/exchange-flows/inflow":     {"window", "exchange", "side"},
		"/v1/eth/exchange-flows/inflow":     {"window", "exchange"},
		"/v1/btc/market-data/open-interest": {"window", "exchange"}, // symbol is in the catalog
		// outflow is not listed: not checked.
	}
	want := []string{
		`x.yml:8: data.metrics[0].exchnage_type: discovery lists no parameter exchnage_type for /v1/btc/exchange-flows/netflow (listed: exchange, exchange_type, window); it is sent anyway; did you mean "exchange_type"?`,
		`x.yml:11: data.metrics[0].windw: discovery lists no parameter windw for /v1/btc/exchange-flows/netflow (listed: exchange, exchange_type, window); it is sent anyway; did you mean "window"?`,
		`x.yml:14: data.metrics[1].side: discovery lists no parameter side for /v1/eth/exchange-flows/inflow (listed: exchange, window); it is sent anyway`,
	}
	if got := cfg.UnlistedParams(listed); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", got, want)
	}
	if got := cfg.UnlistedParams(nil); len(got) != 0 {
		t.Errorf("without a listing: %q", got)
	}
}
