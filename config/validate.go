package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CheckSegment checks a value that fills a path placeholder ({equity},
// {handle}, {asset}). The value is escaped as one path segment, and one
// that could step out of its segment ("/", "..", ".") is refused all the
// same: proxies and servers decode and normalise paths, and a value from
// an upstream list must not choose which endpoint the credential is sent
// to.
func CheckSegment(v string) error {
	switch {
	case strings.Contains(v, "/") || strings.Contains(v, ".."):
		return fmt.Errorf("%q holds \"/\" or \"..\"", v)
	case v == ".":
		return fmt.Errorf("%q is the current directory", v)
	}
	return nil
}

// checkPath validates the path scheme of an entry and its placeholders.
func (l *errorList) checkPath(a *API, e *Entry) bool {
	key := join(e.Key, "path")
	line := e.KeyLine("path")
	ok := true
	switch a.Name {
	case APIData:
		if !v1PathRE.MatchString(e.Path) && !v2PathRE.MatchString(e.Path) {
			l.addAt(line, key, "%q does not fit /v1/{asset}/{category}/{metric} or /v2/{domain}/{category}/{metric}", e.Path)
			ok = false
		}
	case APIIndicator:
		if !strings.HasPrefix(e.Path, "/api/") || !otherPathRE.MatchString(e.Path) {
			l.addAt(line, key, "%q is not an Indicator API path (/api/...)", e.Path)
			ok = false
		}
	default:
		if !otherPathRE.MatchString(e.Path) {
			l.addAt(line, key, "%q is not a valid path", e.Path)
			ok = false
		}
	}
	for _, m := range placeholderRE.FindAllStringSubmatch(e.Path, -1) {
		if e.param(m[1]) == nil && !e.failed[m[1]] {
			l.addAt(line, key, "placeholder {%s} has no parameter %s in this entry", m[1], m[1])
			ok = false
		}
	}
	if a.Name != APIData && len(e.Windows) > 0 {
		l.addAt(e.KeyLine("window"), join(e.Key, "window"), "the %s API takes no window", a.Name)
		ok = false
	}
	return ok
}

func (l *errorList) checkTuple(a *API, e *Entry, t *Tuple) bool {
	ok := true
	ep := t.Endpoint
	windows := knownWindows
	if ep != nil && a.Name == APIData {
		windows = ep.Windows
	}
	if t.Window != "" && !slices.Contains(windows, t.Window) {
		where := "the data API"
		if ep != nil {
			where = ep.Template
		}
		l.addAt(e.KeyLine("window"), join(e.Key, "window"), "%q is not allowed for %s (allowed: %s)", t.Window, where, strings.Join(windows, ", "))
		ok = false
	}
	maxLimit := 0
	if ep != nil {
		maxLimit = ep.MaxLimit
		for _, p := range e.Params {
			if e.takesAnyway(p.Name) || slices.Contains(ep.Params, p.Name) {
				continue
			}
			l.addAt(p.Line, join(e.Key, p.Name), "unknown parameter for %s (accepted: %s)%s",
				ep.Template, cmp.Or(strings.Join(ep.Params, ", "), "none"), didYouMean(nearKey(p.Name, ep.Params, 3)))
			ok = false
		}
		for _, r := range ep.Required {
			if !t.Params.Has(r) && !e.failed[r] {
				l.addAt(e.Line, join(e.Key, r), "is required by %s", ep.Template)
				ok = false
			}
		}
	} else if a.Name == APIData {
		maxLimit = 100000
		if strings.HasPrefix(t.Path, "/v2/") {
			maxLimit = 10000
		}
	}
	if v, has := t.Params.Lookup("limit"); has {
		n, err := strconv.Atoi(v)
		switch {
		case maxLimit == 0 && ep != nil:
			l.addAt(e.KeyLine("limit"), join(e.Key, "limit"), "%s takes no limit", ep.Template)
			ok = false
		case err != nil || n < 1 || (maxLimit > 0 && n > maxLimit):
			l.addAt(e.KeyLine("limit"), join(e.Key, "limit"), "%q is out of range (1 to %d)", v, max(maxLimit, 1))
			ok = false
		}
	}
	if a.Name == APIData && strings.HasPrefix(t.Path, "/v2/") {
		if as, has := t.Params.Lookup("asset"); has && chainSuffixRE.MatchString(as) {
			l.addAt(e.KeyLine("asset"), join(e.Key, "asset"), "%q carries a chain suffix; v2 takes the alias without it (and chain: ethereum where needed)", as)
			ok = false
		}
		if ch, has := t.Params.Lookup("chain"); has && ch != "ethereum" {
			l.addAt(e.KeyLine("chain"), join(e.Key, "chain"), "%q is not a supported chain (allowed: ethereum)", ch)
			ok = false
		}
	}
	return ok
}

// checkDistinct refuses two tuples of one label set that would be one
// series: their queries differ, but a parameter labelled otherwise than
// sent (Param.Labels) gave them the same labels.
func (l *errorList) checkDistinct(tuples []*Tuple) {
	seen := map[string]*Tuple{}
	for _, t := range tuples {
		id := t.LabelGroup() + "\xff" + strings.Join(t.LabelValues, "\xff")
		prev, dup := seen[id]
		if !dup {
			seen[id] = t
			continue
		}
		l.addAt(t.Entry.Line, t.Entry.Key, "the series %s and %s (%s at line %d) would carry the same labels {%s}",
			t.describe(), prev.describe(), prev.Entry.Key, prev.Entry.Line, labelText(t))
	}
}

func labelText(t *Tuple) string {
	parts := make([]string, len(t.LabelNames()))
	for i, n := range t.LabelNames() {
		parts[i] = fmt.Sprintf("%s=%q", n, t.LabelValues[i])
	}
	return strings.Join(parts, ", ")
}
