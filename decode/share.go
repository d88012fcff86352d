package decode

import (
	"encoding/binary"
	"encoding/json"
	"maps"
	"math"
	"slices"
)

// ShareRows makes the rows of a list hold each value once: every string,
// number, object, array and key equal to one seen before is replaced by
// that one (a discovery of 85 000 paths then holds one {"window": [...]}
// rather than 85 000: a third of its weight). The rows are changed in
// place, and from then on no value of them may be changed, since it may
// be another row's too. A value of a non-JSON type (a plan kept as a row)
// is kept as it is, and so is anything holding one.
func ShareRows(rows []map[string]any) {
	s := sharer{strs: map[string]sharedValue{}, scalars: map[string]sharedValue{}, composites: map[string]sharedValue{}, keys: map[string]string{}}
	for _, row := range rows {
		for k, v := range row {
			sv, _, _ := s.share(v)
			row[s.key(k)] = sv // assigning the entry stores the shared key too
		}
	}
}

// sharer is one ShareRows: the values seen, each with an id that stands
// for it in the encoding of what holds it.
type sharer struct {
	strs       map[string]sharedValue
	scalars    map[string]sharedValue // json.Number, float64, bool and nil, by their encoding
	composites map[string]sharedValue // objects and arrays, by their encoding
	keys       map[string]string
	ids        uint64
	buf        []byte
}

type sharedValue struct {
	v  any
	id uint64
}

// key is the first key equal to k.
func (s *sharer) key(k string) string {
	if first, ok := s.keys[k]; ok {
		return first
	}
	s.keys[k] = k
	return k
}

// share returns the first value seen equal to v, and its id; ok is false
// (and v returned) for a value of a non-JSON type or holding one.
func (s *sharer) share(v any) (out any, id uint64, ok bool) {
	switch x := v.(type) {
	case string:
		if sv, seen := s.strs[x]; seen {
			return sv.v, sv.id, true
		}
		s.ids++
		s.strs[x] = sharedValue{v, s.ids}
		return v, s.ids, true
	case json.Number:
		return s.lookup(s.scalars, v, append(append(s.buf[:0], 'n'), x...))
	case float64:
		return s.lookup(s.scalars, v, binary.BigEndian.AppendUint64(append(s.buf[:0], 'f'), math.Float64bits(x)))
	case bool:
		if x {
			return s.lookup(s.scalars, v, append(s.buf[:0], 't'))
		}
		return s.lookup(s.scalars, v, append(s.buf[:0], 'F'))
	case nil:
		return s.lookup(s.scalars, v, append(s.buf[:0], '0'))
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		ids := make([]uint64, len(keys))
		all := true
		for i, k := range keys {
			sv, id, ok := s.share(x[k])
			x[s.key(k)] = sv
			ids[i], all = id, all && ok
		}
		if !all {
			return v, 0, false
		}
		b := append(s.buf[:0], '{')
		for i, k := range keys {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = binary.AppendUvarint(b, ids[i])
		}
		return s.lookup(s.composites, v, b)
	case []any:
		ids := make([]uint64, len(x))
		all := true
		for i, e := range x {
			var ok bool
			x[i], ids[i], ok = s.share(e)
			all = all && ok
		}
		if !all {
			return v, 0, false
		}
		b := append(s.buf[:0], '[')
		for _, id := range ids {
			b = binary.AppendUvarint(b, id)
		}
		return s.lookup(s.composites, v, b)
	}
	return v, 0, false
}

// lookup shares v by its encoding b in m (objects and arrays name their
// items by their ids); b is kept as the buffer of the next encoding.
func (s *sharer) lookup(m map[string]sharedValue, v any, b []byte) (any, uint64, bool) {
	s.buf = b
	if sv, seen := m[string(b)]; seen {
		return sv.v, sv.id, true
	}
	s.ids++
	m[string(b)] = sharedValue{v, s.ids}
	return v, s.ids, true
}
