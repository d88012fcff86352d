package config

import "cmp"

// What the data API's numbers mean, for the fields of the provider's
// catalog that the built-in catalog (endpoints.go) does not list: per
// concept (naming.go) and row field, the HELP the project writes for it,
// its unit and, where the rule's name does not say the value well, a name
// of its own. Facts come from the provider's public descriptions; the
// wording is ours. Tests hold every field the fake's full catalog serves
// to be here, and a family to have one HELP and unit wherever it comes from.
//
// "In the window" is the row's interval (the window label); a value
// without it is a level as of the row (a balance, a price, a ratio).

// known is one field's meaning. name "" takes the naming rule's name,
// scale and unit; scale 0 is 1. sameAs names a field of the concept's
// built-in catalog entry whose family this field feeds (the fake's
// single-field answers of a concept the catalog lists with more fields).
type known struct {
	name, unit string
	scale      float64
	help       string
	sameAs     string
}

// Phrases many HELP texts share.
const (
	inAsset    = "in units of the asset (of the token on ERC-20 and stablecoin paths)"
	noUnit     = "no unit"
	asServed   = "unit as the provider publishes it"
	bandsApart = "the value the API serves under the metric's own name; its bands are fields of their own"
	secondsOf  = "in seconds (the provider publishes days)"
)

// knownFields are the meanings, by concept and row field.
var knownFields = map[concept]map[string]known{
	// Exchange and miner flows, and the flows between them.
	{"exchange", "addresses_count"}:    {"addresses_count": {help: "Addresses that sent coins to or received coins from exchange wallets in the window."}},
	{"exchange", "transactions_count"}: {"transactions_count": {help: "Transactions into or out of exchange wallets in the window."}},
	{"exchange", "in_house_flow"}:      {"in_house_flow": {help: "Coins moved between wallets of one exchange in the window, " + inAsset + "."}},
	{"exchange", "inflow"}:             {"inflow_total": {help: "Coins sent into exchange wallets in the window, " + inAsset + "."}},
	{"exchange", "outflow"}:            {"outflow_total": {help: "Coins sent out of exchange wallets in the window, " + inAsset + "."}},
	{"exchange", "netflow"}:            {"netflow_total": {help: "Coins sent into exchange wallets minus those sent out in the window, " + inAsset + ": positive when the exchanges' reserve grows."}},
	{"miner", "reserve"}: {
		"reserve":     {help: "Coins held in mining pool wallets (a balance), in units of the asset."},
		"reserve_usd": {help: "Value of the coins held in mining pool wallets, in USD."},
	},
	{"miner", "inflow"}:                      {"inflow_total": {help: "Coins sent into mining pool wallets in the window, in units of the asset."}},
	{"miner", "outflow"}:                     {"outflow_total": {help: "Coins sent out of mining pool wallets in the window, in units of the asset."}},
	{"miner", "netflow"}:                     {"netflow_total": {help: "Coins sent into mining pool wallets minus those sent out in the window, in units of the asset: negative when miners spend."}},
	{"miner", "transactions_count"}:          {"transactions_count": {help: "Transactions into or out of mining pool wallets in the window."}},
	{"miner", "addresses_count"}:             {"addresses_count": {help: "Addresses that sent coins to or received coins from mining pool wallets in the window."}},
	{"inter_entity", "exchange_to_exchange"}: {"exchange_to_exchange": {help: "Coins sent from the wallets of one exchange (from_exchange) to those of another (to_exchange) in the window, in units of the asset."}},
	{"inter_entity", "exchange_to_miner"}:    {"exchange_to_miner": {help: "Coins sent from the wallets of an exchange (from_exchange) to those of a mining pool (to_miner) in the window, in units of the asset."}},
	{"inter_entity", "miner_to_exchange"}:    {"miner_to_exchange": {help: "Coins sent from the wallets of a mining pool (from_miner) to those of an exchange (to_exchange) in the window, in units of the asset."}},
	{"inter_entity", "miner_to_miner"}:       {"miner_to_miner": {help: "Coins sent from the wallets of one mining pool (from_miner) to those of another (to_miner) in the window, in units of the asset."}},

	// Flow indicators.
	{"flow_indicator", "exchange_whale_ratio"}:  {"exchange_whale_ratio": {unit: unitRatio, help: "Share of the ten largest inflows in all that was sent into exchange wallets in the window, 0 to 1: near 1 when whales move the coins."}},
	{"flow_indicator", "exchange_supply_ratio"}: {"exchange_supply_ratio": {unit: unitRatio, help: "Coins held in exchange wallets over the asset's total supply, 0 to 1."}},
	{"flow_indicator", "miner_supply_ratio"}:    {"miner_supply_ratio": {unit: unitRatio, help: "Coins held in mining pool wallets over the asset's total supply, 0 to 1."}},
	{"flow_indicator", "fund_flow_ratio"}:       {"fund_flow_ratio": {unit: unitRatio, help: "Coins sent to or from exchanges over all coins transferred on chain in the window, 0 to 1."}},
	{"flow_indicator", "stablecoins_ratio"}:     {"stablecoins_ratio": {help: "An exchange's reserve of the asset over its reserve of all stablecoins (" + noUnit + "): high when little buying power waits there."}},
	{"flow_indicator", "mpi"}:                   {"mpi": {help: "Miners' position index: a z-score of miners' outflow against its history (" + noUnit + "); above 2 miners sell heavily."}},
	{"flow_indicator", "exchange_shutdown_index"}: {"exchange_shutdown_index": {
		help: "Exchange shutdown index: high when an exchange's outflow rises suddenly and then stops, as in a hack or a shutdown (" + noUnit + ")."}},
	{"flow_indicator", "exchange_inflow_cdd"}: {"exchange_inflow_cdd": {
		help: "Coin-days destroyed by the coins sent into exchange wallets in the window (each coin times the days since it last moved), in coin-days."}},
	{"flow_indicator", "exchange_inflow_age_distribution"}: {"exchange_inflow_age_distribution": {
		help: "Coins sent into exchange wallets in the window by age band (" + bandsApart + "), in units of the asset."}},
	{"flow_indicator", "exchange_inflow_supply_distribution"}: {"exchange_inflow_supply_distribution": {
		help: "Coins sent into exchange wallets in the window by the balance band of the sender (" + bandsApart + "), in units of the asset."}},

	// Market data.
	{"market", "capitalization"}: {"capitalization": {sameAs: "market_cap"}},
	{"market", "price_ohlcv"}: {
		"open":   {name: "market_price_ohlcv_open_usd", unit: unitUSD, help: "Index price of the asset at the start of the window (volume-weighted over the exchanges the index covers), in USD."},
		"high":   {name: "market_price_ohlcv_high_usd", unit: unitUSD, help: "Highest index price of the asset in the window, in USD."},
		"low":    {name: "market_price_ohlcv_low_usd", unit: unitUSD, help: "Lowest index price of the asset in the window, in USD."},
		"close":  {name: "market_price_ohlcv_close_usd", unit: unitUSD, help: "Index price of the asset at the end of the window, in USD."},
		"volume": {help: "Volume of the asset traded in the window on the exchanges the index covers (" + asServed + ")."},
	},
	{"market", "funding_rates"}: {"funding_rates": {
		help: "Funding rate of perpetual swaps (on all exchanges, or the exchange label's), in percent per funding period as the provider publishes it: positive when longs pay shorts."}},
	{"market", "taker_buy_sell_stats"}: {"taker_buy_sell_stats": {
		help: "Volume that takers bought over the volume they sold on perpetual swaps in the window (" + noUnit + "): above 1 when buyers lead."}},
	{"market", "liquidations"}: {"liquidations": {help: "Leveraged positions closed by force on derivative exchanges in the window (" + asServed + ")."}},
	{"market", "coinbase_premium_index"}: {"coinbase_premium_index": {
		help: "Price on Coinbase (USD pair) minus the price on Binance (USDT pair), over the latter, in percent: positive when buyers in the US pay more."}},
	{"market", "korea_premium_index"}: {"korea_premium_index": {
		help: "Price on Korean exchanges minus the price on the others, over the latter, in percent: positive when buyers in Korea pay more."}},

	// Market indicators.
	{"market_indicator", "mvrv"}: {"mvrv": {
		help: "Market capitalization over realized capitalization (" + noUnit + "): below 1 the market values the coins under what their holders paid; above 3.7 has marked cycle tops."}},
	{"market_indicator", "sopr"}: {"sopr": {
		help: "Spent output profit ratio: the USD value of the outputs spent in the window over their value when they were created (" + noUnit + "); above 1 coins move at a profit."}},
	{"market_indicator", "sopr_ratio"}: {"sopr_ratio": {help: "SOPR of long-term holders over SOPR of short-term holders in the window (" + noUnit + ")."}},
	{"market_indicator", "realized_price"}: {"realized_price": {name: "market_indicator_realized_price_usd", unit: unitUSD,
		help: "Realized capitalization over supply: the average price at which the coins last moved, in USD."}},
	{"market_indicator", "estimated_leverage_ratio"}: {"estimated_leverage_ratio": {
		help: "Open interest over the exchanges' reserve of the asset (" + noUnit + "): an estimate of the leverage derivatives traders take."}},
	{"market_indicator", "stablecoin_supply_ratio"}: {"stablecoin_supply_ratio": {
		help: "Market capitalization of the asset over the supply of stablecoins (" + noUnit + "): low when stablecoins hold much buying power."}},
	{"market_indicator", "utxo_realized_price_age_distribution"}: {"utxo_realized_price_age_distribution": {
		help: "Realized price of the unspent coins by age band (" + bandsApart + "), in USD."}},

	// Fund data.
	{"fund", "market_price_usd"}: {"market_price_usd": {unit: unitUSD, help: "Share price of the fund (symbol label) on its stock market, in USD."}},
	{"fund", "market_premium"}: {"market_premium": {
		help: "Share price of the fund over its net asset value per share, minus 1: positive when shares trade above the coins they hold (" + asServed + ")."}},

	// Network data.
	{"network", "supply"}:             {"supply": {sameAs: "supply_total"}},
	{"network", "addresses_count"}:    {"addresses_count": {sameAs: "addresses_count_active"}},
	{"network", "transactions_count"}: {"transactions_count": {help: "Transactions on the chain in the window."}},
	{"network", "transactions_count_between_eoa"}: {"transactions_count_between_eoa": {
		help: "Transactions between externally owned accounts (not contracts) in the window."}},
	{"network", "transactions_count_between_contracts"}: {"transactions_count_between_contracts": {help: "Transactions from one contract to another in the window."}},
	{"network", "failed_transactions_count"}:            {"failed_transactions_count": {help: "Transactions that failed in the window."}},
	{"network", "contracts_count"}:                      {"contracts_count": {help: "Contracts on the chain as the provider counts them in the window (created, destroyed and in existence are fields of their own)."}},
	{"network", "tokens_transferred"}:                   {"tokens_transferred": {help: "Coins moved on the chain in the window, " + inAsset + "."}},
	{"network", "failed_tokens_transferred"}:            {"failed_tokens_transferred": {help: "Coins that failed transactions in the window would have moved, in units of the asset."}},
	{"network", "tokens_minted"}:                        {"tokens_minted": {help: "Tokens minted in the window, in units of the token."}},
	{"network", "tokens_burned"}:                        {"tokens_burned": {help: "Tokens burned in the window, in units of the token."}},
	{"network", "block_bytes"}:                          {"block_bytes": {unit: unitBytes, help: "Mean size of the blocks of the window, in bytes."}},
	{"network", "block_count"}:                          {"block_count": {name: "network_blocks", help: "Blocks added to the chain in the window."}},
	{"network", "block_interval"}: {"block_interval": {name: "network_block_interval_seconds", unit: unitSeconds,
		help: "Mean time between the blocks of the window, in seconds."}},
	{"network", "utxo_count"}:       {"utxo_count": {name: "network_utxos", help: "Unspent transaction outputs in existence as of the row."}},
	{"network", "fees"}:             {"fees": {help: "Fees paid for the transactions of the window, in units of the asset."}},
	{"network", "fees_transaction"}: {"fees_transaction": {help: "Mean fee per transaction in the window, in units of the asset."}},
	{"network", "fees_burnt"}:       {"fees_burnt": {help: "Fees burnt in the window (the base fee, since the London upgrade), in units of the asset."}},
	{"network", "blockreward"}:      {"blockreward": {help: "Rewards paid for the blocks of the window, new coins and fees, in units of the asset."}},
	{"network", "difficulty"}:       {"difficulty": {help: "Mean mining difficulty of the blocks of the window (" + noUnit + ")."}},
	{"network", "hashrate"}:         {"hashrate": {help: "Mean rate at which the miners compute hashes in the window, in hashes per second."}},
	{"network", "gas_used"}:         {"gas_used": {help: "Gas used by the transactions of the window, in units of gas."}},
	{"network", "gas_limit"}:        {"gas_limit": {help: "Mean gas limit of the blocks of the window, in units of gas."}},
	{"network", "energy_consumed"}:  {"energy_consumed": {help: "Energy (TRON's resource for contract calls) consumed in the window, in energy units."}},
	{"network", "bandwidth_consumed"}: {"bandwidth_consumed": {
		help: "Bandwidth (TRON's resource for transaction bytes) consumed in the window, in bandwidth points."}},

	// Network indicators.
	{"network_indicator", "nvt"}: {"nvt": {help: "Network value to transactions: market capitalization over the coins' on-chain transaction volume (" + noUnit + ")."}},
	{"network_indicator", "nvt_golden_cross"}: {"nvt_golden_cross": {
		help: "NVT golden cross: a modified NVT that signals local tops and bottoms (" + noUnit + "); above 2.2 has marked local tops, below -1.6 bottoms."}},
	{"network_indicator", "nvm"}: {"nvm": {help: "Network value to Metcalfe: market capitalization over the square of the active addresses (" + noUnit + ")."}},
	{"network_indicator", "nupl"}: {"nupl": {
		help: "Net unrealized profit or loss: market minus realized capitalization, over market capitalization (" + noUnit + "); below 0 capitulation, above 0.75 euphoria."}},
	{"network_indicator", "nrpl"}: {"nrpl": {help: "Net realized profit or loss of the coins spent in the window: their value when spent minus their value when last moved (" + asServed + ")."}},
	{"network_indicator", "puell_multiple"}: {"puell_multiple": {
		help: "Miners' revenue in USD over its 365-day moving average (" + noUnit + "); below 0.5 has marked bottoms, above 4 tops."}},
	{"network_indicator", "stock_to_flow"}: {"stock_to_flow": {help: "Stock to flow: the supply over the coins newly issued (" + noUnit + ")."}},
	{"network_indicator", "coin_days_destroyed"}: {"coin_days_destroyed": {
		help: "Coin-days destroyed in the window: each coin spent times the days since it last moved, in coin-days (a weight on old coins, not a time)."}},
	{"network_indicator", "sum_coin_age"}: {"sum_coin_age": {help: "Sum of the ages of the unspent coins, each weighted by its amount, in coin-days."}},
	{"network_indicator", "mean_coin_age"}: {"mean_coin_age": {name: "network_indicator_mean_coin_age_seconds", unit: unitSeconds, scale: 86400,
		help: "Mean age of the unspent coins, weighted by amount, " + secondsOf + "."}},
	{"network_indicator", "dormancy"}: {"dormancy": {name: "network_indicator_dormancy_seconds", unit: unitSeconds, scale: 86400,
		help: "Mean time the coins spent in the window had lain unmoved (coin-days destroyed per coin spent), " + secondsOf + "."}},
	{"network_indicator", "pnl_supply"}: {"pnl_supply": {
		help: "Supply in profit or at a loss against the price each coin last moved at (" + bandsApart + "), in units of the asset."}},
	{"network_indicator", "sum_coin_age_distribution"}: {"sum_coin_age_distribution": {
		help: "Sum coin age by holder cohort, long- against short-term (" + bandsApart + "), in coin-days."}},
	{"network_indicator", "utxo_age_distribution"}: {"utxo_age_distribution": {
		help: "Supply in unspent outputs by age band (" + bandsApart + "), in units of the asset."}},
	{"network_indicator", "utxo_supply_distribution"}: {"utxo_supply_distribution": {
		help: "Supply in unspent outputs by balance band (" + bandsApart + "), in units of the asset."}},
	{"network_indicator", "utxo_realized_supply_distribution"}: {"utxo_realized_supply_distribution": {
		help: "Realized capitalization of the unspent outputs by balance band (" + bandsApart + "), in USD."}},
	{"network_indicator", "utxo_count_supply_distribution"}: {"utxo_count_supply_distribution": {
		help: "Unspent outputs by balance band (" + bandsApart + ")."}},
	{"network_indicator", "spent_output_age_distribution"}: {"spent_output_age_distribution": {
		help: "Coins spent in the window by the age band of their outputs (" + bandsApart + "), in units of the asset."}},
	{"network_indicator", "spent_output_supply_distribution"}: {"spent_output_supply_distribution": {
		help: "Coins spent in the window by the balance band of their outputs (" + bandsApart + "), in units of the asset."}},

	// Addresses.
	{"addresses", "new_count"}: {"new_count": {help: "Addresses seen on the chain for the first time in the window."}},
	{"addresses", "count_by_balance"}: {"count_by_balance": {
		help: "Addresses by the balance they hold (" + bandsApart + "), as of the row."}},
	{"addresses", "supply_by_balance"}: {"supply_by_balance": {
		help: "Supply held by addresses by their balance (" + bandsApart + "), in units of the asset."}},

	// ETH staking.
	{"eth2", "total_value_staked"}:   {"total_value_staked": {help: "ETH held by the staking deposit contract (its valid balance), in ETH."}},
	{"eth2", "staking_inflow_total"}: {"staking_inflow_total": {help: "ETH deposited into the staking deposit contract in the window, in ETH."}},
	{"eth2", "staking_transaction_count"}: {"staking_transaction_count": {name: "eth2_staking_transactions",
		help: "Valid transactions to the staking deposit contract in the window."}},
	{"eth2", "staking_validator_total"}: {"staking_validator_total": {name: "eth2_staking_validators", help: "Validators, all of them, as of the row."}},
	{"eth2", "depositor_count_total"}: {"depositor_count_total": {name: "eth2_depositors",
		help: "Accounts that have deposited 32 ETH or more to the staking deposit contract since it opened."}},
	{"eth2", "depositor_count_new"}: {"depositor_count_new": {help: "Accounts that deposited 32 ETH or more to the staking deposit contract for the first time in the window."}},
	{"eth2", "staking_rate"}: {"staking_rate": {
		help: "ETH held by the staking deposit contract over the supply, as the provider publishes it (its documentation says a percentage)."}},

	// DeFi on TRON.
	{"defi", "dex_volume"}:         {"dex_volume": {help: "Volume traded on the chain's decentralized exchanges in the window (" + asServed + ")."}},
	{"defi", "total_value_locked"}: {"total_value_locked": {help: "Value locked in the chain's DeFi contracts, as of the row (" + asServed + ")."}},
}

// conceptField is the family of a field of a concept the table above
// describes, or nil.
func conceptField(c concept, field string) *Field {
	k, ok := knownFields[c][field]
	if !ok {
		return nil
	}
	if k.sameAs != "" {
		f := *catalogByConcept[c].Fields[k.sameAs]
		f.Source = field
		return &f
	}
	name, scale, unit := ruleName(c.category, c.metric, field)
	if k.name != "" {
		name, scale, unit = k.name, 1, k.unit
	}
	scale, unit = cmp.Or(k.scale, scale), cmp.Or(k.unit, unit)
	return &Field{Name: name, Help: k.help, Type: "gauge", Scale: scale, Unit: unit, Source: field}
}
