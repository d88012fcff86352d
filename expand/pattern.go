package expand

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/internal/text"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// Pattern entries (path: /v1/btc/**) expand from discovery and the key's
// plan together: the paths discovery lists that the pattern selects, but
// those excluded, not in the plan or its statics (lists, metadata); at the
// windows both allow, chosen by the entry; with each path's parameters.
// Without a plan discovery alone decides.

// match is the config.Matcher of one expansion.
func (r *resolution) match(a *config.API, e *config.Entry) ([]config.Match, []string, error) {
	items, err := r.byPath(a, config.DataDiscovery(e.Path))
	if err != nil {
		return nil, nil, err
	}
	kp := r.x.plans(a)
	var out []config.Match
	var left []string
	selected := 0
	notInPlan := 0
	for i, item := range items {
		path, it := item.path, item.row
		if i > 0 && items[i-1].path == path || !e.Selects(path) {
			continue // listed twice: the first says it
		}
		selected++
		switch {
		case strings.Contains(path, "{"):
			left = append(left, text.Outside(path, maxShownPath)+" (a template, not a path)")
			continue
		case !plainPath(path):
			// Outside text: it would reach labels, the page and the log.
			left = append(left, text.Outside(path, maxShownPath)+" (not a path to ask: a character other than a letter, a digit or one of - . _ ~ / :)")
			continue
		case kp != nil && slices.Contains(kp.Statics, path):
			continue // a list or metadata the plan always allows: not a series
		case kp != nil && kp.Covers(path) && !kp.Listed(path):
			notInPlan++
			continue
		}
		m, why := matchPath(e, kp, path, it)
		if why != "" {
			left = append(left, path+" ("+why+")")
			continue
		}
		out = append(out, m)
	}
	if notInPlan > 0 {
		what := "paths"
		if notInPlan == 1 {
			what = "path"
		}
		left = append(left, fmt.Sprintf("%d %s not in your plan (%s)", notInPlan, what, kp.Name))
	}
	if len(out) == 0 && selected == 0 {
		left = append(left, config.DataDiscovery(e.Path)+" lists no path the pattern selects")
	}
	return out, left, nil
}

// maxShownPath is the most of a listed path a line about it shows.
const maxShownPath = 200

// plainPath says whether a listed path is one a pattern may select: it
// starts with / and holds only letters, digits and - . _ ~ / : (none of
// which a URL, a label or a log line changes).
func plainPath(p string) bool {
	return strings.HasPrefix(p, "/") && strings.IndexFunc(p, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~/:", r))
	}) < 0
}

// pathRow is an item of a discovery list and its path.
type pathRow struct {
	path string
	row  map[string]any
}

// byPath is a discovery list's items ordered by path, sorted once per
// expansion; the Cache's rows are left as they are (a save may be
// writing them).
func (r *resolution) byPath(a *config.API, list string) ([]pathRow, error) {
	key := listKey(a, list)
	if items, ok := r.sorted[key]; ok {
		return items, nil
	}
	rows, err := r.rows(a, list)
	if err != nil {
		return nil, err
	}
	items := make([]pathRow, len(rows))
	for i, row := range rows {
		path, _ := row["path"].(string)
		items[i] = pathRow{path: path, row: row}
	}
	slices.SortStableFunc(items, func(x, y pathRow) int { return cmp.Compare(x.path, y.path) })
	if r.sorted == nil {
		r.sorted = map[string][]pathRow{}
	}
	r.sorted[key] = items
	return items, nil
}

// matchPath is the Match of one path, or why it is left out.
func matchPath(e *config.Entry, kp *plan.Plan, path string, it map[string]any) (config.Match, string) {
	m := config.Match{Path: path}
	listed, _ := it["parameters"].(map[string]any)
	if assets, ok := it["assets"]; ok {
		// v2 lists an endpoint's assets beside its parameters (AddDiscovery).
		listed = maps.Clone(listed)
		if listed == nil {
			listed = map[string]any{}
		}
		listed["asset"] = assets
	}
	windows := strs(listed["window"])
	if kp != nil && kp.Covers(path) {
		allowed := kp.WindowsOf(path)
		if len(windows) == 0 {
			windows = allowed
		} else if len(allowed) > 0 {
			windows = slices.DeleteFunc(slices.Clone(windows), func(w string) bool { return !slices.Contains(allowed, w) })
			if len(windows) == 0 {
				return m, fmt.Sprintf("discovery's windows are not your plan's (%s)", strings.Join(allowed, ", "))
			}
		}
	}
	var why string
	if m.Windows, why = chooseWindows(e, windows); why != "" {
		return m, why
	}
	required := strs(it["required_parameters"])
	for _, p := range e.Params {
		values, ok := listed[p.Name]
		if !ok && !slices.Contains(required, p.Name) {
			continue // this path takes no such parameter
		}
		vs := strs(values)
		kept := slices.DeleteFunc(slices.Clone(p.Values), func(v string) bool {
			return v != config.All && len(vs) > 0 && !slices.Contains(vs, v)
		})
		if len(kept) == 0 {
			return m, fmt.Sprintf("lists none of %s %s", p.Name, strings.Join(p.Values, ", "))
		}
		p.Values = kept
		m.Params = append(m.Params, p)
	}
	// A parameter the entry does not set, optional or not, takes its
	// aggregate (all_exchange), so that the series is labelled as what it
	// is; a required one without an aggregate leaves the path out.
	names := slices.Sorted(maps.Keys(listed))
	for _, name := range required {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		if name == "window" || slices.ContainsFunc(m.Params, func(p config.Param) bool { return p.Name == name }) {
			continue
		}
		i := slices.IndexFunc(strs(listed[name]), func(v string) bool { return config.LeftOutOfAll(config.APIData, name, v) == "aggregate" })
		switch {
		case i >= 0:
			m.Params = append(m.Params, config.Param{Name: name, Values: []string{strs(listed[name])[i]}, Line: e.Line})
		case slices.Contains(required, name):
			return m, fmt.Sprintf("requires %s: set it on the entry, a value or all", name)
		}
	}
	return m, ""
}

// chooseWindows picks a path's windows among those allowed as the entry
// asks, the coarsest by default; none listed reads the API's default.
func chooseWindows(e *config.Entry, allowed []string) ([]string, string) {
	if len(allowed) == 0 {
		return nil, ""
	}
	allowed = slices.Clone(allowed)
	slices.SortStableFunc(allowed, coarserFirst)
	switch {
	case len(e.Windows) > 0:
		out := slices.DeleteFunc(slices.Clone(e.Windows), func(w string) bool { return !slices.Contains(allowed, w) })
		if len(out) == 0 {
			return nil, fmt.Sprintf("none of the windows %s (allowed: %s)", strings.Join(e.Windows, ", "), strings.Join(allowed, ", "))
		}
		return out, ""
	case e.WindowChoice == config.WindowsAll:
		return allowed, ""
	case e.WindowChoice == config.WindowsFinest:
		return allowed[len(allowed)-1:], ""
	}
	return allowed[:1], ""
}

// coarserFirst orders windows by their spacing, the longest first; those
// of no fixed spacing (block) last.
func coarserFirst(a, b string) int {
	if c := cmp.Compare(plan.WindowDuration(b), plan.WindowDuration(a)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// PlanAnswer is a plan outcome as the Cache keeps it under plan.Path
// (Cache.Restore); nil for an unknown outcome, which is not kept.
func PlanAnswer(out plan.Outcome, at time.Time) *Answer {
	if out.Kind == plan.Unknown {
		return nil
	}
	return &Answer{Rows: rowsOf(out), At: at}
}

// planLimits gives the data API the limits of the key's plan where the
// file sets neither (budget.WithPlanLimits), and logs them when they
// change.
func (x *Expander) planLimits(cfg *config.Config) *config.Config {
	a := cfg.APIs[config.APIData]
	if a == nil {
		return cfg
	}
	out := budget.WithPlanLimits(cfg, x.plans(a))
	if na := out.APIs[config.APIData]; na != a && na.LimitsFromPlan != "" {
		if x.newly("plan limits", "", fmt.Sprintf("%s %v %d", na.LimitsFromPlan, na.RateLimit, na.DailyBudget)) {
			level.Info(x.logger).Log("msg", "rate_limit and daily_budget not set in the file: taken from the key's plan, less the reserve",
				"api", na.Name, "plan", na.LimitsFromPlan, "rate_limit", na.RateLimit, "daily_budget", na.DailyBudget)
		}
	}
	return out
}

// patternState is what one pattern entry expanded to, for the metrics.
type patternState struct {
	api, entry, pattern string
	tuples, cut         int
}

var (
	patternTuplesDesc = prometheus.NewDesc(namespace+"_pattern_tuples",
		"Tuples a pattern entry (path: /v1/btc/**) expanded to, in the configuration in force.", []string{"api", "entry", "pattern"}, nil)
	patternCutDesc = prometheus.NewDesc(namespace+"_pattern_tuples_cut",
		"Tuples a pattern entry selected past max_tuples, left out of the configuration in force.", []string{"api", "entry", "pattern"}, nil)
)

// notePatterns records what the patterns of an expansion came to, and
// logs each when that changes.
func (x *Expander) notePatterns(cfg *config.Config) {
	var states []patternState
	for _, name := range config.APINames {
		a := cfg.APIs[name]
		if a == nil {
			continue
		}
		for _, p := range a.Patterns {
			states = append(states, patternState{api: name, entry: p.Entry.Key, pattern: p.Entry.Path, tuples: p.Tuples, cut: p.Cut})
			if !x.newly("pattern", name+" "+p.Entry.Key+" "+p.Entry.Path, fmt.Sprintf("%d %d %d %v", p.Paths, p.Tuples, p.Cut, p.Err)) {
				continue
			}
			kv := []any{"api", name, "entry", p.Entry.Key, "pattern", p.Entry.Path, "paths", p.Paths, "tuples", p.Tuples}
			switch {
			case p.Err != nil:
				level.Warn(x.logger).Log(append([]any{"msg", "pattern not expanded: its discovery list could not be read"}, append(kv, "err", p.Err)...)...)
			case p.Cut > 0:
				level.Warn(x.logger).Log(append([]any{"msg", "pattern cut by max_tuples: the entries named one by one come first; raise max_tuples or narrow the pattern"},
					append(kv, "cut", p.Cut, "max_tuples", a.MaxTuples)...)...)
			default:
				kv = append(kv, "left_out", len(p.Left))
				level.Info(x.logger).Log(append([]any{"msg", "pattern expanded from discovery and the key's plan"}, kv...)...)
			}
		}
	}
	x.mu.Lock()
	x.patterns = states
	x.mu.Unlock()
}

func (x *Expander) collectPatterns(ch chan<- prometheus.Metric) {
	x.mu.Lock()
	states := x.patterns
	x.mu.Unlock()
	for _, s := range states {
		ch <- prometheus.MustNewConstMetric(patternTuplesDesc, prometheus.GaugeValue, float64(s.tuples), s.api, s.entry, s.pattern)
		ch <- prometheus.MustNewConstMetric(patternCutDesc, prometheus.GaugeValue, float64(s.cut), s.api, s.entry, s.pattern)
	}
}

// PlanOf reads back a plan outcome kept under plan.Path (PlanAnswer); an
// unknown outcome for none.
func PlanOf(a *Answer) plan.Outcome {
	if a == nil {
		return plan.Outcome{Kind: plan.Unknown}
	}
	return outcomeOf(a.Rows)
}

// Offline expands cfg as Expand does, with no call: from kept listing
// answers (by API and path, nil for none) and the plan p (nil: none), as
// --config.check does from a state file. Entries whose lists are not kept
// stay out.
func Offline(cfg *config.Config, answers func(api, path string) *Answer, p *plan.Plan, logger log.Logger) (*config.Config, error) {
	x := &Expander{logger: logger, now: time.Now, logged: map[logKey]string{}, state: map[string]*State{},
		planSaid: map[string]string{}, plans: func(*config.API) *plan.Plan { return p }}
	r := &resolution{x: x, ctx: context.Background()}
	if !r.plan(cfg) {
		return budget.WithPlanLimits(cfg, p), nil
	}
	for key, req := range r.requests {
		if a := answers(req.api.Name, req.path); a != nil {
			r.lists[key] = listResult{rows: a.Rows, ok: true}
		}
	}
	r.markWaiting()
	out, err := r.withoutWaiting(cfg).ResolveWith(r.resolve, r.match)
	if err != nil {
		return nil, err
	}
	out = budget.WithPlanLimits(out, p)
	if a := out.APIs[config.APIData]; a != nil {
		if errs := budget.PatternsOverBudget(out.File, a); len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
	}
	return out, nil
}
