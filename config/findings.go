package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Findings are what a configuration asks for that is probably a mistake
// but may be a real endpoint the built-in catalog lacks (it holds a few of
// the data API's 242): warnings, never load errors. --config.check prints
// them after OK; at run time the landing page lists them and
// onchain_exporter_config_findings counts them by kind. Offline (Findings)
// only a name near one the catalog knows is reported (nearKey): a name
// near nothing known is most likely real. With --config.check.upstream the
// listings are read, and every path, parameter name and value is checked
// against them (CheckListingFindings; package check for the Indicator and
// Analyst Consensus lists).

// Kinds of finding, the kind label of onchain_exporter_config_findings.
const (
	// Against the built-in catalog (offline).
	FindingCatalogPath      = "catalog_path"
	FindingCatalogParameter = "catalog_parameter"
	// Against what the upstream's listing endpoints list.
	FindingListingPath      = "listing_path"
	FindingListingParameter = "listing_parameter"
	FindingListingValue     = "listing_value"
)

// FindingKinds are the kinds Findings reports, each exposed from the
// start (0 when there is none).
var FindingKinds = []string{FindingCatalogPath, FindingCatalogParameter}

// Finding is one possible mistake, with the file:line and key it concerns.
type Finding struct {
	Kind    string
	File    string
	Line    int
	Key     string
	Message string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Key, f.Message)
}

// findingList collects findings, each once, for a file.
type findingList struct {
	file string
	list []Finding
}

func (l *findingList) add(kind string, line int, key, format string, args ...any) {
	f := Finding{Kind: kind, File: l.file, Line: line, Key: key, Message: fmt.Sprintf(format, args...)}
	if !slices.Contains(l.list, f) {
		l.list = append(l.list, f)
	}
}

// SortFindings orders findings of one file by line, keeping the order of
// those of one line.
func SortFindings(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int { return cmp.Compare(a.Line, b.Line) })
	return fs
}

// Findings returns the configuration's findings against the built-in
// catalog, in line order: an entry's path outside the catalog near a path
// in it, and a parameter of such an entry whose name is near one the
// catalog has for the API. A catalog endpoint's entry (a parameter it does
// not take is a load error) and a path a pattern selected have none.
func (c *Config) Findings() []Finding {
	l := &findingList{file: c.File}
	for _, name := range APINames {
		a := c.APIs[name]
		if a == nil {
			continue
		}
		outside := map[*Entry]bool{}
		for _, t := range a.Tuples {
			// A path a pattern selected is discovery's word, not a typo.
			if t.Endpoint == nil && t.Entry.Origin == nil {
				outside[t.Entry] = true
			}
		}
		known := apiParams(name)
		for _, e := range a.Metrics {
			if !outside[e] {
				continue
			}
			if s := nearPath(name, e.Path); s != "" {
				l.add(FindingCatalogPath, e.KeyLine("path"), join(e.Key, "path"),
					"%s is outside the built-in catalog; did you mean %s? (it is asked for as written)", e.Path, s)
			}
			for _, p := range e.Params {
				if e.takesAnyway(p.Name) || slices.Contains(known, p.Name) {
					continue
				}
				if s := nearKey(p.Name, known, 4); s != "" {
					l.add(FindingCatalogParameter, p.Line, join(e.Key, p.Name),
						"no endpoint of the built-in catalog takes a parameter %s; did you mean %q? (it is sent, and labels the series, as written)", p.Name, s)
				}
			}
		}
	}
	return SortFindings(l.list)
}

// apiParams lists the parameters of every catalog endpoint of an API.
func apiParams(api string) []string {
	var out []string
	for _, e := range Endpoints {
		if e.API != api {
			continue
		}
		for _, p := range e.Params {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// nearPath returns path with each segment that is near, but not equal
// to, every catalog template's segment at its place replaced by that
// segment, or "" when no segment is: /v1/btc/exchange-flow/reserve →
// /v1/btc/exchange-flows/reserve. Templates of the same API and length
// (and, on the data API, version) are compared; a place where one of
// them has a {placeholder}, or the path has one, is open, and so are the
// version and the v1 asset (etc is one edit from eth).
func nearPath(api, path string) string {
	segs := strings.Split(path, "/")
	changed := false
	for i, s := range segs {
		if s == "" || strings.HasPrefix(s, "{") || (api == APIData && (i == 1 || (i == 2 && segs[1] == "v1"))) {
			continue
		}
		vocab, open := catalogSegments(api, segs, i)
		if open || len(vocab) == 0 || slices.Contains(vocab, s) {
			continue
		}
		if n := nearKey(s, vocab, 4); n != "" {
			segs[i], changed = n, true
		}
	}
	if !changed {
		return ""
	}
	return strings.Join(segs, "/")
}

// catalogSegments lists the segments at place i of the API's templates
// as long as segs (of its version, on the data API); open when one of
// them has a placeholder there.
func catalogSegments(api string, segs []string, i int) (vocab []string, open bool) {
	for _, e := range Endpoints {
		t := strings.Split(e.Template, "/")
		if e.API != api || len(t) != len(segs) || (api == APIData && t[1] != segs[1]) {
			continue
		}
		if strings.HasPrefix(t[i], "{") {
			return nil, true
		}
		if !slices.Contains(vocab, t[i]) {
			vocab = append(vocab, t[i])
		}
	}
	return vocab, false
}
