package plan

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The endpoints of an answer at its cap (hundreds of thousands of paths)
// are read one token at a time, not decoded into maps of the answer's
// parts, and the paths with the same windows share one Windows: what a
// plan holds is its paths and the few window sets they use.

// endpoints reads apiEndpoint, a valid JSON value (its answer was decoded
// whole before): asset → category → metric → windows, and its statics.
type endpoints struct {
	p *Plan
	d *json.Decoder
	// shared are the window sets read so far, by their canonical form
	// (sharedKey).
	shared map[string]Windows
	key    []byte
	// entries are a metric's keys and values, reused from one metric to
	// the next; nested are those of its "window" object.
	entries, nested []entry
}

// entry is one key of a metric and its value, when a string.
type entry struct {
	key, value string
	str        bool
}

// readEndpoints reads apiEndpoint into p. A key given twice adds to what
// the first gave; a metric given twice, or a window, takes the last.
func (p *Plan) readEndpoints(raw json.RawMessage) error {
	if raw == nil || string(raw) == "null" {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	r := &endpoints{p: p, d: d, shared: map[string]Windows{}}
	return r.object(keyEndpoints, func(asset string) error {
		where := keyEndpoints + "." + asset
		if asset == keyStatics {
			var v json.RawMessage
			if err := d.Decode(&v); err != nil {
				return err
			}
			return p.readStatics(v, where)
		}
		return r.object(where, func(cat string) error {
			return r.object(where+"."+cat, func(metric string) error {
				return r.metric(asset, cat, metric, where+"."+cat+"."+metric)
			})
		})
	})
}

// object reads an object, calling each with each of its keys to read the
// value that follows; null reads as an empty object.
func (r *endpoints) object(where string, each func(key string) error) error {
	if ok, err := r.open(where); !ok {
		return err
	}
	for r.d.More() {
		k, err := r.name()
		if err != nil {
			return err
		}
		if err := each(k); err != nil {
			return err
		}
	}
	_, err := r.d.Token() // }
	return err
}

// open reads the { of an object: ok false at null (nothing listed) or
// with the error that says what came instead.
func (r *endpoints) open(where string) (ok bool, err error) {
	t, err := r.d.Token()
	if err != nil {
		return false, err
	}
	switch t {
	case json.Delim('{'):
		return true, nil
	case nil:
		return false, nil
	}
	return false, fmt.Errorf("%s: want a JSON object, got %s", where, kind(t))
}

// name reads an object's key.
func (r *endpoints) name() (string, error) {
	t, err := r.d.Token()
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("want a key, got %v", t)
	}
	return s, nil
}

// kind names a token as describe names a value.
func kind(t json.Token) string {
	switch t := t.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case json.Delim:
		if t == '[' {
			return "a list"
		}
	}
	return fmt.Sprintf("%v", t)
}

// skip reads the rest of an object or list whose opening was read.
func (r *endpoints) skip() error {
	for depth := 1; depth > 0; {
		t, err := r.d.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// fields reads an object's keys and string values into to, its {
// read; objects are left out but, at top, a "window" object, whose
// entries go to nested (the older dialect). window says whether the last
// "window" key held an object.
func (r *endpoints) fields(to []entry, top bool) (out []entry, window bool, err error) {
	for r.d.More() {
		k, err := r.name()
		if err != nil {
			return to, false, err
		}
		t, err := r.d.Token()
		if err != nil {
			return to, false, err
		}
		switch t := t.(type) {
		case string:
			to = append(to, entry{key: k, value: t, str: true})
		case json.Delim:
			if top && k == keyWindow && t == '{' {
				if r.nested, _, err = r.fields(r.nested[:0], false); err != nil {
					return to, false, err
				}
				window = true
				continue
			}
			if err := r.skip(); err != nil {
				return to, false, err
			}
			to = append(to, entry{key: k})
		default:
			to = append(to, entry{key: k})
		}
		if k == keyWindow {
			window = false
		}
	}
	_, err = r.d.Token() // }
	return to, window, err
}

// metric reads one metric's windows, in either dialect.
func (r *endpoints) metric(asset, cat, metric, where string) error {
	if ok, err := r.open(where); !ok {
		return err
	}
	var window bool
	var err error
	if r.entries, window, err = r.fields(r.entries[:0], true); err != nil {
		return err
	}
	p := r.p
	for _, seg := range []string{asset, cat, metric} {
		if why := badSegment(seg); why != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("%s skipped: %q %s", where, seg, why))
			return nil
		}
	}
	es := r.entries
	if window {
		es = r.nested
	}
	// The last value of a key counts; the canonical form lists the
	// windows sorted, each with its depth's fields.
	slices.SortStableFunc(es, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	var depths []Duration
	r.key = r.key[:0]
	n := 0
	for i, e := range es {
		if i+1 < len(es) && es[i+1].key == e.key {
			continue
		}
		if !e.str || badSegment(e.key) != "" {
			continue
		}
		d, err := ParseDuration(strings.TrimSpace(e.value))
		if err != nil {
			continue // not a duration (limit: 1000 and the like): ignored
		}
		es[n] = e
		depths = append(depths, d)
		n++
		r.key = append(r.key, e.key...)
		r.key = append(r.key, 0)
		for _, v := range []int64{int64(d.Years), int64(d.Months), int64(d.Days), int64(d.Clock)} {
			r.key = binary.AppendVarint(r.key, v)
		}
	}
	ws, ok := r.shared[string(r.key)]
	if !ok {
		ws = make(Windows, n)
		for i, e := range es[:n] {
			ws[e.key] = depths[i]
		}
		r.shared[string(r.key)] = ws
	}
	path := "/v1/" + asset + "/" + cat + "/" + metric
	if len(ws) == 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%s lists no window with a history depth: %s is read at any window", where, path))
	}
	p.Paths[path] = ws
	return nil
}

// MarshalJSON writes the plan as the current dialect of the answer, which
// Parse reads back to an Equal plan: written as it goes, its paths sorted
// by their segments, not built as maps first.
func (p *Plan) MarshalJSON() ([]byte, error) {
	type listed struct {
		segs [3]string
		ws   Windows
	}
	all := make([]listed, 0, len(p.Paths))
	size := 128
	for path, ws := range p.Paths {
		rest, ok := strings.CutPrefix(path, "/v1/")
		segs := strings.Split(rest, "/")
		if !ok || len(segs) != 3 || segs[0] == keyStatics {
			return nil, errors.New("plan path " + strconv.Quote(path) + " is not /v1/{asset}/{category}/{metric}")
		}
		all = append(all, listed{[3]string(segs), ws})
		size += len(path) + 16*len(ws) + 8
	}
	slices.SortFunc(all, func(a, b listed) int {
		return cmp.Or(strings.Compare(a.segs[0], b.segs[0]), strings.Compare(a.segs[1], b.segs[1]), strings.Compare(a.segs[2], b.segs[2]))
	})
	b := make([]byte, 0, size)
	b = append(b, `{"apiEndpoint":{`...)
	for i, l := range all {
		switch {
		case i == 0:
			b = append(quote(b, l.segs[0]), `:{`...)
			b = append(quote(b, l.segs[1]), `:{`...)
		case l.segs[0] != all[i-1].segs[0]:
			b = append(quote(append(b, `}},`...), l.segs[0]), `:{`...)
			b = append(quote(b, l.segs[1]), `:{`...)
		case l.segs[1] != all[i-1].segs[1]:
			b = append(quote(append(b, `},`...), l.segs[1]), `:{`...)
		default:
			b = append(b, ',')
		}
		b = append(quote(b, l.segs[2]), `:{`...)
		for j, w := range slices.Sorted(maps.Keys(l.ws)) {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(quote(b, w), ':')
			b = quote(b, l.ws[w].String())
		}
		b = append(b, '}')
	}
	if len(all) > 0 {
		b = append(b, `}},`...)
	}
	b = append(b, `"statics":[`...)
	for i, s := range p.Statics {
		if i > 0 {
			b = append(b, ',')
		}
		b = quote(b, s)
	}
	b = append(b, `]},"apiRateLimit":{"token":`...)
	b = strconv.AppendInt(b, int64(p.RateLimit.Token), 10)
	if p.RateLimit.Window != "" {
		b = quote(append(b, `,"window":`...), p.RateLimit.Window)
	}
	b = quote(append(b, `},"plan":{"name":`...), p.Name)
	return append(b, `}}`...), nil
}

// quote appends s as a JSON string; json.Marshal, which calls
// MarshalJSON, escapes what HTML would read on top.
func quote(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	s = strings.ToValidUTF8(s, "\uFFFD")
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
