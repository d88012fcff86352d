package decode

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
)

// ShareRows makes the rows of a list (what Parse gives, or a state file
// read with encoding/json) hold each value once: every string, number,
// object and array equal to one seen before is replaced by that one, and
// every key of a row by the first such key. A discovery of 85 000 paths
// whose items all take {"window": ["day", "hour"]} then holds one such
// object rather than 85 000 (a third of what its rows weigh).
//
// The rows are changed in place, their values only for equal ones, so
// that nothing reading them sees a difference; from then on no value of
// them may be changed, since it may be another row's too (no reader of
// a list changes one). A value of another type than JSON's (a plan kept
// as a row) is kept as it is, and so is any object or array holding one.
func ShareRows(rows []map[string]any) {
	s := sharer{strs: map[string]sharedValue{}, scalars: map[string]sharedValue{}, composites: map[string]sharedValue{}, keys: map[string]string{}}
	for _, row := range rows {
		for k, v := range row {
			sv, _, _ := s.share(v)
			// The key stored is replaced too: a string key is updated
			// when its entry is assigned.
			row[s.key(k)] = sv
		}
	}
}

// sharer is one ShareRows: the values seen, each with an id that stands
// for it in the encoding of the objects and arrays that hold it.
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

// share returns the value equal to v seen first (v when it is the first)
// and its id; ok is false for a value that cannot be shared (its type is
// not JSON's, or it holds such a value), which is returned as it is.
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
		return s.scalar(v, append(append(s.buf[:0], 'n'), x...))
	case float64:
		return s.scalar(v, binary.BigEndian.AppendUint64(append(s.buf[:0], 'f'), math.Float64bits(x)))
	case bool:
		if x {
			return s.scalar(v, append(s.buf[:0], 't'))
		}
		return s.scalar(v, append(s.buf[:0], 'F'))
	case nil:
		return s.scalar(v, append(s.buf[:0], '0'))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
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
		return s.composite(v, b)
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
		return s.composite(v, b)
	}
	return v, 0, false
}

// scalar shares a scalar other than a string by its encoding b.
func (s *sharer) scalar(v any, b []byte) (any, uint64, bool) {
	s.buf = b
	return s.lookup(s.scalars, v, b)
}

// composite shares an object or an array by its encoding b, which names
// its items by their ids.
func (s *sharer) composite(v any, b []byte) (any, uint64, bool) {
	s.buf = b
	return s.lookup(s.composites, v, b)
}

func (s *sharer) lookup(m map[string]sharedValue, v any, b []byte) (any, uint64, bool) {
	if sv, seen := m[string(b)]; seen {
		return sv.v, sv.id, true
	}
	s.ids++
	m[string(b)] = sharedValue{v, s.ids}
	return v, s.ids, true
}
