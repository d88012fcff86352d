package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Issue 27: a typo outside the built-in catalog passed --config.check.
// A path near one of the catalog, or a parameter near one it has, is a
// finding with what it nearly matches; a path or name near nothing known
// is not (the upstream has far more endpoints than the catalog).
func TestFindingsAgainstTheCatalog(t *testing.T) {
	const file = "testdata/findings.yml"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(file, b, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"testdata/findings.yml:5: data.metrics[0].path: /v1/btc/exchange-flow/reserve is outside the built-in catalog; did you mean /v1/btc/exchange-flows/reserve? (it is asked for as written)",
		`testdata/findings.yml:8: data.metrics[1].exchanges: no endpoint of the built-in catalog takes a parameter exchanges; did you mean "exchange"? (it is sent, and labels the series, as written)`,
		"testdata/findings.yml:11: data.metrics[3].path: /v1/btc/market-data/open-intrest is outside the built-in catalog; did you mean /v1/btc/market-data/open-interest? (it is asked for as written)",
		"testdata/findings.yml:12: data.metrics[4].path: /v1/{asset}/exchange-flows/reserves is outside the built-in catalog; did you mean /v1/{asset}/exchange-flows/reserve? (it is asked for as written)",
		`testdata/findings.yml:14: data.metrics[4].tokn: no endpoint of the built-in catalog takes a parameter tokn; did you mean "token"? (it is sent, and labels the series, as written)`,
		"testdata/findings.yml:15: data.metrics[5].path: /v2/network/event-count is outside the built-in catalog; did you mean /v2/network/events-count? (it is asked for as written)",
		`testdata/findings.yml:19: data.metrics[7].symbols: no endpoint of the built-in catalog takes a parameter symbols; did you mean "symbol"? (it is sent, and labels the series, as written)`,
		"testdata/findings.yml:24: consensus.metrics[0].path: /analyst-view is outside the built-in catalog; did you mean /analyst-views? (it is asked for as written)",
		"testdata/findings.yml:30: indicator.metrics[0].path: /api/equities/{equity}/pbr-bnd is outside the built-in catalog; did you mean /api/equities/{equity}/pbr-band? (it is asked for as written)",
	}
	fs := cfg.Findings()
	got := make([]string, len(fs))
	kinds := map[string]int{}
	for i, f := range fs {
		got[i] = f.String()
		kinds[f.Kind]++
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings:\n%q\nwant\n%q", got, want)
	}
	if want := map[string]int{FindingCatalogPath: 6, FindingCatalogParameter: 3}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
}

// The example configuration has no finding: a path outside the catalog
// that is near nothing in it (exchange-flows/netflow) is not one.
func TestExampleHasNoFindings(t *testing.T) {
	t.Setenv("ONCHAIN_DATA_TOKEN", "x")
	for _, file := range []string{"../examples/config.yml", "../examples/config-fake.yml"} {
		cfg, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if fs := cfg.Findings(); len(fs) != 0 {
			t.Errorf("%s: %v", file, fs)
		}
	}
}

// Against discovery, a path it does not list is said with the listed
// path it is near.
func TestCheckListingSuggestsAListedPath(t *testing.T) {
	cfg, err := Parse("x.yml", []byte("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /v1/btc/exchange-flow/netflow\n      exchange: binance\n"), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	fs := cfg.CheckListingFindings(Listing{"/v1/btc/exchange-flows/netflow": {"exchange": {"binance"}}, "/v1/btc/exchange-flows/inflow": nil})
	want := []Finding{{Kind: FindingListingPath, File: "x.yml", Line: 5, Key: "data.metrics[0].path",
		Message: "discovery lists no endpoint /v1/btc/exchange-flow/netflow: its parameters and their values cannot be checked; did you mean /v1/btc/exchange-flows/netflow?"}}
	if !reflect.DeepEqual(fs, want) {
		t.Errorf("findings\n%+v\nwant\n%+v", fs, want)
	}
}

// At run time the findings of the configuration in force are a gauge by
// kind, every kind present from the start, kept up to date by a reload
// and by a refinement.
func TestFindingsGauge(t *testing.T) {
	b, err := os.ReadFile("testdata/findings.yml")
	if err != nil {
		t.Fatal(err)
	}
	typos, err := Parse("testdata/findings.yml", b, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	clean, err := Parse("x.yml", []byte("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /v1/btc/exchange-flows/netflow\n"), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	s := NewSafeConfig(reg, func() (*Config, error) { return clean, nil }, func(*Config) error { return nil })
	expect := func(when string, paths, params int) {
		t.Helper()
		want := fmt.Sprintf(`# HELP onchain_exporter_config_findings Findings of the configuration in force, by kind: paths and parameter names outside the built-in catalog that nearly match one in it, probably typos, asked for as written (the landing page lists them).
# TYPE onchain_exporter_config_findings gauge
onchain_exporter_config_findings{kind="catalog_parameter"} %d
onchain_exporter_config_findings{kind="catalog_path"} %d
`, params, paths)
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "onchain_exporter_config_findings"); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}
	expect("before any configuration", 0, 0)
	s.Loaded(typos)
	expect("the file with typos loaded", 6, 3)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	expect("reloaded without them", 0, 0)
	if err := s.Refine(func() (*Config, error) { return typos, nil }); err != nil {
		t.Fatal(err)
	}
	expect("refined", 6, 3)
}
