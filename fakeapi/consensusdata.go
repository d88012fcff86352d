package fakeapi

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// consensusAsset is an asset the Analyst Consensus API tracks.
type consensusAsset struct {
	symbol, key, name string
	aliases           []string
}

var consensusAssets = []consensusAsset{
	{"BTC", "bitcoin", "Bitcoin", []string{"btc", "xbt", "bitcoin"}},
	{"ETH", "ethereum", "Ethereum", []string{"eth", "ether", "ethereum"}},
	{"SOL", "solana", "Solana", []string{"sol", "solana"}},
	{"XRP", "ripple", "XRP", []string{"xrp", "ripple"}},
}

// analysts are the tracked, eligible handles; ineligibleAnalyst exists
// but is excluded from the stance pipeline.
var analysts = []string{
	"alpha_atlas", "bitvane", "block_bard", "chain_oracle", "deltaflow", "hodl_hana",
	"ledger_lark", "macro_mira", "onchain_owl", "quant_quill", "satoshi_signals", "tape_reader",
}

const ineligibleAnalyst = "newsfeed_bot"

// Defaults and bounds of the consensus query parameters.
const (
	defaultTopLimit      = 10
	maxTopLimit          = 50
	defaultConsensusDays = 7
	defaultCallDays      = 30
	maxDays              = 365
	excerptLen           = 200
)

func resolveAsset(v string) (consensusAsset, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	for _, a := range consensusAssets {
		if v == a.key || v == strings.ToLower(a.symbol) || slices.Contains(a.aliases, v) {
			return a, true
		}
	}
	return consensusAsset{}, false
}

// covers tells whether an analyst covers an asset; everyone covers
// bitcoin.
func covers(handle, assetKey string) bool {
	return assetKey == "bitcoin" || hash64(handle, assetKey)%4 != 0
}

func day(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// intParam reads an optional integer parameter in [lo, hi].
func intParam(q url.Values, name string, def, lo, hi int) (int, *apiError) {
	if !q.Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(q.Get(name))
	if err != nil || n < lo || n > hi {
		return 0, &apiError{Code: "INVALID_PARAMETER", Param: name}
	}
	return n, nil
}

func assetParam(q url.Values) (consensusAsset, *apiError) {
	if q.Get("asset") == "" {
		return consensusAsset{}, &apiError{Code: "INVALID_PARAMETER", Param: "asset"}
	}
	a, ok := resolveAsset(q.Get("asset"))
	if !ok {
		return a, &apiError{Code: "UNKNOWN_ASSET", Param: "asset"}
	}
	return a, nil
}

// consensusPayload builds the answer of a route whose key, plan and
// parameter names were already checked.
func consensusPayload(rt consensusRoute, q url.Values, now time.Time, raw bool) (obj, *apiError) {
	today := day(now)
	switch rt.name {
	case "assets":
		return assetList(q.Get("q")), nil
	case "analyst":
		return analystProfile(rt.handle, today)
	}
	var a consensusAsset
	var err *apiError
	if rt.name == "analystCalls" {
		if err = analystEligible(rt.handle); err != nil {
			return nil, err
		}
	}
	if a, err = assetParam(q); err != nil {
		return nil, err
	}
	published := consensusDay(a, now) // the newest daily run's day
	switch rt.name {
	case "top":
		limit, err := intParam(q, "limit", defaultTopLimit, 1, maxTopLimit)
		if err != nil {
			return nil, err
		}
		return topAnalysts(a, limit), nil
	case "views":
		r := consensusRow(a, published)
		return obj{{"asset", a.key}, {"date", published.Format(time.DateOnly)}, {"data", []obj{
			{{"stance", "bullish"}, {"count", r.bullish}},
			{{"stance", "bearish"}, {"count", r.bearish}},
			{{"stance", "neutral"}, {"count", r.neutral}},
		}}}, nil
	case "calls":
		h := hash64(a.key, "calls")
		long := 2 + int(10*wave(h, published))
		short := 1 + int(6*wave(mix(h), published))
		return obj{{"asset", a.key}, {"date", published.Format(time.DateOnly)}, {"data", []obj{
			{{"direction", "long"}, {"count", long}},
			{{"direction", "short"}, {"count", short}},
		}}}, nil
	case "consensus":
		days, err := intParam(q, "days", defaultConsensusDays, 1, maxDays)
		if err != nil {
			return nil, err
		}
		rows := make([]obj, 0, days)
		for i := range days {
			r := consensusRow(a, published.AddDate(0, 0, -i))
			rows = append(rows, obj{{"date", r.date}, {"score", r.score}, {"bullish", r.bullish},
				{"bearish", r.bearish}, {"neutral", r.neutral}, {"analysts", r.analysts}, {"stance", r.stance}})
		}
		return obj{{"asset", a.key}, {"data", rows}}, nil
	case "analystCalls":
		days, err := intParam(q, "days", defaultCallDays, 1, maxDays)
		if err != nil {
			return nil, err
		}
		return analystCalls(rt.handle, a, today, days, raw)
	}
	return nil, &apiError{Code: "NOT_FOUND"}
}

func assetList(filter string) obj {
	f := strings.ToLower(strings.TrimSpace(filter))
	rows := []obj{}
	for _, a := range consensusAssets {
		if strings.Contains(strings.ToLower(a.name), f) || strings.Contains(strings.ToLower(a.symbol), f) || strings.Contains(a.key, f) ||
			slices.ContainsFunc(a.aliases, func(al string) bool { return strings.Contains(al, f) }) {
			rows = append(rows, obj{{"symbol", a.symbol}, {"key", a.key}, {"name", a.name}, {"aliases", a.aliases}})
		}
	}
	return obj{{"data", rows}}
}

// analystStats are an analyst's fixed figures for one scope.
func analystStats(handle, scope string) (accuracy float64, calls, followers int) {
	h := hash64(handle, scope)
	accuracy = round(0.5+0.35*unit(mix(h)), 2)
	calls = 20 + int(mix(h^1)%280)
	followers = 1000 + int(mix(hash64(handle))%199000)
	return accuracy, calls, followers
}

func topAnalysts(a consensusAsset, limit int) obj {
	type entry struct {
		handle          string
		accuracy        float64
		calls, follower int
	}
	var list []entry
	for _, h := range analysts {
		if covers(h, a.key) {
			acc, calls, fol := analystStats(h, a.key)
			list = append(list, entry{h, acc, calls, fol})
		}
	}
	slices.SortFunc(list, func(x, y entry) int {
		return cmp.Or(cmp.Compare(y.accuracy, x.accuracy), strings.Compare(x.handle, y.handle))
	})
	rows := []obj{}
	for i, e := range list[:min(limit, len(list))] {
		rows = append(rows, obj{{"handle", e.handle}, {"rank", i + 1}, {"accuracy", e.accuracy}, {"calls", e.calls}, {"followers", e.follower}})
	}
	return obj{{"asset", a.key}, {"data", rows}}
}

func analystEligible(handle string) *apiError {
	switch {
	case handle == ineligibleAnalyst:
		return &apiError{Code: "ANALYST_NOT_ELIGIBLE"}
	case !slices.Contains(analysts, handle):
		return &apiError{Code: "ANALYST_NOT_FOUND"}
	}
	return nil
}

func analystProfile(handle string, today time.Time) (obj, *apiError) {
	if err := analystEligible(handle); err != nil {
		return nil, err
	}
	covered := []string{}
	for _, a := range consensusAssets {
		if covers(handle, a.key) {
			covered = append(covered, a.key)
		}
	}
	acc, calls, fol := analystStats(handle, "all")
	return obj{{"data", obj{{"handle", handle}, {"covered_assets", covered}, {"accuracy", acc},
		{"calls", calls}, {"followers", fol}, {"date", today.Format(time.DateOnly)}}}}, nil
}

// analystCalls lists an analyst's calls on an asset over the last days;
// the post text is cut to an excerpt without raw access.
func analystCalls(handle string, a consensusAsset, today time.Time, days int, raw bool) (obj, *apiError) {
	rows := []obj{}
	if covers(handle, a.key) {
		h := hash64(handle, a.key)
		for i := range days {
			d := today.AddDate(0, 0, -i)
			x := mix(h ^ uint64(d.Unix()))
			if x%3 != 0 {
				continue
			}
			dir := "long"
			if x%2 == 1 {
				dir = "short"
			}
			date := d.Format(time.DateOnly)
			text := "On " + date + " @" + handle + " went " + dir + " on " + a.name + " (" + a.symbol + "). " +
				"Exchange reserves kept moving the same way for a week, funding stayed " + dir + "-leaning and " +
				"the large holders did not blink on the last pullback; I am sizing this call accordingly and will " +
				"revisit it if the weekly close breaks the range."
			truncated := false
			if !raw && len(text) > excerptLen {
				text, truncated = text[:excerptLen], true
			}
			rows = append(rows, obj{{"date", date}, {"direction", dir}, {"text", text}, {"truncated", truncated},
				{"source_url", consensusSite + "/posts/" + handle + "/" + strconv.FormatUint(x%1000000, 10)}})
		}
	}
	if len(rows) == 0 {
		return nil, &apiError{Code: "NO_DATA"}
	}
	return obj{{"handle", handle}, {"asset", a.key}, {"data", rows}}, nil
}

// stanceRow is the consensus of one asset on one day.
type stanceRow struct {
	date                                string
	score                               float64
	bullish, bearish, neutral, analysts int
	stance                              string
}

func consensusRow(a consensusAsset, d time.Time) stanceRow {
	h := hash64(a.key, "consensus")
	n := 15 + int(mix(h^uint64(d.Unix()))%16)
	bull := int(float64(n) * (0.2 + 0.5*wave(h, d)))
	bear := int(float64(n-bull) * (0.3 + 0.5*unit(mix(h^uint64(d.Unix())^0xbeef))))
	r := stanceRow{date: d.Format(time.DateOnly), bullish: bull, bearish: bear, neutral: n - bull - bear, analysts: n}
	r.score = round(float64(bull-bear)/float64(n), 2)
	switch {
	case r.score > 0.1:
		r.stance = "bullish"
	case r.score < -0.1:
		r.stance = "bearish"
	default:
		r.stance = "neutral"
	}
	return r
}
