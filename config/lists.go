package config

import "strings"

// Listing endpoints: what the upstream lists for a parameter given as All
// (and, on the Analyst Consensus API, for every asset name). Expansion
// reads them at start, on a reload and once a day.
const (
	ListDataV1     = "/v1/discovery/endpoints" // v1 paths and their parameter values
	ListDataV2     = "/v2/discovery/endpoints" // v2 paths and their assets
	ListEquities   = "/api/equities"           // Indicator API equities (public)
	ListIndicators = "/api/indicators"         // Indicator API indicators and their paths (public; read by --config.check.upstream)
	ListAssets     = "/assets"                 // Analyst Consensus assets, names and tickers (key-free)
)

// List is a listing endpoint a section needs; Keyed calls send the
// credential.
type List struct {
	Path  string
	Keyed bool
}

// Lists returns the listing endpoints the section's entries need, each
// once, in the order first needed: the list of every parameter that
// expansion resolves (All on any API, every asset of the Analyst
// Consensus API), and the data API's discovery for a path outside the
// built-in catalog, whose parameters are checked against it.
func (a *API) Lists() []List {
	var out []List
	add := func(l List) {
		for _, have := range out {
			if have.Path == l.Path {
				return
			}
		}
		out = append(out, l)
	}
	for _, e := range a.Metrics {
		for _, p := range e.Params {
			if l, ok := listOf(a.Name, e.Path, p); ok {
				add(l)
			}
		}
	}
	if a.Name == APIData {
		for _, t := range a.Tuples {
			if t.Endpoint == nil {
				add(List{Path: dataDiscovery(t.Path), Keyed: true})
			}
		}
	}
	return out
}

// listOf is the listing endpoint that resolves a parameter of an entry
// of path on an API, if the parameter is resolved through one.
func listOf(api, path string, p Param) (List, bool) {
	switch {
	case api == APIConsensus && p.Name == "asset":
		return List{Path: ListAssets}, true
	case !p.HasAll():
		return List{}, false
	case api == APIData:
		return List{Path: dataDiscovery(path), Keyed: true}, true
	case api == APIIndicator && p.Name == "equity":
		return List{Path: ListEquities}, true
	}
	return List{}, false
}

func dataDiscovery(path string) string {
	if strings.HasPrefix(path, "/v2/") {
		return ListDataV2
	}
	return ListDataV1
}
