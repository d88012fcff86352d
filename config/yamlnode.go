package config

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// errorList collects every problem found in a file, each prefixed with the
// file, the line and the dotted key it concerns, so that one run of
// --config.check shows them all.
type errorList struct {
	file string
	errs []problem
	seen map[problem]bool
	// dedupe keeps one of two tuples that are the same series instead of
	// reporting it: after discovery, "all" and a listed value, or a name
	// and a ticker of one asset, legitimately meet.
	dedupe bool
	// read counts the keys and values read (spend); tooMuch says the file
	// held more than maxRead.
	read    int
	tooMuch bool
	// interned holds one copy of each path and query value the tuples
	// built so far have (intern).
	interned map[string]string
}

// problem is one error of a file: its line, its dotted key and what is
// wrong.
type problem struct {
	line int
	key  string
	msg  string
}

// maxRead bounds the keys and values a file is read through, its aliases
// followed: an alias repeats a node without its bytes, so that a small
// file could name one long list or entry a million times over. It leaves
// room for the longest list max_tuples admits (MaxMaxTuples) and more;
// a configuration holds a few thousand.
const maxRead = 1 << 17

// spend counts n keys or values about to be read at node; false, reported
// once, when the file holds more than maxRead.
func (l *errorList) spend(at *yaml.Node, n int) bool {
	if l.read += n; l.read <= maxRead {
		return true
	}
	if !l.tooMuch {
		l.tooMuch = true
		l.add(at, "", "the file holds more than %d keys and values (an alias counts as what it repeats); a configuration holds a few thousand", maxRead)
	}
	return false
}

func (l *errorList) add(n *yaml.Node, key, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	l.addAt(line, key, format, args...)
}

// addAt records a problem at a line; the same problem found again (one per
// expanded tuple, say) is recorded once.
func (l *errorList) addAt(line int, key, format string, args ...any) {
	p := problem{line, key, fmt.Sprintf(format, args...)}
	if l.seen[p] {
		return
	}
	if l.seen == nil {
		l.seen = map[problem]bool{}
	}
	l.seen[p] = true
	l.errs = append(l.errs, p)
}

// err returns the problems as file:line: key: message, in the order of
// their lines: the checks of expanded entries run after the whole file is
// read.
func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	sorted := slices.Clone(l.errs)
	slices.SortStableFunc(sorted, func(a, b problem) int { return cmp.Compare(a.line, b.line) })
	problems := make([]string, len(sorted))
	for i, p := range sorted {
		key := ""
		if p.key != "" {
			key = p.key + ": "
		}
		problems[i] = fmt.Sprintf("%s:%d: %s%s", l.file, p.line, key, p.msg)
	}
	return &Error{Problems: problems}
}

// Error is every problem found while loading a configuration file.
type Error struct {
	Problems []string
}

func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }

// pair is one key and its value node of a YAML mapping.
type pair struct {
	key   string
	keyN  *yaml.Node
	value *yaml.Node
}

// mapping returns the key/value pairs of a mapping node, reporting a
// non-mapping or a duplicated key.
func (l *errorList) mapping(n *yaml.Node, key string) ([]pair, bool) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		l.add(n, key, "must be a mapping, got %s", kindName(n))
		return nil, false
	}
	if !l.spend(n, len(n.Content)/2) {
		return nil, false
	}
	seen := map[string]bool{}
	pairs := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			l.add(k, key, "keys must be strings")
			continue
		}
		if k.Value == "<<" {
			l.add(k, key, "merge keys (<<) are not supported")
			continue
		}
		if seen[k.Value] {
			l.add(k, join(key, k.Value), "key is given twice")
			continue
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		pairs = append(pairs, pair{key: k.Value, keyN: k, value: v})
	}
	return pairs, true
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing (null)"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unsupported value"
}

func (l *errorList) scalar(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.add(n, key, "must be a single value, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

func (l *errorList) str(n *yaml.Node, key string, dst *string) {
	typed(l, n, key, dst, "a string", func(v string) (string, error) { return v, nil }, "!!str")
}

// integer reads an integer into dst and says whether it could.
func (l *errorList) integer(n *yaml.Node, key string, dst *int) bool {
	return typed(l, n, key, dst, "an integer", strconv.Atoi, "!!int")
}

// float reads a finite number into dst and says whether it could.
func (l *errorList) float(n *yaml.Node, key string, dst *float64) bool {
	return typed(l, n, key, dst, "a number", func(v string) (float64, error) {
		f, err := strconv.ParseFloat(v, 64)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			err = strconv.ErrRange
		}
		return f, err
	}, "!!int", "!!float")
}

// typed reads a scalar of one of tags through parse into dst and says
// whether it could; what names the type wanted.
func typed[T any](l *errorList, n *yaml.Node, key string, dst *T, what string, parse func(string) (T, error), tags ...string) bool {
	v, ok := l.scalar(n, key)
	if !ok {
		return false
	}
	x, err := parse(v)
	if err != nil || !slices.Contains(tags, n.Tag) {
		l.add(n, key, "must be %s, got %q", what, v)
		return false
	}
	*dst = x
	return true
}

// duration accepts Go durations ("90s", "1h30m") and the "1d" shorthand.
func (l *errorList) duration(n *yaml.Node, key string, dst *time.Duration) {
	v, ok := l.scalar(n, key)
	if !ok {
		return
	}
	d, err := parseDuration(v)
	if err != nil {
		l.add(n, key, "%q is not a duration (use e.g. 30s, 10m, 2h, 1d)", v)
		return
	}
	if d < 0 {
		l.add(n, key, "must not be negative, got %q", v)
		return
	}
	*dst = d
}

func parseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, err
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// values reads a scalar or a list of scalars as strings, rejecting an empty
// list, nested structures and empty strings.
func (l *errorList) values(n *yaml.Node, key string) []string {
	switch n.Kind {
	case yaml.ScalarNode:
		if v, ok := l.scalar(n, key); ok {
			if v == "" {
				l.add(n, key, "must not be empty")
				return nil
			}
			return []string{v}
		}
		return nil
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			l.add(n, key, "must not be an empty list")
			return nil
		}
		if !l.spend(n, len(n.Content)) {
			return nil
		}
		out := make([]string, 0, len(n.Content))
		seen := map[string]bool{}
		for i, c := range n.Content {
			ik := fmt.Sprintf("%s[%d]", key, i)
			v, ok := l.scalar(c, ik)
			if !ok {
				continue
			}
			if v == "" {
				l.add(c, ik, "must not be empty")
				continue
			}
			if seen[v] {
				l.add(c, ik, "%q is listed twice", v)
				continue
			}
			seen[v] = true
			out = append(out, v)
		}
		return out
	}
	l.add(n, key, "must be a value or a list of values, got %s", kindName(n))
	return nil
}
