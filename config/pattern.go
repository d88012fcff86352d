package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A data-API entry may select paths by pattern instead of naming one:
// path: /v1/btc/*/*, /v1/*/exchange-flows/{reserve,netflow}, /v1/btc/**,
// with exclude: patterns beside it. Load keeps the pattern and builds no
// tuple from it; expansion (Resolve with a Matcher, package expand)
// replaces the entry with one entry per path the upstream's discovery
// lists and the key's plan allows, before anything is called.

// The window: choices of a pattern entry, among the windows discovery
// lists for each path and the plan allows there.
const (
	WindowsCoarsest = "coarsest"
	WindowsFinest   = "finest"
	WindowsAll      = "all"
)

// windowChoices are the window: words that choose rather than name.
var windowChoices = []string{WindowsCoarsest, WindowsFinest, WindowsAll}

// Pattern is a path with glob segments: * matches within a segment,
// {a,b} one of the words, and ** any number of whole segments (none
// included).
type Pattern struct {
	Text string
	segs []*segment // nil stands for **
}

// segment matches one segment of a path: a regexp, or for a segment that
// is one {a,b} group alone, a set of its words (a regexp of thousands of
// alternatives walks them all at every character).
type segment struct {
	re    *regexp.Regexp
	words map[string]bool
}

func (s *segment) match(v string) bool {
	if s.words != nil {
		return s.words[v]
	}
	return s.re.MatchString(v)
}

// patternWordRE is what a segment of a pattern may hold besides * and
// {a,b}: the characters of a data-API path segment.
var patternWordRE = regexp.MustCompile(`^[a-z0-9_.-]*$`)

// IsPattern says whether a path selects by pattern: it holds * or a
// {a,b} group (a {name} without a comma is a placeholder).
func IsPattern(path string) bool {
	return strings.Contains(path, "*") ||
		slices.ContainsFunc(groupRE.FindAllString(path, -1), func(g string) bool { return strings.Contains(g, ",") })
}

var groupRE = regexp.MustCompile(`\{[^{}]*\}`)

// ParsePattern reads a path pattern of the data API: /v1/ or /v2/, then
// segments of a-z, 0-9, _ . - with * and {a,b} in them, or ** alone.
func ParsePattern(text string) (*Pattern, error) {
	rest, ok := strings.CutPrefix(text, "/v1/")
	if !ok {
		if rest, ok = strings.CutPrefix(text, "/v2/"); !ok {
			return nil, fmt.Errorf("pattern %q must start with /v1/ or /v2/", text)
		}
	}
	p := &Pattern{Text: text, segs: []*segment{{words: map[string]bool{text[1:3]: true}}}}
	for i, seg := range strings.Split(rest, "/") {
		if seg == "**" {
			if len(p.segs) > 0 && p.segs[len(p.segs)-1] == nil {
				continue // ** ** is **
			}
			p.segs = append(p.segs, nil)
			continue
		}
		re, err := segmentRegexp(seg)
		if err != nil {
			return nil, fmt.Errorf("pattern %q, segment %d %q: %v", text, i+2, seg, err)
		}
		m := &segment{re: re}
		if group, ok := strings.CutPrefix(seg, "{"); ok && !strings.ContainsAny(group, "{*") && strings.Index(group, "}") == len(group)-1 {
			m.words = map[string]bool{}
			for _, w := range strings.Split(group[:len(group)-1], ",") {
				m.words[w] = true
			}
		}
		p.segs = append(p.segs, m)
	}
	return p, nil
}

// segmentRegexp turns one segment of a pattern into an anchored regexp.
func segmentRegexp(seg string) (*regexp.Regexp, error) {
	if seg == "" {
		return nil, fmt.Errorf("empty segment")
	}
	var b strings.Builder
	b.WriteString("^")
	for seg != "" {
		i := strings.IndexAny(seg, "*{}")
		if i < 0 {
			i = len(seg)
		}
		switch {
		case i > 0:
			if !patternWordRE.MatchString(seg[:i]) {
				return nil, fmt.Errorf("only a-z, 0-9, _ . - besides * and {a,b}")
			}
			b.WriteString(regexp.QuoteMeta(seg[:i]))
			seg = seg[i:]
		case seg[0] == '*':
			if strings.HasPrefix(seg, "**") {
				return nil, fmt.Errorf("** stands alone in a segment")
			}
			b.WriteString(`[^/]*`)
			seg = seg[1:]
		case seg[0] == '}':
			return nil, fmt.Errorf("} without {")
		default:
			end := strings.IndexByte(seg, '}')
			if end < 0 {
				return nil, fmt.Errorf("{ without }")
			}
			words := strings.Split(seg[1:end], ",")
			if len(words) < 2 {
				return nil, fmt.Errorf("{%s} is a placeholder: patterns select paths by * and {a,b}, not by parameters", seg[1:end])
			}
			for j, w := range words {
				if w == "" || !patternWordRE.MatchString(w) {
					return nil, fmt.Errorf("{%s}: each word of a {a,b} group is a-z, 0-9, _ . -", seg[1:end])
				}
				words[j] = regexp.QuoteMeta(w)
			}
			b.WriteString("(?:" + strings.Join(words, "|") + ")")
			seg = seg[end+1:]
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// Match says whether a path, /v1/... or /v2/..., is one the pattern
// selects.
func (p *Pattern) Match(path string) bool {
	rest, ok := strings.CutPrefix(path, "/")
	return ok && matchSegs(p.segs, strings.Split(rest, "/"))
}

func matchSegs(pat []*segment, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == nil {
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 || segs[0] == "" || !pat[0].match(segs[0]) {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// Selects says whether the entry's pattern selects a path its exclude:
// patterns do not.
func (e *Entry) Selects(path string) bool {
	if e.Pattern == nil || !e.Pattern.Match(path) {
		return false
	}
	return !slices.ContainsFunc(e.Exclude, func(x *Pattern) bool { return x.Match(path) })
}

// readPattern reads a pattern entry's keys once the entry is read: the
// pattern itself, exclude:, a window: choice, coarsen:. Keys that only a
// pattern takes are refused on a path named.
func (l *errorList) readPattern(api string, e *Entry, excludes []string) {
	if len(e.Windows) == 1 && slices.Contains(windowChoices, e.Windows[0]) {
		e.WindowChoice, e.Windows = e.Windows[0], nil
	} else if i := slices.IndexFunc(e.Windows, func(w string) bool { return slices.Contains(windowChoices, w) }); i >= 0 {
		l.addAt(e.KeyLine("window"), join(e.Key, "window"), "%q chooses among the windows a path allows: give it alone (window: %s), not in a list", e.Windows[i], e.Windows[i])
		e.failed["window"] = true
	}
	if !IsPattern(e.Path) {
		for key, set := range map[string]bool{"exclude": excludes != nil, "coarsen": e.Coarsen} {
			if set {
				l.addAt(e.KeyLine(key), join(e.Key, key), "applies to a path pattern only (a path with * or {a,b})")
				e.failed[key] = true
			}
		}
		if e.WindowChoice != "" {
			l.addAt(e.KeyLine("window"), join(e.Key, "window"), "%s chooses among the windows a path pattern selects (a path with * or {a,b}): name the windows of %s", e.WindowChoice, e.Path)
			e.failed["window"] = true
		}
		return
	}
	if api != APIData {
		l.addAt(e.KeyLine("path"), join(e.Key, "path"), "path patterns select from the data API's discovery only; the %s API takes a path named", api)
		e.failed["path"] = true
		return
	}
	p, err := ParsePattern(e.Path)
	if err != nil {
		l.addAt(e.KeyLine("path"), join(e.Key, "path"), "%v", err)
		e.failed["path"] = true
		return
	}
	e.Pattern = p
	for _, w := range e.Windows {
		if !slices.Contains(knownWindows, w) && !e.failed["window"] {
			l.addAt(e.KeyLine("window"), join(e.Key, "window"), "%q is not a window of the data API (%s, or one of %s)", w,
				strings.Join(knownWindows, ", "), strings.Join(windowChoices, ", "))
			e.failed["window"] = true
		}
	}
	for _, x := range excludes {
		if xp, err := ParsePattern(x); err != nil {
			l.addAt(e.KeyLine("exclude"), join(e.Key, "exclude"), "%v", err)
			e.failed["exclude"] = true
		} else {
			e.Exclude = append(e.Exclude, xp)
		}
	}
}
