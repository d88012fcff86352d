package fakeapi

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// defaultLags is the delay, per window, between the close of an interval
// and the moment its row is published (Options.Publish can replace it).
var defaultLags = map[string]time.Duration{
	"day":   30 * time.Minute,
	"hour":  5 * time.Minute,
	"10min": 2 * time.Minute,
	"min":   30 * time.Second,
	"block": 0,
}

// WindowDuration is the length of a window: "day" 24h, "hour" 1h, "10min"
// 10m, "min" 1m. "block" and unknown windows give 0.
func WindowDuration(window string) time.Duration {
	switch window {
	case "day":
		return 24 * time.Hour
	case "hour":
		return time.Hour
	case "10min":
		return 10 * time.Minute
	case "min":
		return time.Minute
	}
	return 0
}

// BlockInterval is the time between two blocks of an asset's chain: btc
// 10m; eth 12s, and so are ERC-20 tokens and stablecoins issued on
// Ethereum ("erc20", "stablecoin", and aliases such as "usdt" or "link");
// everything else 1m.
func BlockInterval(asset string) time.Duration {
	a := strings.ToLower(asset)
	switch {
	case a == "btc" || a == "bitcoin":
		return 10 * time.Minute
	case a == "eth" || a == "ethereum" || onEthereum(a):
		return 12 * time.Second
	}
	return time.Minute
}

func onEthereum(a string) bool {
	return a == "erc20" || a == "stablecoin" || slices.Contains(erc20Tokens, a) || slices.Contains(stablecoins, a)
}

// genesis is the origin of an asset's block heights.
func genesis(asset string) time.Time {
	a := strings.ToLower(asset)
	switch {
	case a == "btc" || a == "bitcoin":
		return time.Date(2009, 1, 3, 0, 0, 0, 0, time.UTC)
	case a == "xrp":
		return time.Date(2013, 1, 2, 0, 0, 0, 0, time.UTC)
	case a == "trx":
		return time.Date(2018, 6, 25, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(2015, 7, 30, 0, 0, 0, 0, time.UTC)
}

// earliestRow is where non-block series start.
var earliestRow = time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)

// timeline places the rows of one series in time.
type timeline struct {
	window  string
	step    time.Duration // window length, or block interval
	delay   Delay         // publication delay (publish.go)
	seed    uint64        // the series, for the jitter of its delays
	genesis time.Time     // block series: time of height 0
	first   time.Time     // earliest row
}

// seriesTimeline places the rows of the series (path, window, asset); the
// Indicator API's day rows have no path. The parameters (exchange,
// token...) of one endpoint share one publication pipeline, and so one
// seed for the jitter of their delays.
func (s *Server) seriesTimeline(path, window, asset string) timeline {
	tl := timeline{window: window, delay: s.delays[window], seed: hash64(path, window, asset)}
	if window == "block" {
		tl.genesis = genesis(asset)
		tl.step, tl.first = BlockInterval(asset), tl.genesis
		return tl
	}
	tl.step, tl.first = WindowDuration(window), earliestRow
	return tl
}

func (tl timeline) height(t time.Time) int64 {
	return int64(t.Sub(tl.genesis) / tl.step)
}

func floorTo(t time.Time, d time.Duration) time.Time {
	return time.Unix(0, floorDiv(t.UnixNano(), int64(d))*int64(d)).UTC()
}

func ceilTo(t time.Time, d time.Duration) time.Time {
	f := floorTo(t, d)
	if f.Before(t) {
		f = f.Add(d)
	}
	return f
}

// seriesAsset is the asset whose chain paces a series: the asset
// parameter, else the asset segment of a v1 path; v2 events-count counts
// Ethereum stablecoins and mvrv-z-score defaults to btc.
func seriesAsset(path, asset string) string {
	if asset != "" {
		return asset
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "v1":
		return segs[1]
	case path == "/v2/network/events-count":
		return "usdt"
	}
	return "btc"
}

// RowsPublished is the number of new rows of the series (path, window,
// asset) that became visible in (from, to]. asset may be "" for v1 paths,
// whose path names it.
func (s *Server) RowsPublished(path, window, asset string, from, to time.Time) int {
	tl := s.seriesTimeline(path, window, seriesAsset(path, asset))
	if tl.step <= 0 || !to.After(from) {
		return 0
	}
	a := floorDiv(tl.latest(from).UnixNano(), int64(tl.step))
	b := floorDiv(tl.latest(to).UnixNano(), int64(tl.step))
	return int(b - a)
}

var errBadTime = errors.New("bad time")

// parseBound reads a from/to parameter: YYYYMMDDTHHMMSS, YYYYMMDD
// (not for block windows), YYYY-MM-DD, or a block height for block
// windows.
func (tl timeline) parseBound(v string) (time.Time, error) {
	if tl.window == "block" && v != "" && strings.Trim(v, "0123456789") == "" {
		h, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return time.Time{}, errBadTime
		}
		return tl.genesis.Add(time.Duration(h) * tl.step), nil
	}
	for _, layout := range []string{"20060102T150405", "20060102", "2006-01-02", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errBadTime
}

// hash64 is FNV-1a over the parts, separated so that ("ab","c") and
// ("a","bc") differ.
func hash64(parts ...string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037) // FNV-1a offset basis
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h = (h ^ uint64(p[i])) * prime
		}
		h *= prime // the separating zero byte
	}
	return h
}

// mix is the splitmix64 finaliser: a cheap, well-spread integer hash.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// wave is a smooth, deterministic curve in [0, 1] for the seed h: two slow
// sine waves with seeded phases and a little per-time noise.
func wave(h uint64, t time.Time) float64 {
	days := float64(t.Unix()) / 86400
	p1 := unit(mix(h)) * 2 * math.Pi
	p2 := unit(mix(h^0x5bd1e995)) * 2 * math.Pi
	noise := unit(mix(h^uint64(t.Unix()))) - 0.5
	v := 0.5 + 0.3*math.Sin(2*math.Pi*days/97+p1) + 0.14*math.Sin(2*math.Pi*days/13.7+p2) + 0.06*noise
	return math.Min(1, math.Max(0, v))
}

// round rounds v to dp decimal places.
func round(v float64, dp int) float64 {
	p := math.Pow(10, float64(dp))
	return math.Round(v*p) / p
}
