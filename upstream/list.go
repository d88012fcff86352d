package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// List reads the items of a listing endpoint (discovery, equities,
// assets): one GET within the API's timeout, the objects of the answer's
// list of rows. Errors name the path.
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
	node, _ := Lookup(root, u.DefaultRows())
	list, ok := node.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: no list under %q", path, u.DefaultRows())
	}
	rows := make([]map[string]any, 0, len(list))
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			rows = append(rows, m)
		}
	}
	return rows, nil
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
