package expand_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// waitingData has one entry that needs no list and one that needs the v2
// discovery.
const waitingData = testtool.DataSection + `    - path: /v1/btc/network-data/supply
    - path: /v2/network/events-count
      asset: all
      chain: ethereum
`

// allEquities is the Indicator API's band of every equity /api/equities
// lists.
const allEquities = `indicator:
  url: "{{URL}}/indicator"
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: all
`

// One entry needs no list; the others need the v2 discovery, the equity
// list and the asset list.
const waitConfig = waitingData + allEquities + `consensus:
  url: "{{URL}}/consensus"
  metrics:
    - path: /consensus
      asset: [Bitcoin, xbt]
`

// maintained runs x.Maintain over a SafeConfig that applies to exp, with
// fast retries, until the test ends.
func maintained(t *testing.T, x *expand.Expander, exp *collector.Exporter, cfg *config.Config) *config.SafeConfig {
	t.Helper()
	x.SetRetry(20*time.Millisecond, 80*time.Millisecond)
	safe := config.NewSafeConfig(prometheus.NewRegistry(), func() (*config.Config, error) {
		return nil, fmt.Errorf("no reload in this test")
	}, exp.ApplyConfig)
	safe.Loaded(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		x.Maintain(ctx, time.Hour, safe.Refine)
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return safe
}

// until polls cond for up to five seconds.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testtool.Until(t, 5*time.Second, what, cond)
}

// With every list failing, expansion is no error: the entry that needs no
// list is served at once, the state says what waits, and the background
// retries put the rest in force once the lists answer, without a reload.
func TestExpansionWaitsForTheUpstream(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{IndicatorToken: testToken})
	stablecoins := discovered(listing(t, e, "/v2/discovery/endpoints", "result.data"), "/v2/network/events-count", "asset")
	equities := listing(t, e, "/indicator/api/equities", "data")
	if len(stablecoins) < 3 || len(equities) < 3 {
		t.Fatalf("the fake lists too little: %v, %v", stablecoins, equities)
	}
	e.Fake.SetFault("", fakeapi.Fault{Kind: fakeapi.InvalidJSON})

	logs := &testtool.LogBuffer{}
	x := expand.New(log.NewLogfmtLogger(logs), expand.Options{Now: e.Clock.Now})
	cfg, err := x.Expand(context.Background(), e.parse(waitConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tuples) != 1 || cfg.Tuples[0].Path != "/v1/btc/network-data/supply" {
		t.Fatalf("served while the lists fail: %d tuples", len(cfg.Tuples))
	}
	down := `
# HELP onchain_exporter_expansion_entries_waiting Entries left out of the configuration in force: their listing endpoint has not answered yet, or its answer shows them wrong.
# TYPE onchain_exporter_expansion_entries_waiting gauge
onchain_exporter_expansion_entries_waiting{api="consensus"} 1
onchain_exporter_expansion_entries_waiting{api="data"} 1
onchain_exporter_expansion_entries_waiting{api="indicator"} 1
# HELP onchain_exporter_expansion_success 1 when the last expansion of the API's entries read every listing endpoint they need (all, consensus assets), else 0.
# TYPE onchain_exporter_expansion_success gauge
onchain_exporter_expansion_success{api="consensus"} 0
onchain_exporter_expansion_success{api="data"} 0
onchain_exporter_expansion_success{api="indicator"} 0
`
	if err := testutil.CollectAndCompare(x, strings.NewReader(down)); err != nil {
		t.Error(err)
	}

	// The exporter serves on it, empty sections included.
	e.serve(cfg, x)
	body := e.scrape("5")
	if valueOf(body, `onchain_exporter_tuples{api="indicator"}`) != "0" || valueOf(body, `onchain_exporter_expansion_success{api="data"}`) != "0" {
		t.Errorf("first scrape:\n%s", strings.Join(lines(body, "onchain_exporter_tuples", "onchain_exporter_expansion"), "\n"))
	}

	safe := maintained(t, x, e.exp, cfg)
	until(t, "no retries while the lists fail", func() bool { return e.Fake.CallsFor("/consensus/assets") >= 4 })
	if got := safe.Get(); len(got.Tuples) != 1 {
		t.Errorf("%d tuples in force while the lists fail", len(got.Tuples))
	}
	if n := logs.Count("level=warn", "api=indicator", "retrying in the background"); n != 1 {
		t.Errorf("%d warnings for the indicator API's failures; want one for the outage, not one per retry", n)
	}

	e.Fake.ClearFaults()
	until(t, "the lists answer, but the expansion is not put in force", func() bool {
		return len(safe.Get().Tuples) == 1+len(stablecoins)+len(equities)+1
	})
	up := fmt.Sprintf(`
# HELP onchain_exporter_expansion_entries_waiting Entries left out of the configuration in force: their listing endpoint has not answered yet, or its answer shows them wrong.
# TYPE onchain_exporter_expansion_entries_waiting gauge
onchain_exporter_expansion_entries_waiting{api="consensus"} 0
onchain_exporter_expansion_entries_waiting{api="data"} 0
onchain_exporter_expansion_entries_waiting{api="indicator"} 0
# HELP onchain_exporter_expansion_last_success_timestamp_seconds When the API's entries were last expanded from its listing endpoints, as a Unix time.
# TYPE onchain_exporter_expansion_last_success_timestamp_seconds gauge
onchain_exporter_expansion_last_success_timestamp_seconds{api="consensus"} %[1]d
onchain_exporter_expansion_last_success_timestamp_seconds{api="data"} %[1]d
onchain_exporter_expansion_last_success_timestamp_seconds{api="indicator"} %[1]d
# HELP onchain_exporter_expansion_success 1 when the last expansion of the API's entries read every listing endpoint they need (all, consensus assets), else 0.
# TYPE onchain_exporter_expansion_success gauge
onchain_exporter_expansion_success{api="consensus"} 1
onchain_exporter_expansion_success{api="data"} 1
onchain_exporter_expansion_success{api="indicator"} 1
`, e.Clock.Now().Unix())
	if err := testutil.CollectAndCompare(x, strings.NewReader(up)); err != nil {
		t.Error(err)
	}
	body = e.scrape("10")
	for _, a := range stablecoins {
		if seriesValue(body, "onchain_exporter_query_success", "endpoint", "/v2/network/events-count", "asset", a) != "1" {
			t.Errorf("stablecoin %s not served after the upstream came back", a)
		}
	}
	for _, eq := range equities {
		if seriesValue(body, "onchain_exporter_query_success", "api", "indicator", "equity", eq["id"].(string)) != "1" {
			t.Errorf("equity %s not served after the upstream came back", eq["id"])
		}
	}
	if seriesValue(body, "onchain_consensus_score", "asset", "btc") == "" {
		t.Error("the consensus series is not served, labelled btc, after the upstream came back")
	}
	if logs.Count("level=info", "api=data", "succeeds again") != 1 {
		t.Errorf("no line says the expansion recovered:\n%s", logs.String())
	}
}

// The lists came back and show the file wrong: an unknown asset keeps the
// consensus entry out, with the reason, and the data API's "all" goes in.
func TestBackgroundExpansionMeetsAConfigurationError(t *testing.T) {
	yml := waitingData + `consensus:
  url: "{{URL}}/consensus"
  metrics:
    - path: /consensus
      asset: [btc, dogecoin]
`
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	e.Fake.SetFault("", fakeapi.Fault{Kind: fakeapi.InvalidJSON})
	logs := &testtool.LogBuffer{}
	x := expand.New(log.NewLogfmtLogger(logs), expand.Options{Now: e.Clock.Now})
	cfg, err := x.Expand(context.Background(), e.parse(yml))
	if err != nil || len(cfg.Tuples) != 1 {
		t.Fatalf("start with the lists failing: %v", err)
	}
	safe := maintained(t, x, e.exp, cfg)
	e.Fake.ClearFaults()
	until(t, "the data API's expansion is not put in force", func() bool { return len(safe.Get().Tuples) > 1 })
	st := x.State()
	if !st["data"].OK || st["data"].Waiting != 0 || st["consensus"].OK || st["consensus"].Waiting != 1 ||
		st["consensus"].LastError != `test.yml:14: consensus.metrics[0].asset: "dogecoin" is not an asset of /assets (known: bitcoin, ethereum, solana, ripple)` {
		t.Errorf("state: %+v", st)
	}
	for _, tp := range safe.Get().Tuples {
		if tp.API == config.APIConsensus {
			t.Errorf("a consensus tuple is in force: %s", tp.Key)
		}
	}
	time.Sleep(200 * time.Millisecond) // a few retries
	if n := logs.Count("level=error", "dogecoin"); n != 1 {
		t.Errorf("%d error lines about the unknown asset; want one", n)
	}
}

// A listed value that cannot fill a path segment is skipped with a
// warning; the others go upstream escaped.
func TestListedValuesArePathSegments(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/equities" {
			fmt.Fprint(w, `{"data":[{"id":"KRX:005930"},{"id":"KRX/../../admin"},{"id":".."},{"id":"NYSE:BRK B"}]}`)
			return
		}
		mu.Lock()
		paths = append(paths, r.URL.EscapedPath())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	yml := "indicator:\n  url: {{URL}}\n  token_env: T\n  metrics:\n    - path: /api/equities/{equity}/pbr-band\n      equity: all\n"
	logs := &testtool.LogBuffer{}
	cfg, err := expand.New(log.NewLogfmtLogger(logs)).Expand(context.Background(), testtool.Config(t, srv.URL, yml))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tp := range cfg.Tuples {
		got = append(got, tp.Path)
	}
	want := []string{"/api/equities/KRX:005930/pbr-band", "/api/equities/NYSE:BRK%20B/pbr-band"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("paths %q, want %q", got, want)
	}
	if logs.Count("level=warn", "cannot fill a path segment", `KRX/../../admin`) != 1 || logs.Count("level=warn", "cannot fill a path segment") != 2 {
		t.Errorf("skipped values not logged:\n%s", logs.String())
	}
	exp, err := collector.New(cfg, log.NewNopLogger(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	testtool.Scrape(t, exp, "5")
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(paths, " ") != strings.Join(want, " ") && strings.Join(paths, " ") != want[1]+" "+want[0] {
		t.Errorf("requested %q, want %q", paths, want)
	}
}

// Retries back off from retryMin to retryMax, each drawn between half and
// all of its step; with the production bounds a returning upstream is
// seen within a minute.
func TestExpansionBackoff(t *testing.T) {
	x := expand.New(log.NewNopLogger())
	for n := 1; n <= 40; n++ {
		step := min(5*time.Second<<min(n-1, 10), time.Minute)
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for range 200 {
			d := x.Backoff(n)
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo < step/2 || hi > step || hi > time.Minute {
			t.Errorf("retry %d: waits from %v to %v, want within [%v, %v]", n, lo, hi, step/2, step)
		}
		if hi-lo < step/4 {
			t.Errorf("retry %d: waits from %v to %v: no jitter", n, lo, hi)
		}
	}
}

// Listing endpoints that answer, but with nothing the exporter can read
// (an empty list, items without the fields that name them), are the
// upstream's fault: the file loads, the entries that need them wait, and
// they go in as soon as the lists are good, without a restart or a reload.
func TestEmptyListsAreNoConfigurationError(t *testing.T) {
	var mu sync.Mutex
	bad := true
	up := testtool.StartFake(t, fakeapi.Options{Now: time.Now, IndicatorToken: testToken}, func(fake http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			b := bad
			mu.Unlock()
			switch {
			case b && r.URL.Path == "/consensus/assets":
				fmt.Fprint(w, `[]`)
			case b && r.URL.Path == "/indicator/api/equities":
				fmt.Fprint(w, `{"data":[{"name":"no id here"}]}`)
			case b && r.URL.Path == "/v2/discovery/endpoints":
				fmt.Fprint(w, `{"status":{"code":200},"result":{"data":[]}}`)
			default:
				fake.ServeHTTP(w, r)
			}
		})
	})
	parse := func() *config.Config { return up.Config(t, waitConfig) }
	logs := &testtool.LogBuffer{}
	x := expand.New(log.NewLogfmtLogger(logs))
	cfg, err := x.Expand(context.Background(), parse())
	if err != nil {
		t.Fatalf("empty lists made the file an error: %v", err)
	}
	if len(cfg.Tuples) != 1 {
		t.Fatalf("%d tuples served from empty lists, want the one that needs none", len(cfg.Tuples))
	}
	for _, api := range []string{"data", "indicator", "consensus"} {
		if st := x.State()[api]; st.OK || st.Waiting != 1 || !strings.Contains(st.LastError, "the answer lists no") {
			t.Errorf("%s: state %+v", api, st)
		}
	}
	exp, err := collector.New(cfg, log.NewNopLogger(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	safe := maintained(t, x, exp, cfg)
	until(t, "retries of the empty lists", func() bool { return logs.Count("retrying in the background") >= 1 })
	mu.Lock()
	bad = false
	mu.Unlock()
	until(t, "the good lists are not put in force", func() bool { return len(safe.Get().Tuples) > 3 })
	for _, api := range []string{"data", "indicator", "consensus"} {
		if st := x.State()[api]; !st.OK || st.Waiting != 0 {
			t.Errorf("%s after the lists came good: %+v", api, st)
		}
	}
}
