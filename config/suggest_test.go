package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"window", "window", 0},
		{"windw", "window", 1},   // deletion
		{"windoww", "window", 1}, // insertion
		{"wimdow", "window", 1},  // substitution
		{"lables", "labels", 1},  // adjacent letters swapped
		{"cache_tll", "cache_ttl", 1},
		{"page", "path", 2},
		{"levels", "labels", 2},
		{"retries", "metrics", 2},
		{"ca", "abc", 3}, // optimal string alignment, not full Damerau
		{"", "rows", 4},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := editDistance(c.b, c.a); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}

// The rule of the README: at least 4 characters, one edit from an entry
// key, two from 8 characters on.
func TestEntryTypoRule(t *testing.T) {
	for name, want := range map[string]string{
		"windw":     "window",
		"widnow":    "window",
		"windows":   "window",
		"cache_tll": "cache_ttl",
		"cachettl":  "cache_ttl",
		"cache_tt":  "cache_ttl",
		"cach_tl":   "",         // two edits, 7 characters
		"timekey":   "time_key", // one edit
		"tim_kee":   "",         // two edits, 7 characters
		"time_kye":  "time_key", // one edit, 8 characters
		"tme_kye":   "",         // three edits
		"timekeys":  "time_key", // two edits, 8 characters
		"lables":    "labels",
		"feilds":    "fields",
		"field":     "fields",
		"paths":     "path",
		"param":     "params",
		"rows":      "rows",
		"row":       "", // under 4 characters
		"page":      "", // two edits from path, 4 characters
		"levels":    "", // two edits from labels
		"tables":    "",
		"days":      "",
		"exchange":  "",
		"asset":     "",
		"symbol":    "",
		"limit":     "",
	} {
		if got := entryTypo(name); got != want {
			t.Errorf("entryTypo(%q) = %q, want %q", name, got, want)
		}
	}
}

// The key lists that suggestions and messages use are the keys the parser
// accepts: a key in a list is never unknown.
func TestKeyListsMatchTheParser(t *testing.T) {
	const base = "data:\n  url: http://127.0.0.1:1\n  token_env: T\n"
	for _, k := range sectionKeys {
		_, err := Parse("x.yml", []byte(base+"  "+k+": x\n"), testEnv)
		if err != nil && strings.Contains(err.Error(), "data."+k+": unknown key") {
			t.Errorf("section key %s: %v", k, err)
		}
	}
	for _, k := range entryKeys {
		doc := base + "  metrics:\n    - path: /v1/btc/exchange-flows/netflow\n      " + k + ": x\n"
		if k == "path" {
			doc = base + "  metrics:\n    - path: /v1/btc/exchange-flows/netflow\n"
		}
		_, err := Parse("x.yml", []byte(doc), testEnv)
		if err != nil && (strings.Contains(err.Error(), "unknown key") || strings.Contains(err.Error(), "parameter")) {
			t.Errorf("entry key %s is not read as one: %v", k, err)
		}
	}
	for _, k := range fieldKeys {
		doc := base + "  metrics:\n    - path: /v1/btc/exchange-flows/netflow\n      fields:\n        f: {" + k + ": x}\n"
		_, err := Parse("x.yml", []byte(doc), testEnv)
		if err != nil && strings.Contains(err.Error(), "unknown key") {
			t.Errorf("field key %s: %v", k, err)
		}
	}
}

// A real parameter that looks like a mistyped entry key is sent: under
// params:, or as it is when it is not close enough to be taken for one.
func TestParametersNearEntryKeys(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/exchange-flows/netflow
      page: 2
      levels: 3
      params:
        windw: day
        rows: 10
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tuples) != 1 {
		t.Fatalf("%d tuples", len(cfg.Tuples))
	}
	if got := cfg.Tuples[0].Query().Encode(); got != "levels=3&limit=5&page=2&rows=10&window=day&windw=day" {
		t.Errorf("query = %s", got)
	}
	if p := cfg.APIs[APIData].Metrics[0].param("windw"); p == nil || p.Line != 10 {
		t.Errorf("params.windw = %+v, want line 10", p)
	}
}

// A parameter the catalog lists for the path is never taken for a typo,
// however close to an entry key; the same key on a path outside the
// catalog is.
func TestCatalogParameterIsNotATypo(t *testing.T) {
	saved := Endpoints
	t.Cleanup(func() { Endpoints = saved })
	Endpoints = append(append([]*Endpoint(nil), saved...), &Endpoint{API: APIData, Template: "/v1/{asset}/test/labelled",
		Windows: windowsDay, Params: []string{"label"}, MaxLimit: 10})
	doc := func(path string) []byte {
		return fmt.Appendf(nil, "data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: %s\n      label: x\n", path)
	}
	cfg, err := Parse("x.yml", doc("/v1/btc/test/labelled"), testEnv)
	if err != nil {
		t.Fatalf("catalog parameter refused: %v", err)
	}
	if got := cfg.Tuples[0].Query().Get("label"); got != "x" {
		t.Errorf("label = %q", got)
	}
	_, err = Parse("x.yml", doc("/v1/btc/test/unlisted"), testEnv)
	want := `x.yml:6: data.metrics[0].label: unknown key; did you mean "labels"? (to send label upstream as a parameter, list it under params:)`
	if err == nil || err.Error() != want {
		t.Errorf("outside the catalog: %v, want %s", err, want)
	}
}
