package expand_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// One labelling of a path, whether a pattern or a named entry selects
// it: a pattern asks an optional parameter it does not set for the
// aggregate discovery lists (exchange=all_exchange, as for a required
// one), so its series is labelled as the entry that names the aggregate
// labels it, and the two are one series.
func TestPatternLabelsTheAggregateAsANamedEntryDoes(t *testing.T) {
	u := testtool.StartFake(t, fakeapi.Options{})
	for _, tc := range []struct{ name, yml string }{
		{"pattern", "    - path: /v1/btc/market-data/open-*\n      window: day\n"},
		{"named", "    - path: /v1/btc/market-data/open-interest\n      window: day\n      exchange: all_exchange\n      symbol: all_symbol\n"},
		{"both", "    - path: /v1/btc/market-data/open-interest\n      window: day\n      exchange: all_exchange\n      symbol: all_symbol\n" +
			"    - path: /v1/btc/market-data/open-*\n      window: day\n"},
	} {
		cfg, err := expand.New(log.NewNopLogger()).Expand(context.Background(), u.Config(t, testtool.DataSection+tc.yml))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(cfg.Tuples) != 1 {
			t.Fatalf("%s: %d series, want 1", tc.name, len(cfg.Tuples))
		}
		tp := cfg.Tuples[0]
		got := map[string]string{}
		for i, n := range tp.LabelNames() {
			got[n] = tp.LabelValues[i]
		}
		if got["exchange"] != "all_exchange" || got["symbol"] != "all_symbol" || !strings.Contains(tp.Key, "exchange=all_exchange") {
			t.Errorf("%s: %s labelled %v", tc.name, tp.Key, got)
		}
	}
}
