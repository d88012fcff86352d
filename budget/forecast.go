package budget

import (
	"fmt"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// Overhead is the schedule's calls per published row: BENCHMARKS.md
// measured 1.01 to 1.05 ("Upstream economy", "Freshness and economy"; a
// jittering provider up to 1.17 on day rows, which Reserve covers).
const Overhead = 1.05

// UnwindowedInterval is the cadence assumed for a series without a
// window not yet seen (schedule.DefaultCadence); at run time the schedule
// follows the cadence the series shows (Learned).
const UnwindowedInterval = schedule.DefaultCadence

// minInterval is the schedule's floor between two calls of one series.
var minInterval = schedule.Default.MinInterval

// Report is the offline forecast of a configuration's upstream calls per
// UTC day; "all" counts as one value, its figures per value listed.
type Report struct {
	APIs []APIForecast
}

// APIForecast is the forecast of one API section.
type APIForecast struct {
	API         string
	DailyBudget int     // 0: none
	RateLimit   float64 // requests per minute; 0: none
	Entries     []EntryForecast
	Lists       []string // listing endpoints, each read once a day
	// CallsPerDay is the known cost of the entries without all and the
	// listing calls; those with all add PerValueCalls per value listed.
	CallsPerDay float64
	// Series counts the series of the entries without all; Unknown
	// those whose cost is not known offline.
	Series, Unknown int
	// Allotment is the cut under DailyBudget, one value listed per all.
	Allotment Allotment
}

// PerValueCalls is what the entries with all cost per value listed.
func (a APIForecast) PerValueCalls() float64 {
	var sum float64
	for _, e := range a.Entries {
		if len(e.PerValue) > 0 {
			sum += e.CallsPerDay
		}
	}
	return sum
}

// AtLeast is the least the API costs a day: CallsPerDay, and one value
// listed per all (a list of none fails expansion).
func (a APIForecast) AtLeast() float64 { return a.CallsPerDay + a.PerValueCalls() }

// RateLimitPerDay is rate_limit × 1440; 0 without one.
func (a APIForecast) RateLimitPerDay() float64 { return a.RateLimit * 1440 }

// OverBudget says the forecast, at least, exceeds daily_budget.
func (a APIForecast) OverBudget() bool {
	return a.DailyBudget > 0 && a.AtLeast() > float64(a.DailyBudget)
}

// OverRateLimit says the forecast, at least and within daily_budget,
// exceeds what rate_limit allows a day.
func (a APIForecast) OverRateLimit() bool {
	calls := a.AtLeast()
	if a.DailyBudget > 0 {
		calls = min(calls, float64(a.DailyBudget))
	}
	return a.RateLimit > 0 && calls > a.RateLimitPerDay()
}

// ByEndpoint is the forecast per configured path and listing endpoint,
// as the forecast gauge carries it.
func (a APIForecast) ByEndpoint() map[string]float64 {
	out := map[string]float64{}
	for _, e := range a.Entries {
		out[e.Path] += e.CallsPerDay
	}
	for _, l := range a.Lists {
		out[l]++
	}
	return out
}

// EntryForecast is the forecast of one metrics entry.
type EntryForecast struct {
	Key  string // data.metrics[0]
	Line int
	Path string // as configured
	// PerValue lists the parameters given as all: the figures are then
	// per value (combination) listed.
	PerValue    []string
	Series      int
	Windows     []WindowForecast
	CallsPerDay float64 // of the windows whose cost is known
}

// WindowForecast is the cost of an entry's series of one window and
// spacing.
type WindowForecast struct {
	Window string // min, 10min, hour, day, block; "" for none
	Series int
	// Every is the spacing of the rows or the poll interval; 0 when a
	// block spacing is not known.
	Every       time.Duration
	RowsPerDay  float64 // per series; 0 when it follows no rows
	CallsPerDay float64 // of all Series
	// Basis: "rows" (× Overhead), "cache_ttl", "no window", "learned
	// cadence", "revalidate" or "unknown".
	Basis string
	Chain string // of a block window, or the asset whose chain is unknown
}

// String says how the group is polled: "hour: 24 rows", "block (btc,
// 10m): 144 rows", "cache_ttl 1h", "day: 1 row, revalidate 10m", ...
func (w WindowForecast) String() string {
	name := w.Window
	switch {
	case w.Window == "block" && w.Every > 0:
		name = fmt.Sprintf("block (%s, %s)", w.Chain, human(w.Every))
	case w.Window == "block":
		name = fmt.Sprintf("block (%s)", w.Chain)
	}
	rows := func() string {
		if w.RowsPerDay == 1 {
			return name + ": 1 row"
		}
		return fmt.Sprintf("%s: %s rows", name, FormatCalls(w.RowsPerDay))
	}
	switch w.Basis {
	case "cache_ttl":
		return "cache_ttl " + human(w.Every)
	case "no window":
		return fmt.Sprintf("no window: a change every %s until learned", human(w.Every))
	case "revalidate":
		if w.Window == "" {
			return "revalidate " + human(w.Every)
		}
		return rows() + ", revalidate " + human(w.Every)
	case "unknown":
		if w.Window == "block" {
			return name + ": spacing unknown"
		}
		return name + ": unknown"
	}
	return rows()
}

// Forecast counts the calls a day cfg makes, without calling upstream;
// on an expanded configuration every value of "all" is counted.
func Forecast(cfg *config.Config) Report {
	var r Report
	for _, name := range config.APINames {
		if a := cfg.APIs[name]; a != nil {
			r.APIs = append(r.APIs, ForecastAPI(a, nil))
		}
	}
	return r
}

// Learned gives the spacing of a series without a window as the schedule
// learned it, 0 when it has not yet.
type Learned func(*config.Tuple) time.Duration

// ForecastAPI is the forecast of one API section; learned may be nil.
func ForecastAPI(a *config.API, learned Learned) APIForecast {
	f := APIForecast{API: a.Name, DailyBudget: a.DailyBudget, RateLimit: a.RateLimit}
	for _, l := range a.Lists() {
		f.Lists = append(f.Lists, l.Path)
	}
	var series []Series
	// Grouped once: scanning every tuple per entry would be quadratic.
	byEntry := make(map[*config.Entry][]*config.Tuple, len(a.Metrics))
	for _, t := range a.Tuples {
		byEntry[t.Entry] = append(byEntry[t.Entry], t)
	}
	for _, e := range a.Metrics {
		ef, ss := forecastEntry(a, e, byEntry[e], learned)
		if ef.Series == 0 {
			continue // left out of expansion (a list not read yet)
		}
		f.Entries = append(f.Entries, ef)
		if len(ef.PerValue) == 0 {
			f.Series += ef.Series
			f.CallsPerDay += ef.CallsPerDay
		}
		for _, w := range ef.Windows {
			if w.Basis == "unknown" {
				f.Unknown += w.Series
			}
		}
		series = append(series, ss...)
	}
	listing := float64(len(f.Lists)) // each read once a day
	f.CallsPerDay += listing
	f.Allotment = NewAllotment(series, listing, a.DailyBudget)
	return f
}

// forecastEntry counts one entry's tuples by window and spacing, and
// returns those of known cost as Allotment series.
func forecastEntry(a *config.API, e *config.Entry, tuples []*config.Tuple, learned Learned) (EntryForecast, []Series) {
	ef := EntryForecast{Key: e.Key, Line: e.Line, Path: e.Path}
	for _, p := range e.Params {
		if p.HasAll() {
			ef.PerValue = append(ef.PerValue, p.Name)
		}
	}
	name := e.Key + " " + e.Path
	var series []Series
	type groupKey struct {
		window, basis, chain string
		every                time.Duration
	}
	index := map[groupKey]int{}
	for _, t := range tuples {
		if !allOf(t, ef.PerValue) {
			continue
		}
		if t.Refused(a.Plan, time.Time{}) != nil {
			continue // the key's plan refuses it: it is not called
		}
		w := tupleCost(a, t, learned)
		ef.Series++
		first := w
		first.Series, first.CallsPerDay = 0, 0
		g := group(&ef.Windows, index, groupKey{w.Window, w.Basis, w.Chain, w.Every}, first)
		g.Series++
		g.CallsPerDay += w.CallsPerDay
		if w.Basis != "unknown" {
			ef.CallsPerDay += w.CallsPerDay
			every := w.Every
			if w.Basis == "cache_ttl" || w.Basis == "revalidate" {
				// Polled by the clock, not for rows: never coarsened.
				every = 0
			}
			series = append(series, Series{Key: t.Key, Entry: name, Window: t.Window, Every: every, CallsPerDay: w.CallsPerDay, Shared: e.Origin != nil})
		}
	}
	return ef, series
}

// allOf says whether a tuple stands for "all" of each parameter named: a
// value listed beside all is one of those, counted per value.
func allOf(t *config.Tuple, params []string) bool {
	for _, p := range params {
		if t.Params.Get(p) != config.All {
			return false
		}
	}
	return true
}

// tupleCost is the calls a day of one series as the schedule polls it:
// every cache_ttl; else per row × Overhead of its window or learned
// cadence (UnwindowedInterval until learned); at least every revalidate.
func tupleCost(a *config.API, t *config.Tuple, learned Learned) WindowForecast {
	w := WindowForecast{Window: t.Window, Series: 1, Basis: "rows"}
	if t.CacheTTL > 0 {
		w.Every = max(time.Duration(t.CacheTTL*float64(time.Second)), minInterval)
		w.Basis = "cache_ttl"
		w.CallsPerDay = perDay(w.Every)
		return w
	}
	switch t.Window {
	case "":
		w.Every, w.Basis = UnwindowedInterval, "no window"
		if learned != nil {
			if d := learned(t); d > 0 {
				w.Every, w.Basis = max(d, minInterval), "learned cadence"
			}
		}
	case "block":
		var ok bool
		if w.Chain, w.Every, ok = BlockSpacing(t); !ok {
			w.Basis = "unknown"
			return w
		}
	default:
		w.Every = plan.WindowDuration(t.Window)
		if w.Every == 0 {
			w.Basis = "unknown"
			return w
		}
	}
	w.RowsPerDay = perDay(w.Every)
	w.CallsPerDay = w.RowsPerDay * Overhead
	if r := max(a.Revalidate, minInterval); a.Revalidate > 0 && perDay(r) > w.CallsPerDay {
		w.Every, w.Basis, w.CallsPerDay = r, "revalidate", perDay(r)
	}
	return w
}

// perDay is how many intervals of d a day holds.
func perDay(d time.Duration) float64 { return float64(24*time.Hour) / float64(d) }

// BlockSpacing is the block spacing of a block-window series' chain as
// known offline: btc 10 min; Ethereum 12 s (eth, ERC-20 tokens, the v2
// events-count). Otherwise ok is false, chain names the asset, and the
// exporter learns the spacing from the rows.
func BlockSpacing(t *config.Tuple) (chain string, every time.Duration, ok bool) {
	asset := strings.ToLower(t.Asset())
	switch {
	case asset == "btc" || asset == "bitcoin":
		return "btc", 10 * time.Minute, true
	case asset == "eth" || asset == "ethereum" || asset == "erc20" || t.Params.Get("chain") == "ethereum",
		t.Endpoint != nil && t.Endpoint.Template == "/v2/network/events-count":
		return "ethereum", 12 * time.Second, true
	}
	if asset == "" {
		asset = t.Path
	}
	return asset, 0, false
}
