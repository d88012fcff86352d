package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// What --config.check says of pattern entries (path: /v1/btc/**): offline,
// that they expand at start; with --config.check.upstream, what each
// selects from discovery and the key's plan, what it leaves out and why,
// what max_tuples cut, and what its series cost a day per category.

// hasAll says whether an entry of the section lists all for a parameter.
func hasAll(a *config.API) bool {
	return slices.ContainsFunc(a.Metrics, func(e *config.Entry) bool { return slices.ContainsFunc(e.Params, config.Param.HasAll) })
}

func hasPatterns(a *config.API) bool {
	return slices.ContainsFunc(a.Metrics, func(e *config.Entry) bool { return e.Pattern != nil })
}

// checkStore hands the check's Expander the discovery answers the check
// read, so that expanding the patterns calls no list twice.
type checkStore struct{ cache *expand.Cache }

func (s checkStore) Cache() *expand.Cache { return s.cache }

// expandPatterns expands the data API section through the lists the
// check read and the plan in force on the pool's client, and returns cfg
// with it in place of the section as loaded: the other sections are
// judged against their lists as before (checkUpstream), not expanded.
// Its error is one of the file, with file:line, that the lists show
// (Expander.Expand). When the only errors are paths no list knows, the
// configuration is returned with the error: expanded as the exporter
// would start, those entries kept out, so that what the patterns select
// is shown all the same.
func expandPatterns(ctx context.Context, cfg *config.Config, pool *upstream.Pool, answers map[string]*expand.Answer, logger log.Logger) (*config.Config, plan.Outcome, error) {
	a := cfg.APIs[config.APIData]
	cache := expand.NewCache()
	cache.Restore(a.Name, upstream.Account(a), answers)
	x := expand.New(logger, expand.Options{Clients: pool, Store: checkStore{cache}, Once: true})
	data := &config.Config{File: cfg.File, APIs: map[string]*config.API{a.Name: a}, Tuples: a.Tuples}
	out, err := x.Expand(ctx, data)
	if err != nil && onlyUnlisted(err) {
		// As at start; the lists and the plan the first read are reused,
		// and what it would log is the error already returned.
		start := expand.New(log.NewNopLogger(), expand.Options{Clients: pool, Store: checkStore{cache}, Once: true})
		if out, _ = start.Start(ctx, data); out != nil {
			over := budget.PatternsOverBudget(out.File, out.APIs[a.Name])
			err = errors.Join(append([]error{err}, over...)...)
		}
	}
	if out == nil {
		return nil, x.PlanRead(), err
	}
	merged := *cfg
	merged.APIs = maps.Clone(cfg.APIs)
	merged.APIs[a.Name] = out.APIs[a.Name]
	return &merged, x.PlanRead(), err
}

// onlyUnlisted says whether every error err joins is a path no list
// knows (expand.UnlistedPath).
func onlyUnlisted(err error) bool {
	return err != nil && !slices.ContainsFunc(joined(err), func(e error) bool {
		_, ok := e.(*expand.UnlistedPath)
		return !ok
	})
}

// printPatterns says what each pattern entry of the data API selects.
func printPatterns(w io.Writer, cfg, resolved *config.Config) {
	a := cfg.APIs[config.APIData]
	if a == nil || !hasPatterns(a) {
		return
	}
	if resolved == nil {
		fmt.Fprintln(w, "\nPatterns expand at start from the data API's discovery and the key's plan; --config.check.upstream shows what each selects and costs.")
		for _, e := range a.Metrics {
			if e.Pattern != nil {
				fmt.Fprintf(w, "  %d\t%s\t%s\n", e.KeyLine("path"), e.Key, e.Path)
			}
		}
		return
	}
	ra := resolved.APIs[config.APIData]
	fmt.Fprintln(w, "\nPatterns, from the data API's discovery and the key's plan (calls a day before any cut by daily_budget):")
	for _, p := range ra.Patterns {
		fmt.Fprintf(w, "\n%s (line %d) %s: %s, %d series", p.Entry.Key, p.Entry.KeyLine("path"), p.Entry.Path, plural(p.Paths, "path"), p.Tuples)
		if p.Cut > 0 {
			fmt.Fprintf(w, ", %d more cut by max_tuples (%d)", p.Cut, ra.MaxTuples)
		}
		fmt.Fprintln(w)
		if p.Err != nil {
			fmt.Fprintf(w, "  not expanded: %v\n", p.Err)
		}
		categories := budget.PatternCategories(ra, p.Entry)
		writeTable(w, func(tw io.Writer) {
			fmt.Fprintln(tw, "  CATEGORY\tPATHS\tSERIES\tCALLS/DAY")
			for _, c := range categories {
				calls := budget.FormatCalls(c.CallsPerDay)
				if c.Unknown > 0 {
					calls += fmt.Sprintf(" + %d block series", c.Unknown)
				}
				fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\n", c.Category, c.Paths, c.Series, calls)
			}
		})
		for _, l := range p.Left {
			fmt.Fprintf(w, "  left out: %s\n", l)
		}
	}
	// A pattern whose discovery could not be read waits, as at start: it
	// selects nothing yet, and the check says so rather than nothing.
	for _, e := range a.Metrics {
		if e.Pattern != nil && !slices.ContainsFunc(ra.Patterns, func(p *config.PatternResult) bool { return p.Entry.Key == e.Key }) {
			fmt.Fprintf(w, "\n%s (line %d) %s: not expanded: %s was not read (Not checked, above, says why)\n",
				e.Key, e.KeyLine("path"), e.Path, config.DataDiscovery(e.Path))
		}
	}
}

// unset names the limits the file leaves to the plan.
func unset(a *config.API) string {
	switch {
	case !a.RateLimitSet && !a.DailyBudgetSet:
		return "rate_limit and daily_budget"
	case !a.RateLimitSet:
		return "rate_limit"
	}
	return "daily_budget"
}

// limitsText says the limits the plan gave.
func limitsText(a *config.API) string {
	var parts []string
	if !a.RateLimitSet && a.RateLimit > 0 {
		parts = append(parts, fmt.Sprintf("rate_limit %v a minute", a.RateLimit))
	}
	if !a.DailyBudgetSet && a.DailyBudget > 0 {
		parts = append(parts, fmt.Sprintf("daily_budget %d a day", a.DailyBudget))
	}
	return strings.Join(parts, ", ")
}
