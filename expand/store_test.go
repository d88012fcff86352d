package expand_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/persist"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

const storedConfig = `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: all
`

// savedLists reads the listing answers of the data API's state file
// under dir, as written: its format version, and the paths each answer
// lists with when it was read, by listing endpoint.
func savedLists(t *testing.T, dir string) (version int, lists map[string][]string, at map[string]time.Time) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "data.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Version int `json:"version"`
		Lists   map[string]struct {
			Rows []struct {
				Path string `json:"path"`
			} `json:"rows"`
			At time.Time `json:"at"`
		} `json:"lists"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	lists, at = map[string][]string{}, map[string]time.Time{}
	for path, l := range f.Lists {
		for _, r := range l.Rows {
			lists[path] = append(lists[path], r.Path)
		}
		at[path] = l.At
	}
	return f.Version, lists, at
}

// TestOneCacheOfListingAnswers: the answer a listing endpoint gave once
// is the one copy the Expander reuses, the state file holds and a restart
// reuses without a call; an answer fetched later is what the next save
// writes, and the one saved stands in when the endpoint fails after a
// restart.
func TestOneCacheOfListingAnswers(t *testing.T) {
	const discovery = "/v1/discovery/endpoints"
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	var listed []string
	for _, it := range listing(t, e, discovery, "result.data") {
		listed = append(listed, it["path"].(string))
	}
	dir := t.TempDir()
	// run is one process on dir, as main wires it: it expands, serves
	// and saves on stop.
	run := func() (*config.Config, *testtool.LogBuffer) {
		t.Helper()
		logs := &testtool.LogBuffer{}
		logger := log.NewLogfmtLogger(logs)
		store := persist.New(state.OpenStore(dir, logger), logger)
		reg := prometheus.NewRegistry()
		pool := upstream.NewPool(reg, e.Clock.Now, logger)
		pool.OnClient(store.Keep)
		defer pool.Close()
		x := expand.New(logger, expand.Options{Now: e.Clock.Now, Clients: pool, Store: store})
		if x.ListCache() != store.Cache() || store.Cache() == nil {
			t.Fatal("the Expander holds listing answers of its own beside the Store's")
		}
		cfg, err := x.Expand(context.Background(), e.parse(storedConfig))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Expand(context.Background(), e.parse(storedConfig)); err != nil {
			t.Fatal(err)
		}
		exp, err := collector.New(cfg, logger, reg, collector.Options{Clock: e.Clock, Clients: pool, Store: store})
		if err != nil {
			t.Fatal(err)
		}
		exp.Close()
		return cfg, logs
	}

	fetchedAt := e.Clock.Now()
	first, _ := run()
	if n := e.Fake.CallsFor(discovery); n != 1 {
		t.Fatalf("%d discovery calls for two expansions, want 1", n)
	}
	version, lists, at := savedLists(t, dir)
	if version != 3 || !slices.Equal(lists[discovery], listed) || !at[discovery].Equal(fetchedAt) || len(at) != 2 || !at[plan.Path].Equal(fetchedAt) {
		t.Fatalf("the state file (version %d) holds %v read at %v; want version 3 and %s as fetched at %v: %v",
			version, lists[discovery], at[discovery], discovery, fetchedAt, listed)
	}

	// Two hours later, past listReuse but within Refresh: the saved
	// answer is reused, and saved again as it was.
	e.Clock.Add(2 * time.Hour)
	e.Fake.ResetCalls()
	second, _ := run()
	if n := e.Fake.CallsFor(discovery); n != 0 {
		t.Errorf("the restart made %d discovery calls, want 0", n)
	}
	if got, want := tupleKeys(second), tupleKeys(first); len(got) != len(want) || len(got) < 3 {
		t.Errorf("the restart expanded to %d tuples, the first run to %d", len(got), len(want))
	}
	if _, lists, at := savedLists(t, dir); !slices.Equal(lists[discovery], listed) || !at[discovery].Equal(fetchedAt) {
		t.Errorf("after the restart the file holds %v read at %v", lists[discovery], at[discovery])
	}

	// Past Refresh, with discovery failing: the saved answer stands in,
	// and stays the one saved.
	e.Clock.Add(23 * time.Hour)
	e.Fake.ResetCalls()
	e.Fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.InvalidJSON})
	third, logs := run()
	// Each expansion of the run tries discovery again, and says so.
	if n := e.Fake.CallsFor(discovery); n == 0 || len(tupleKeys(third)) != len(tupleKeys(first)) || logs.Count("level=warn", "last good answer") != int(n) {
		t.Errorf("with discovery failing: %d calls, %d tuples, want the saved answer used:\n%s", n, len(tupleKeys(third)), logs)
	}
	if _, _, at := savedLists(t, dir); !at[discovery].Equal(fetchedAt) {
		t.Errorf("a failed call replaced the saved answer: read at %v", at[discovery])
	}

	// Discovery answers again: the answer fetched is the one saved.
	e.Fake.ClearFaults()
	e.Fake.ResetCalls()
	refetchedAt := e.Clock.Now()
	run()
	if n := e.Fake.CallsFor(discovery); n != 1 {
		t.Errorf("%d discovery calls past Refresh, want 1", n)
	}
	if _, lists, at := savedLists(t, dir); !slices.Equal(lists[discovery], listed) || !at[discovery].Equal(refetchedAt) {
		t.Errorf("the file holds %d paths read at %v; want the answer fetched at %v", len(lists[discovery]), at[discovery], refetchedAt)
	}
}
