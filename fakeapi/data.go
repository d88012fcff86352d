package fakeapi

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Parameter values the data API accepts.
var (
	// exchanges: all_exchange, ten supported derivative exchanges and the
	// deprecated ftx.
	exchanges   = []string{"all_exchange", "binance", "bybit", "okx", "deribit", "bitmex", "gate_io", "huobi", "kraken", "bitfinex", "bitget", "ftx"}
	oiSymbols   = []string{"all_symbol", "btc_usd", "btc_usdt", "btc_busd"}
	fundSymbols = []string{"all_symbol", "ethe", "eth", "etha", "feth", "ethw", "ceth", "qeth"}
	erc20Tokens = []string{"usdt", "usdc", "link", "uni", "shib", "dai", "matic", "aave", "mkr", "wbtc", "ape", "ldo", "grt", "pepe"}
	stablecoins = []string{"usdt", "usdc", "dai", "busd", "tusd", "pyusd", "usdp", "gusd", "fdusd", "frax", "lusd", "usde", "usds", "eurc"}
	v1Assets    = []string{"btc", "eth", "xrp", "trx", "erc20", "stablecoin", "alt"}
	tokenPrice  = map[string]float64{"link": 15, "uni": 8, "shib": 0.00002, "matic": 0.5, "aave": 160, "mkr": 1500, "wbtc": 90000, "ape": 1.2, "ldo": 1.8, "grt": 0.2, "pepe": 0.00001}

	windowsGeneric = []string{"day", "hour", "10min", "min", "block"}
)

// ftxStop is when the deprecated exchange stopped updating: its last rows
// are those of 2022-11-11.
var ftxStop = time.Date(2022, 11, 12, 0, 0, 0, 0, time.UTC)

// param is a series parameter of an endpoint besides window, limit, from,
// to and format.
type param struct {
	name     string
	values   []string // allowed values; nil accepts any
	def      string   // used when the parameter is omitted
	required bool
}

// endpoint is one data API path and the rows it serves.
type endpoint struct {
	path     string
	windows  []string
	params   []param
	v2       bool
	maxLimit int
	fields   func(c *rowCtx, t time.Time, row *obj)
}

// rowCtx is what the field functions know about the series and row.
type rowCtx struct {
	key    string // identifies the series: path, window and parameters
	step   time.Duration
	block  bool
	params map[string]string
	newest bool // the row is the newest visible row of the series
}

// num is a smooth value of field in [lo, hi] rounded to dp decimals.
func (c *rowCtx) num(field string, lo, hi float64, dp int, t time.Time) float64 {
	return round(lo+(hi-lo)*wave(hash64(c.key, field), t), dp)
}

// count is an integer whose per-day range [lo, hi] is scaled to the
// length of the row's interval.
func (c *rowCtx) count(field string, lo, hi float64, t time.Time) int64 {
	scale := float64(c.step) / float64(24*time.Hour)
	return int64(math.Round((lo + (hi-lo)*wave(hash64(c.key, field), t)) * scale))
}

// addReserve adds reserve and reserve_usd at price (1 when not known):
// an asset worth more than a dollar has proportionally fewer units on
// exchanges, so reserve_usd stays plausible.
func (c *rowCtx) addReserve(row *obj, t time.Time, lo, hi, price float64, known bool) {
	if !known {
		price = 1
	}
	reserve := round(c.num("reserve", lo, hi, 2, t)/math.Max(price, 1), 4)
	row.add("reserve", reserve)
	row.add("reserve_usd", round(reserve*price, 2))
}

// daysSince is the fractional number of days from ref to t.
func daysSince(t time.Time, ref time.Time) float64 {
	return t.Sub(ref).Hours() / 24
}

var (
	exchangeParam = param{name: "exchange", values: exchanges, def: "all_exchange"}
	tokenParam    = param{name: "token", values: erc20Tokens, def: "usdt"}
)

// endpoints are the explicitly modelled paths, v1 then v2.
var endpoints = []*endpoint{
	{path: "/v1/btc/market-data/open-interest", windows: []string{"day", "hour", "min"}, maxLimit: 100000,
		params: []param{exchangeParam, {name: "symbol", values: oiSymbols, def: "all_symbol"}},
		fields: func(c *rowCtx, t time.Time, row *obj) {
			lo, hi := 1e9, 5e9
			if c.params["exchange"] == "all_exchange" {
				lo, hi = 1.5e10, 4e10
			}
			var v any = c.num("open_interest", lo, hi, 2, t)
			if c.params["exchange"] == "bybit" && c.newest {
				v = nil
			}
			row.add("open_interest", v)
		}},
	{path: "/v1/erc20/exchange-flows/addresses-count", windows: []string{"day", "hour", "block"}, maxLimit: 100000,
		params: []param{tokenParam, exchangeParam},
		fields: func(c *rowCtx, t time.Time, row *obj) {
			row.add("addresses_count_inflow", c.count("addresses_count_inflow", 200, 6000, t))
			row.add("addresses_count_outflow", c.count("addresses_count_outflow", 150, 5000, t))
		}},
	{path: "/v1/eth/fund-data/digital-asset-holdings", windows: []string{"day"}, maxLimit: 100000,
		params: []param{{name: "symbol", values: fundSymbols, def: "all_symbol"}},
		fields: func(c *rowCtx, t time.Time, row *obj) {
			row.add("digital_asset_holdings", c.num("digital_asset_holdings", 1e5, 3e6, 4, t))
		}},
	{path: "/v1/eth/network-data/addresses-count", windows: []string{"day", "hour", "10min", "block"}, maxLimit: 100000,
		fields: func(c *rowCtx, t time.Time, row *obj) {
			row.add("addresses_count_active", c.count("addresses_count_active", 350000, 750000, t))
			row.add("addresses_count_sender", c.count("addresses_count_sender", 180000, 400000, t))
			row.add("addresses_count_receiver", c.count("addresses_count_receiver", 250000, 520000, t))
		}},
	{path: "/v1/erc20/exchange-flows/reserve", windows: []string{"day", "hour", "block"}, maxLimit: 100000,
		params: []param{tokenParam, exchangeParam},
		fields: func(c *rowCtx, t time.Time, row *obj) {
			price, ok := tokenPrice[c.params["token"]]
			c.addReserve(row, t, 1e8, 1e10, price, ok)
		}},
	{path: "/v1/xrp/market-data/capitalization", windows: []string{"day", "hour"}, maxLimit: 100000,
		fields: func(c *rowCtx, t time.Time, row *obj) {
			realized := c.num("realized_cap", 1.5e10, 6e10, 2, t)
			average := c.num("average_cap", 1e10, 4e10, 2, t)
			row.add("market_cap", c.num("market_cap", 2e10, 1.5e11, 2, t))
			row.add("realized_cap", realized)
			row.add("average_cap", average)
			row.add("delta_cap", round(realized-average, 2))
			row.add("thermo_cap", nil)
		}},
	{path: "/v1/trx/defi/launchpad-tokens", windows: []string{"day"}, maxLimit: 100000,
		fields: func(c *rowCtx, t time.Time, row *obj) {
			start := time.Date(2024, 8, 1, 0, 0, 0, 0, time.UTC)
			row.add("token_create_event_count", c.count("token_create_event_count", 800, 6000, t))
			row.add("cumulative_count_create_events", int64(math.Max(0, math.Round(3400*daysSince(t.Add(c.step), start)))))
		}},
	{path: "/v1/btc/network-data/supply", windows: []string{"day", "hour", "block"}, maxLimit: 100000,
		fields: func(c *rowCtx, t time.Time, row *obj) {
			ref := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
			perDay := 450.0
			row.add("supply_total", round(19_900_000+perDay*daysSince(t.Add(c.step), ref), 4))
			newCoins := 3.125
			if !c.block {
				newCoins = round(perDay*c.step.Hours()/24*(0.9+0.2*wave(hash64(c.key, "supply_new"), t)), 4)
			}
			row.add("supply_new", newCoins)
		}},
	{path: "/v1/btc/network-indicator/pnl-utxo", windows: []string{"day"}, maxLimit: 100000,
		fields: func(c *rowCtx, t time.Time, row *obj) {
			profit := c.num("profit_percent", 30, 95, 4, t)
			row.add("profit_amount", c.num("profit_amount", 2000, 60000, 4, t))
			row.add("loss_amount", c.num("loss_amount", 500, 30000, 4, t))
			row.add("profit_percent", profit)
			var loss any = round(100-profit, 4)
			if c.newest {
				loss = nil
			}
			row.add("loss_percent", loss)
		}},
	{path: "/v1/xrp/network-data/velocity", windows: []string{"day"}, maxLimit: 100000,
		fields: func(c *rowCtx, t time.Time, row *obj) {
			row.add("velocity", c.num("velocity", 0.02, 0.6, 6, t))
		}},
	{path: "/v2/network/events-count", windows: []string{"block", "10min", "hour", "day"}, maxLimit: 10000, v2: true,
		params: []param{{name: "asset", values: stablecoins, required: true}, {name: "chain", values: []string{"ethereum"}}},
		fields: func(c *rowCtx, t time.Time, row *obj) {
			row.add("events_transfer_count", c.count("events_transfer_count", 80000, 400000, t))
			row.add("events_mint_count", c.count("events_mint_count", 5, 60, t))
			row.add("events_issue_count", c.count("events_issue_count", 5, 60, t))
			row.add("events_burn_count", c.count("events_burn_count", 3, 40, t))
			row.add("events_redeem_count", c.count("events_redeem_count", 3, 40, t))
		}},
	{path: "/v2/indicator/valuation/mvrv-z-score", windows: []string{"day"}, maxLimit: 10000, v2: true,
		params: []param{{name: "asset", values: []string{"btc", "eth"}, required: true}},
		fields: func(c *rowCtx, t time.Time, row *obj) {
			row.add("mvrv_ratio_zscore", c.num("mvrv_ratio_zscore", -1, 7, 4, t))
		}},
}

// flowExchanges are the exchanges of the exchange-flow paths outside the
// table: the derivative exchanges and the spot ones (coinbase_advanced,
// bitstamp, ...).
var flowExchanges = append(append([]string(nil), exchanges...), "coinbase_advanced", "bitstamp", "gemini", "kucoin", "upbit")

// assetPrice is a plausible USD price of a v1 path's asset, for the _usd
// fields of the paths outside the table.
var assetPrice = map[string]float64{"btc": 90000, "eth": 3000, "xrp": 0.6, "trx": 0.25}

// genericFields returns the row fields of a v1 path outside the table,
// named the way the data API names them: reserve and reserve_usd for an
// exchange reserve, <flow>_total for a flow, value for anything else.
func genericFields(asset, metric string) func(c *rowCtx, t time.Time, row *obj) {
	switch metric {
	case "reserve":
		price, ok := assetPrice[asset]
		return func(c *rowCtx, t time.Time, row *obj) { c.addReserve(row, t, 1e9, 2e10, price, ok) }
	case "netflow", "inflow", "outflow":
		lo, hi := 1000.0, 50000.0
		if metric == "netflow" {
			lo, hi = -5000, 5000
		}
		field := metric + "_total"
		return func(c *rowCtx, t time.Time, row *obj) { row.add(field, c.num(field, lo, hi, 4, t)) }
	}
	return func(c *rowCtx, t time.Time, row *obj) { row.add("value", c.num("value", 0, 1e6, 4, t)) }
}

// genericPaths are the v1 paths outside the table that the fake serves:
// the exchange flows and reserves the README, examples/ and the tests
// use. The fake serves what its discovery lists, the table and these,
// and answers any other path with 404, as the real API does, so that a
// mistyped path fails against the fake where it would fail for real.
var genericPaths = []string{
	"/v1/btc/exchange-flows/netflow", "/v1/btc/exchange-flows/inflow", "/v1/btc/exchange-flows/outflow",
	"/v1/btc/exchange-flows/reserve", "/v1/eth/exchange-flows/reserve", "/v1/eth/exchange-flows/netflow",
	"/v1/eth/exchange-flows/inflow", "/v1/eth/exchange-flows/outflow",
}

// smallByPath holds the endpoints of CatalogSmall: genericPaths' and the
// table's.
var smallByPath = func() map[string]*endpoint {
	m := make(map[string]*endpoint, len(endpoints)+len(genericPaths))
	for _, p := range genericPaths {
		m[p] = genericOf(p)
	}
	for _, ep := range endpoints {
		m[ep.path] = ep
	}
	return m
}()

// genericOf is the endpoint of a /v1/{asset}/{category}/{metric} path of
// a known asset outside the table (genericPaths, Options.ExtraPaths), with
// the fields of genericFields; exchange and token are checked when given.
// nil for any other path.
func genericOf(path string) *endpoint {
	segs := strings.Split(path, "/")
	if len(segs) != 5 || segs[0] != "" || segs[1] != "v1" || !slices.Contains(v1Assets, segs[2]) || segs[3] == "" || segs[4] == "" {
		return nil
	}
	asset, category := segs[2], segs[3]
	ex := exchanges
	if category == "exchange-flows" {
		ex = flowExchanges
	}
	params := []param{{name: "exchange", values: ex}}
	switch asset {
	case "erc20":
		params = append(params, param{name: "token", values: erc20Tokens})
	case "stablecoin":
		params = append(params, param{name: "token", values: stablecoins})
	}
	return &endpoint{path: path, windows: windowsGeneric, maxLimit: 100000, params: params, fields: genericFields(asset, segs[4])}
}

// lookupEndpoint finds the endpoint serving path and the asset named by a
// v1 path; ok is false for a path the fake does not serve.
func (s *Server) lookupEndpoint(path string) (ep *endpoint, pathAsset string, ok bool) {
	ep = smallByPath[path]
	if ep == nil && s.catalogNow() == CatalogFull {
		ep = fullByPath[path]
	}
	if ep == nil {
		ep = s.extra[path]
	}
	if ep == nil {
		return nil, "", false
	}
	if segs := strings.Split(path, "/"); len(segs) == 5 && segs[1] == "v1" {
		pathAsset = segs[2]
	}
	return ep, pathAsset, true
}
