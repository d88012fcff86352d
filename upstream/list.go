package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/go-kit/log/level"
)

// List reads the items of a listing endpoint (discovery, equities,
// assets): one GET within the API's timeout, the objects of the answer's
// rows wherever FindRows finds them. Errors name the path.
func (u *Client) List(ctx context.Context, path string, query url.Values, keyed bool) ([]map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, u.api.Timeout)
	defer cancel()
	body, err := u.Get(ctx, path, query, keyed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %s", path, ShortJSONError(err))
	}
	list, at, err := FindRows(root, "", u.DefaultRows())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rows := make([]map[string]any, 0, len(list))
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			rows = append(rows, m)
		}
	}
	if len(rows) > 0 {
		u.NoteShape(path, "", Shape{Rows: at, Expected: at == u.DefaultRows()})
	}
	return rows, nil
}

// shapes remembers the payload shape last logged per endpoint, for the
// life of the process (the Pool shares one among its clients).
type shapes struct {
	mu   sync.Mutex
	seen map[string]Shape
}

func newShapes() *shapes { return &shapes{seen: map[string]Shape{}} }

// NoteShape logs the shape an answer of an endpoint was found in, once per
// endpoint (and configuration entry) and again when it changes: at info
// when it was searched for, so that a user can pin it (rows:, time_key:),
// at debug when it is the expected one.
func (u *Client) NoteShape(endpoint, entry string, s Shape) {
	key := u.api.Name + " " + entry + " " + endpoint
	u.shapes.mu.Lock()
	prev, seen := u.shapes.seen[key]
	u.shapes.seen[key] = s
	u.shapes.mu.Unlock()
	if seen && prev == s {
		return
	}
	l := level.Info(u.logger)
	if s.Expected {
		l = level.Debug(u.logger)
	}
	kv := []any{"msg", "payload shape detected", "endpoint", endpoint}
	if entry != "" {
		kv = append(kv, "entry", entry)
	}
	kv = append(kv, "rows", s.Rows)
	if s.TimeKey != "" || entry != "" {
		kv = append(kv, "time_key", s.TimeKey)
	}
	if s.CountedBy != "" {
		kv = append(kv, "counted_by", s.CountedBy)
	}
	if s.LabelsFrom != "" {
		kv = append(kv, "labels_from", s.LabelsFrom)
	}
	l.Log(kv...)
}

// Lookup follows a dotted path through nested objects; "" and "." are the
// root itself.
func Lookup(v any, path string) (any, bool) {
	if path == "" || path == "." {
		return v, true
	}
	for _, part := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[part]; !ok {
			return nil, false
		}
	}
	return v, true
}
