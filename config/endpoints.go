package config

import (
	"slices"
	"strings"
)

// Endpoint is what is known of one upstream endpoint: the windows and
// parameters it accepts and a catalog of its row fields with good metric
// names. Paths not listed here still work; they are checked by scheme only,
// and their numeric fields take the names the catalog gives the same
// concept on another asset, or derived ones (naming.go).
type Endpoint struct {
	API string
	// Template is the path, with {name} for a segment taken from a
	// parameter.
	Template string
	// Windows allowed; nil means the endpoint takes no window.
	Windows []string
	// Params are the request parameters accepted besides window and limit.
	Params []string
	// Required parameters.
	Required []string
	// MaxLimit bounds the limit parameter; 0 means limit is not accepted.
	MaxLimit int
	// Keyed endpoints need the API's credential. KeyedWith lists the
	// parameters whose presence makes an otherwise key-free call keyed
	// (days on the Analyst Consensus /consensus).
	Keyed     bool
	KeyedWith []string
	// Defaults are query parameters sent unless the entry sets them: the
	// upstream's own default is unknown or would defeat "latest row".
	Defaults map[string]string
	// ValuesListed says that only the fields of the catalog are values:
	// the payload carries words (a stance, a handle) beside the numbers,
	// and those are not bad data.
	ValuesListed bool
	// Rows, TimeKey and LabelFields describe the payload (dotted paths).
	Rows        string
	TimeKey     string
	LabelFields []string
	Fields      map[string]*Field
}

var (
	windowsDayHourMin   = []string{"day", "hour", "min"}
	windowsDayHourBlock = []string{"day", "hour", "block"}
	windowsDay          = []string{"day"}
	windowsDayHour      = []string{"day", "hour"}
	windowsEventsCount  = []string{"block", "10min", "hour", "day"}
)

// HELP of families fed by several fields: whichever field a refresh meets
// first creates the family, so each carries the whole text.
const (
	helpStablecoinEvents  = "Stablecoin supply events in the window, by kind."
	helpConsensusAnalysts = "Analysts whose stance on the asset is bullish, bearish or neutral on the latest day."
)

func gauge(name, help string) *Field { return gaugeIn("", name, help) }

// gaugeIn is a gauge of a unit, which its name ends in.
func gaugeIn(unit, name, help string) *Field {
	return &Field{Name: name, Help: help, Type: "gauge", Scale: 1, Unit: unit}
}

func counter(name, help string) *Field {
	return &Field{Name: name, Help: help, Type: "counter", Scale: 1}
}

func ratioFromPercent(name, help string) *Field {
	return &Field{Name: name, Help: help, Type: "gauge", Scale: 0.01, Unit: unitRatio}
}

func withLabels(f *Field, kv ...string) *Field {
	f.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Labels[kv[i]] = kv[i+1]
	}
	return f
}

// Endpoints is the built-in catalog: every endpoint of the specification's
// tables, events-count and mvrv-z-score of v2, and the Indicator and Analyst
// Consensus endpoints with the payload shapes of the project's fake upstream.
// The Indicator catalog paths (/api, /api/equities, /api/indicators) carry
// no values and are not listed: they are public, and read by expansion.
var Endpoints = []*Endpoint{
	{API: APIData, Template: "/v1/btc/market-data/open-interest", Windows: windowsDayHourMin, Params: []string{"exchange", "symbol"}, MaxLimit: 100000, Fields: map[string]*Field{
		"open_interest": gaugeIn(unitUSD, "open_interest_usd", "Open interest of perpetual and futures contracts (on all exchanges, or the exchange label's), in USD."),
	}},
	{API: APIData, Template: "/v1/erc20/exchange-flows/addresses-count", Windows: windowsDayHourBlock, Params: []string{"token", "exchange"}, MaxLimit: 100000, Fields: map[string]*Field{
		"addresses_count_inflow":  gauge("exchange_inflow_addresses", "Addresses that sent coins to exchange wallets in the window."),
		"addresses_count_outflow": gauge("exchange_outflow_addresses", "Addresses that received coins from exchange wallets in the window."),
	}},
	{API: APIData, Template: "/v1/eth/fund-data/digital-asset-holdings", Windows: windowsDay, Params: []string{"symbol"}, MaxLimit: 100000, Fields: map[string]*Field{
		"digital_asset_holdings": gauge("fund_digital_asset_holdings", "Coins a fund (symbol label) holds, in units of the asset."),
	}},
	{API: APIData, Template: "/v1/eth/network-data/addresses-count", Windows: []string{"day", "hour", "10min", "block"}, MaxLimit: 100000, Fields: map[string]*Field{
		"addresses_count_active":   gauge("active_addresses", "Unique addresses active as sender or receiver in the window."),
		"addresses_count_sender":   gauge("sender_addresses", "Unique addresses active as sender in the window."),
		"addresses_count_receiver": gauge("receiver_addresses", "Unique addresses active as receiver in the window."),
	}},
	{API: APIData, Template: "/v1/erc20/exchange-flows/reserve", Windows: windowsDayHourBlock, Params: []string{"token", "exchange"}, MaxLimit: 100000, Fields: map[string]*Field{
		"reserve":     gauge("exchange_reserve", "Coins held in exchange wallets (a balance), "+inAsset+"."),
		"reserve_usd": gaugeIn(unitUSD, "exchange_reserve_usd", "Value of the coins held in exchange wallets, in USD."),
	}},
	{API: APIData, Template: "/v1/xrp/market-data/capitalization", Windows: windowsDayHour, MaxLimit: 100000, Fields: map[string]*Field{
		"market_cap":   gaugeIn(unitUSD, "market_cap_usd", "Market capitalization: the supply times the price, in USD."),
		"realized_cap": gaugeIn(unitUSD, "realized_cap_usd", "Realized capitalization: each coin valued at the price it last moved at, in USD."),
		"average_cap":  gaugeIn(unitUSD, "average_cap_usd", "Average capitalization: the market capitalization averaged over the asset's history, in USD."),
		"delta_cap":    gaugeIn(unitUSD, "delta_cap_usd", "Delta capitalization: realized minus average capitalization, in USD."),
		"thermo_cap":   gaugeIn(unitUSD, "thermo_cap_usd", "Thermo capitalization: the value of every coin issued at the price of its issue, in USD."),
	}},
	{API: APIData, Template: "/v1/trx/defi/launchpad-tokens", Windows: windowsDay, MaxLimit: 100000, Fields: map[string]*Field{
		"token_create_event_count":       gauge("launchpad_new_tokens", "Tokens created on the launchpad in the window."),
		"cumulative_count_create_events": counter("launchpad_token_create_events_total", "Token creation events on the launchpad since it started."),
	}},
	{API: APIData, Template: "/v1/btc/network-data/supply", Windows: windowsDayHourBlock, MaxLimit: 100000, Fields: map[string]*Field{
		"supply_total": gauge("supply", "Total supply of the asset (on BTC every coin issued by coinbase rewards), in units of the asset."),
		"supply_new":   gauge("supply_new", "Coins issued in the window, in units of the asset."),
	}},
	{API: APIData, Template: "/v1/btc/network-indicator/pnl-utxo", Windows: windowsDay, MaxLimit: 100000, Fields: map[string]*Field{
		"profit_amount":  gauge("utxo_profit_amount", "UTxOs spent in the window at a price above the one they were created at."),
		"loss_amount":    gauge("utxo_loss_amount", "UTxOs spent in the window at a price below the one they were created at."),
		"profit_percent": ratioFromPercent("utxo_profit_ratio", "Share of the UTxOs spent in the window that were spent at a profit, 0 to 1."),
		"loss_percent":   ratioFromPercent("utxo_loss_ratio", "Share of the UTxOs spent in the window that were spent at a loss, 0 to 1."),
	}},
	{API: APIData, Template: "/v1/xrp/network-data/velocity", Windows: windowsDay, MaxLimit: 100000, Fields: map[string]*Field{
		"velocity": gauge("velocity_ratio", "On-chain transaction volume over market capitalization (no unit; the inverse of NVT)."),
	}},
	{API: APIData, Template: "/v2/network/events-count", Windows: windowsEventsCount, Params: []string{"asset", "chain"}, Required: []string{"asset"}, MaxLimit: 10000, Fields: map[string]*Field{
		"events_transfer_count": withLabels(gauge("stablecoin_events", helpStablecoinEvents), "kind", "transfer"),
		"events_mint_count":     withLabels(gauge("stablecoin_events", helpStablecoinEvents), "kind", "mint"),
		"events_issue_count":    withLabels(gauge("stablecoin_events", helpStablecoinEvents), "kind", "issue"),
		"events_burn_count":     withLabels(gauge("stablecoin_events", helpStablecoinEvents), "kind", "burn"),
		"events_redeem_count":   withLabels(gauge("stablecoin_events", helpStablecoinEvents), "kind", "redeem"),
	}},
	{API: APIData, Template: "/v2/indicator/valuation/mvrv-z-score", Windows: windowsDay, Params: []string{"asset"}, Required: []string{"asset"}, MaxLimit: 10000, Fields: map[string]*Field{
		"mvrv_ratio_zscore": gauge("mvrv_z_score", "MVRV Z-score: market minus realized capitalization, over the standard deviation of market capitalization (no unit)."),
	}},

	// Indicator API. The specification does not show the payload: rows
	// under "data", newest first, a "date" and the band as an object of
	// multiples, as the project's fake serves it; YAML overrides each.
	// Labels equity, exchange_code and security_code come from the path.
	{API: APIIndicator, Template: "/api/equities/{equity}/pbr-band", Params: []string{"order"}, MaxLimit: 1000, Keyed: true,
		Defaults: map[string]string{"order": "desc"}, ValuesListed: true, Rows: "data", TimeKey: "date", Fields: map[string]*Field{
			"close": gauge("equity_close_price", "Close price of the equity on its latest trading day with a value, in the listing currency."),
			"bps":   gauge("equity_book_value_per_share", "Book value per share (BPS) of the equity, in the listing currency."),
			"pbr":   gauge("equity_pbr_ratio", "Price-to-book ratio of the equity: close price over book value per share (no unit)."),
			"bands": {Name: "equity_pbr_band_price", Help: "Price of the equity at a fixed price-to-book multiple (BPS times the multiple label), in the listing currency.", Type: "gauge", Scale: 1, KeyLabel: "multiple"},
		}},

	// Analyst Consensus API. Every path takes source_text; it changes
	// texts only, which are not exported, and a key without raw access
	// makes the exporter drop it (RAW_ACCESS_REQUIRED).
	{API: APIConsensus, Template: "/consensus", Params: []string{"asset", "days", "source_text"}, Required: []string{"asset"},
		KeyedWith: []string{"days"}, ValuesListed: true, Rows: "data", TimeKey: "date", Fields: map[string]*Field{
			"score":    gauge("consensus_score", "Net analyst stance on the asset on the latest day: (bullish - bearish) / analysts counted, from -1 to 1."),
			"bullish":  withLabels(gauge("consensus_analysts", helpConsensusAnalysts), "stance", "bullish"),
			"bearish":  withLabels(gauge("consensus_analysts", helpConsensusAnalysts), "stance", "bearish"),
			"neutral":  withLabels(gauge("consensus_analysts", helpConsensusAnalysts), "stance", "neutral"),
			"analysts": gauge("consensus_analysts_counted", "Analysts with a stance on the asset on the latest day, all stances together."),
		}},
	{API: APIConsensus, Template: "/analyst-views", Params: []string{"asset", "source_text"}, Required: []string{"asset"},
		ValuesListed: true, Rows: "data", TimeKey: "date", LabelFields: []string{"stance"}, Fields: map[string]*Field{
			"count": gauge("analyst_views", "Analyst views on the asset in the API's current window, by stance."),
		}},
	{API: APIConsensus, Template: "/calls", Params: []string{"asset", "source_text"}, Required: []string{"asset"},
		ValuesListed: true, Rows: "data", TimeKey: "date", LabelFields: []string{"direction"}, Fields: map[string]*Field{
			"count": gauge("analyst_calls", "Analyst calls on the asset in the API's current window, by direction."),
		}},
	// The top list is bounded by limit (at most 50 handles per asset), so
	// the handle label cannot grow without bound.
	{API: APIConsensus, Template: "/analysts/top", Params: []string{"asset", "source_text"}, Required: []string{"asset"}, MaxLimit: 50,
		Defaults: map[string]string{"limit": "10"}, ValuesListed: true, Rows: "data", TimeKey: "date", LabelFields: []string{"handle"}, Fields: map[string]*Field{
			"accuracy":  gaugeIn(unitRatio, "analyst_top_accuracy_ratio", "Share of a top analyst's calls on the asset that proved right, 0 to 1."),
			"calls":     gauge("analyst_top_calls", "Calls a top analyst has made on the asset."),
			"followers": gauge("analyst_top_followers", "Followers of a top analyst's account."),
			"rank":      gauge("analyst_top_rank", "Rank of the analyst in the asset's top list (1 is the most accurate)."),
		}},
	{API: APIConsensus, Template: "/analysts/{handle}", Params: []string{"source_text"}, Keyed: true,
		ValuesListed: true, Rows: "data", TimeKey: "date", Fields: map[string]*Field{
			"accuracy":  gaugeIn(unitRatio, "analyst_accuracy_ratio", "Share of the analyst's calls on every covered asset that proved right, 0 to 1."),
			"calls":     gauge("analyst_recorded_calls", "Calls recorded for the analyst on every covered asset."),
			"followers": gauge("analyst_followers", "Followers of the analyst's account."),
		}},
}

// keyedFor says whether a call with these parameters needs the key.
func (e *Endpoint) keyedFor(params Values) bool {
	return e.Keyed || slices.ContainsFunc(e.KeyedWith, params.Has)
}

// keyReason names, for an error message, why a tuple needs the key.
func keyReason(t *Tuple) string {
	switch {
	case t.Endpoint == nil:
		return t.Entry.Path + " is not in the built-in catalog, so it is taken to need the key"
	case t.Endpoint.Keyed:
		return t.Endpoint.Template + " needs the key"
	}
	return t.Endpoint.Template + " with " + strings.Join(t.Endpoint.KeyedWith, ", ") + " needs the key"
}

// endpointFor finds the catalog entry whose template matches a concrete
// path, segment by segment.
func endpointFor(api, path string) *Endpoint {
	n := strings.Count(path, "/")
	for _, e := range Endpoints {
		if e.API == api && strings.Count(e.Template, "/") == n && fillsTemplate(path, e.Template) {
			return e
		}
	}
	return nil
}

// fillsTemplate says whether path, of as many segments as template, is
// template with each placeholder filled by a segment that is not empty.
func fillsTemplate(path, template string) bool {
	for {
		t, trest, more := strings.Cut(template, "/")
		p, prest, _ := strings.Cut(path, "/")
		if strings.HasPrefix(t, "{") && p == "" || !strings.HasPrefix(t, "{") && t != p {
			return false
		}
		if !more {
			return true
		}
		template, path = trest, prest
	}
}
