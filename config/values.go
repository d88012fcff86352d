package config

import (
	"cmp"
	"iter"
	"net/url"
	"slices"
	"strings"
)

// Values is an immutable list of name=value pairs, sorted by name, each
// name once: a tuple's parameters and its query. A tuple's few pairs take
// one small array where a map would take several hundred bytes, and tuples
// may share one (the windows of a combination share its parameters). The
// zero Values is empty.
type Values struct {
	kv []nameValue
}

type nameValue struct{ name, value string }

// MakeValues is the Values of name, value, name, value...; a name given
// twice keeps its last value. It panics on an odd count of strings.
func MakeValues(kv ...string) Values {
	if len(kv)%2 != 0 {
		panic("config.MakeValues: odd count of strings")
	}
	var b valuesBuilder
	for i := 0; i < len(kv); i += 2 {
		b.set(kv[i], kv[i+1])
	}
	return b.values()
}

// Len is the number of names.
func (v Values) Len() int { return len(v.kv) }

// Lookup is the value of name and whether it is set.
func (v Values) Lookup(name string) (string, bool) {
	if i, ok := v.find(name); ok {
		return v.kv[i].value, true
	}
	return "", false
}

// Get is the value of name, "" where it is not set.
func (v Values) Get(name string) string {
	s, _ := v.Lookup(name)
	return s
}

// Has says whether name is set.
func (v Values) Has(name string) bool {
	_, ok := v.find(name)
	return ok
}

// All yields the pairs by name.
func (v Values) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, p := range v.kv {
			if !yield(p.name, p.value) {
				return
			}
		}
	}
}

// Encode is the pairs in URL query form sorted by name, as
// url.Values.Encode writes them.
func (v Values) Encode() string {
	var b strings.Builder
	for i, p := range v.kv {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p.name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p.value))
	}
	return b.String()
}

// String is Encode, for messages.
func (v Values) String() string { return v.Encode() }

// URL is a new url.Values of the pairs, one value a name.
func (v Values) URL() url.Values {
	q := make(url.Values, len(v.kv))
	for _, p := range v.kv {
		q[p.name] = []string{p.value}
	}
	return q
}

func (v Values) find(name string) (int, bool) {
	return slices.BinarySearchFunc(v.kv, name, func(p nameValue, name string) int { return cmp.Compare(p.name, name) })
}

// valuesBuilder builds a Values, a nameValue at a time.
type valuesBuilder struct{ kv []nameValue }

// set sets name to value, replacing a value set before.
func (b *valuesBuilder) set(name, value string) {
	i, ok := Values(*b).find(name)
	if ok {
		b.kv[i].value = value
		return
	}
	b.kv = slices.Insert(b.kv, i, nameValue{name, value})
}

// values is what was set, in an array of its own length.
func (b *valuesBuilder) values() Values {
	if len(b.kv) == 0 {
		return Values{}
	}
	return Values{kv: slices.Clone(b.kv)}
}
