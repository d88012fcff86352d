package config

import (
	"regexp"
	"strings"
	"testing"
)

func TestPatternMatch(t *testing.T) {
	for _, c := range []struct {
		pattern string
		yes, no []string
	}{
		{"/v1/btc/*/*", []string{"/v1/btc/market-data/price-ohlcv"}, []string{"/v1/eth/market-data/price-ohlcv", "/v1/btc/market-data", "/v1/btc/a/b/c", "/v1/btc//x"}},
		{"/v1/*/exchange-flows/{reserve,netflow}", []string{"/v1/btc/exchange-flows/reserve", "/v1/eth/exchange-flows/netflow"},
			[]string{"/v1/btc/exchange-flows/inflow", "/v1/btc/exchange-flows/reserve-usd", "/v2/btc/exchange-flows/reserve"}},
		{"/v1/btc/exchange-flows/{reserve,netflow}-usd", []string{"/v1/btc/exchange-flows/reserve-usd", "/v1/btc/exchange-flows/netflow-usd"},
			[]string{"/v1/btc/exchange-flows/reserve", "/v1/btc/exchange-flows/{reserve,netflow}-usd"}},
		{"/v1/btc/a/{x,y}", []string{"/v1/btc/a/x", "/v1/btc/a/y"}, []string{"/v1/btc/a/", "/v1/btc/a/xy", "/v1/btc/a/{x,y}", "/v1/btc/a/x/y"}},
		{"/v1/btc/**", []string{"/v1/btc/a/b", "/v1/btc/a", "/v1/btc/a/b/c/d"}, []string{"/v1/eth/a/b", "/v1/bt/a/b"}},
		{"/v1/**/reserve", []string{"/v1/btc/exchange-flows/reserve", "/v1/reserve"}, []string{"/v1/btc/exchange-flows/reserve-usd"}},
		{"/v1/btc/exchange-*/*-usd", []string{"/v1/btc/exchange-flows/reserve-usd"}, []string{"/v1/btc/exchange-flows/reserve", "/v1/btc/miner-flows/reserve-usd"}},
		{"/v2/**", []string{"/v2/network/events-count", "/v2/indicator/valuation/mvrv-z-score"}, []string{"/v1/btc/a/b"}},
	} {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		for _, path := range c.yes {
			if !p.Match(path) {
				t.Errorf("%s does not match %s", c.pattern, path)
			}
		}
		for _, path := range c.no {
			if p.Match(path) {
				t.Errorf("%s matches %s", c.pattern, path)
			}
		}
	}
	for path, want := range map[string]bool{"/v1/btc/*/x": true, "/v1/{asset}/a/b": false, "/v1/btc/a/{x,y}": true, "/v1/btc/a/b": false} {
		if IsPattern(path) != want {
			t.Errorf("IsPattern(%s) = %v", path, !want)
		}
	}
}

// A pattern entry builds no tuple at load: expansion does.
func TestPatternLoadsWithoutTuples(t *testing.T) {
	cfg, err := Parse("p.yml", []byte("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /v1/btc/**\n      exclude: [/v1/btc/network-data/*]\n      coarsen: true\n      exchange: all\n    - path: /v1/btc/network-data/supply\n"), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.APIs[APIData]
	if len(cfg.Tuples) != 1 || a.Metrics[0].Pattern == nil || !a.Metrics[0].Coarsen || a.Metrics[0].WindowChoice != "" {
		t.Fatalf("tuples %d, entry %+v", len(cfg.Tuples), a.Metrics[0])
	}
	e := a.Metrics[0]
	if !e.Selects("/v1/btc/exchange-flows/reserve") || e.Selects("/v1/btc/network-data/supply") {
		t.Error("exclude: is not applied")
	}
}

// A path discovery lists with a window the built-in catalog does not
// allow for it is left out of the pattern, said, and does not fail the
// file.
func TestPatternLeavesOutWhatTheCatalogRefuses(t *testing.T) {
	cfg, err := Parse("p.yml", []byte("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /v1/btc/**\n"), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	match := func(a *API, e *Entry) ([]Match, []string, error) {
		return []Match{
			{Path: "/v1/btc/market-data/open-interest", Windows: []string{"block"}},
			{Path: "/v1/btc/network-data/supply", Windows: []string{"day"}},
		}, nil, nil
	}
	same := func(a *API, e *Entry, p Param) (Param, error) { return p, nil }
	out, err := cfg.ResolveWith(same, match)
	if err != nil {
		t.Fatal(err)
	}
	p := out.APIs[APIData].Patterns[0]
	if len(out.Tuples) != 1 || out.Tuples[0].Path != "/v1/btc/network-data/supply" || p.Paths != 1 || len(p.Left) != 1 ||
		p.Left[0] != `/v1/btc/market-data/open-interest ("block" is not allowed for /v1/btc/market-data/open-interest (allowed: day, hour, min))` {
		t.Errorf("tuples %d, pattern %+v", len(out.Tuples), p)
	}
}

// FuzzPattern: no pattern text makes ParsePattern or Match panic, and a
// pattern read matches the paths it is made of: its text with every *
// and ** made a word, and each {a,b} its first word.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"/v1/btc/**", "/v1/*/exchange-flows/{reserve,netflow}", "/v1/btc/*/*", "/v2/**/x", "/v1/{a,", "/v1/**/**", "/v1/a*b*c/d"} {
		f.Add(s, "/v1/btc/exchange-flows/reserve")
	}
	f.Fuzz(func(t *testing.T, text, path string) {
		p, err := ParsePattern(text)
		if err != nil {
			return
		}
		_ = p.Match(path)
		example := regexp.MustCompile(`\{([^,{}]*),[^{}]*\}`).ReplaceAllString(text, "$1")
		example = strings.ReplaceAll(strings.ReplaceAll(example, "**", "x"), "*", "x")
		if !p.Match(example) {
			t.Errorf("%q does not match %q", text, example)
		}
	})
}

// A path a pattern selected from discovery is no typo: it has no finding
// against the built-in catalog, however near a catalog path it is.
func TestPatternPathsHaveNoFindings(t *testing.T) {
	cfg, err := Parse("p.yml", []byte("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /v1/btc/**\n"), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	match := func(a *API, e *Entry) ([]Match, []string, error) {
		return []Match{{Path: "/v1/btc/exchange-flow/reserve", Windows: []string{"day"}}}, nil, nil
	}
	out, err := cfg.ResolveWith(func(a *API, e *Entry, p Param) (Param, error) { return p, nil }, match)
	if err != nil || len(out.Tuples) != 1 {
		t.Fatalf("err %v, %d tuples", err, len(out.Tuples))
	}
	if fs := out.Findings(); len(fs) != 0 {
		t.Errorf("findings %v", fs)
	}
}
