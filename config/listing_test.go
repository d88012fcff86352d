package config

import (
	"reflect"
	"testing"
)

// Names and values are checked against discovery where it lists them; a
// path it does not list is said to be unchecked, and a parameter name that
// is a typo of one it lists for any path is caught there too.
func TestCheckListing(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/exchange-flows/netflow
      exchange: [binance, binanse, okx]
      exchnage_type: spot
      limit: 10
    - path: /v1/btc/exchange-flows/whatever
      exchnage: binance
      window: hour
      custom_flag: x
    - path: /v1/btc/market-data/open-interest
      exchange: [bybit, coinbase]
      symbol: btc_usdt
    - path: /v1/{asset}/exchange-flows/inflow
      asset: [btc, eth]
      exchange: kraken
    - path: /v2/exchange-flows/whatever
      asset: btc
      exchnage: binance
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	exchanges := []string{"all_exchange", "binance", "okx", "bybit", "kraken", "bitfinex", "gemini", "kucoin", "upbit", "bitstamp"}
	listing := Listing{
		"/v1/btc/exchange-flows/netflow":    {"window": {"day", "hour"}, "exchange": exchanges, "exchange_type": nil},
		"/v1/btc/market-data/open-interest": {"window": {"day"}, "exchange": {"binance", "bybit"}}, // symbol: catalog only
		"/v1/btc/exchange-flows/inflow":     {"window": nil, "exchange": exchanges},
		"/v1/eth/exchange-flows/inflow":     {"window": nil, "exchange": {"binance"}},
	}
	want := []string{
		`x.yml:7: data.metrics[0].exchange: discovery lists no value "binanse" of exchange for /v1/btc/exchange-flows/netflow (listed: all_exchange, binance, okx, bybit, kraken, bitfinex, gemini, kucoin and 2 more); it is asked for anyway; did you mean "binance"?`,
		`x.yml:8: data.metrics[0].exchnage_type: discovery lists no parameter exchnage_type for /v1/btc/exchange-flows/netflow (listed: exchange, exchange_type, window); it is sent anyway; did you mean "exchange_type"?`,
		`x.yml:10: data.metrics[1].path: discovery lists no endpoint /v1/btc/exchange-flows/whatever: its parameters and their values cannot be checked`,
		`x.yml:11: data.metrics[1].exchnage: discovery lists a parameter exchnage for no endpoint; did you mean "exchange"? (it is sent, and labels the series, as written)`,
		`x.yml:15: data.metrics[2].exchange: discovery lists no value "coinbase" of exchange for /v1/btc/market-data/open-interest (listed: binance, bybit); it is asked for anyway`,
		`x.yml:19: data.metrics[3].exchange: discovery lists no value "kraken" of exchange for /v1/eth/exchange-flows/inflow (listed: binance); it is asked for anyway`,
	}
	if got := cfg.CheckListing(listing); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", got, want)
	}
	// The v2 path is not checked: the listing holds nothing of v2 (its
	// discovery was not read).
	if got := cfg.CheckListing(nil); len(got) != 0 {
		t.Errorf("without a listing: %q", got)
	}
}
