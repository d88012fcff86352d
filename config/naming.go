package config

import (
	"fmt"
	"strings"
)

// Family names. A row field becomes the family the entry names it
// (fields.<field>.name), else the one the built-in catalog names it, else
// one derived from the path and the field by the rule docs/naming.md
// states. On the data API a path is a concept, its category (less a -data
// or -flows ending) and metric in snake case, whatever its asset: the
// paths of one concept share one set of families and one label set, the
// asset telling them apart, with the catalog's names when it knows the
// concept on any asset. A derived name is <category>_<metric>_<field>
// (ruleName) named as Prometheus names a gauge (conventional); on the
// other APIs the API's name stands for the category and the last literal
// segment for the metric. The category and metric are part of every
// derived name, so two concepts never derive one name.

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
	var segs [4]string // the first four; n counts them all
	n := 0
	for s := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
		if n < len(segs) {
			segs[n] = s
		}
		n++
	}
	var cat, metric string
	switch {
	case n == 4 && segs[0] == "v1":
		cat, metric = segs[2], segs[3]
	case (n == 3 || n == 4) && segs[0] == "v2":
		cat, metric = segs[n-2], segs[n-1]
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
// catalog names: the one the table of known fields gives it (meaning.go),
// else one named by the rule above, whose HELP says that nothing more is
// known of it.
func (t *Tuple) DerivedField(field string) *Field {
	path := t.Path // a data-API path's placeholders may fill its category
	if t.API != APIData && t.Entry != nil {
		path = t.Entry.Path // elsewhere they fill ids ({handle}, {equity})
	}
	where := path
	if c, ok := conceptOf(t.API, path); ok {
		if f := conceptField(c, field); f != nil {
			return f
		}
		where = "the " + c.String() + " endpoints"
	}
	name, scale, unit := derivedName(t.API, path, field)
	help := fmt.Sprintf("Field %s of %s, as the API serves it (not in the built-in catalog).", field, where)
	if scale != 1 {
		help = fmt.Sprintf("Field %s of %s, scaled by %g into %s (not in the built-in catalog).", field, where, scale, unitWords[unit])
	}
	return &Field{Name: name, Help: help, Type: "gauge", Scale: scale, Unit: unit, Source: field}
}

// unitWords say a derived family's unit in its HELP.
var unitWords = map[string]string{unitRatio: "a ratio (0-1)", unitSeconds: "seconds"}

// Units of the families (the OpenMetrics UNIT), each the end of the names
// of its families.
const (
	unitSeconds = "seconds"
	unitBytes   = "bytes"
	unitRatio   = "ratio" // a share, 0 to 1
	unitUSD     = "usd"
)

// Suffixes a gauge's name may not end in: the samples of a counter
// (_total, _created), a histogram or summary (_count, _sum, _bucket), a
// gauge histogram (_gcount, _gsum) or an info metric (_info) end so, and
// readers and rule generators take them for those. A count or a sum needs
// no word of its own (transactions_count is the number of transactions,
// named onchain_network_transactions as Prometheus names counts of things);
// the others keep their word and end in _value.
var (
	droppedSuffixes = []string{"_total", "_count", "_sum"}
	guardedSuffixes = []string{"_bucket", "_created", "_info", "_gcount", "_gsum"}
)

// timeUnits are the units of time a name may end in, and how many seconds
// each holds: a duration is in seconds, its base unit.
var timeUnits = []struct {
	suffix  string
	seconds float64
}{{"_minutes", 60}, {"_hours", 3600}, {"_days", 86400}, {"_weeks", 7 * 86400}}

// derivedName is the family name (without onchain_), the scale and the
// unit of a field of path on api.
func derivedName(api, path, field string) (string, float64, string) {
	if c, ok := conceptOf(api, path); ok {
		return ruleName(c.category, c.metric, field)
	}
	return ruleName(api, lastLiteral(path), field)
}

// ruleName is the family name, scale and unit the rule gives a field of a
// metric, the name starting with prefix (a category, or an API's name).
func ruleName(prefix, metric, field string) (string, float64, string) {
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
	name, scale, unit := conventional(name)
	switch {
	case name == "":
		name = "value"
	case name[0] >= '0' && name[0] <= '9':
		name = "_" + name // a family name that is valid without its prefix too
	}
	return name, scale, unit
}

// conventional is a derived name as Prometheus names a gauge, with the
// scale and unit that makes its value one of a base unit: no suffix of
// another type's samples, a percent a ratio, a duration in seconds, and
// coin-days (coins times the days they were held, not a time) written as
// one word.
func conventional(name string) (string, float64, string) {
	for trimmed := true; trimmed; {
		trimmed = false
		for _, suffix := range droppedSuffixes {
			if base, ok := strings.CutSuffix(name, suffix); ok {
				name, trimmed = base, true
			}
		}
	}
	name = coinDays(name)
	scale, unit := 1.0, ""
	if base, ok := strings.CutSuffix(name, "_percent"); ok {
		name, scale, unit = base+"_ratio", 0.01, unitRatio
	}
	for _, tu := range timeUnits {
		if base, ok := strings.CutSuffix(name, tu.suffix); ok {
			name, scale = base+"_"+unitSeconds, tu.seconds
		}
	}
	for _, suffix := range guardedSuffixes {
		if strings.HasSuffix(name, suffix) {
			name += "_value"
		}
	}
	for _, u := range []string{unitSeconds, unitBytes, unitUSD} {
		if strings.HasSuffix(name, "_"+u) {
			unit = u
		}
	}
	return name, scale, unit
}

// coinDays writes the word coin-days as one (coindays): "days" in a name
// says a time, which these are not. The provider's days_destroyed is
// coin-days destroyed.
func coinDays(name string) string {
	name = strings.ReplaceAll("_"+name+"_", "_coin_days_", "_coindays_")
	name = strings.ReplaceAll(name, "_days_destroyed_", "_coindays_destroyed_")
	return strings.Trim(name, "_")
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
