package config

import (
	"fmt"
	"slices"
	"strings"
)

// All, as a parameter value, stands for every value the upstream lists for
// that parameter (asset, exchange or token of the data API through its
// discovery endpoints, equity of the Indicator API through /api/equities),
// but for those LeftOutOfAll names. Load keeps it as one value, offline;
// the collector replaces it through Resolve at start, on every reload and daily.
const All = "all"

// Left out of All unless named: a data-API value that stands for all the
// others together (all_exchange, all_symbol: summed with the others it
// counts them twice), and one the API's documentation calls deprecated
// (the exchange ftx: no data update since 2022, so its series would look
// stale for ever).
const (
	leftOutAggregate  = "aggregate"
	leftOutDeprecated = "deprecated"
)

// deprecatedValues are the data-API parameter values the API documents as
// deprecated.
var deprecatedValues = map[string][]string{"exchange": {"ftx"}}

// LeftOutOfAll says why a value an API lists for a parameter is not one
// that All stands for ("aggregate", "deprecated"), or "" when it is. A
// value left out is asked for when the entry names it.
func LeftOutOfAll(api, param, value string) string {
	if api != APIData {
		return ""
	}
	switch {
	case strings.HasPrefix(value, "all_"):
		return leftOutAggregate
	case slices.Contains(deprecatedValues[param], value):
		return leftOutDeprecated
	}
	return ""
}

// HasAll says whether the parameter lists All.
func (p Param) HasAll() bool { return slices.Contains(p.Values, All) }

// Resolver returns the parameter as it stands upstream: its values as
// listed when there is nothing to resolve, else the values to send, with
// Labels set for those labelled otherwise than sent.
type Resolver func(a *API, e *Entry, p Param) (Param, error)

// Resolve returns a copy of the configuration in which every parameter
// lists what resolve returns for it, with tuples, label sets, the
// credential check and max_tuples computed again. Values that resolve to
// one (a name and a ticker of one asset), and tuples that become one series
// (exchange: all beside exchange: binance), are kept once, the first in file
// order: the file as written was checked for duplicates. Errors carry
// file:line like Load's. Pattern entries stay unexpanded: ResolveWith
// expands them.
func (c *Config) Resolve(resolve Resolver) (*Config, error) {
	return c.ResolveWith(resolve, nil)
}

// Match is one path a pattern entry selects: the path, the windows its
// tuples are built for (none: the data API's default), and the parameters
// it is asked with, as the entry would list them (all resolved after).
type Match struct {
	Path    string
	Windows []string
	Params  []Param
}

// Matcher lists the paths a pattern entry selects (package expand: from
// the upstream's discovery and the key's plan), and what it left out and
// why, for the log and the check.
type Matcher func(a *API, e *Entry) (matches []Match, left []string, err error)

// PatternResult is what a pattern entry expanded to: its paths, its
// tuples, those max_tuples cut, and what the Matcher left out.
type PatternResult struct {
	Entry  *Entry
	Paths  int
	Tuples int
	// Cut counts the tuples past max_tuples, never built: entries named
	// one by one are built first, the patterns' after, in file order.
	Cut  int
	Left []string
	// Err is why the Matcher could not expand the entry (its lists were
	// not read); the entry then has no tuple.
	Err error
}

// ResolveWith is Resolve that also expands each pattern entry through
// match into one entry per path it selects (Origin set), after every
// entry named one by one: past max_tuples, a pattern's tuples are cut and
// counted (API.Patterns), not refused. A nil match leaves patterns
// unexpanded. A parameter of a selected path that cannot be resolved
// leaves that path out, said in Left: the paths are the upstream's word.
func (c *Config) ResolveWith(resolve Resolver, match Matcher) (*Config, error) {
	l := &errorList{file: c.File, dedupe: true}
	out := &Config{File: c.File, APIs: make(map[string]*API, len(c.APIs))}
	for _, name := range APINames {
		a := c.APIs[name]
		if a == nil {
			continue
		}
		na := *a
		na.Tuples, na.Patterns, na.patternOf = nil, nil, map[*Entry]*PatternResult{}
		na.Metrics = make([]*Entry, 0, len(a.Metrics))
		var derived []*Entry
		for _, e := range a.Metrics {
			if e.Pattern != nil {
				derived = append(derived, l.expandPattern(&na, e, resolve, match)...)
				continue
			}
			if IsPattern(e.Path) {
				continue // refused at load
			}
			ne := *e
			ne.Params = make([]Param, 0, len(e.Params))
			for _, p := range e.Params {
				if rp, why := resolveParam(resolve, a, e, p); why != "" {
					l.addAt(p.Line, join(e.Key, p.Name), "%s", why)
				} else {
					ne.Params = append(ne.Params, rp)
				}
			}
			na.Metrics = append(na.Metrics, &ne)
		}
		na.Metrics = append(na.Metrics, derived...)
		out.APIs[name] = &na
	}
	if len(l.errs) == 0 {
		l.expand(out)
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// expandPattern is one pattern entry's entries, a path each.
func (l *errorList) expandPattern(a *API, e *Entry, resolve Resolver, match Matcher) []*Entry {
	r := &PatternResult{Entry: e}
	a.Patterns = append(a.Patterns, r)
	a.patternOf[e] = r
	if match == nil {
		return nil
	}
	matches, left, err := match(a, e)
	r.Left = left
	if err != nil {
		r.Err = err
		return nil
	}
	var out []*Entry
	for _, m := range matches {
		ne := *e
		ne.Path, ne.Windows, ne.Pattern, ne.Exclude, ne.WindowChoice, ne.Origin = m.Path, m.Windows, nil, nil, "", e
		ne.Params = make([]Param, 0, len(m.Params))
		why := ""
		for _, p := range m.Params {
			rp, whyNot := resolveParam(resolve, a, &ne, p)
			if whyNot != "" {
				why = p.Name + " " + whyNot
				break
			}
			ne.Params = append(ne.Params, rp)
		}
		if why == "" {
			why = l.derivedProblem(a, &ne)
		}
		if why != "" {
			r.Left = append(r.Left, fmt.Sprintf("%s (%s)", m.Path, why))
			continue
		}
		r.Paths++
		out = append(out, &ne)
	}
	return out
}

// derivedProblem is the first problem the tuples of an entry a pattern
// selected would have (a window the built-in catalog does not allow for
// the path, a parameter it does not take), or "": discovery's word for a
// path and the catalog's may differ, and such a path is left out, said,
// rather than failing the file.
func (l *errorList) derivedProblem(a *API, e *Entry) string {
	scratch := &errorList{file: l.file, dedupe: true}
	if scratch.checkPath(a, e) {
		scratch.eachTuple(a, e, func(*Tuple) bool { return len(scratch.errs) == 0 })
	}
	if len(scratch.errs) == 0 {
		return ""
	}
	return scratch.errs[0].msg
}

// resolveParam is p as resolve returns it, its values unique, or why it
// cannot be sent.
func resolveParam(resolve Resolver, a *API, e *Entry, p Param) (Param, string) {
	rp, err := resolve(a, e, p)
	if err != nil {
		return p, err.Error()
	}
	if p.Values = unique(rp.Values); len(p.Values) == 0 {
		return p, "resolves to no value"
	}
	p.Labels = rp.Labels
	return p, ""
}

// unique drops repeated and empty values, keeping the order.
func unique(vs []string) []string {
	seen := make(map[string]bool, len(vs))
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
