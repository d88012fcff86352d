package upstream

import (
	"context"
	"fmt"
	"net/url"

	"github.com/onchain-exporter/onchain_exporter/decode"
)

// MaxListItems is the most items a listing answer is read with: far more
// than any max_tuples lets a configuration use.
const MaxListItems = 100_000

// List reads the items of a listing endpoint (discovery, equities,
// assets): one GET within the API's timeout, the objects of the answer's
// rows wherever FindRows finds them. Errors name the path, and what they
// quote of the answer is cleaned (Clean); the call is counted under the
// listing path as its endpoint.
func (u *Client) List(ctx context.Context, path string, query url.Values, keyed bool) ([]map[string]any, error) {
	ctx, cancel := context.WithTimeout(WithEndpoint(ctx, path), u.api.Timeout)
	defer cancel()
	root, err := u.Fetch(ctx, path, query, keyed, MaxListItems)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	list, at, err := decode.FindRows(root, "", u.DefaultRows())
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, u.Clean(err.Error())) // it quotes the answer's keys
	}
	rows := make([]map[string]any, 0, len(list))
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			rows = append(rows, m)
		}
	}
	if len(rows) > 0 {
		// The key named is the answer's: cleaned like any upstream text.
		u.shapes.Note(u.api.Name, path, "", decode.Shape{Rows: u.Clean(at), Expected: at == u.DefaultRows()})
	}
	return rows, nil
}
