package fakeapi

import (
	"slices"
	"strings"
	"time"
)

// Catalog is the set of data API endpoints the fake serves and lists.
type Catalog int

const (
	// CatalogSmall, the default, serves the endpoints of the exporter's
	// built-in catalog and the BTC and ETH exchange flows: the paths
	// the demo, the examples and the tests read (18 v1 paths, 2 v2).
	CatalogSmall Catalog = iota
	// CatalogFull adds the provider's catalog as a user meets it: the
	// exchange and miner flows, flow, market and network indicators,
	// inter-entity flows, fund, market and network data, addresses and
	// staking of btc, eth, xrp, trx, ERC-20 tokens and stablecoins, with
	// their parameters and required parameters (about 200 v1 paths).
	CatalogFull
)

var catalogNames = [...]string{"small", "full"}

func (c Catalog) String() string { return enumName(catalogNames[:], "Catalog", c) }

// ParseCatalog reads a catalog name, small or full in any case; "" is
// small.
func ParseCatalog(s string) (Catalog, error) {
	return parseEnum[Catalog](catalogNames[:], s, "catalog", "small or full", true)
}

// SetCatalog changes the endpoints served and listed from now on, as a
// provider adds or retires endpoints.
func (s *Server) SetCatalog(c Catalog) {
	s.access.Lock()
	s.opts.Catalog = c
	s.access.Unlock()
}

func (s *Server) catalogNow() Catalog {
	s.access.RLock()
	defer s.access.RUnlock()
	return s.opts.Catalog
}

// Parameter values of the full catalog besides those of data.go.
var (
	miners   = []string{"all_miner", "f2pool", "antpool", "viabtc", "foundry_usa", "binance_pool", "poolin", "btc_com", "luxor", "mara_pool", "spiderpool"}
	btcFunds = []string{"gbtc", "ibit", "fbtc", "arkb", "bitb", "hodl", "brrr", "btco", "ezbc", "btcw"}
	markets  = []string{"spot", "perpetual"}
)

// without is list without the value v.
func without(list []string, v string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x == v })
}

// Windows and parameters of the full catalog.
var (
	wD    = []string{"day"}
	wDH   = []string{"day", "hour"}
	wDHB  = []string{"day", "hour", "block"}
	wDHM  = []string{"day", "hour", "min"}
	wDHTB = []string{"day", "hour", "10min", "block"}

	flowExchange  = param{name: "exchange", values: flowExchanges, required: true}
	derivExchange = param{name: "exchange", values: exchanges, def: "all_exchange"}
	minerParam    = param{name: "miner", values: miners, def: "all_miner"}
	fromExchange  = param{name: "from_exchange", values: without(flowExchanges, "all_exchange"), required: true}
	toExchange    = param{name: "to_exchange", values: without(flowExchanges, "all_exchange"), required: true}
	fromMiner     = param{name: "from_miner", values: without(miners, "all_miner"), required: true}
	toMiner       = param{name: "to_miner", values: without(miners, "all_miner"), required: true}
	marketParam   = param{name: "market", values: markets, def: "spot"}
)

// catalogGroup is a category of an asset: its metrics, their windows and
// parameters.
type catalogGroup struct {
	asset, category string
	windows         []string
	params          []param
	metrics         []string
}

// catalogGroups is the full catalog beyond CatalogSmall's paths (which it
// does not repeat). A metric written "name:w" takes the windows w (d, dh,
// dhb, dhm) instead of its group's.
var catalogGroups = []catalogGroup{
	{"btc", "exchange-flows", wDHB, []param{flowExchange}, []string{"transactions-count", "addresses-count", "in-house-flow"}},
	{"btc", "flow-indicator", wDH, []param{flowExchange}, []string{"exchange-shutdown-index", "exchange-whale-ratio", "exchange-inflow-age-distribution",
		"exchange-inflow-supply-distribution", "exchange-inflow-cdd", "exchange-supply-ratio", "fund-flow-ratio", "stablecoins-ratio"}},
	{"btc", "flow-indicator", wD, nil, []string{"mpi"}},
	{"btc", "flow-indicator", wDH, []param{minerParam}, []string{"miner-supply-ratio"}},
	{"btc", "market-indicator", wDH, []param{derivExchange}, []string{"estimated-leverage-ratio"}},
	{"btc", "market-indicator", wDH, nil, []string{"stablecoin-supply-ratio", "mvrv", "sopr", "sopr-ratio", "realized-price", "utxo-realized-price-age-distribution"}},
	{"btc", "network-indicator", wD, nil, []string{"stock-to-flow", "nvt", "nvt-golden-cross", "nvm", "puell-multiple", "coin-days-destroyed:dhb",
		"mean-coin-age:dh", "sum-coin-age:dh", "sum-coin-age-distribution", "nupl", "nrpl", "utxo-age-distribution", "spent-output-age-distribution:dhb",
		"utxo-supply-distribution", "utxo-realized-supply-distribution", "utxo-count-supply-distribution", "spent-output-supply-distribution:dhb",
		"pnl-supply", "dormancy"}},
	{"btc", "miner-flows", wDHB, []param{minerParam}, []string{"reserve", "netflow", "inflow", "outflow", "transactions-count", "addresses-count"}},
	{"btc", "inter-entity-flows", wDHB, []param{fromExchange, toExchange}, []string{"exchange-to-exchange"}},
	{"btc", "inter-entity-flows", wDHB, []param{fromMiner, toExchange}, []string{"miner-to-exchange"}},
	{"btc", "inter-entity-flows", wDHB, []param{fromExchange, toMiner}, []string{"exchange-to-miner"}},
	{"btc", "inter-entity-flows", wDHB, []param{fromMiner, toMiner}, []string{"miner-to-miner"}},
	{"btc", "fund-data", wD, []param{{name: "symbol", values: btcFunds, required: true}}, []string{"market-price-usd", "market-premium"}},
	{"btc", "fund-data", wD, []param{{name: "symbol", values: append([]string{"all_symbol"}, btcFunds...), def: "all_symbol"}}, []string{"digital-asset-holdings"}},
	{"btc", "market-data", wDHM, []param{marketParam, derivExchange}, []string{"price-ohlcv"}},
	{"btc", "market-data", wDHM, []param{derivExchange}, []string{"funding-rates", "taker-buy-sell-stats", "liquidations"}},
	{"btc", "market-data", wDHM, nil, []string{"coinbase-premium-index"}},
	{"btc", "market-data", wDH, nil, []string{"capitalization", "korea-premium-index"}},
	{"btc", "network-data", wDHB, nil, []string{"velocity:d", "transactions-count", "addresses-count", "tokens-transferred", "block-bytes", "block-count:dh",
		"block-interval", "utxo-count", "fees", "fees-transaction", "blockreward", "difficulty", "hashrate:dh"}},
	{"btc", "addresses", wD, nil, []string{"count-by-balance", "supply-by-balance", "new-count"}},

	{"eth", "exchange-flows", wDHB, []param{flowExchange}, []string{"transactions-count", "addresses-count"}},
	{"eth", "flow-indicator", wDH, []param{flowExchange}, []string{"exchange-whale-ratio", "exchange-supply-ratio", "fund-flow-ratio", "stablecoins-ratio"}},
	{"eth", "market-indicator", wDH, []param{derivExchange}, []string{"estimated-leverage-ratio"}},
	{"eth", "market-indicator", wDH, nil, []string{"stablecoin-supply-ratio", "mvrv", "realized-price"}},
	{"eth", "network-indicator", wD, nil, []string{"nvt", "nvm"}},
	{"eth", "eth2", wD, nil, []string{"total-value-staked", "staking-inflow-total", "staking-transaction-count", "staking-validator-total",
		"depositor-count-total", "depositor-count-new", "staking-rate"}},
	{"eth", "fund-data", wD, []param{{name: "symbol", values: without(fundSymbols, "all_symbol"), required: true}}, []string{"market-price-usd", "market-premium"}},
	{"eth", "market-data", wDHM, []param{marketParam, derivExchange}, []string{"price-ohlcv"}},
	{"eth", "market-data", wDHM, []param{derivExchange}, []string{"open-interest", "funding-rates", "taker-buy-sell-stats", "liquidations"}},
	{"eth", "market-data", wDHM, nil, []string{"coinbase-premium-index"}},
	{"eth", "market-data", wDH, nil, []string{"capitalization"}},
	{"eth", "network-data", wDHB, nil, []string{"supply", "velocity:d", "contracts-count", "transactions-count", "transactions-count-between-eoa",
		"transactions-count-between-contracts", "tokens-transferred", "failed-transactions-count", "failed-tokens-transferred", "block-bytes",
		"block-count:dh", "block-interval", "fees", "fees-transaction", "fees-burnt", "blockreward", "gas-used", "gas-limit"}},
	{"eth", "addresses", wD, nil, []string{"count-by-balance", "supply-by-balance", "new-count"}},
	{"eth", "inter-entity-flows", wDHB, []param{fromExchange, toExchange}, []string{"exchange-to-exchange"}},

	{"xrp", "exchange-flows", wDH, []param{flowExchange}, []string{"reserve", "netflow", "inflow", "outflow", "transactions-count", "addresses-count"}},
	{"xrp", "flow-indicator", wDH, []param{flowExchange}, []string{"exchange-whale-ratio"}},
	{"xrp", "market-data", wDHM, []param{marketParam, derivExchange}, []string{"price-ohlcv"}},
	{"xrp", "market-data", wDHM, []param{derivExchange}, []string{"open-interest", "funding-rates"}},
	{"xrp", "network-data", wDH, nil, []string{"supply", "transactions-count", "addresses-count", "tokens-transferred", "fees", "block-count"}},
	{"xrp", "addresses", wD, nil, []string{"count-by-balance", "supply-by-balance"}},

	{"trx", "exchange-flows", wDH, []param{flowExchange}, []string{"reserve", "netflow", "inflow", "outflow"}},
	{"trx", "market-data", wDHM, []param{marketParam, derivExchange}, []string{"price-ohlcv"}},
	{"trx", "market-data", wDH, nil, []string{"capitalization"}},
	{"trx", "network-data", wDHB, nil, []string{"supply", "transactions-count", "addresses-count", "tokens-transferred", "fees", "block-count:dh",
		"energy-consumed", "bandwidth-consumed"}},
	{"trx", "defi", wD, nil, []string{"dex-volume", "total-value-locked"}},

	{"erc20", "exchange-flows", wDHB, []param{{name: "token", values: erc20Tokens, required: true}, flowExchange},
		[]string{"netflow", "inflow", "outflow", "transactions-count"}},
	{"erc20", "market-data", wDH, []param{{name: "token", values: erc20Tokens, required: true}}, []string{"price-ohlcv", "capitalization"}},
	{"erc20", "network-data", wDHB, []param{{name: "token", values: erc20Tokens, required: true}},
		[]string{"supply", "velocity:d", "transactions-count", "addresses-count", "tokens-transferred"}},

	{"stablecoin", "exchange-flows", wDHB, []param{{name: "token", values: stablecoins, required: true}, flowExchange},
		[]string{"reserve", "netflow", "inflow", "outflow", "transactions-count", "addresses-count"}},
	{"stablecoin", "market-data", wDH, []param{{name: "token", values: stablecoins, required: true}}, []string{"price-ohlcv", "capitalization"}},
	{"stablecoin", "network-data", wDHTB, []param{{name: "token", values: stablecoins, required: true}},
		[]string{"supply", "velocity:d", "transactions-count", "addresses-count", "tokens-transferred", "tokens-minted", "tokens-burned"}},
}

// windowCodes are the windows a metric of catalogGroups may name after
// a colon.
var windowCodes = map[string][]string{"d": wD, "dh": wDH, "dhb": wDHB, "dhm": wDHM}

// fullCatalog is CatalogFull beyond CatalogSmall, in catalogGroups' order,
// and fullByPath the same by path.
var fullCatalog, fullByPath = func() ([]*endpoint, map[string]*endpoint) {
	var list []*endpoint
	byPath := map[string]*endpoint{}
	for _, g := range catalogGroups {
		for _, m := range g.metrics {
			windows := g.windows
			if name, code, ok := strings.Cut(m, ":"); ok {
				m, windows = name, windowCodes[code]
			}
			path := "/v1/" + g.asset + "/" + g.category + "/" + m
			if smallByPath[path] != nil || byPath[path] != nil {
				continue // TestFullCatalogIsWellFormed finds it
			}
			ep := &endpoint{path: path, windows: windows, params: g.params, maxLimit: 100000, fields: catalogFields(g.asset, m)}
			list = append(list, ep)
			byPath[path] = ep
		}
	}
	return list, byPath
}()

// catalogFields are the row fields of a metric of the full catalog, named
// the way the data API names them: those of genericFields for reserves
// and flows, open/high/low/close/volume for prices, and otherwise the
// metric's own name in snake case, a count, a ratio or an amount.
func catalogFields(asset, metric string) func(c *rowCtx, t time.Time, row *obj) {
	switch metric {
	case "reserve", "netflow", "inflow", "outflow":
		return genericFields(asset, metric)
	case "price-ohlcv":
		return func(c *rowCtx, t time.Time, row *obj) {
			price := assetPrice[asset]
			if p, ok := tokenPrice[c.params["token"]]; ok {
				price = p
			} else if price == 0 {
				price = 1
			}
			open := price * (0.8 + 0.4*wave(hash64(c.key, "open"), t))
			cls := price * (0.8 + 0.4*wave(hash64(c.key, "close"), t))
			row.add("open", round(open, 6))
			row.add("high", round(max(open, cls)*1.01, 6))
			row.add("low", round(min(open, cls)*0.99, 6))
			row.add("close", round(cls, 6))
			row.add("volume", c.num("volume", 1e4, 1e6, 4, t))
		}
	}
	field := strings.ReplaceAll(metric, "-", "_")
	switch {
	case strings.Contains(metric, "count"):
		return func(c *rowCtx, t time.Time, row *obj) { row.add(field, c.count(field, 100, 1e6, t)) }
	case strings.Contains(metric, "ratio") || strings.Contains(metric, "index") || strings.Contains(metric, "premium") ||
		strings.Contains(metric, "rate") || strings.Contains(metric, "multiple") || metric == "mvrv" || metric == "sopr" || metric == "nupl":
		return func(c *rowCtx, t time.Time, row *obj) { row.add(field, c.num(field, 0, 3, 6, t)) }
	}
	return func(c *rowCtx, t time.Time, row *obj) { row.add(field, c.num(field, 0, 1e6, 4, t)) }
}
