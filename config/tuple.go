package config

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Tuple is one upstream series: an entry with one value chosen for each of
// its listed parameters and windows.
type Tuple struct {
	API      string
	Entry    *Entry
	Endpoint *Endpoint // nil for paths outside the catalog
	// Path is the request path with placeholders filled.
	Path   string
	Window string // "" where the API takes no window
	// Key identifies the tuple; two entries producing one key are an error.
	Key string
	// Params holds every parameter value as sent, placeholders included.
	Params Values
	// Group is the tuple's label group: the tuples whose families share
	// one label set, one value for all of them (LabelGroup, LabelNames).
	Group *LabelGroup
	// LabelValues label the tuple's data families, after LabelNames.
	LabelValues []string
	// TupleLabelValues follow Config.TupleLabelNames.
	TupleLabelValues []string
	// Fields maps row fields to families; with AllNumeric, fields missing
	// here are exported too, with derived names.
	Fields     map[string]*Field
	AllNumeric bool
	// Keyed calls send the API's credential; key-free ones do not, so
	// that they count against the caller's IP and not the key's quota.
	Keyed    bool
	CacheTTL float64 // seconds; 0 = by schedule
}

// LabelGroup is a label group: its name and the label names of its
// tuples' data families (read only), shared by its tuples.
type LabelGroup struct {
	Name  string
	Names []string
}

// LabelGroup names the tuples whose families share one label set; "" for
// a tuple without a group.
func (t *Tuple) LabelGroup() string {
	if t.Group == nil {
		return ""
	}
	return t.Group.Name
}

// LabelNames are the label names of the tuple's data families (its
// group's, read only).
func (t *Tuple) LabelNames() []string {
	if t.Group == nil {
		return nil
	}
	return t.Group.Names
}

// Parameters that do not tell two series apart and so are not labels.
var nonLabelParams = map[string]bool{"limit": true, "order": true, "source_text": true}

// Windows the data API knows; paths outside the catalog may use any of them.
var knownWindows = []string{"block", "min", "10min", "hour", "day"}

var (
	placeholderRE = regexp.MustCompile(`\{([a-zA-Z_][a-zA-Z0-9_]*)\}`)
	segmentRE     = `([a-z0-9_.-]+|\{[a-zA-Z_][a-zA-Z0-9_]*\})`
	v1PathRE      = regexp.MustCompile(`^/v1/` + segmentRE + `/` + segmentRE + `/` + segmentRE + `$`)
	v2PathRE      = regexp.MustCompile(`^/v2/` + segmentRE + `/` + segmentRE + `(/` + segmentRE + `)?$`)
	otherPathRE   = regexp.MustCompile(`^(/([a-zA-Z0-9_.:-]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}))+$`)
	chainSuffixRE = regexp.MustCompile(`_(eth|ethereum|trx|tron|bsc|sol|polygon|arb|avax|op|base)$`)
)

// expand turns every entry into tuples, validates them and computes the
// label sets. Entries read with errors are left out.
func (l *errorList) expand(cfg *Config) {
	seen := map[string]*Entry{}
	tupleLabels := map[string]bool{}
	for _, name := range APINames {
		a := cfg.APIs[name]
		if a == nil {
			continue
		}
		groups := map[string]map[string]bool{} // label group -> param labels
		var keyedBy *Tuple
		// unchecked: an entry could not be checked, so whether the
		// section needs its key is not known.
		unchecked := false
		b := l.budget(a)
		for _, e := range a.Metrics {
			if IsPattern(e.Path) {
				continue // expanded through discovery (Resolve with a Matcher)
			}
			if !l.checkPath(a, e) {
				unchecked = true
				continue
			}
			unchecked = unchecked || e.broken
			pattern := a.patternOf[e.Origin]
			if pattern != nil && b.kept >= b.limit {
				pattern.Cut = addSat(pattern.Cut, e.combinations(a.Name))
				continue // past max_tuples: a pattern's tuples are cut, and counted
			}
			if pattern == nil && !b.admit(e) {
				unchecked = true
				if b.over {
					break // past max_tuples: nothing after it is built
				}
				continue
			}
			l.eachTuple(a, e, func(t *Tuple) bool {
				if e.broken {
					return true // checked for every error it holds, not served
				}
				if prev, dup := seen[t.Key]; dup {
					if !l.dedupe {
						l.addAt(e.Line, e.Key, "the series %s is listed twice (also by %s at line %d)", t.describe(), prev.Key, prev.Line)
					}
					return true // dedupe: discovery made two listed values one series
				}
				seen[t.Key] = e
				if pattern != nil && b.kept >= b.limit {
					pattern.Cut++
					return true
				}
				if pattern != nil {
					pattern.Tuples++
				}
				if !b.keep() {
					return b.more() // past max_tuples: counted, not kept
				}
				a.Tuples = append(a.Tuples, t)
				if t.Keyed && keyedBy == nil {
					keyedBy = t
				}
				g := groups[labelGroup(t)]
				if g == nil {
					g = map[string]bool{}
					groups[labelGroup(t)] = g
				}
				for p := range t.Params.All() {
					if !nonLabelParams[p] {
						g[p] = true
						tupleLabels[p] = true
					}
				}
				return true
			})
		}
		b.done()
		switch {
		case a.unread != nil && (keyedBy != nil || unchecked || a.Name == APIData):
			why := ""
			if a.Name != APIData && keyedBy != nil {
				why = fmt.Sprintf(" (%s at line %d: %s)", keyedBy.Entry.Key, keyedBy.Entry.Line, keyReason(keyedBy))
			}
			l.addAt(a.unread.line, a.unread.key, "%s%s", a.unread.msg, why)
		case keyedBy == nil || a.token != "" || a.TokenEnv != "" || a.TokenFile != "" || a.credentialKey:
		case name == APIData:
			l.addAt(a.line, name, "a credential is required: set token_env or token_file")
		default:
			l.addAt(keyedBy.Entry.Line, keyedBy.Entry.Key, "%s: set %s.token_env or %s.token_file", keyReason(keyedBy), name, name)
		}
		// A label group's name and label names are one value for all
		// its tuples.
		groupOf := map[string]*LabelGroup{}
		for _, t := range a.Tuples {
			name := labelGroup(t)
			g := groupOf[name]
			if g == nil {
				g = &LabelGroup{Name: name, Names: labelNames(t, groups[name])}
				groupOf[name] = g
			}
			t.Group = g
			setLabels(t, g.Names)
			l.checkLabels(t)
		}
		l.checkDistinct(a.Tuples)
		cfg.Tuples = append(cfg.Tuples, a.Tuples...)
	}
	delete(tupleLabels, "asset")
	cfg.TupleLabelNames = append([]string{"api", "endpoint", "asset", "window"}, slices.Sorted(maps.Keys(tupleLabels))...)
	for _, t := range cfg.Tuples {
		t.TupleLabelValues = make([]string, len(cfg.TupleLabelNames))
		t.TupleLabelValues[0], t.TupleLabelValues[1], t.TupleLabelValues[2], t.TupleLabelValues[3] = t.API, t.Path, t.Asset(), t.Window
		for i, n := range cfg.TupleLabelNames[4:] {
			t.TupleLabelValues[4+i] = t.Label(n)
		}
		if slices.Equal(t.LabelValues, t.TupleLabelValues[2:]) {
			t.LabelValues = t.TupleLabelValues[2:len(t.TupleLabelValues):len(t.TupleLabelValues)] // one slice for both
		}
	}
}

// labelGroup is the set of tuples whose families share one label set: on
// the data API every path of one concept, whatever its asset (naming.go),
// elsewhere one endpoint.
func labelGroup(t *Tuple) string {
	if c, ok := conceptOf(t.API, t.Path); ok {
		return t.API + " " + c.String()
	}
	if t.Endpoint != nil {
		return t.API + " " + t.Endpoint.Template
	}
	return t.API + " " + t.Entry.Path
}

// Asset is the asset of the series: the path's asset segment on v1 of the
// data API, the asset parameter (as labelled) elsewhere; "" without one.
func (t *Tuple) Asset() string {
	if t.API == APIData && strings.HasPrefix(t.Path, "/v1/") {
		seg, _, _ := strings.Cut(t.Path[len("/v1/"):], "/")
		if v, err := url.PathUnescape(seg); err == nil {
			return v
		}
		return seg
	}
	return t.Label("asset")
}

// Label is the label value of a parameter: the value sent, unless the
// entry labels it otherwise (Param.Labels).
func (t *Tuple) Label(param string) string {
	v := t.Params.Get(param)
	if t.Entry != nil {
		if p := t.Entry.param(param); p != nil {
			if lv, ok := p.Labels[v]; ok {
				return lv
			}
		}
	}
	return v
}

// labelNames are the label names of a label group's data families, the
// group's parameters given.
func labelNames(t *Tuple, params map[string]bool) []string {
	names := []string{}
	if t.API == APIData {
		names = append(names, "asset", "window")
	}
	for _, p := range slices.Sorted(maps.Keys(params)) {
		if p == "asset" && t.API == APIData {
			continue
		}
		names = append(names, p)
		if p == "equity" {
			names = append(names, "exchange_code", "security_code")
		}
	}
	return slices.Clip(names)
}

// setLabels sets the tuple's label values, its group's label names
// given.
func setLabels(t *Tuple, names []string) {
	t.LabelValues = make([]string, len(names))
	for i, n := range names {
		switch n {
		case "asset":
			t.LabelValues[i] = t.Asset()
		case "window":
			t.LabelValues[i] = t.Window
		case "exchange_code":
			t.LabelValues[i], _, _ = strings.Cut(t.Params.Get("equity"), ":")
		case "security_code":
			_, t.LabelValues[i], _ = strings.Cut(t.Params.Get("equity"), ":")
		default:
			t.LabelValues[i] = t.Label(n)
		}
	}
}

func (t *Tuple) describe() string {
	query := t.Query()
	if query.Len() == 0 {
		return t.Path
	}
	var q valuesBuilder
	for k, v := range query.All() {
		if k != "limit" {
			q.set(k, v)
		}
	}
	return t.Path + "?" + q.values().Encode()
}

func (e *Entry) param(name string) *Param {
	for i := range e.Params {
		if e.Params[i].Name == name {
			return &e.Params[i]
		}
	}
	return nil
}

func (l *errorList) tuple(a *API, e *Entry, window string, params Values) *Tuple {
	segmentsOK := true
	path := e.Path // without placeholders, one string for all its tuples
	if strings.Contains(path, "{") {
		path = placeholderRE.ReplaceAllStringFunc(e.Path, func(m string) string {
			name := m[1 : len(m)-1]
			if e.failed[name] {
				segmentsOK = false // refused while reading, reported there
				return m
			}
			if err := CheckSegment(params.Get(name)); err != nil {
				l.addAt(e.param(name).Line, join(e.Key, name), "%v: it cannot fill the path segment {%s} of %s", err, name, e.Path)
				segmentsOK = false
			}
			return url.PathEscape(params.Get(name))
		})
	}
	if !segmentsOK {
		return nil
	}
	path = l.intern(path)
	// cache_ttl is never negative (duration refuses it).
	t := &Tuple{API: a.Name, Entry: e, Path: path, Window: window, Params: params, CacheTTL: e.CacheTTL.Seconds()}
	t.Endpoint = endpointFor(a.Name, path)
	t.Keyed = a.Name == APIData || t.Endpoint == nil || t.Endpoint.keyedFor(params)
	ok := l.checkTuple(a, e, t)
	t.resolveFields()
	var keyQ valuesBuilder
	for k, v := range t.Query().All() {
		if !nonLabelParams[k] {
			keyQ.set(k, l.intern(v))
		}
	}
	t.Key = a.Name + " " + path + "?" + keyQ.values().Encode()
	if !ok {
		return nil
	}
	return t
}

// Query is what is sent besides the path: the parameters not in it, the
// endpoint's defaults, the window and the limit. A tuple keeps its
// parameters alone; its query is built from them at each call.
func (t *Tuple) Query() Values {
	var inPath []string
	if t.Entry != nil && strings.Contains(t.Entry.Path, "{") {
		for _, m := range placeholderRE.FindAllStringSubmatch(t.Entry.Path, -1) {
			inPath = append(inPath, m[1])
		}
	}
	q := valuesBuilder{kv: make([]nameValue, 0, t.Params.Len()+2)}
	for k, v := range t.Params.All() {
		if !slices.Contains(inPath, k) {
			q.set(k, v)
		}
	}
	if t.Endpoint != nil {
		for k, v := range t.Endpoint.Defaults {
			if !Values(q).Has(k) {
				q.set(k, v)
			}
		}
	}
	if t.Window != "" {
		q.set("window", t.Window)
	}
	switch {
	case Values(q).Get("limit") != "":
	case t.API == APIData:
		q.set("limit", strconv.Itoa(DefaultLimit))
	case t.Endpoint != nil && t.Endpoint.MaxLimit > 0 && t.Endpoint.Rows != "":
		// Rows without a window: enough for the first answer to show
		// their spacing and the weekdays they skip.
		q.set("limit", strconv.Itoa(min(DefaultWindowlessLimit, t.Endpoint.MaxLimit)))
	}
	return Values(q)
}

// Rows, TimeKey and LabelFields locate the rows in an answer: the entry's
// rows:, time_key: and label_fields:, else the catalog's; "" and nil
// where neither says.

// Rows is the dotted path of the rows in an answer.
func (t *Tuple) Rows() string {
	if t.Entry != nil && t.Entry.Rows != "" {
		return t.Entry.Rows
	}
	if t.Endpoint != nil {
		return t.Endpoint.Rows
	}
	return ""
}

// TimeKey is the field of a row that holds its time.
func (t *Tuple) TimeKey() string {
	if t.Entry != nil && t.Entry.TimeKey != "" {
		return t.Entry.TimeKey
	}
	if t.Endpoint != nil {
		return t.Endpoint.TimeKey
	}
	return ""
}

// LabelFields are the fields of a row read as labels.
func (t *Tuple) LabelFields() []string {
	if t.Entry != nil && t.Entry.LabelFields != nil {
		return t.Entry.LabelFields
	}
	if t.Endpoint != nil {
		return t.Endpoint.LabelFields
	}
	return nil
}

// intern is s, one copy of it for every tuple built.
func (l *errorList) intern(s string) string {
	if v, ok := l.interned[s]; ok {
		return v
	}
	if l.interned == nil {
		l.interned = map[string]string{}
	}
	l.interned[s] = s
	return s
}

// resolveFields merges the entry's field selection onto the catalog.
func (t *Tuple) resolveFields() {
	var catalog map[string]*Field
	if e := namingEndpoint(t.API, t.Path); e != nil {
		catalog = e.Fields // also on a path of the concept outside the catalog
	}
	if t.Entry.Fields == nil {
		t.Fields = catalog
		t.AllNumeric = t.Endpoint == nil || !t.Endpoint.ValuesListed
		return
	}
	t.Fields = make(map[string]*Field, len(t.Entry.Fields))
	for name, f := range t.Entry.Fields {
		var merged Field
		if c := catalog[name]; c != nil {
			merged = *c
		} else {
			merged = *t.DerivedField(name) // listed, and not in the catalog
		}
		merged.Name, merged.Help = cmp.Or(f.Name, merged.Name), cmp.Or(f.Help, merged.Help)
		if f.Type != "gauge" || merged.Type == "" {
			merged.Type = f.Type
		}
		if f.Name == "" && catalog[name] == nil && merged.Type == "counter" && !strings.HasSuffix(merged.Name, "_total") {
			merged.Name += "_total" // a derived counter, named as counters are
		}
		if f.Scale != 1 {
			merged.Scale = f.Scale
		}
		if f.Labels != nil {
			merged.Labels = f.Labels
		}
		merged.KeyLabel = cmp.Or(f.KeyLabel, merged.KeyLabel)
		t.Fields[name] = &merged
	}
}
