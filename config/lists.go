package config

import (
	"slices"
	"strings"
)

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
// once, in the order first needed: those each entry is resolved through
// (EntryLists), and the data API's discovery for a path outside the
// built-in catalog, whose parameters are checked against it. Expansion
// reads these, and the budget's forecast counts them: one list of them.
func (a *API) Lists() []List {
	var out []List
	add := func(l List) {
		if !slices.ContainsFunc(out, func(have List) bool { return have.Path == l.Path }) {
			out = append(out, l)
		}
	}
	for _, e := range a.Metrics {
		for _, l := range a.EntryLists(e) {
			add(l)
		}
	}
	if a.Name == APIData {
		for _, t := range a.Tuples {
			if t.Endpoint == nil {
				add(List{Path: DataDiscovery(t.Path), Keyed: true})
			}
		}
	}
	return out
}

// EntryLists returns the listing endpoints an entry is resolved through,
// each once: for a pattern, the data API's discovery of its version (the
// paths it selects); otherwise the list of each parameter expansion
// resolves (ListOf).
func (a *API) EntryLists(e *Entry) []List {
	if e.Pattern != nil {
		return []List{{Path: DataDiscovery(e.Path), Keyed: true}}
	}
	var out []List
	for _, p := range e.Params {
		if l, ok := ListOf(a.Name, e.Path, p); ok && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// ListOf is the listing endpoint that resolves a parameter of an entry
// of path on an API, if the parameter is resolved through one: every
// asset of the Analyst Consensus API (names become keys), and a
// parameter given as all on the data API (its discovery) or an equity
// of the Indicator API.
func ListOf(api, path string, p Param) (List, bool) {
	switch {
	case api == APIConsensus && p.Name == "asset":
		return List{Path: ListAssets}, true
	case !p.HasAll():
		return List{}, false
	case api == APIData:
		return List{Path: DataDiscovery(path), Keyed: true}, true
	case api == APIIndicator && p.Name == "equity":
		return List{Path: ListEquities}, true
	}
	return List{}, false
}

// DataDiscovery is the data API's discovery endpoint of a path's version.
func DataDiscovery(path string) string {
	if strings.HasPrefix(path, "/v2/") {
		return ListDataV2
	}
	return ListDataV1
}
