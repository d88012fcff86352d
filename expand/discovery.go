package expand

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
)

// resolve is the Resolver of one expansion: what an expandable parameter
// stands for, read from the lists fetchAll read.
func (r *resolution) resolve(a *config.API, e *config.Entry, p config.Param) (config.Param, error) {
	if !expandable(a.Name, p) {
		return p, nil
	}
	var found []string
	var err error
	switch {
	case a.Name == config.APIData:
		found, err = r.dataValues(a, e, p)
	case a.Name == config.APIIndicator && p.Name == "equity":
		found, err = r.equities(a)
	case a.Name == config.APIConsensus && p.Name == "asset":
		return r.assets(a, e, p)
	default:
		return p, fmt.Errorf("%q cannot be expanded: the %s API lists values for %s only", config.All, a.Name, map[string]string{
			config.APIIndicator: "equity", config.APIConsensus: "asset"}[a.Name])
	}
	if err != nil {
		return p, fmt.Errorf("cannot expand %q: %w", config.All, err)
	}
	found = r.segments(a, e, p, found)
	found, left := leaveOut(a.Name, p, found)
	var out []string
	for _, v := range p.Values {
		if v == config.All {
			out = append(out, found...)
		} else {
			out = append(out, v)
		}
	}
	r.logExpanded(a, e, p, out, left...)
	p.Values = out
	return p, nil
}

// leaveOut drops from what all stands for the values config.LeftOutOfAll
// leaves out, unless the entry names them; left says which and why.
func leaveOut(api string, p config.Param, found []string) (kept, left []string) {
	for _, v := range found {
		why := config.LeftOutOfAll(api, p.Name, v)
		switch {
		case why == "":
			kept = append(kept, v)
		case slices.Contains(p.Values, v):
			// named: asked for where the entry names it
		case !slices.Contains(left, v+" ("+why+")"):
			left = append(left, v+" ("+why+")")
		}
	}
	return kept, left
}

// segments drops, with a warning, the listed values that cannot fill the
// entry's {placeholder}: a list is the upstream's word, so a bad value is
// skipped, not refused.
func (r *resolution) segments(a *config.API, e *config.Entry, p config.Param, values []string) []string {
	if !strings.Contains(e.Path, "{"+p.Name+"}") {
		return values
	}
	return slices.DeleteFunc(values, func(v string) bool {
		err := config.CheckSegment(v)
		if err != nil {
			l := level.Debug(r.x.logger)
			if r.x.firstWarning(a.Name + " " + e.Key + "." + p.Name + " " + v) {
				l = level.Warn(r.x.logger)
			}
			l.Log("msg", "listed value skipped: it cannot fill a path segment", "api", a.Name, "entry", e.Key,
				"param", p.Name, "err", err)
		}
		return err != nil
	})
}

// logExpanded logs what a parameter resolved to (at debug when as last
// time), and the values all left out (leaveOut).
func (r *resolution) logExpanded(a *config.API, e *config.Entry, p config.Param, values []string, left ...string) {
	l := level.Debug(r.x.logger)
	if r.x.newly("values", a.Name+" "+e.Key+" "+e.Path+"."+p.Name, strings.Join(values, ",")) {
		l = level.Info(r.x.logger)
		r.touched[a.Name] = true
	}
	shown := values
	if len(shown) > 20 {
		shown = append(shown[:20:20], "...")
	}
	kv := []any{"msg", "parameter resolved through the upstream", "api", a.Name, "entry", e.Key,
		"param", p.Name, "listed", strings.Join(p.Values, ","), "count", len(values), "values", strings.Join(shown, ",")}
	if len(left) > 0 {
		kv[1] = "parameter resolved through the upstream; all leaves out aggregates and deprecated values, name one to have it"
		kv = append(kv, "left_out", strings.Join(left, ", "))
	}
	l.Log(kv...)
}

// dataValues lists the values of a parameter in the discovery items that
// fit the entry's path: a placeholder's segment, or a query parameter's
// listed values (on v2 also an item's "assets").
func (r *resolution) dataValues(a *config.API, e *config.Entry, p config.Param) ([]string, error) {
	list := config.ListDataV1
	if strings.HasPrefix(e.Path, "/v2/") {
		list = config.ListDataV2
	}
	items, err := r.rows(a, list)
	if err != nil {
		return nil, err
	}
	tmpl := strings.Split(e.Path, "/")
	pos := -1
	for i, s := range tmpl {
		if s == "{"+p.Name+"}" {
			pos = i
		}
	}
	var out []string
	matched := false
	for _, it := range items {
		path, _ := it["path"].(string)
		segs := strings.Split(path, "/")
		if !fitsTemplate(tmpl, segs) {
			continue
		}
		matched = true
		if pos >= 0 {
			out = append(out, segs[pos])
			continue
		}
		params, _ := it["parameters"].(map[string]any)
		out = append(out, strs(params[p.Name])...)
		if p.Name == "asset" {
			out = append(out, strs(it["assets"])...)
		}
	}
	switch {
	case !matched:
		return nil, fmt.Errorf("%s lists no endpoint %s", list, e.Path)
	case len(out) == 0:
		return nil, fmt.Errorf("%s lists no %s values for %s", list, p.Name, e.Path)
	}
	return out, nil
}

func fitsTemplate(tmpl, segs []string) bool {
	if len(tmpl) != len(segs) {
		return false
	}
	for i, t := range tmpl {
		if strings.HasPrefix(t, "{") {
			if segs[i] == "" {
				return false
			}
		} else if t != segs[i] {
			return false
		}
	}
	return true
}

// equities lists the Indicator API's equity ids, <exchange_code>:<security_code>.
func (r *resolution) equities(a *config.API) ([]string, error) {
	rows, err := r.rows(a, config.ListEquities)
	if err != nil {
		return nil, err
	}
	out := EquityIDs(rows)
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no equity", config.ListEquities)
	}
	return out, nil
}

// assets resolves each asset named (key, ticker, name or alias, in any
// case; all for every one) to the key the API is asked with, labelled
// with its ticker in lower case as the data API labels it (btc, not
// bitcoin); assets sharing a ticker are labelled with their keys.
func (r *resolution) assets(a *config.API, e *config.Entry, p config.Param) (config.Param, error) {
	rows, err := r.rows(a, config.ListAssets)
	if err != nil {
		return p, fmt.Errorf("cannot resolve the asset: %w", err)
	}
	byName := map[string]string{}
	ticker := map[string]string{}
	holders := map[string]int{}
	var keys []string
	for _, row := range rows {
		key := assetKey(row)
		if key == "" || ticker[key] != "" {
			continue
		}
		keys = append(keys, key)
		sym := strings.ToLower(strings.TrimSpace(firstOf(row, "symbol", "ticker")))
		if sym == "" {
			sym = key
		}
		ticker[key] = sym
		holders[sym]++
		for _, n := range append([]string{key, sym, decode.LabelValue(row["name"])}, strs(row["aliases"])...) {
			if n = strings.ToLower(strings.TrimSpace(n)); n != "" && byName[n] == "" {
				byName[n] = key
			}
		}
	}
	var out []string
	for _, v := range p.Values {
		switch key := byName[strings.ToLower(strings.TrimSpace(v))]; {
		case v == config.All:
			out = append(out, keys...)
		case key == "":
			return p, fmt.Errorf("%q is not an asset of %s (known: %s)", v, config.ListAssets, knownList(keys))
		default:
			out = append(out, key)
		}
	}
	out = r.segments(a, e, p, out)
	labels := map[string]string{}
	for _, key := range out {
		if sym := ticker[key]; holders[sym] == 1 && sym != key {
			labels[key] = sym
		}
	}
	if strings.Join(out, ",") != strings.Join(p.Values, ",") {
		r.logExpanded(a, e, p, out)
	}
	p.Values, p.Labels = out, labels
	return p, nil
}

// strs reads a JSON list of scalars as strings.
func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s := decode.LabelValue(x); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// warnUnlisted warns, once each, of what the discovery read does not list
// for a tuple (config.CheckListing): most likely a typo.
func (x *Expander) warnUnlisted(cfg *config.Config, listing config.Listing) {
	for _, w := range cfg.CheckListing(listing) {
		if x.firstWarning(w) {
			level.Warn(x.logger).Log("msg", "the upstream's discovery does not list this path, parameter or value", "api", config.APIData, "warning", w)
		}
	}
}

// firstWarning says whether a warning is new to this process: logged
// once, not at every expansion.
func (x *Expander) firstWarning(w string) bool { return x.newly("warned", w, "said") }

// equityID is the id of a row of /api/equities: its id, or
// <exchange_code>:<security_code>.
func equityID(row map[string]any) string {
	if id := decode.LabelValue(row["id"]); id != "" {
		return id
	}
	if ex, code := decode.LabelValue(row["exchange_code"]), decode.LabelValue(row["security_code"]); ex != "" && code != "" {
		return ex + ":" + code
	}
	return ""
}

// assetKey is the key a row of /assets names its asset by (key, or id).
func assetKey(row map[string]any) string { return firstOf(row, "key", "id") }

// firstOf is the first of the row's fields that holds a value.
func firstOf(row map[string]any, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(decode.LabelValue(row[n])); v != "" {
			return v
		}
	}
	return ""
}

// unusable says why a listing answer cannot be expanded from, or "": no
// item the exporter can read is the upstream's fault (a failed call,
// leaving the last good answer in place), never the file's.
func unusable(path string, rows []map[string]any) string {
	var what string
	var ok func(map[string]any) bool
	switch path {
	case config.ListDataV1, config.ListDataV2:
		what, ok = "an endpoint with a path", func(r map[string]any) bool { s, _ := r["path"].(string); return s != "" }
	case config.ListEquities:
		what, ok = "an equity with id, or exchange_code and security_code", func(r map[string]any) bool { return equityID(r) != "" }
	case config.ListAssets:
		what, ok = "an asset with key or id", func(r map[string]any) bool { return assetKey(r) != "" }
	default:
		return ""
	}
	if slices.ContainsFunc(rows, ok) {
		return ""
	}
	return fmt.Sprintf("the answer lists no %s (%d items)", what, len(rows))
}

// knownList names the values of a list in an error: the first ten and how
// many more.
func knownList(keys []string) string {
	if len(keys) <= 10 {
		return strings.Join(keys, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(keys[:10], ", "), len(keys)-10)
}

// AddDiscovery adds the items of a discovery answer to a listing: per
// path, its parameters with their values, its required ones and, on v2,
// its assets. Paths that list the same share one map (most take the same
// windows), never changed: a path listed again gets a copy.
func AddDiscovery(listing config.Listing, rows []map[string]any) {
	shared := map[string]map[string][]string{}
	var key []byte
	for _, it := range rows {
		p, _ := it["path"].(string)
		if p == "" {
			continue
		}
		params := map[string][]string{}
		listed, _ := it["parameters"].(map[string]any)
		for name, values := range listed {
			params[name] = append(params[name], strs(values)...)
		}
		for _, name := range strs(it["required_parameters"]) {
			if _, ok := params[name]; !ok {
				params[name] = nil
			}
		}
		if assets, ok := it["assets"]; ok {
			params["asset"] = append(params["asset"], strs(assets)...)
		}
		if old := listing[p]; old != nil {
			merged := maps.Clone(old)
			for name, values := range params {
				merged[name] = append(slices.Clip(merged[name]), values...)
			}
			listing[p] = merged
			continue
		}
		key = listedKey(key[:0], params)
		if same, ok := shared[string(key)]; ok {
			listing[p] = same
			continue
		}
		for name, values := range params {
			params[name] = slices.Clip(values)
		}
		shared[string(key)] = params
		listing[p] = params
	}
}

// listedKey appends to b an encoding of a path's parameters, equal for
// equal parameters only.
func listedKey(b []byte, params map[string][]string) []byte {
	for _, name := range slices.Sorted(maps.Keys(params)) {
		values := params[name]
		b = strconv.AppendQuote(b, name)
		if values == nil {
			b = append(b, '-') // listed without values
		}
		for _, v := range values {
			b = strconv.AppendQuote(append(b, ' '), v)
		}
		b = append(b, ';')
	}
	return b
}

// EquityIDs are the ids a list of /api/equities gives (equityID).
func EquityIDs(rows []map[string]any) []string {
	var out []string
	for _, r := range rows {
		if id := equityID(r); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// AssetNames are every name a list of /assets lets an asset be written
// as.
func AssetNames(rows []map[string]any) []string {
	var out []string
	for _, r := range rows {
		for _, k := range []string{"key", "id", "symbol", "ticker", "name"} {
			if v := firstOf(r, k); v != "" {
				out = append(out, v)
			}
		}
		out = append(out, strs(r["aliases"])...)
	}
	return out
}

// IndicatorPaths are the paths a list of /api/indicators gives.
func IndicatorPaths(rows []map[string]any) []string {
	var out []string
	for _, r := range rows {
		if p, _ := r["path"].(string); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// logKey names a log line newly keeps: what it is about (kind) and of
// what (key).
type logKey struct{ kind, key string }

// newly records what a line last said, and reports whether that changed:
// a result logged at info once, at debug when repeated.
func (x *Expander) newly(kind, key, said string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	k := logKey{kind, key}
	changed := x.logged[k] != said
	x.logged[k] = said
	return changed
}
