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

// TestUnlistedPath: a path that neither discovery nor the key's plan (a
// premium key's, which lists every path) nor the built-in catalog lists
// is a typo, not a path the plan refuses: a reload of the file fails with
// the file, the entry, the path and the listed path nearest it; at start
// the entry stays out, said once at error level, and the rest is served.
// A path discovery lists that the key's plan refuses is no such error.
func TestUnlistedPath(t *testing.T) {
	const yml = testtool.DataSection + `    - path: /v1/btc/network-data/supply
    - path: /v1/btc/market-indicator/mvrvv
    - path: /v1/btc/market-indicatr/mvrv
    - path: /v1/btc/market-indicator/zzzzzzzz
`
	e := newEnv(t, testtool.SupplyConfig, fakeapi.Options{Catalog: fakeapi.CatalogFull})
	_, err := expand.New(log.NewNopLogger()).Expand(context.Background(), e.parse(yml))
	want := []string{
		"test.yml:7: data.metrics[1].path: discovery lists no endpoint /v1/btc/market-indicator/mvrvv, nor does the key's plan (PREMIUM); did you mean /v1/btc/market-indicator/mvrv?",
		"test.yml:8: data.metrics[2].path: discovery lists no endpoint /v1/btc/market-indicatr/mvrv, nor does the key's plan (PREMIUM); did you mean /v1/btc/market-indicator/mvrv?",
		"test.yml:9: data.metrics[3].path: discovery lists no endpoint /v1/btc/market-indicator/zzzzzzzz, nor does the key's plan (PREMIUM): no such endpoint",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("a reload: %v\nwant:\n%s", err, strings.Join(want, "\n"))
	}

	var logs testtool.LogBuffer
	x := expand.New(log.NewLogfmtLogger(&logs))
	for range 2 {
		cfg, err := x.Start(context.Background(), e.parse(yml))
		if err != nil {
			t.Fatal(err)
		}
		if got := tupleKeys(cfg); len(got) != 1 || got["data /v1/btc/network-data/supply?window=day"] == nil {
			t.Errorf("at start, the tuples in force: %v", got)
		}
	}
	if n := logs.Count("level=error", "entries_waiting=3", "did you mean /v1/btc/market-indicator/mvrv?"); n != 1 {
		t.Errorf("%d error lines naming the typo, want 1:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "discovery does not list this path") || strings.Contains(logs.String(), "does not include") {
		t.Errorf("the path is warned about as a plan's refusal or an unlisted one besides:\n%s", logs.String())
	}
	if st := x.State()["data"]; st.OK || st.Waiting != 3 || !strings.Contains(st.LastError, "did you mean /v1/btc/market-indicator/mvrv?") {
		t.Errorf("the data API's expansion state: %+v", st)
	}

	// The basic plan does not include the MVRV: the path exists, and the
	// plan's refusal is the engine's to say, not the file's error.
	basic := testtool.StartFake(t, fakeapi.Options{Catalog: fakeapi.CatalogFull, DataKeys: map[string]fakeapi.Tier{testtool.DataToken: fakeapi.TierBasic}})
	refused := basic.Config(t, testtool.DataSection+"    - path: /v1/btc/market-indicator/mvrv\n    - path: /v1/btc/market-indicator/mvrvv\n")
	_, err = expand.New(log.NewNopLogger()).Expand(context.Background(), refused)
	if err == nil || strings.Contains(err.Error(), "/mvrv,") || !strings.Contains(err.Error(), "nor does the key's plan (BASIC); did you mean /v1/btc/market-indicator/mvrv?") {
		t.Errorf("with a basic key: %v", err)
	}
}
