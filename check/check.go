// Package check is --config.check: the file loaded and validated, its
// findings (config.Findings) and the forecast of upstream calls a day,
// offline. With --config.check.upstream the listing endpoints are read too,
// once each, through the exporter's own clients (upstream.Pool), and every
// path, parameter name and value is checked against them as expand reads
// them, every data tuple against the key's plan, and what each pattern
// selects and costs is shown; a path no list knows is an error (lists.go,
// expand.Unlisted). Offline, what the last run kept in --storage.path
// stands in for the upstream's lists (saved.go).
package check

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Options say what to check: the flags of --config.check.
type Options struct {
	// ConfigFile is --config.file; with Demo, the embedded demo's
	// configuration is checked instead.
	ConfigFile string
	Demo       bool
	// Upstream is --config.check.upstream: read the listing endpoints and
	// the key's plan.
	Upstream bool
	// StoragePath is --storage.path: offline, the listing answers and the
	// key's plan the last run kept there stand in for the upstream's.
	StoragePath string
	Logger      log.Logger
}

// Run loads the configuration, prints the outcome of the check on stdout
// (its errors on stderr) and returns the process's exit code: 1 when the
// file does not load, 0 otherwise, findings included (they are warnings).
func Run(stdout, stderr io.Writer, o Options) int {
	logger := o.Logger
	if logger == nil {
		logger = log.NewNopLogger()
	}
	parse, d, err := demo.Source(o.ConfigFile, o.Demo, logger)
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the demo", "err", err)
		return 1
	}
	if d != nil {
		defer d.Close()
	}
	cfg, err := parse()
	hint := ""
	if errors.Is(err, fs.ErrNotExist) && !o.Demo {
		hint = demo.MissingConfigHint(o.ConfigFile)
	}
	return checkConfig(stdout, stderr, cfg, err, hint, o.Upstream, logger, o.StoragePath)
}

// checkUpstreamBudget bounds the listing calls of --config.check.upstream
// together; each call has its API's timeout besides.
const checkUpstreamBudget = time.Minute

// checkConfig prints the outcome of the check of cfg (or of err, the
// file's error, with its hint) and returns the exit code. storage is
// --storage.path, read offline.
func checkConfig(stdout, stderr io.Writer, cfg *config.Config, err error, hint string, withUpstream bool, logger log.Logger, storage string) int {
	if err != nil {
		fmt.Fprintln(stderr, err)
		if hint != "" {
			fmt.Fprintln(stderr, hint)
		}
		return 1
	}
	// The first line says what the file selects once its patterns and
	// lists are resolved, or why it fails: it is known, and printed,
	// before the rest, which is written as it is made (a forecast of
	// 85 000 paths is 9 MB of text).
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	stdout = out
	findings := cfg.Findings()
	var read, notChecked, planLines []string
	var resolved *config.Config
	var unlisted []*expand.UnlistedPath
	var expandErr error
	var more []config.Finding
	if withUpstream {
		ctx, cancel := context.WithTimeout(context.Background(), checkUpstreamBudget)
		read, more, notChecked, planLines, unlisted, resolved, expandErr = checkUpstream(ctx, cfg, logger)
		cancel()
		findings = config.SortFindings(append(superseded(findings, more), more...))
		findings = slices.DeleteFunc(findings, func(f config.Finding) bool {
			// said as the error it is, with what it is near
			return f.Kind == config.FindingListingPath && slices.ContainsFunc(unlisted, func(u *expand.UnlistedPath) bool { return f.Key == u.Entry.Key+".path" })
		})
	} else if storage != "" {
		planLines, more, unlisted, resolved, expandErr = checkSaved(storage, cfg, logger)
		findings = config.SortFindings(append(findings, more...))
	}
	failures := upstreamFailures(cfg, resolved, withUpstream, notChecked)
	for _, u := range unlisted {
		failures = append(failures, u.Error())
	}
	// What the upstream lists shows the file wrong: a pattern over the
	// budget without coarsen: true, an all past max_tuples; a path no list
	// knows is said once, above.
	for _, err := range joined(expandErr) {
		if u := (*expand.UnlistedPath)(nil); !errors.As(err, &u) {
			failures = append(failures, err.Error())
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(stdout, "FAILED: %s: %s\n", cfg.File, strings.Join(failures, "; "))
		_ = out.Flush() // before the failures on stderr
		for _, f := range failures {
			fmt.Fprintln(stderr, f)
		}
	} else {
		fmt.Fprintf(stdout, "OK: %s: %s\n", cfg.File, selects(cfg, resolved))
	}
	for _, f := range findings {
		fmt.Fprintf(stdout, "WARNING: %s\n", f)
	}
	if withUpstream {
		fmt.Fprintf(stdout, "Checked against the upstream's lists: %s\n", strings.Join(read, "; "))
	}
	for _, l := range planLines {
		fmt.Fprintf(stdout, "Plan: %s\n", l)
	}
	for _, n := range notChecked {
		fmt.Fprintf(stdout, "Not checked: %s\n", n)
	}
	printPatterns(stdout, cfg, resolved)         // pattern.go
	printForecast(stdout, cmp.Or(resolved, cfg)) // forecast.go
	if len(failures) > 0 {
		return 1
	}
	return 0
}

// selects says what the file selects: its tuples once patterns and lists
// are resolved, or, offline, the tuples named and the pattern entries
// that expand at start.
func selects(cfg, resolved *config.Config) string {
	if resolved != nil {
		n := 0
		for _, a := range resolved.APIs {
			n += len(a.Tuples)
		}
		return plural(n, "tuple")
	}
	patterns := 0
	if a := cfg.APIs[config.APIData]; a != nil {
		for _, e := range a.Metrics {
			if e.Pattern != nil {
				patterns++
			}
		}
	}
	if patterns == 0 {
		return plural(len(cfg.Tuples), "tuple")
	}
	return fmt.Sprintf("%s named; %s, expanded at start (--config.check.upstream resolves it here)",
		plural(len(cfg.Tuples), "tuple"), plural(patterns, "pattern entry"))
}

// upstreamFailures are what makes a check against the upstream fail: a
// credential the upstream rejects (the exporter would run and serve
// nothing), a pattern entry that selects nothing.
func upstreamFailures(cfg, resolved *config.Config, withUpstream bool, notChecked []string) []string {
	if !withUpstream {
		return nil
	}
	var out []string
	for _, n := range notChecked {
		if l := strings.ToLower(n); strings.Contains(l, "unauthorized") || strings.Contains(l, "invalid_api_key") || strings.Contains(l, "api_key_required") || strings.Contains(l, "http 401") {
			out = append(out, "the upstream rejects the credential: "+n)
		}
	}
	if resolved != nil {
		if a := resolved.APIs[config.APIData]; a != nil {
			for _, p := range a.Patterns {
				if p.Tuples == 0 && p.Cut == 0 && p.Err == nil {
					out = append(out, fmt.Sprintf("%s:%d: %s selects nothing the data API's discovery lists and the key's plan allows", cfg.File, p.Entry.KeyLine("path"), p.Entry.Path))
				}
			}
		}
	}
	return out
}

// superseded drops the findings against the catalog of a key that the
// lists have a finding of: what the upstream lists says more.
func superseded(catalog, listing []config.Finding) []config.Finding {
	return slices.DeleteFunc(catalog, func(f config.Finding) bool {
		return slices.ContainsFunc(listing, func(l config.Finding) bool { return l.Key == f.Key })
	})
}

// checkUpstream reads each listing endpoint the configuration's APIs
// have, once, and checks the file against them; for the data API it reads
// the key's plan too (last, so that a refusal of it cannot pause the list
// calls) and names every tuple the plan does not allow. It returns the
// lists read (with how many items each gave), the findings, what it could
// not check and why, what the plan read came to, the paths no list knows
// (expand.Unlisted: errors), and the configuration expanded through the
// lists and the plan (nil when there is nothing to expand) or why the
// lists show the file wrong.
func checkUpstream(ctx context.Context, cfg *config.Config, logger log.Logger) (read []string, findings []config.Finding, notChecked, planLines []string,
	unlisted []*expand.UnlistedPath, resolved *config.Config, expandErr error) {
	pool := upstream.NewPool(prometheus.NewRegistry(), time.Now, logger)
	defer pool.Close()
	list := func(a *config.API, path string, keyed bool) ([]map[string]any, bool) {
		rows, err := pool.Client(a).List(ctx, path, nil, keyed)
		if err != nil {
			notChecked = append(notChecked, fmt.Sprintf("%s: what %s lists (%s)", a.Name, path, pool.Clean(a.Name, err.Error())))
			return nil, false
		}
		read = append(read, fmt.Sprintf("%s %s (%s)", a.Name, path, plural(len(rows), "item")))
		return rows, true
	}
	answers := map[string]*expand.Answer{}
	if a := cfg.APIs[config.APIData]; a != nil {
		listing := config.Listing{}
		for _, path := range []string{config.ListDataV1, config.ListDataV2} {
			if !slices.ContainsFunc(a.Tuples, func(t *config.Tuple) bool { return config.DataDiscovery(t.Path) == path }) &&
				!slices.ContainsFunc(a.Metrics, func(e *config.Entry) bool { return e.Pattern != nil && config.DataDiscovery(e.Path) == path }) {
				continue
			}
			if rows, ok := list(a, path, true); ok {
				expand.AddDiscovery(listing, rows)
				answers[path] = &expand.Answer{Rows: rows, At: time.Now()}
			}
		}
		findings = append(findings, cfg.CheckListingFindings(listing)...)
		unlisted = expand.Unlisted(cfg, listing) // judged with the plan below
		notChecked = append(notChecked, "data: window and limit against discovery (the built-in catalog checks them for its endpoints)")
	}
	// checkList checks the names a key-free list gives. A list whose items
	// carry nothing readable checks nothing: its shape is not published,
	// and an unread list is no reason to warn.
	checkList := func(a *config.API, path, what string, names func([]map[string]any) []string, check func([]string) []config.Finding) {
		rows, ok := list(a, path, false)
		if !ok {
			return
		}
		if ns := names(rows); len(ns) > 0 {
			findings = append(findings, check(ns)...)
		} else {
			notChecked = append(notChecked, fmt.Sprintf("%s: %s (%s lists none the exporter can read)", a.Name, what, path))
		}
	}
	if a := cfg.APIs[config.APIIndicator]; a != nil {
		checkList(a, config.ListIndicators, "paths", expand.IndicatorPaths, func(paths []string) []config.Finding {
			return checkIndicatorPaths(cfg.File, a, paths)
		})
		checkList(a, config.ListEquities, "equities", expand.EquityIDs, func(ids []string) []config.Finding {
			return checkValues(cfg.File, a, "equity", config.ListEquities, ids, false)
		})
		notChecked = append(notChecked, "indicator: parameter names (the Indicator API lists none)")
	}
	if a := cfg.APIs[config.APIConsensus]; a != nil {
		checkList(a, config.ListAssets, "assets", expand.AssetNames, func(names []string) []config.Finding {
			return checkValues(cfg.File, a, "asset", config.ListAssets, names, true)
		})
		notChecked = append(notChecked, "consensus: paths and parameter names (the Analyst Consensus API lists its assets only)")
	}
	if a := cfg.APIs[config.APIData]; a != nil {
		var out plan.Outcome
		if hasPatterns(a) || hasAll(a) {
			// The expander reads the plan, once, as the exporter's does.
			resolved, out, expandErr = expandPatterns(ctx, cfg, pool, answers, logger)
		} else {
			out = readPlan(ctx, pool.Client(a), a.Timeout)
			if out.Kind == plan.Read {
				if c := budget.WithPlanLimits(cfg, out.Plan); c != cfg {
					resolved = c
				}
			}
		}
		planLines = append(planLines, out.String())
		var p *plan.Plan
		if out.Kind == plan.Read {
			p = out.Plan
			for _, n := range p.Notes {
				planLines = append(planLines, "note: "+n)
			}
		}
		// A path no list knows is a typo, not one the plan refuses.
		unlisted = expand.NotInPlan(unlisted, p)
		if p != nil {
			judged := cmp.Or(resolved, cfg) // all and patterns resolved, when they are
			findings = append(findings, withoutUnlisted(judged, unlisted).CheckPlan(p, time.Now())...)
		}
		if resolved != nil {
			if ra := resolved.APIs[config.APIData]; ra.LimitsFromPlan != "" {
				planLines = append(planLines, fmt.Sprintf("%s not set in the file: %s, the plan's rate limit less the %.0f %% reserve",
					unset(a), limitsText(ra), budget.Reserve*100))
			}
		}
	}
	if len(read) == 0 {
		read = append(read, "none")
	}
	return read, findings, notChecked, planLines, unlisted, resolved, expandErr
}

// readPlan reads the data API key's plan (plan.Path) once, through the
// API's client, within the API's timeout, and puts a plan read in force
// on that client, for the expansion that follows.
func readPlan(ctx context.Context, c *upstream.Client, timeout time.Duration) plan.Outcome {
	ctx, cancel := context.WithTimeout(upstream.WithEndpoint(ctx, plan.Path), timeout)
	defer cancel()
	out := c.ReadPlan(ctx)
	if out.Kind == plan.Read {
		c.SetPlan(out.Plan)
	}
	return out
}

// plural is "1 tuple", "2 tuples", "3 entries".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
