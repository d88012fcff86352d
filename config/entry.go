package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Parameters the exporter sets itself or that would defeat "latest row".
var forbiddenParams = map[string]string{
	"from":    "the exporter always asks for the latest rows",
	"to":      "the exporter always asks for the latest rows",
	"format":  "the exporter reads JSON only",
	"api_key": "credentials come from token_env or token_file only",
}

// Labels the exporter sets itself; a parameter of the same name would give
// a series that label twice, and "__" names are Prometheus's own.
var reservedLabels = map[string]bool{"api": true, "endpoint": true, "exchange_code": true, "security_code": true}

// nameRE is what a metric, label or parameter name may be.
var nameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func (l *errorList) entries(api string, n *yaml.Node) []*Entry {
	key := join(api, "metrics")
	if n.Kind != yaml.SequenceNode {
		l.add(n, key, "must be a list, got %s", kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		l.add(n, key, "must not be an empty list")
		return nil
	}
	if !l.spend(n, len(n.Content)) {
		return nil
	}
	out := make([]*Entry, 0, len(n.Content))
	for i, c := range n.Content {
		if e := l.entry(api, fmt.Sprintf("%s[%d]", key, i), c); e != nil {
			out = append(out, e)
		}
	}
	return out
}

// DefaultMaxFields is how many numeric fields outside the catalog a row of
// an entry without fields: may add as families, one each: an upstream that
// adds a hundred thousand fields to its rows adds 64 series. max_fields
// sets it per entry; fields: lists the fields exactly.
const DefaultMaxFields = 64

// MaxMaxFields is the most max_fields may be set to.
const MaxMaxFields = 10_000

// FieldLimit is the most numeric fields outside the catalog that a row of
// the entry adds as families: max_fields, or DefaultMaxFields.
func (e *Entry) FieldLimit() int {
	if e == nil || e.MaxFields == 0 {
		return DefaultMaxFields
	}
	return e.MaxFields
}

// paramPair is a request parameter as written: a key of the entry, or a
// key under its params: (explicit).
type paramPair struct {
	pair
	explicit bool
}

func (l *errorList) entry(api, key string, n *yaml.Node) *Entry {
	pairs, ok := l.mapping(n, key)
	if !ok {
		return nil
	}
	before := len(l.errs)
	e := &Entry{Line: n.Line, Key: key, lines: map[string]int{}, failed: map[string]bool{}}
	hasPath := false
	var excludes []string
	// Parameters are read once the path is known, in file order.
	var params []paramPair
	for _, p := range pairs {
		k := join(key, p.key)
		e.lines[p.key] = p.keyN.Line
		at := len(l.errs)
		switch p.key {
		case "path":
			hasPath = true
			l.str(p.value, k, &e.Path)
		case "window":
			e.Windows = l.values(p.value, k)
		case "exclude":
			excludes = l.values(p.value, k)
		case "coarsen":
			l.boolean(p.value, k, &e.Coarsen)
		case "cache_ttl":
			l.duration(p.value, k, &e.CacheTTL)
		case "rows":
			l.str(p.value, k, &e.Rows)
		case "time_key":
			l.str(p.value, k, &e.TimeKey)
		case "labels":
			e.LabelFields = l.values(p.value, k)
			for _, n := range e.LabelFields {
				if !nameRE.MatchString(n) || strings.HasPrefix(n, "__") {
					l.add(p.value, k, "%q is not a valid label name", n)
				}
			}
		case "fields":
			e.Fields = l.fields(k, p.value)
		case "max_fields":
			if l.integer(p.value, k, &e.MaxFields) && (e.MaxFields < 1 || e.MaxFields > MaxMaxFields) {
				l.add(p.value, k, "must be between 1 and %d, got %d", MaxMaxFields, e.MaxFields)
			}
		case "params":
			explicit, ok := l.mapping(p.value, k)
			if ok && len(explicit) == 0 {
				l.add(p.value, k, "must list at least one parameter")
			}
			for _, q := range explicit {
				params = append(params, paramPair{pair: q, explicit: true})
			}
		default:
			params = append(params, paramPair{pair: p})
		}
		if len(l.errs) > at {
			e.failed[p.key] = true
		}
	}
	listed := catalogParams(api, e.Path)
	for _, p := range params {
		at := len(l.errs)
		l.param(e, p, listed)
		if len(l.errs) > at {
			e.failed[p.key] = true
		}
	}
	if !hasPath {
		l.add(n, join(key, "path"), "is required")
		return nil
	}
	l.readPattern(api, e, excludes)
	if e.MaxFields != 0 && e.Fields != nil {
		l.addAt(e.KeyLine("max_fields"), join(key, "max_fields"), "does not apply beside fields:, which lists the fields exactly")
	}
	// An entry read with errors is still checked, so that every error of
	// the file shows in one run, but it is not served; a key refused above
	// is not reported again as missing (failed).
	e.broken = len(l.errs) > before
	return e
}

// param adds one request parameter to the entry. A key of the entry (not
// under params:) that looks like a mistyped entry key is refused, unless
// the catalog lists a parameter of that name for the path.
func (l *errorList) param(e *Entry, p paramPair, listed []string) {
	k := join(e.Key, p.key)
	if p.explicit {
		k = join(e.Key, "params."+p.key)
		if _, seen := e.lines[p.key]; !seen {
			e.lines[p.key] = p.keyN.Line
		}
	} else if typo := entryTypo(p.key); typo != "" && !slices.Contains(listed, p.key) {
		l.add(p.keyN, k, "unknown key; did you mean %q? (to send %s upstream as a parameter, list it under params:)", typo, p.key)
		return
	}
	switch why, bad := forbiddenParams[p.key]; {
	case bad:
		l.add(p.keyN, k, "parameter cannot be set: %s", why)
	case !nameRE.MatchString(p.key):
		l.add(p.keyN, k, "parameter name must match %s", nameRE)
	case reservedLabels[p.key] || strings.HasPrefix(p.key, "__"):
		l.add(p.keyN, k, "parameter name is reserved: parameters become labels, and the exporter's series already carry a label of that name")
	case p.key == "window":
		l.add(p.keyN, k, "the exporter sends the entry's window: set it with window:, not as a parameter")
	case e.param(p.key) != nil:
		l.add(p.keyN, k, "parameter is given twice (as a key of the entry and under params:)")
	default:
		if vs := l.values(p.value, k); vs != nil {
			e.Params = append(e.Params, Param{Name: p.key, Values: vs, Line: p.keyN.Line})
		}
	}
}

func (l *errorList) fields(key string, n *yaml.Node) map[string]*Field {
	pairs, ok := l.mapping(n, key)
	if !ok {
		return nil
	}
	if len(pairs) == 0 {
		l.add(n, key, "must list at least one field (leave it out to export every numeric field)")
		return nil
	}
	out := make(map[string]*Field, len(pairs))
	for _, p := range pairs {
		k := join(key, p.key)
		f := &Field{Type: "gauge", Scale: 1}
		out[p.key] = f
		if p.value.Kind == yaml.ScalarNode && p.value.Tag == "!!null" {
			continue
		}
		fp, ok := l.mapping(p.value, k)
		if !ok {
			continue
		}
		for _, q := range fp {
			fk := join(k, q.key)
			switch q.key {
			case "name":
				l.str(q.value, fk, &f.Name)
				if f.Name != "" && !nameRE.MatchString(f.Name) {
					l.add(q.value, fk, "%q is not a valid metric name", f.Name)
				}
			case "help":
				l.str(q.value, fk, &f.Help)
			case "type":
				l.str(q.value, fk, &f.Type)
				if f.Type != "gauge" && f.Type != "counter" {
					l.add(q.value, fk, "must be gauge or counter, got %q", f.Type)
				}
			case "scale":
				l.float(q.value, fk, &f.Scale)
				if f.Scale == 0 {
					l.add(q.value, fk, "must not be 0")
				}
			case "key_label":
				l.str(q.value, fk, &f.KeyLabel)
				if f.KeyLabel != "" && !nameRE.MatchString(f.KeyLabel) {
					l.add(q.value, fk, "%q is not a valid label name", f.KeyLabel)
				}
			case "labels":
				f.Labels = l.constLabels(fk, q.value)
			default:
				l.add(q.keyN, fk, "%s", unknownKeyMessage(q.key, fieldKeys))
			}
		}
	}
	return out
}

func (l *errorList) constLabels(key string, n *yaml.Node) map[string]string {
	pairs, ok := l.mapping(n, key)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, p := range pairs {
		if !nameRE.MatchString(p.key) {
			l.add(p.keyN, join(key, p.key), "%q is not a valid label name", p.key)
			continue
		}
		if v, ok := l.scalar(p.value, join(key, p.key)); ok {
			out[p.key] = v
		}
	}
	return out
}

// checkLabels refuses a label a series would carry twice: row labels
// (labels:), and the constant and key labels of fields, may repeat neither
// the labels of the tuple nor each other. It refuses a counter named
// without _total and a gauge named with it, as the exposition would.
func (l *errorList) checkLabels(t *Tuple) {
	e := t.Entry
	series := map[string]bool{}
	for _, n := range t.LabelNames() {
		series[n] = true
	}
	for _, n := range t.LabelFields() {
		if series[n] {
			l.addAt(e.KeyLine("labels"), join(e.Key, "labels"), "%q is already a label of the series", n)
		}
		series[n] = true
	}
	for _, name := range slices.Sorted(maps.Keys(t.Fields)) {
		f := t.Fields[name]
		switch total := strings.HasSuffix(f.Name, "_total"); {
		case f.Type == "counter" && !total:
			l.addAt(e.KeyLine("fields"), join(e.Key, "fields."+name), "a counter's name ends in _total: name it %s_total", f.Name)
		case f.Type != "counter" && total:
			l.addAt(e.KeyLine("fields"), join(e.Key, "fields."+name), "%s is a gauge, whose name may not end in _total: rename it or give it type: counter", f.Name)
		}
		extra := slices.Sorted(maps.Keys(f.Labels))
		if f.KeyLabel != "" {
			extra = append(extra, f.KeyLabel)
		}
		seen := map[string]bool{}
		for _, n := range extra {
			if series[n] || seen[n] {
				l.addAt(e.KeyLine("fields"), join(e.Key, "fields."+name), "label %q is already a label of the series", n)
			}
			seen[n] = true
		}
	}
}
