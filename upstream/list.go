package upstream

import (
	"context"
	"fmt"
	"net/url"

	"github.com/onchain-exporter/onchain_exporter/decode"
)

// MaxListItems is the most items a listing answer is read with: far more
// than any max_tuples uses.
const MaxListItems = 100_000

// List reads the items of a listing endpoint: one GET within the API's
// timeout, the objects among the rows FindRows finds. Errors name the
// path; the call is counted under it as its endpoint.
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
		// at is the answer's key, cleaned like any upstream text.
		u.shapes.Note(u.api.Name, path, "", decode.Shape{Rows: u.Clean(at), Expected: at == u.DefaultRows()})
	}
	return rows, nil
}
