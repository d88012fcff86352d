package config

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Indicator and Analyst Consensus catalog entries: which tuples send the
// key, which query defaults are added, and which label sets come out.
func TestIndicatorAndConsensusCatalog(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
indicator:
  url: http://127.0.0.1:1/indicator
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: [KRX:005930, NASDAQ:AAPL]
consensus:
  url: http://127.0.0.1:1/consensus
  token_env: T
  metrics:
    - path: /consensus
      asset: bitcoin
    - path: /consensus
      asset: bitcoin
      days: 30
    - path: /analysts/top
      asset: bitcoin
    - path: /analysts/{handle}
      handle: chain_oracle
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*Tuple{}
	for _, tp := range cfg.Tuples {
		byKey[tp.Key] = tp
	}
	for _, tc := range []struct {
		key, query string
		keyed      bool
		labels     []string
		values     []string
	}{
		{"indicator /api/equities/NASDAQ:AAPL/pbr-band?", "limit=10&order=desc", true,
			[]string{"equity", "exchange_code", "security_code"}, []string{"NASDAQ:AAPL", "NASDAQ", "AAPL"}},
		{"consensus /consensus?asset=bitcoin", "asset=bitcoin", false, []string{"asset", "days"}, []string{"bitcoin", ""}},
		{"consensus /consensus?asset=bitcoin&days=30", "asset=bitcoin&days=30", true, []string{"asset", "days"}, []string{"bitcoin", "30"}},
		{"consensus /analysts/top?asset=bitcoin", "asset=bitcoin&limit=10", false, []string{"asset"}, []string{"bitcoin"}},
		{"consensus /analysts/chain_oracle?", "", true, []string{"handle"}, []string{"chain_oracle"}},
	} {
		tp := byKey[tc.key]
		if tp == nil {
			t.Errorf("no tuple %q; have %v", tc.key, keys(byKey))
			continue
		}
		if got := tp.Query().Encode(); got != tc.query {
			t.Errorf("%s: query %q, want %q", tc.key, got, tc.query)
		}
		if tp.Keyed != tc.keyed {
			t.Errorf("%s: keyed %v, want %v", tc.key, tp.Keyed, tc.keyed)
		}
		if !reflect.DeepEqual(tp.LabelNames(), tc.labels) || !reflect.DeepEqual(tp.LabelValues, tc.values) {
			t.Errorf("%s: labels %v=%v, want %v=%v", tc.key, tp.LabelNames(), tp.LabelValues, tc.labels, tc.values)
		}
		// Payloads of these APIs carry words beside the values.
		if tp.AllNumeric || tp.Endpoint == nil || tp.Rows() != "data" {
			t.Errorf("%s: AllNumeric %v, endpoint %v, rows %q", tc.key, tp.AllNumeric, tp.Endpoint, tp.Rows())
		}
	}
	band := byKey["indicator /api/equities/KRX:005930/pbr-band?"]
	if f := band.Fields["bands"]; f == nil || f.KeyLabel != "multiple" || f.Name != "equity_pbr_band_price" {
		t.Errorf("bands field = %+v", f)
	}
}

// Key-free endpoints need no credential; keyed ones name the entry and
// the reason at its line.
func TestConsensusCredentialOnlyWhereKeyed(t *testing.T) {
	const head = "consensus:\n  url: http://127.0.0.1:1\n  metrics:\n"
	ok := head + `    - path: /consensus
      asset: bitcoin
    - path: /analyst-views
      asset: bitcoin
    - path: /calls
      asset: bitcoin
    - path: /analysts/top
      asset: bitcoin
      limit: 50
`
	if _, err := Parse("x.yml", []byte(ok), testEnv); err != nil {
		t.Fatalf("key-free endpoints without a credential: %v", err)
	}
	for _, tc := range []struct{ yml, want string }{
		{head + "    - path: /consensus\n      asset: bitcoin\n    - path: /consensus\n      asset: eth\n      days: 7\n",
			"x.yml:6: consensus.metrics[1]: /consensus with days needs the key: set consensus.token_env or consensus.token_file"},
		{head + "    - path: /analysts/{handle}\n      handle: bitvane\n",
			"x.yml:4: consensus.metrics[0]: /analysts/{handle} needs the key: set consensus.token_env or consensus.token_file"},
		{head + "    - path: /analysts/bitvane/calls\n",
			"x.yml:4: consensus.metrics[0]: /analysts/bitvane/calls is not in the built-in catalog, so it is taken to need the key: set consensus.token_env or consensus.token_file"},
		{"indicator:\n  url: http://127.0.0.1:1\n  metrics:\n    - path: /api/equities/{equity}/pbr-band\n      equity: KRX:005930\n",
			"x.yml:4: indicator.metrics[0]: /api/equities/{equity}/pbr-band needs the key: set indicator.token_env or indicator.token_file"},
		{head + "    - path: /analysts/top\n      asset: bitcoin\n      limit: 51\n",
			`x.yml:6: consensus.metrics[0].limit: "51" is out of range (1 to 50)`},
		{head + "    - path: /calls\n      asset: bitcoin\n      limit: 5\n",
			"x.yml:6: consensus.metrics[0].limit: /calls takes no limit"},
	} {
		_, err := Parse("x.yml", []byte(tc.yml), testEnv)
		if err == nil || err.Error() != tc.want {
			t.Errorf("error:\n got %v\nwant %s", err, tc.want)
		}
	}
}

const resolveYAML = `
data:
  url: http://127.0.0.1:1
  token_env: T
  max_tuples: 6
  metrics:
    - path: /v1/btc/market-data/open-interest
      exchange: all
    - path: /v1/btc/market-data/open-interest
      exchange: binance
      window: hour
    - path: /v1/btc/market-data/open-interest
      exchange: bybit
consensus:
  url: http://127.0.0.1:1
  metrics:
    - path: /consensus
      asset: [Bitcoin, btc, eth]
`

// Resolve replaces values, keeps what becomes one series once (first in
// file order) and checks max_tuples again, with file:line errors.
func TestResolve(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(resolveYAML), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(cfg.Tuples); got != 6 {
		t.Fatalf("before resolving: %d tuples", got)
	}
	exchanges := []string{"binance", "bybit", "okx"}
	canonical := map[string]string{"Bitcoin": "bitcoin", "btc": "bitcoin", "eth": "ethereum"}
	tickers := map[string]string{"bitcoin": "btc", "ethereum": "eth"}
	resolve := func(a *API, e *Entry, p Param) (Param, error) {
		var out []string
		for _, v := range p.Values {
			switch {
			case v == All:
				out = append(out, exchanges...)
			case a.Name == APIConsensus:
				out = append(out, canonical[v])
			default:
				out = append(out, v)
			}
		}
		p.Values = out
		if a.Name == APIConsensus {
			p.Labels = tickers
		}
		return p, nil
	}
	got, err := cfg.Resolve(resolve)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tp := range got.Tuples {
		listed = append(listed, tp.Key)
	}
	want := []string{
		"data /v1/btc/market-data/open-interest?exchange=binance&window=day",
		"data /v1/btc/market-data/open-interest?exchange=bybit&window=day",
		"data /v1/btc/market-data/open-interest?exchange=okx&window=day",
		"data /v1/btc/market-data/open-interest?exchange=binance&window=hour",
		"consensus /consensus?asset=bitcoin",
		"consensus /consensus?asset=ethereum",
	}
	if !reflect.DeepEqual(listed, want) {
		t.Errorf("tuples:\n got %v\nwant %v", listed, want)
	}
	if got.Tuples[1].Entry.Key != "data.metrics[0]" {
		t.Errorf("bybit comes from %s, want the first entry in file order", got.Tuples[1].Entry.Key)
	}
	if cfg.Tuples[0].Params.Get("exchange") != All || len(cfg.APIs[APIData].Tuples) != 3 {
		t.Error("Resolve changed the configuration it was given")
	}
	// Sent as the key, labelled with the ticker.
	if tp := got.Tuples[4]; !reflect.DeepEqual(tp.LabelValues, []string{"btc"}) || tp.TupleLabelValues[2] != "btc" ||
		tp.Query().Get("asset") != "bitcoin" || tp.Params.Get("asset") != "bitcoin" {
		t.Errorf("consensus tuple: labels %v, tuple labels %v, query %v", tp.LabelValues, tp.TupleLabelValues, tp.Query())
	}
	// Two values sent apart but labelled alike would be one series.
	tickers["ethereum"] = "btc"
	_, err = cfg.Resolve(resolve)
	if err == nil || err.Error() != `x.yml:17: consensus.metrics[0]: the series /consensus?asset=ethereum and /consensus?asset=bitcoin (consensus.metrics[0] at line 17) would carry the same labels {asset="btc"}` {
		t.Errorf("labels alike: %v", err)
	}
	tickers["ethereum"] = "eth"

	exchanges = append(exchanges, "deribit", "bitmex", "kraken")
	_, err = cfg.Resolve(resolve)
	if err == nil || err.Error() != "x.yml:2: data.max_tuples: the metrics list expands to 7 series, more than max_tuples (6)" {
		t.Errorf("cap: %v", err)
	}
	_, err = cfg.Resolve(func(a *API, e *Entry, p Param) (Param, error) {
		if p.HasAll() {
			return p, errors.New(`cannot expand "all": the list is down`)
		}
		return p, nil
	})
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0] != `x.yml:8: data.metrics[0].exchange: cannot expand "all": the list is down` {
		t.Errorf("resolver error: %v", err)
	}
	if !strings.Contains(resolveYAML, "exchange: all") {
		t.Fatal("fixture changed")
	}
}

// A family fed by several fields is created by whichever field a refresh
// meets first, so every field of it must carry the same HELP and type,
// and the same constant label names.
func TestCatalogFamiliesAreConsistent(t *testing.T) {
	type fam struct{ help, typ, labels, where string }
	seen := map[string]fam{}
	for _, ep := range Endpoints {
		for field, f := range ep.Fields {
			where := ep.Template + " " + field
			if f.Help == "" {
				t.Errorf("%s: family %s has no HELP", where, f.Name)
			}
			got := fam{f.Help, f.Type, strings.Join(slices.Sorted(maps.Keys(f.Labels)), ",") + "/" + f.KeyLabel, where}
			prev, ok := seen[f.Name]
			if !ok {
				seen[f.Name] = got
				continue
			}
			if prev.help != got.help || prev.typ != got.typ || prev.labels != got.labels {
				t.Errorf("family %s: %s and %s differ in HELP, type or labels", f.Name, prev.where, where)
			}
		}
	}
}
