package config

import "strings"

// All, as a parameter value, stands for every value the upstream lists for
// that parameter (asset, exchange or token of the data API through its
// discovery endpoints, equity of the Indicator API through /api/equities),
// but for those LeftOutOfAll names. Load takes it as one value and never calls upstream, so --config.check
// stays offline; the collector replaces it through Resolve at start, on
// every reload and daily.
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
	case contains(deprecatedValues[param], value):
		return leftOutDeprecated
	}
	return ""
}

// HasAll says whether the parameter lists All.
func (p Param) HasAll() bool { return contains(p.Values, All) }

// Resolver returns the parameter as it stands upstream: its values as
// listed when there is nothing to resolve, else the values to send, with
// Labels set for those labelled otherwise than sent.
type Resolver func(a *API, e *Entry, p Param) (Param, error)

// Resolve returns a copy of the configuration in which every parameter
// lists what resolve returns for it, with tuples, label sets, the
// credential check and max_tuples computed again. Values that resolve to
// the same one (a name and a ticker of one asset) are kept once, and so
// are tuples that become the same series (exchange: all in one entry and
// exchange: binance in another): the file as written was already checked
// for duplicates, so these are not mistakes. The first in file order wins.
// Errors, resolve's included, carry file:line like Load's.
func (c *Config) Resolve(resolve Resolver) (*Config, error) {
	l := &errorList{file: c.File, dedupe: true}
	out := &Config{File: c.File, APIs: make(map[string]*API, len(c.APIs))}
	for _, name := range APINames {
		a := c.APIs[name]
		if a == nil {
			continue
		}
		na := *a
		na.Tuples = nil
		na.Metrics = make([]*Entry, 0, len(a.Metrics))
		for _, e := range a.Metrics {
			ne := *e
			ne.Params = make([]Param, 0, len(e.Params))
			for _, p := range e.Params {
				key := join(e.Key, p.Name)
				rp, err := resolve(a, e, p)
				if err != nil {
					l.addAt(p.Line, key, "%v", err)
					continue
				}
				if p.Values = unique(rp.Values); len(p.Values) == 0 {
					l.addAt(p.Line, key, "resolves to no value")
					continue
				}
				p.Labels = rp.Labels
				ne.Params = append(ne.Params, p)
			}
			na.Metrics = append(na.Metrics, &ne)
		}
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
