package fakeapi

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Tier is one of the data API's plans as the fake serves it: which v1
// metrics a key on it may read, at which windows, how far back, and its
// request allowance (a key's plan, package plan, is what the fake answers
// for a key on a tier). The tiers are ordered as the provider orders its
// plans; the fake knows four of its five (custom plans are made per
// customer).
type Tier int

const (
	// TierBasic reads the day window of a few metrics (the BTC and ETH
	// exchange flows, prices, supply, transactions and addresses) 90
	// days back.
	TierBasic Tier = iota
	// TierAdvanced reads the BTC and ETH exchange flows, flow
	// indicators, market, network and fund data and the XRP and TRX
	// market and network data, at day a year back and at hour 90 days
	// back (the indicators at day only).
	TierAdvanced
	// TierProfessional reads every category but the inter-entity flows:
	// day three years back, hour and block a year back, the indicators
	// at day only. Not 10min nor min.
	TierProfessional
	// TierPremium reads everything without limit.
	TierPremium
)

var tierNames = [...]string{"basic", "advanced", "professional", "premium"}

// Tiers lists every tier the fake knows, cheapest first.
var Tiers = []Tier{TierBasic, TierAdvanced, TierProfessional, TierPremium}

func (p Tier) String() string { return enumName(tierNames[:], "Tier", p) }

// ParseTier reads a tier by its plan name, in any case: basic, advanced,
// professional or premium.
func ParseTier(s string) (Tier, error) {
	return parseEnum[Tier](tierNames[:], s, "plan", strings.Join(tierNames[:], ", "), false)
}

// rateLimits are the plans' request allowances: token requests per
// window ("day", "hour" or "minute"), as the plan answer states them. The
// fake states them; it does not enforce them.
var rateLimits = map[Tier]struct {
	token  int
	window string
}{
	TierBasic:        {1000, "day"},
	TierAdvanced:     {5000, "day"},
	TierProfessional: {1000, "hour"},
	TierPremium:      {600, "minute"},
}

// history is how far back a plan reads a window: whole years and days,
// stated as an ISO 8601 duration (P90D, P1Y, P3Y). The zero history is
// no limit (P0D).
type history struct {
	years, days int
}

func (h history) String() string {
	switch {
	case h.years == 0 && h.days == 0:
		return "P0D"
	case h.days == 0:
		return fmt.Sprintf("P%dY", h.years)
	case h.years == 0:
		return fmt.Sprintf("P%dD", h.days)
	}
	return fmt.Sprintf("P%dY%dD", h.years, h.days)
}

// unlimited says whether the history has no limit.
func (h history) unlimited() bool { return h.years == 0 && h.days == 0 }

// cutoff is the oldest time the history reaches at now, in calendar
// years and days; the zero time when it has no limit.
func (h history) cutoff(now time.Time) time.Time {
	if h.unlimited() {
		return time.Time{}
	}
	return now.UTC().AddDate(-h.years, 0, -h.days)
}

// grant is one window a plan allows on a metric and how far back.
type grant struct {
	window string
	depth  history
}

// indicatorCategories are read at day only below premium.
var indicatorCategories = map[string]bool{"flow-indicator": true, "market-indicator": true, "network-indicator": true}

// basicMetrics are the category/metric pairs of the basic plan, with the
// assets it reads them of.
var basicMetrics = map[string][]string{
	"exchange-flows/reserve":          {"btc", "eth"},
	"exchange-flows/netflow":          {"btc", "eth"},
	"exchange-flows/inflow":           {"btc", "eth"},
	"exchange-flows/outflow":          {"btc", "eth"},
	"market-data/price-ohlcv":         {"btc", "eth", "xrp", "trx"},
	"network-data/supply":             {"btc", "eth"},
	"network-data/transactions-count": {"btc", "eth"},
	"network-data/addresses-count":    {"btc", "eth"},
}

// advancedCategories are the categories of the advanced plan per asset.
var advancedCategories = map[string][]string{
	"btc": {"exchange-flows", "flow-indicator", "market-data", "network-data", "fund-data"},
	"eth": {"exchange-flows", "flow-indicator", "market-data", "network-data", "fund-data"},
	"xrp": {"market-data", "network-data"},
	"trx": {"market-data", "network-data"},
}

// grants says which windows of a v1 endpoint the plan allows and how far
// back, in the order of its windows; nil when the plan does not include
// the metric.
func (p Tier) grants(ep *endpoint) []grant {
	asset, category, metric := v1Parts(ep.path)
	var depth map[string]history
	switch p {
	case TierBasic:
		if slices.Contains(basicMetrics[category+"/"+metric], asset) {
			depth = map[string]history{"day": {days: 90}}
		}
	case TierAdvanced:
		switch {
		case !slices.Contains(advancedCategories[asset], category):
		case indicatorCategories[category]:
			depth = map[string]history{"day": {years: 1}}
		default:
			depth = map[string]history{"day": {years: 1}, "hour": {days: 90}}
		}
	case TierProfessional:
		switch {
		case category == "inter-entity-flows":
		case indicatorCategories[category]:
			depth = map[string]history{"day": {years: 3}}
		default:
			depth = map[string]history{"day": {years: 3}, "hour": {years: 1}, "block": {years: 1}}
		}
	case TierPremium:
		depth = map[string]history{}
		for _, w := range ep.windows {
			depth[w] = history{}
		}
	}
	var out []grant
	for _, w := range ep.windows {
		if d, ok := depth[w]; ok {
			out = append(out, grant{window: w, depth: d})
		}
	}
	return out
}

// reach is how far back the plan reads a window of an endpoint; ok is
// false when the plan does not allow that window of it. A v2 path is
// outside every plan answer and is allowed to every key, without limit.
func (p Tier) reach(ep *endpoint, window string) (depth history, ok bool) {
	if ep.v2 {
		return history{}, slices.Contains(ep.windows, window)
	}
	for _, g := range p.grants(ep) {
		if g.window == window {
			return g.depth, true
		}
	}
	return history{}, false
}

// v1Parts reads the segments of /v1/{asset}/{category}/{metric}; those
// missing are "".
func v1Parts(path string) (asset, category, metric string) {
	segs := append(strings.Split(path, "/"), "", "", "", "")
	return segs[2], segs[3], segs[4]
}
