package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
)

// The file against the upstream's lists, besides what config and expand
// judge: the Indicator API's paths and equities, the consensus assets, and
// the paths no list knows (expand.Unlisted), which are errors and not the
// plan's refusals.

// checkIndicatorPaths checks each Indicator API entry's path against the
// paths /api/indicators lists (expand.IndicatorPaths), a {placeholder}
// matching any other.
func checkIndicatorPaths(file string, a *config.API, paths []string) []config.Finding {
	listed := make([]string, len(paths))
	for i, p := range paths {
		listed[i] = placeholders(p)
	}
	var out []config.Finding
	for _, e := range a.Metrics {
		path := placeholders(e.Path)
		if slices.Contains(listed, path) {
			continue
		}
		msg := fmt.Sprintf("%s lists no indicator at %s (listed: %s); it is asked for as written", config.ListIndicators, e.Path, strings.Join(listed, ", "))
		if s := config.NearName(path, listed); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", s)
		}
		out = append(out, config.Finding{Kind: config.FindingListingPath, File: file, Line: e.KeyLine("path"), Key: e.Key + ".path", Message: msg})
	}
	return out
}

// placeholders writes every {name} of a path as {}: /api/equities/{equity}
// and /api/equities/{equity_id} are one path.
func placeholders(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// checkValues checks the values of a parameter of the API's entries
// against the names a list gives (in any case when fold), all aside.
func checkValues(file string, a *config.API, param, list string, names []string, fold bool) []config.Finding {
	known := map[string]bool{}
	for _, n := range names {
		if fold {
			n = strings.ToLower(n)
		}
		known[n] = true
	}
	sorted := slices.Sorted(maps.Keys(known))
	var out []config.Finding
	for _, e := range a.Metrics {
		for _, p := range e.Params {
			if p.Name != param {
				continue
			}
			for _, v := range p.Values {
				w := v
				if fold {
					w = strings.ToLower(strings.TrimSpace(v))
				}
				if v == config.All || known[w] {
					continue
				}
				msg := fmt.Sprintf("%s lists no %s %q", list, param, v)
				if s := config.NearName(w, sorted); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				}
				out = append(out, config.Finding{Kind: config.FindingListingValue, File: file, Line: p.Line, Key: e.Key + "." + param, Message: msg})
			}
		}
	}
	return out
}

// withoutUnlisted is cfg without the data tuples of the paths no list
// knows; cfg itself when there are none.
func withoutUnlisted(cfg *config.Config, unlisted []*expand.UnlistedPath) *config.Config {
	if len(unlisted) == 0 {
		return cfg
	}
	out := *cfg
	out.APIs = maps.Clone(cfg.APIs)
	a := *cfg.APIs[config.APIData]
	a.Tuples = slices.DeleteFunc(slices.Clone(a.Tuples), func(t *config.Tuple) bool {
		return slices.ContainsFunc(unlisted, func(u *expand.UnlistedPath) bool { return u.Path == t.Path && u.Entry.Key == t.Entry.Key })
	})
	out.APIs[config.APIData] = &a
	return &out
}

// joined is the errors errors.Join joined, err alone otherwise.
func joined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
