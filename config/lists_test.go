package config

import (
	"reflect"
	"testing"
)

// daily_budget is read as written; a section without it has none.
func TestDailyBudget(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`data:
  url: http://127.0.0.1:1
  token_env: T
  daily_budget: 5000
  metrics:
    - path: /v1/btc/network-data/supply
consensus:
  url: http://127.0.0.1:2
  metrics:
    - path: /consensus
      asset: btc
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.APIs[APIData].DailyBudget; got != 5000 {
		t.Errorf("data daily_budget = %d, want 5000", got)
	}
	if got := cfg.APIs[APIConsensus].DailyBudget; got != 0 {
		t.Errorf("consensus daily_budget = %d, want 0 (none)", got)
	}
}

// The listing endpoints of a section: one per list, whatever number of
// entries and parameters need it.
func TestLists(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      exchange: [all, binance]
    - path: /v1/erc20/exchange-flows/reserve
      token: all
      exchange: all
    - path: /v2/network/events-count
      asset: usdt
    - path: /v2/network/events-count
      asset: all
      window: hour
    - path: /v1/btc/exchange-flows/netflow
indicator:
  url: http://127.0.0.1:2
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: all
consensus:
  url: http://127.0.0.1:3
  metrics:
    - path: /consensus
      asset: [Bitcoin, eth]
    - path: /calls
      asset: btc
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	for api, want := range map[string][]List{
		APIData:      {{ListDataV1, true}, {ListDataV2, true}},
		APIIndicator: {{ListEquities, false}},
		APIConsensus: {{ListAssets, false}},
	} {
		if got := cfg.APIs[api].Lists(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: lists %v, want %v", api, got, want)
		}
	}

	// Nothing to resolve, every path in the catalog: no list.
	cfg, err = Parse("x.yml", []byte("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /v1/btc/network-data/supply\n"), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.APIs[APIData].Lists(); got != nil {
		t.Errorf("lists %v, want none", got)
	}
}
