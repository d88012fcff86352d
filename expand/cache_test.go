package expand

import (
	"reflect"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// section is a data-API section at one address with credential token.
func section(t *testing.T, token string) *config.API {
	t.Helper()
	yml := "data:\n  url: http://127.0.0.1:9\n  token_env: T\n  metrics:\n    - path: /v1/btc/network-data/supply\n"
	cfg, err := config.Parse("test.yml", []byte(yml), func(string) string { return token })
	if err != nil {
		t.Fatal(err)
	}
	return cfg.APIs[config.APIData]
}

// An answer lives in one place: what the last run saved is taken into the
// Cache's answers by the first lookup of a section of its account, and
// saved from there; a newer answer replaces it in what is saved; a section
// of another account neither reuses nor saves it.
func TestCacheHoldsEachAnswerOnce(t *testing.T) {
	const path = "/v1/discovery/endpoints"
	a, other := section(t, "one"), section(t, "two")
	id := upstream.Account(a)
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	rows := []map[string]any{{"path": "/v1/btc/market-data/open-interest"}}
	c := NewCache()
	c.Restore(config.APIData, id, map[string]*Answer{path: {Rows: rows, At: at}, "/gone": nil})

	if got := c.Saved(config.APIData, id); len(got) != 1 || !reflect.DeepEqual(got[path].Rows, rows) || !got[path].At.Equal(at) {
		t.Fatalf("saved before any lookup: %v", got)
	}
	if got := c.Saved(config.APIData, upstream.Account(other)); got != nil {
		t.Errorf("another account's file would hold %v", got)
	}
	if _, ok, _ := c.lookup(other, path); ok {
		t.Error("a section of another account reuses the saved answer")
	}
	l, ok, gen := c.lookup(a, path)
	if !ok || !l.saved || l.gen != gen || !l.at.Equal(at) || &l.rows[0] != &rows[0] {
		t.Fatalf("lookup of the saved answer: %+v, %v", l, ok)
	}
	if len(c.saved) != 0 || len(c.lists) != 1 {
		t.Errorf("the saved answer is held twice: %d saved, %d read", len(c.saved), len(c.lists))
	}
	if got := c.Saved(config.APIData, id); len(got) != 1 || &got[path].Rows[0] != &rows[0] || !got[path].At.Equal(at) {
		t.Errorf("saved after the lookup: %v", got)
	}

	fresh := []map[string]any{{"path": "/v1/btc/network-data/supply"}}
	c.put(a, path, fresh, at.Add(time.Hour), gen)
	if got := c.Saved(config.APIData, id); len(got) != 1 || &got[path].Rows[0] != &fresh[0] || !got[path].At.Equal(at.Add(time.Hour)) {
		t.Errorf("saved after a fetch: %v", got)
	}
	if l, ok, _ := c.lookup(a, path); !ok || l.saved || &l.rows[0] != &fresh[0] {
		t.Errorf("lookup after a fetch: %+v", l)
	}
	c.renew()
	if l, ok, now := c.lookup(a, path); !ok || l.gen == now {
		t.Errorf("after renew the answer is of the current generation: %+v", l)
	}

	// The same address with another credential shares the key: the
	// answer it fetches is its account's only.
	c.put(other, path, rows, at.Add(2*time.Hour), gen)
	if got := c.Saved(config.APIData, id); got != nil {
		t.Errorf("the first account's file would hold %v", got)
	}
	if got := c.Saved(config.APIData, upstream.Account(other)); len(got) != 1 {
		t.Errorf("the second account's file would hold %v", got)
	}
	if (*Cache)(nil).Saved(config.APIData, id) != nil {
		t.Error("a nil Cache saves something")
	}
}
