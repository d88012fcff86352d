package fakeapi

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// writeJSON writes v as a JSON answer with the given status.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := appendJSON(make([]byte, 0, 512), v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// kv is one member of an ordered JSON object.
type kv struct {
	K string
	V any
}

// obj is a JSON object that keeps its member order.
type obj []kv

func (o obj) MarshalJSON() ([]byte, error) {
	return appendJSON(make([]byte, 0, 64*len(o)+2), o)
}

func (o *obj) add(k string, v any) { *o = append(*o, kv{k, v}) }

func (o obj) get(k string) (any, bool) {
	for _, m := range o {
		if m.K == k {
			return m.V, true
		}
	}
	return nil, false
}

func (o obj) set(k string, v any) {
	for i := range o {
		if o[i].K == k {
			o[i].V = v
			return
		}
	}
}

// appendJSON encodes the common value types without reflection and
// falls back to encoding/json for the rest.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case obj:
		b = append(b, '{')
		for i, m := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.K)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, m.V); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []obj:
		return appendList(b, x)
	case []any:
		return appendList(b, x)
	case json.Number:
		return append(b, x...), nil
	case string:
		return appendString(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		return strconv.AppendFloat(b, x, 'f', -1, 64), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	}
	e, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, e...), nil
}

func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			e, _ := json.Marshal(s)
			return append(b, e...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendList appends a JSON array of the items.
func appendList[T any](b []byte, items []T) ([]byte, error) {
	b = append(b, '[')
	for i, e := range items {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSON(b, e); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}
