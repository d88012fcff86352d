package config

import (
	"fmt"
	"strings"
)

// Family names. A row field becomes the family the entry names it
// (fields.<field>.name), else the one the built-in catalog names it, else
// one derived from the path and the field by the rule below (docs/naming.md):
//
//   - On the data API a path is a concept, its category and metric
//     (/v1/{asset}/{category}/{metric}, /v2/[{domain}/]{category}/{metric}),
//     whatever its asset: the category loses its -data or -flows ending
//     (exchange-flows → exchange) and both become snake case. Every path of
//     one concept shares one set of families and one label set, the asset
//     telling them apart, and takes the catalog's names when the catalog
//     knows the concept on any asset (/v1/btc/exchange-flows/reserve has
//     the names of /v1/erc20/exchange-flows/reserve).
//   - A derived name is <category>_<metric>_<field>, with the metric left
//     out of the field's part when the field already starts with it
//     (reserve_usd on .../reserve → exchange_reserve_usd) and the field
//     left out when it is the metric itself or "value".
//   - Prometheus naming: a field ending in _percent is scaled by 0.01 and
//     named _ratio; a gauge does not end in _total, so that ending is
//     dropped (netflow_total → exchange_netflow).
//   - On the Indicator and Analyst Consensus APIs the API's name stands for
//     the category and the path's last segment that is not a placeholder
//     for the metric (indicator_per_band_close).
//
// Two concepts thus never derive one name from fields that differ only by
// their endpoint: the category and metric are part of every derived name.

// concept is what a data-API path measures, whatever its asset: its
// category and metric, in snake case.
type concept struct{ category, metric string }

func (c concept) String() string { return c.category + "/" + c.metric }

// conceptOf returns the concept of a data-API path (concrete or template);
// false for a path of another API or one that fits neither scheme.
func conceptOf(api, path string) (concept, bool) {
	if api != APIData {
		return concept{}, false
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var cat, metric string
	switch {
	case len(segs) == 4 && segs[0] == "v1":
		cat, metric = segs[2], segs[3]
	case (len(segs) == 3 || len(segs) == 4) && segs[0] == "v2":
		cat, metric = segs[len(segs)-2], segs[len(segs)-1]
	default:
		return concept{}, false
	}
	for _, end := range []string{"-data", "-flows", "_data", "_flows"} {
		if c, ok := strings.CutSuffix(cat, end); ok && c != "" {
			cat = c
			break
		}
	}
	return concept{snake(cat), snake(metric)}, true
}

// catalogByConcept holds the data-API catalog entries by concept: their
// names hold for every asset.
var catalogByConcept = func() map[concept]*Endpoint {
	m := map[concept]*Endpoint{}
	for _, e := range Endpoints {
		if c, ok := conceptOf(e.API, e.Template); ok {
			if prev := m[c]; prev != nil {
				panic(fmt.Sprintf("catalog: %s and %s are one concept (%s)", prev.Template, e.Template, c))
			}
			m[c] = e
		}
	}
	return m
}()

// namingEndpoint is the catalog entry whose field names a tuple's path
// takes: its own, or the one of its concept on another asset.
func namingEndpoint(api, path string) *Endpoint {
	if e := endpointFor(api, path); e != nil {
		return e
	}
	if c, ok := conceptOf(api, path); ok {
		return catalogByConcept[c]
	}
	return nil
}

// DerivedField is the family of a row field that neither the entry nor the
// catalog names, by the rule above.
func (t *Tuple) DerivedField(field string) *Field {
	path := t.Path // a data-API path's placeholders may fill its category
	if t.API != APIData && t.Entry != nil {
		path = t.Entry.Path // elsewhere they fill ids ({handle}, {equity})
	}
	name, scale := derivedName(t.API, path, field)
	where := path
	if c, ok := conceptOf(t.API, path); ok {
		where = "the " + c.String() + " endpoints"
	}
	help := fmt.Sprintf("Field %s of %s, as the API serves it (not in the built-in catalog).", field, where)
	if scale != 1 {
		help = fmt.Sprintf("Field %s of %s, a percent served as a ratio (0-1) (not in the built-in catalog).", field, where)
	}
	return &Field{Name: name, Help: help, Type: "gauge", Scale: scale}
}

// derivedName is the family name (without onchain_) and the scale of a
// field of path on api.
func derivedName(api, path, field string) (string, float64) {
	var prefix, metric string
	if c, ok := conceptOf(api, path); ok {
		prefix, metric = c.category, c.metric
	} else {
		prefix, metric = api, lastLiteral(path)
	}
	f := snake(field)
	var name string
	switch {
	case metric == "":
		name = f
	case f == "" || f == metric || f == "value":
		name = metric
	case strings.HasPrefix(f, metric+"_"):
		name = f
	default:
		name = metric + "_" + f
	}
	if prefix != "" && name != "" {
		name = prefix + "_" + name
	} else {
		name += prefix
	}
	name = strings.TrimSuffix(name, "_total")
	switch {
	case name == "":
		name = "value"
	case name[0] >= '0' && name[0] <= '9':
		name = "_" + name // a family name that is valid without its prefix too
	}
	scale := 1.0
	if base, ok := strings.CutSuffix(name, "_percent"); ok {
		name, scale = base+"_ratio", 0.01
	}
	return name, scale
}

// lastLiteral is the last segment of a path that is not a placeholder, in
// snake case.
func lastLiteral(path string) string {
	segs := strings.Split(path, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if s := segs[i]; s != "" && !strings.HasPrefix(s, "{") {
			return snake(s)
		}
	}
	return ""
}

// snake lowers s and turns every character a metric name may not hold into
// an underscore, without repeating underscores or leaving them at the ends.
func snake(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
			continue
		}
		under = true
	}
	return b.String()
}
