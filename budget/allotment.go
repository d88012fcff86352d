package budget

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/plan"
)

// Reserve is the share of the daily budget an Allotment leaves for calls
// it cannot foresee: retries, reloads' listing calls, late rows past
// Overhead. The daily refresh's listing calls come off besides.
const Reserve = 0.10

// MaxInterval is the longest an Allotment stretches a series' poll
// interval; past it the daily cap refuses the rest.
const MaxInterval = 7 * 24 * time.Hour

// Series is what an Allotment knows of one upstream series.
type Series struct {
	Key string // config.Tuple.Key, for Allotment.Factors
	// Entry names the configuration entry, as the summary shows it
	// ("data.metrics[0] /v1/btc/market-data/open-interest").
	Entry  string
	Window string // min, 10min, hour, day, block; "" for none
	// Every is the spacing of the series' rows (of blocks for block
	// windows): the unit a factor multiplies. 0 is a fixed cost, never cut.
	Every time.Duration
	// CallsPerDay is its natural cost: rows a day × Overhead, or a day
	// over its poll interval.
	CallsPerDay float64
	// Shared says the series comes from a pattern entry (path:
	// /v1/btc/**): they share what the named entries leave, cut first.
	Shared bool
}

// Allotment is how an API's series are polled when their natural cost
// exceeds the daily budget: each group of a window and spacing every
// max(Every, T), T the smallest common interval that fits, so Factor =
// T/Every need not be whole (2.5: alternately every 2nd and 3rd row) and
// the budget is spent, not rounded down. The finest windows are
// coarsened first, and a window's series share the cut evenly.
type Allotment struct {
	Budget    int     // the daily limit in force; 0: none, nothing cut
	Listing   float64 // listing calls a day, off the budget besides Reserve
	Available float64 // left a day for the series
	// Natural and Planned are the series' calls a day before and after
	// the cut.
	Natural, Planned float64
	Fits             bool       // Planned is within Available
	Groups           []Cut      // per window and spacing, finest first
	Entries          []EntryCut // costliest first
	Note             string     // what could not be done, if anything
	// series are those whose factor is above 1 (Factors,
	// PatternsOverBudget).
	series []Series
}

// Cut is the coarsening of the series of one window and spacing, those
// of patterns (Shared) apart from those named one by one.
type Cut struct {
	Window  string
	Every   time.Duration
	Shared  bool
	Series  int
	Factor  float64 // ≥ 1; the series are polled for one row in Factor
	Natural float64
	Planned float64
}

// Interval is how often, on average, the group's series are polled under
// the allotment.
func (c Cut) Interval() time.Duration { return time.Duration(float64(c.Every) * c.Factor) }

// EntryCut is the cost of one configuration entry under an allotment.
type EntryCut struct {
	Entry            string
	Series           int
	Natural, Planned float64
	// Cut lists the windows of the entry that are polled less often.
	Cut []string
}

// NewAllotment plans series under a daily budget (0 = none) of which
// listing calls go to listing endpoints. The patterns' series are cut
// first: the named ones keep every row while the patterns', up to
// MaxInterval, can make it fit.
func NewAllotment(series []Series, listing float64, budget int) Allotment {
	p := Allotment{Budget: budget, Listing: listing}
	index := map[Cut]int{} // by a group's window, spacing and sharing alone
	var fixed float64
	for _, s := range series {
		p.Natural += s.CallsPerDay
		if s.Every <= 0 {
			fixed += s.CallsPerDay
			continue
		}
		k := Cut{Window: s.Window, Every: s.Every, Shared: s.Shared, Factor: 1}
		g := group(&p.Groups, index, k, k)
		g.Series++
		g.Natural += s.CallsPerDay
	}
	slices.SortFunc(p.Groups, func(a, b Cut) int {
		return cmp.Or(cmp.Compare(a.Every, b.Every), cmp.Compare(a.Window, b.Window), cmp.Compare(pick(a.Shared, 1, 0), pick(b.Shared, 1, 0)))
	})
	p.Available = float64(budget)*(1-Reserve) - listing
	// costOf: the named series polled every tNamed, the patterns' every tShared.
	costOf := func(tNamed, tShared time.Duration) float64 {
		c := fixed
		for _, g := range p.Groups {
			c += cutCost(g.Natural, factor(g.Every, pick(g.Shared, tShared, tNamed)))
		}
		return c
	}
	cost := func(t time.Duration) float64 { return costOf(t, t) }
	shared := slices.ContainsFunc(p.Groups, func(g Cut) bool { return g.Shared })
	var tNamed, tShared time.Duration
	switch {
	case budget <= 0 || cost(0) <= p.Available:
	case cost(MaxInterval) > p.Available:
		tNamed, tShared = MaxInterval, MaxInterval
	case shared && costOf(0, MaxInterval) <= p.Available:
		tShared = smallestFit(func(t time.Duration) float64 { return costOf(0, t) }, p.Available)
	default:
		if shared {
			tShared = MaxInterval
		}
		tNamed = smallestFit(func(t time.Duration) float64 { return costOf(t, max(t, tShared)) }, p.Available)
		tShared = max(tNamed, tShared)
	}
	for i := range p.Groups {
		g := &p.Groups[i]
		g.Factor = factor(g.Every, pick(g.Shared, tShared, tNamed))
		g.Planned = cutCost(g.Natural, g.Factor)
	}
	p.Planned = costOf(tNamed, tShared)
	p.Fits = budget <= 0 || p.Planned <= p.Available
	p.Entries = p.entries(series)
	p.Note = p.note(cost, fixed)
	for _, s := range series {
		if p.seriesFactor(s) > 1 {
			p.series = append(p.series, s)
		}
	}
	p.series = slices.Clip(p.series)
	return p
}

// group returns the element of out under k (index maps keys to places in
// out), appending first when there is none.
func group[K comparable, V any](out *[]V, index map[K]int, k K, first V) *V {
	i, ok := index[k]
	if !ok {
		i = len(*out)
		index[k] = i
		*out = append(*out, first)
	}
	return &(*out)[i]
}

// factor is the share of its rows a series of spacing every is polled
// for under a common interval t: t/every, at least 1.
func factor(every, t time.Duration) float64 {
	return max(1, float64(t)/float64(every))
}

// cutCost is the calls a day of series of natural cost polled for one row
// in f. Uncut a row costs Overhead calls; coarsened one: a late row is
// not polled for again, the next poll is for a later one.
func cutCost(natural, f float64) float64 {
	if f <= 1 {
		return natural
	}
	return natural / Overhead / f
}

// smallestFit is the smallest interval whose cost is within available,
// by bisection: cost falls as the interval grows and fits at MaxInterval.
func smallestFit(cost func(time.Duration) float64, available float64) time.Duration {
	lo, hi := time.Duration(0), MaxInterval // cost(lo) > available ≥ cost(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if cost(mid) <= available {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func (p Allotment) entries(series []Series) []EntryCut {
	index := map[string]int{}
	var out []EntryCut
	for _, s := range series {
		e := group(&out, index, s.Entry, EntryCut{Entry: s.Entry})
		f := p.seriesFactor(s)
		e.Series++
		e.Natural += s.CallsPerDay
		e.Planned += cutCost(s.CallsPerDay, f)
		if f > 1 && !slices.Contains(e.Cut, s.Window) {
			e.Cut = append(e.Cut, s.Window)
		}
	}
	slices.SortStableFunc(out, func(a, b EntryCut) int { return cmp.Compare(b.Natural, a.Natural) })
	return out
}

func (p Allotment) note(cost func(time.Duration) float64, fixed float64) string {
	switch {
	case p.Budget <= 0:
		return ""
	case p.Available <= fixed:
		return fmt.Sprintf("the listing calls (%s a day) and the %.0f %% reserve leave nothing of daily budget %d for the series: they are polled at most every %s, and the daily cap refuses the rest",
			FormatCalls(p.Listing), Reserve*100, p.Budget, human(MaxInterval))
	case !p.Fits:
		return fmt.Sprintf("even a call every %s per series exceeds the %s calls a day left for series: the daily cap refuses the rest", human(MaxInterval), FormatCalls(p.Available))
	case cost(24*time.Hour+1) > p.Available:
		return fmt.Sprintf("even a call a day per series exceeds the %s calls a day left for series: day rows are missed", FormatCalls(p.Available))
	}
	return ""
}

// Cut says whether the allotment polls any series less often than its rows.
func (p Allotment) Cut() bool {
	return slices.ContainsFunc(p.Groups, func(g Cut) bool { return g.Factor > 1 })
}

// Factor is the coarsening factor of a window and spacing (1 when not
// cut); the larger where named and pattern series both have one.
func (p Allotment) Factor(window string, every time.Duration) float64 {
	f := 1.0
	for _, g := range p.Groups {
		if g.Window == window && g.Every == every {
			f = max(f, g.Factor)
		}
	}
	return f
}

// seriesFactor is the coarsening factor of one series: its group's.
func (p Allotment) seriesFactor(s Series) float64 {
	for _, g := range p.Groups {
		if g.Window == s.Window && g.Every == s.Every && g.Shared == s.Shared {
			return g.Factor
		}
	}
	return 1
}

// pick is a if c, else b.
func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// Factors is the coarsening factor of each series cut, by Key: Ethereum
// blocks (12 s) may be cut while Bitcoin's (10 min), same window, are not.
func (p Allotment) Factors() map[string]float64 {
	out := map[string]float64{}
	for _, s := range p.series {
		if f := p.seriesFactor(s); f > 1 && s.Every > 0 && s.Key != "" {
			out[s.Key] = f
		}
	}
	return out
}

// WindowFactors is each window's coarsening factor, the largest among
// its spacings (block windows of several chains).
func (p Allotment) WindowFactors() map[string]float64 {
	out := map[string]float64{}
	for _, g := range p.Groups {
		out[g.Window] = max(out[g.Window], g.Factor)
	}
	return out
}

// Summary is the allotment in one line (the log, the landing page): the
// natural cost against the budget, each window's cut, and the top
// costliest entries.
func (p Allotment) Summary(top int) string {
	if p.Budget <= 0 {
		return fmt.Sprintf("no daily budget: %s calls a day", FormatCalls(p.Natural+p.Listing))
	}
	listing := FormatCalls(p.Listing) + " listing calls"
	if p.Listing == 1 {
		listing = "1 listing call"
	}
	s := fmt.Sprintf("natural cost %s calls a day, daily budget %d (%s for series after the %.0f %% reserve and %s): %s",
		FormatCalls(p.Natural), p.Budget, FormatCalls(max(p.Available, 0)), Reserve*100, listing, p.Degradation())
	if p.Cut() {
		s += fmt.Sprintf(", %s calls a day planned; costliest: %s", FormatCalls(p.Planned), p.Costliest(top))
	}
	if p.Note != "" {
		s += "; " + p.Note
	}
	return s
}

// Degradation says what each window gets, finest first, when one is
// polled less often: "min polled every 2m25s (one row in 2.41, 1197 calls
// a day), 10min every row (302 calls a day)", or "nothing cut".
func (p Allotment) Degradation() string {
	if !p.Cut() {
		return "nothing cut"
	}
	var gets []string
	for _, g := range p.Groups {
		name := windowName(g.Window, g.Every)
		if g.Shared {
			name += " of patterns"
		}
		if g.Factor <= 1 {
			gets = append(gets, fmt.Sprintf("%s every row (%s calls a day)", name, FormatCalls(g.Planned)))
			continue
		}
		gets = append(gets, fmt.Sprintf("%s polled every %s (one row in %s, %s calls a day)",
			name, human(g.Interval()), FormatFactor(g.Factor), FormatCalls(g.Planned)))
	}
	return strings.Join(gets, ", ")
}

// FormatFactor shows a coarsening factor to two decimals, rounded up so
// that it never shows less cut than there is: 3, 2.5, 2.41.
func FormatFactor(f float64) string {
	return strconv.FormatFloat(math.Ceil(f*100-1e-6)/100, 'f', -1, 64)
}

// Costliest names the top costliest entries, calls a day before and
// after: "data.metrics[4] /v2/network/events-count 15120 → 7560, ...".
func (p Allotment) Costliest(top int) string {
	var es []string
	for _, e := range p.Entries[:min(max(top, 0), len(p.Entries))] {
		es = append(es, fmt.Sprintf("%s %s → %s", e.Entry, FormatCalls(e.Natural), FormatCalls(e.Planned)))
	}
	return strings.Join(es, ", ")
}

// windowName names a group, with its spacing where the window's name
// does not say it.
func windowName(window string, every time.Duration) string {
	switch window {
	case "block":
		return fmt.Sprintf("block (%s)", human(every))
	case "":
		return fmt.Sprintf("no window (every %s)", human(every))
	}
	if every != plan.WindowDuration(window) {
		return fmt.Sprintf("%s (every %s)", window, human(every))
	}
	return window
}

// FormatCalls shows a number of calls: whole, or with one decimal below
// 10 (a day row costs 1.1 calls at the schedule's overhead).
func FormatCalls(f float64) string {
	if f < 9.95 && f != math.Trunc(f) {
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.0f", f)
}

// human shows a duration as a configuration writes it: 12s, 17m, 1h30m, 2d.
func human(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
