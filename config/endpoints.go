package config

import "strings"

// Endpoint is what is known of one upstream endpoint: the windows and
// parameters it accepts and a catalog of its row fields with good metric
// names. Paths not listed here still work; they are checked by scheme only
// and their numeric fields get derived names.
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
	// Keyed endpoints need the API's credential.
	Keyed bool
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

func gauge(name, help string) *Field { return &Field{Name: name, Help: help, Type: "gauge", Scale: 1} }

func counter(name, help string) *Field {
	return &Field{Name: name, Help: help, Type: "counter", Scale: 1}
}

func ratioFromPercent(name, help string) *Field {
	return &Field{Name: name, Help: help, Type: "gauge", Scale: 0.01}
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
var Endpoints = []*Endpoint{
	{API: APIData, Template: "/v1/btc/market-data/open-interest", Windows: windowsDayHourMin, Params: []string{"exchange", "symbol"}, MaxLimit: 100000, Fields: map[string]*Field{
		"open_interest": gauge("open_interest_usd", "Open interest of perpetual and futures contracts, in USD."),
	}},
	{API: APIData, Template: "/v1/erc20/exchange-flows/addresses-count", Windows: windowsDayHourBlock, Params: []string{"token", "exchange"}, MaxLimit: 100000, Fields: map[string]*Field{
		"addresses_count_inflow":  gauge("exchange_inflow_addresses", "Addresses involved in inflow transactions to exchange wallets in the window."),
		"addresses_count_outflow": gauge("exchange_outflow_addresses", "Addresses involved in outflow transactions from exchange wallets in the window."),
	}},
	{API: APIData, Template: "/v1/eth/fund-data/digital-asset-holdings", Windows: windowsDay, Params: []string{"symbol"}, MaxLimit: 100000, Fields: map[string]*Field{
		"digital_asset_holdings": gauge("fund_digital_asset_holdings", "Amount of the asset a fund holds, in units of the asset."),
	}},
	{API: APIData, Template: "/v1/eth/network-data/addresses-count", Windows: []string{"day", "hour", "10min", "block"}, MaxLimit: 100000, Fields: map[string]*Field{
		"addresses_count_active":   gauge("active_addresses", "Unique addresses active as sender or receiver in the window."),
		"addresses_count_sender":   gauge("sender_addresses", "Unique addresses active as sender in the window."),
		"addresses_count_receiver": gauge("receiver_addresses", "Unique addresses active as receiver in the window."),
	}},
	{API: APIData, Template: "/v1/erc20/exchange-flows/reserve", Windows: windowsDayHourBlock, Params: []string{"token", "exchange"}, MaxLimit: 100000, Fields: map[string]*Field{
		"reserve":     gauge("exchange_reserve", "Amount of the token held in exchange wallets, in token units."),
		"reserve_usd": gauge("exchange_reserve_usd", "Value of the token held in exchange wallets, in USD."),
	}},
	{API: APIData, Template: "/v1/xrp/market-data/capitalization", Windows: windowsDayHour, MaxLimit: 100000, Fields: map[string]*Field{
		"market_cap":   gauge("market_cap_usd", "Total supply multiplied by the USD price."),
		"realized_cap": gauge("realized_cap_usd", "Realized capitalization, in USD."),
		"average_cap":  gauge("average_cap_usd", "Average capitalization, in USD."),
		"delta_cap":    gauge("delta_cap_usd", "Delta capitalization (realized minus average), in USD."),
		"thermo_cap":   gauge("thermo_cap_usd", "Thermo capitalization, in USD."),
	}},
	{API: APIData, Template: "/v1/trx/defi/launchpad-tokens", Windows: windowsDay, MaxLimit: 100000, Fields: map[string]*Field{
		"token_create_event_count":       gauge("launchpad_tokens_created", "Tokens created on the launchpad in the window."),
		"cumulative_count_create_events": counter("launchpad_token_create_events_total", "Token creation events on the launchpad since it started."),
	}},
	{API: APIData, Template: "/v1/btc/network-data/supply", Windows: windowsDayHourBlock, MaxLimit: 100000, Fields: map[string]*Field{
		"supply_total": gauge("supply", "All coins issued by coinbase rewards, in units of the asset."),
		"supply_new":   gauge("supply_new", "Coins newly issued in the window, in units of the asset."),
	}},
	{API: APIData, Template: "/v1/btc/network-indicator/pnl-utxo", Windows: windowsDay, MaxLimit: 100000, Fields: map[string]*Field{
		"profit_amount":  gauge("utxo_profit_amount", "Amount of UTxOs destroyed in profit in the window."),
		"loss_amount":    gauge("utxo_loss_amount", "Amount of UTxOs destroyed at a loss in the window."),
		"profit_percent": ratioFromPercent("utxo_profit_ratio", "Share of UTxOs destroyed in profit in the window, as a ratio (0-1)."),
		"loss_percent":   ratioFromPercent("utxo_loss_ratio", "Share of UTxOs destroyed at a loss in the window, as a ratio (0-1)."),
	}},
	{API: APIData, Template: "/v1/xrp/network-data/velocity", Windows: windowsDay, MaxLimit: 100000, Fields: map[string]*Field{
		"velocity": gauge("velocity_ratio", "On-chain transaction volume divided by market capitalization (inverse of NVT)."),
	}},
	{API: APIData, Template: "/v2/network/events-count", Windows: windowsEventsCount, Params: []string{"asset", "chain"}, Required: []string{"asset"}, MaxLimit: 10000, Fields: map[string]*Field{
		"events_transfer_count": withLabels(gauge("stablecoin_events", "Stablecoin supply events in the window, by kind."), "kind", "transfer"),
		"events_mint_count":     withLabels(gauge("stablecoin_events", ""), "kind", "mint"),
		"events_issue_count":    withLabels(gauge("stablecoin_events", ""), "kind", "issue"),
		"events_burn_count":     withLabels(gauge("stablecoin_events", ""), "kind", "burn"),
		"events_redeem_count":   withLabels(gauge("stablecoin_events", ""), "kind", "redeem"),
	}},
	{API: APIData, Template: "/v2/indicator/valuation/mvrv-z-score", Windows: windowsDay, Params: []string{"asset"}, Required: []string{"asset"}, MaxLimit: 10000, Fields: map[string]*Field{
		"mvrv_ratio_zscore": gauge("mvrv_z_score", "MVRV Z-score: market minus realized capitalization over the standard deviation of market capitalization."),
	}},
}

// endpointFor finds the catalog entry whose template matches a concrete
// path, segment by segment.
func endpointFor(api, path string) *Endpoint {
	segs := strings.Split(path, "/")
	for _, e := range Endpoints {
		if e.API != api {
			continue
		}
		t := strings.Split(e.Template, "/")
		if len(t) != len(segs) {
			continue
		}
		match := true
		for i := range t {
			if strings.HasPrefix(t[i], "{") {
				if segs[i] == "" {
					match = false
				}
				continue
			}
			if t[i] != segs[i] {
				match = false
				break
			}
		}
		if match {
			return e
		}
	}
	return nil
}

// DataFamilyName derives a family name (without the onchain_ prefix) for a
// row field that the catalog does not know. Gauges may not end in _total,
// so that suffix, common in the data API's field names, is dropped.
func DataFamilyName(field string) string {
	var b strings.Builder
	for i, r := range strings.ToLower(field) {
		switch {
		case r >= 'a' && r <= 'z', r == '_', r >= '0' && r <= '9' && i > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.TrimSuffix(b.String(), "_total")
	if name == "" {
		name = "value"
	}
	return name
}
