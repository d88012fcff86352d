package budget

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// PlanLimits are the rate_limit (requests a minute) and daily_budget the
// key's plan gives: its allowance less the Reserve, left to the key's
// other uses; zero for what the plan does not give. An allowance per
// minute or less is a rate_limit and its day's share; a longer one only a
// daily_budget small enough that no window of its length, burst included,
// gets more than its share (a rate_limit would forbid a start's burst).
func PlanLimits(r plan.RateLimit) (perMinute float64, perDay int) {
	if !r.Known() {
		return 0, 0
	}
	share := float64(r.Token) * (1 - Reserve) // a window's calls
	period := r.Period()
	if period <= time.Minute {
		perMinute = math.Floor(share*float64(time.Minute)/float64(period)*100) / 100
		perDay := math.Floor(share * float64(24*time.Hour) / float64(period))
		return min(perMinute, config.MaxRateLimit), int(min(perDay, config.MaxDailyBudget))
	}
	// A day's budget d paces at d a day with room for burst(d) = d/96
	// calls: a window of length period holds at most d/96 + d×period/day.
	day := float64(24 * time.Hour)
	perDay = int(min(math.Floor(share/(1.0/96+float64(period)/day)), config.MaxDailyBudget))
	for perDay > 0 && burst(perDay)+float64(perDay)*float64(period)/day > share {
		perDay-- // burst's floor of one call, for a tiny allowance
	}
	return 0, perDay
}

// WithPlanLimits returns cfg with the key's plan on its data API section
// and, where the file sets none, its PlanLimits; cfg itself when that
// changes nothing.
func WithPlanLimits(cfg *config.Config, p *plan.Plan) *config.Config {
	a := cfg.APIs[config.APIData]
	if a == nil || p == nil || a.Plan.Equal(p) {
		return cfg
	}
	perMinute, perDay := PlanLimits(p.RateLimit)
	na := *a
	na.Plan = p
	if !na.RateLimitSet && perMinute > 0 {
		na.RateLimit, na.LimitsFromPlan = perMinute, p.Name
	}
	if !na.DailyBudgetSet && perDay > 0 {
		na.DailyBudget, na.LimitsFromPlan = perDay, p.Name
	}
	out := *cfg
	out.APIs = maps.Clone(cfg.APIs)
	out.APIs[config.APIData] = &na
	return &out
}

// PatternsOverBudget says, as errors with file:line, which pattern
// entries without coarsen: true cost more than daily_budget leaves them
// after the named entries: such a file is refused rather than cut unasked.
func PatternsOverBudget(file string, a *config.API) []error {
	f := ForecastAPI(a, nil)
	if f.DailyBudget <= 0 {
		return nil
	}
	cut := map[string]bool{} // entry names (Series.Entry) of the series coarsened
	for _, s := range f.Allotment.series {
		if s.Shared && f.Allotment.seriesFactor(s) > 1 {
			cut[s.Entry] = true
		}
	}
	var out []error
	for _, p := range a.Patterns {
		if p.Entry.Coarsen {
			continue
		}
		var natural float64
		over := false
		for _, t := range a.Tuples {
			if t.Entry.Origin != p.Entry {
				continue
			}
			natural += tupleCost(a, t, nil).CallsPerDay
			over = over || cut[t.Entry.Key+" "+t.Entry.Path]
		}
		if !over {
			continue
		}
		from := "daily_budget"
		if a.LimitsFromPlan != "" {
			from = "the daily_budget the plan (" + a.LimitsFromPlan + ") gives"
		}
		out = append(out, fmt.Errorf("%s:%d: %s.path: the %d series of %s cost %s calls a day, more than %s (%d) leaves them after the entries named one by one: "+
			"set coarsen: true to poll them less often than their rows, narrow the pattern (exclude:, window: coarsest), or raise daily_budget",
			file, p.Entry.KeyLine("path"), p.Entry.Key, p.Tuples, p.Entry.Path, FormatCalls(natural), from, f.DailyBudget))
	}
	return out
}

// CategoryCost is what the series a pattern entry brings of one category
// cost a day (PatternCategories).
type CategoryCost struct {
	Category      string // the path's third segment: /v1/{asset}/{category}/...
	Paths, Series int
	// CallsPerDay counts the series of known cost; Unknown the block
	// series whose spacing is learned once they run.
	CallsPerDay float64
	Unknown     int
}

// PatternCategories is what a pattern entry's tuples cost a day per
// category, before any cut (--config.check).
func PatternCategories(a *config.API, pattern *config.Entry) []CategoryCost {
	var out []CategoryCost
	index := map[string]int{}
	paths := map[string]bool{}
	for _, t := range a.Tuples {
		if t.Entry.Origin != pattern {
			continue
		}
		cat := "?"
		if segs := strings.Split(t.Path, "/"); len(segs) > 3 {
			cat = segs[3]
		}
		c := group(&out, index, cat, CategoryCost{Category: cat})
		if !paths[t.Path] {
			paths[t.Path] = true
			c.Paths++
		}
		c.Series++
		if w := tupleCost(a, t, nil); w.Basis == "unknown" {
			c.Unknown++
		} else {
			c.CallsPerDay += w.CallsPerDay
		}
	}
	slices.SortFunc(out, func(x, y CategoryCost) int { return cmp.Compare(x.Category, y.Category) })
	return out
}
