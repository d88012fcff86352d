package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// discoveryItems is what /v1 or /v2 discovery lists, by path, as JSON.
func discoveryItems(t *testing.T, s http.Handler, list string) (order []string, items map[string]map[string]any) {
	t.Helper()
	items = map[string]map[string]any{}
	for _, item := range rowsOf(t, s, list).rows {
		p := item["path"].(string)
		if items[p] != nil {
			t.Errorf("%s lists %s twice", list, p)
		}
		order = append(order, p)
		items[p] = item
	}
	return order, items
}

// The full catalog is the provider's as a user meets it: a couple of
// hundred v1 paths over its categories and assets, each once, each
// /v1/{asset}/{category}/{metric}; the small catalog's paths are listed
// in it exactly as before, first and in the same order.
func TestFullCatalogIsWellFormed(t *testing.T) {
	n := 0
	for _, g := range catalogGroups {
		n += len(g.metrics)
	}
	if n != len(fullCatalog) {
		t.Errorf("catalogGroups name %d metrics but give %d paths: a path is named twice or is already in the small catalog", n, len(fullCatalog))
	}
	small, _ := newTestServer(Options{})
	full, _ := newTestServer(Options{Catalog: CatalogFull})
	smallOrder, smallItems := discoveryItems(t, small, "/v1/discovery/endpoints")
	fullOrder, fullItems := discoveryItems(t, full, "/v1/discovery/endpoints")
	if len(smallOrder) != 18 || len(fullOrder) < 180 || len(fullOrder) > 260 {
		t.Errorf("v1 discovery lists %d paths (small) and %d (full); want 18 and a couple of hundred", len(smallOrder), len(fullOrder))
	}
	if !slices.Equal(fullOrder[:len(smallOrder)], smallOrder) {
		t.Errorf("the full catalog does not start with the small one:\n%v\n%v", fullOrder[:len(smallOrder)], smallOrder)
	}
	for _, p := range smallOrder {
		a, _ := json.Marshal(smallItems[p])
		b, _ := json.Marshal(fullItems[p])
		if string(a) != string(b) {
			t.Errorf("%s changed in the full catalog:\n%s\n%s", p, a, b)
		}
	}
	v2small, _ := discoveryItems(t, small, "/v2/discovery/endpoints")
	v2full, _ := discoveryItems(t, full, "/v2/discovery/endpoints")
	if !slices.Equal(v2small, v2full) {
		t.Errorf("v2 discovery: %v, then %v", v2small, v2full)
	}
	assets, categories := map[string]int{}, map[string]int{}
	required := 0
	for _, p := range fullOrder {
		segs := strings.Split(p, "/")
		if len(segs) != 5 || segs[1] != "v1" || !slices.Contains(v1Assets, segs[2]) {
			t.Errorf("%s is not /v1/{asset}/{category}/{metric}", p)
			continue
		}
		assets[segs[2]]++
		categories[segs[3]]++
		if r, _ := fullItems[p]["required_parameters"].([]any); len(r) > 0 {
			required++
		}
	}
	for _, a := range []string{"btc", "eth", "xrp", "trx", "erc20", "stablecoin"} {
		if assets[a] < 5 {
			t.Errorf("%d paths of %s", assets[a], a)
		}
	}
	for _, c := range []string{"exchange-flows", "flow-indicator", "market-indicator", "network-indicator", "miner-flows",
		"inter-entity-flows", "fund-data", "market-data", "addresses", "network-data"} {
		if categories[c] == 0 {
			t.Errorf("no path of %s", c)
		}
	}
	if required < 50 {
		t.Errorf("only %d paths have required parameters", required)
	}
	t.Logf("full catalog: %d v1 paths (%d with required parameters), %v, %v", len(fullOrder), required, assets, categories)
}

// Every path the full catalog lists is served: at each window it lists,
// with its required parameters at their first and last listed values,
// the answer is 200 with rows that carry a time and a value. Without a
// required parameter it is 400, as upstream.
func TestEveryListedPathIsServed(t *testing.T) {
	s, _ := newTestServer(Options{Catalog: CatalogFull})
	served := 0
	for _, list := range []string{"/v1/discovery/endpoints", "/v2/discovery/endpoints"} {
		order, items := discoveryItems(t, s, list)
		for _, path := range order {
			params := items[path]["parameters"].(map[string]any)
			req, _ := items[path]["required_parameters"].([]any)
			for _, pick := range []func([]any) any{func(v []any) any { return v[0] }, func(v []any) any { return v[len(v)-1] }} {
				q := url.Values{}
				for _, r := range req {
					q.Set(r.(string), pick(params[r.(string)].([]any)).(string))
				}
				for _, w := range params["window"].([]any) {
					q.Set("window", w.(string))
					q.Set("limit", "2")
					target := path + "?" + q.Encode()
					rec := get(t, s, target)
					if rec.Code != http.StatusOK {
						t.Errorf("%s lists %s, which answers HTTP %d", list, target, rec.Code)
						continue
					}
					e := parseEnvelope(t, rec)
					if len(e.rows) != 2 {
						t.Errorf("%s: %d rows", target, len(e.rows))
						continue
					}
					rowTime(t, e.rows[0])
					if !hasValue(e.rows[0]) {
						t.Errorf("%s: no value in %v", target, e.rows[0])
					}
					served++
				}
			}
			if len(req) > 0 {
				if rec := get(t, s, path); rec.Code != http.StatusBadRequest {
					t.Errorf("%s without its required %v: HTTP %d", path, req, rec.Code)
				}
			}
		}
	}
	t.Logf("%d series served", served)
}

// hasValue says whether a row holds a number besides its time.
func hasValue(row map[string]any) bool {
	for k, v := range row {
		if _, ok := v.(json.Number); ok && k != "blockheight" {
			return true
		}
	}
	return false
}

// The catalog can change while the server runs, as the provider's does:
// a path of the full catalog is 404 and unlisted in the small one. An
// extra path that the full catalog also has is listed once.
func TestSetCatalog(t *testing.T) {
	const mvrv = "/v1/btc/market-indicator/mvrv"
	s, _ := newTestServer(Options{ExtraPaths: []string{"/v1/btc/addresses/new-count", "/v1/btc/bench/m1"}})
	for i, c := range []Catalog{CatalogSmall, CatalogFull, CatalogSmall} {
		s.SetCatalog(c)
		_, items := discoveryItems(t, s, "/v1/discovery/endpoints")
		code := get(t, s, mvrv).Code
		if want := c == CatalogFull; (items[mvrv] != nil) != want || (code == http.StatusOK) != want {
			t.Errorf("step %d, %s catalog: %s listed %v, HTTP %d", i, c, mvrv, items[mvrv] != nil, code)
		}
		if items["/v1/btc/addresses/new-count"] == nil || items["/v1/btc/bench/m1"] == nil {
			t.Errorf("step %d, %s catalog: an extra path is not listed", i, c)
		}
	}
	for in, want := range map[string]Catalog{"": CatalogSmall, "Full": CatalogFull, " small ": CatalogSmall} {
		if got, err := ParseCatalog(in); got != want || err != nil {
			t.Errorf("ParseCatalog(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseCatalog("huge"); err == nil || err.Error() != `unknown catalog "huge" (small or full)` {
		t.Errorf("ParseCatalog(huge): %v", err)
	}
}

// docs/fake.md shows the basic plan's answer as the fake gives it and
// the size of the full catalog as it is.
func TestFakeDocSaysWhatIsServed(t *testing.T) {
	b, err := os.ReadFile("../docs/fake.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("docs/fake.md shows no plan answer")
	}
	s, _ := newTestServer(Options{DataKeys: map[string]Tier{"k": TierBasic}})
	var shown, served any
	if err := json.Unmarshal([]byte(m[1]), &shown); err != nil {
		t.Fatalf("docs/fake.md's plan answer: %v", err)
	}
	if err := json.Unmarshal(get(t, s, planPath, "Authorization", "Bearer k").Body.Bytes(), &served); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(shown, served) {
		t.Errorf("docs/fake.md shows\n%s\nthe fake answers\n%s", m[1], get(t, s, planPath, "Authorization", "Bearer k").Body)
	}
	full, _ := newTestServer(Options{Catalog: CatalogFull})
	order, items := discoveryItems(t, full, "/v1/discovery/endpoints")
	required := 0
	for _, p := range order {
		if r, _ := items[p]["required_parameters"].([]any); len(r) > 0 {
			required++
		}
	}
	for _, want := range []string{fmt.Sprintf("%d v1 paths in all", len(order)), fmt.Sprintf("%d of them with required parameters", required)} {
		if !strings.Contains(strings.Join(strings.Fields(doc), " "), want) {
			t.Errorf("docs/fake.md does not say %q", want)
		}
	}
}
