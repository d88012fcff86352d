package expand_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// patternDiscovery is a public discovery of BTC and ETH paths, in the
// data API's envelope, for the pattern tests: a static list, a path the
// plan leaves out, windows the plan narrows, a required exchange with
// and without an aggregate value.
const patternDiscovery = `{"status": {"code": 200, "message": "success"}, "result": {"data": [
 {"path": "/v1/btc/market-indicator/mvrv", "parameters": {"window": ["day", "hour"]}, "required_parameters": []},
 {"path": "/v1/btc/market-indicator/nupl", "parameters": {"window": ["day"]}, "required_parameters": []},
 {"path": "/v1/btc/network-data/supply", "parameters": {"window": ["block", "hour", "day"]}, "required_parameters": []},
 {"path": "/v1/btc/exchange-flows/reserve", "parameters": {"window": ["day", "hour"], "exchange": ["all_exchange", "binance", "okx"]}, "required_parameters": ["exchange"]},
 {"path": "/v1/btc/exchange-flows/netflow", "parameters": {"window": ["day", "hour"], "exchange": ["all_exchange", "binance", "okx"]}, "required_parameters": ["exchange"]},
 {"path": "/v1/btc/miner-flows/reserve", "parameters": {"window": ["day"], "miner": ["f2pool", "antpool"]}, "required_parameters": ["miner"]},
 {"path": "/v1/btc/status/entity-list", "parameters": {}, "required_parameters": []},
 {"path": "/v1/eth/exchange-flows/reserve", "parameters": {"window": ["day"], "exchange": ["all_exchange", "binance"]}, "required_parameters": ["exchange"]}
]}}`

// patternPlan is a plan over that discovery: nupl left out, mvrv at day
// only, supply without block; the entity list always allowed.
const patternPlan = `{"plan": {"name": "PROFESSIONAL"}, "apiEndpoint": {
  "btc": {"market-indicator": {"mvrv": {"day": "P0D"}},
          "network-data": {"supply": {"day": "P3Y", "hour": "P1Y"}},
          "exchange-flows": {"reserve": {"day": "P0D", "hour": "P1Y"}, "netflow": {"day": "P0D", "hour": "P1Y"}},
          "miner-flows": {"reserve": {"day": "P0D"}}},
  "eth": {"exchange-flows": {"reserve": {"day": "P0D"}}},
  "statics": ["/v1/btc/status/entity-list"]},
  "apiRateLimit": {"token": 1000, "window": "hour"}}`

func discoveryServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/discovery/endpoints" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(patternDiscovery))
	}))
	t.Cleanup(s.Close)
	return s
}

// expandPattern loads the metrics under a data section against the
// discovery server and expands them with the plan (nil: none known).
func expandPattern(t *testing.T, metrics string, p *plan.Plan) (*config.Config, error) {
	t.Helper()
	s := discoveryServer(t)
	cfg := testtool.Config(t, s.URL, testtool.DataSection+metrics)
	x := expand.New(log.NewNopLogger(), expand.Options{Plan: func(*config.API) *plan.Plan { return p }})
	return x.Expand(context.Background(), cfg)
}

func tupleList(cfg *config.Config) string {
	var out []string
	for _, t := range cfg.Tuples {
		out = append(out, strings.TrimPrefix(t.Key, "data "))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func mustPlan(t *testing.T, s string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPatternWithThePlan(t *testing.T) {
	cfg, err := expandPattern(t, "    - path: /v1/btc/**\n      exclude: /v1/btc/exchange-flows/netflow\n", mustPlan(t, patternPlan))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"/v1/btc/exchange-flows/reserve?exchange=all_exchange&window=day",
		"/v1/btc/market-indicator/mvrv?window=day",
		"/v1/btc/network-data/supply?window=day",
	}, "\n")
	if got := tupleList(cfg); got != want {
		t.Errorf("tuples:\n%s\nwant\n%s", got, want)
	}
	ps := cfg.APIs[config.APIData].Patterns
	if len(ps) != 1 || ps[0].Paths != 3 || ps[0].Tuples != 3 || ps[0].Cut != 0 {
		t.Fatalf("patterns %+v", ps)
	}
	if got := strings.Join(ps[0].Left, "; "); got != "/v1/btc/miner-flows/reserve (requires miner: set it on the entry, a value or all); 1 path not in your plan (PROFESSIONAL)" {
		t.Errorf("left out: %s", got)
	}
}

func TestPatternWithoutAPlan(t *testing.T) {
	cfg, err := expandPattern(t, "    - path: /v1/*/exchange-flows/{reserve,netflow}\n      exchange: [binance, all]\n      window: finest\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"/v1/btc/exchange-flows/netflow?exchange=binance&window=hour",
		"/v1/btc/exchange-flows/netflow?exchange=okx&window=hour",
		"/v1/btc/exchange-flows/reserve?exchange=binance&window=hour",
		"/v1/btc/exchange-flows/reserve?exchange=okx&window=hour",
		"/v1/eth/exchange-flows/reserve?exchange=binance&window=day",
	}, "\n")
	if got := tupleList(cfg); got != want {
		t.Errorf("tuples:\n%s\nwant\n%s", got, want)
	}
}

func TestPatternWindows(t *testing.T) {
	p := mustPlan(t, patternPlan)
	for _, c := range []struct{ window, want string }{
		{"all", "/v1/btc/network-data/supply?window=day\n/v1/btc/network-data/supply?window=hour"},
		{"coarsest", "/v1/btc/network-data/supply?window=day"},
		{"finest", "/v1/btc/network-data/supply?window=hour"},
		{"[hour, block]", "/v1/btc/network-data/supply?window=hour"},
	} {
		cfg, err := expandPattern(t, "    - path: /v1/btc/network-data/*\n      window: "+c.window+"\n", p)
		if err != nil {
			t.Fatal(err)
		}
		if got := tupleList(cfg); got != c.want {
			t.Errorf("window %s:\n%s\nwant\n%s", c.window, got, c.want)
		}
	}
}

// Entries named one by one are built first; a pattern's tuples past
// max_tuples are cut and counted, not refused.
func TestPatternCutByMaxTuples(t *testing.T) {
	metrics := "    - path: /v1/btc/**\n      window: all\n    - path: /v1/btc/market-indicator/nupl\n"
	s := discoveryServer(t)
	yml := strings.Replace(testtool.DataSection, "  metrics:\n", "  max_tuples: 4\n  metrics:\n", 1) + metrics
	if !strings.Contains(yml, "max_tuples: 4") {
		t.Fatalf("the section has no metrics key to put max_tuples before:\n%s", yml)
	}
	cfg := testtool.Config(t, s.URL, yml)
	x := expand.New(log.NewNopLogger(), expand.Options{Plan: func(*config.API) *plan.Plan { return mustPlan(t, patternPlan) }})
	out, err := x.Expand(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tuples) != 4 || out.Tuples[0].Path != "/v1/btc/market-indicator/nupl" {
		t.Errorf("tuples:\n%s", tupleList(out))
	}
	ps := out.APIs[config.APIData].Patterns
	// reserve and netflow at day and hour, mvrv at day, supply at day and
	// hour: 7, of which 3 fit beside the entry named.
	if len(ps) != 1 || ps[0].Tuples != 3 || ps[0].Cut != 4 {
		t.Errorf("patterns %+v", ps[0])
	}
	want := `
# HELP onchain_exporter_pattern_tuples Tuples a pattern entry (path: /v1/btc/**) expanded to, in the configuration in force.
# TYPE onchain_exporter_pattern_tuples gauge
onchain_exporter_pattern_tuples{api="data",entry="data.metrics[0]",pattern="/v1/btc/**"} 3
# HELP onchain_exporter_pattern_tuples_cut Tuples a pattern entry selected past max_tuples, left out of the configuration in force.
# TYPE onchain_exporter_pattern_tuples_cut gauge
onchain_exporter_pattern_tuples_cut{api="data",entry="data.metrics[0]",pattern="/v1/btc/**"} 4
`
	if err := testutil.CollectAndCompare(x, strings.NewReader(want), "onchain_exporter_pattern_tuples", "onchain_exporter_pattern_tuples_cut"); err != nil {
		t.Error(err)
	}
}

// "Everything about BTC" on the fake's full catalog and its professional
// plan: the pattern expands without error into series the plan allows
// only, each named by the naming rule, and a second expansion puts
// nothing new in force.
func TestPatternOnTheFullCatalog(t *testing.T) {
	u := testtool.StartFake(t, fakeapi.Options{Catalog: fakeapi.CatalogFull, DataKeys: map[string]fakeapi.Tier{testtool.DataToken: fakeapi.TierProfessional}})
	cfg := u.Config(t, testtool.DataSection+"    - path: /v1/btc/**\n      window: all\n")
	x := expand.New(log.NewNopLogger())
	out, err := x.Expand(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := out.APIs[config.APIData]
	if len(a.Patterns) != 1 || a.Patterns[0].Paths < 20 || a.Patterns[0].Tuples < a.Patterns[0].Paths || a.Patterns[0].Cut != 0 {
		t.Fatalf("pattern %+v", a.Patterns[0])
	}
	p := mustFetchPlan(t, u)
	now := time.Now()
	for _, tp := range out.Tuples {
		if r := p.Check(tp.Path, tp.Window, time.Time{}, now); r != nil {
			t.Errorf("a tuple the plan refuses: %v", r)
		}
	}
	if a.LimitsFromPlan != "PROFESSIONAL" || a.DailyBudget != 17280 {
		t.Errorf("limits from the plan: %q, daily_budget %d", a.LimitsFromPlan, a.DailyBudget)
	}
	f := budget.ForecastAPI(a, nil)
	t.Logf("/v1/btc/** on the professional plan: %d paths, %d tuples, %s calls a day natural (+%d block series), daily_budget %d; left out: %s",
		a.Patterns[0].Paths, a.Patterns[0].Tuples, budget.FormatCalls(f.CallsPerDay), f.Unknown, a.DailyBudget, strings.Join(a.Patterns[0].Left, "; "))
	again, err := x.Expand(context.Background(), cfg)
	if err != nil || tupleList(again) != tupleList(out) {
		t.Errorf("a second expansion differs (err %v)", err)
	}
}

// mustFetchPlan reads the fake's plan for the test key without the
// exporter's client.
func mustFetchPlan(t *testing.T, u *testtool.Upstream) *plan.Plan {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u.Srv.URL+plan.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testtool.DataToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	out := plan.Answer(resp.StatusCode, body, err)
	if out.Kind != plan.Read {
		t.Fatalf("the fake's plan: %v", out)
	}
	return out.Plan
}

// Paths that appear in discovery at a later read join a pattern, those
// that go leave it: the next expansion (the daily refresh, a reload)
// puts the new set in force.
func TestPatternFollowsDiscovery(t *testing.T) {
	var mu sync.Mutex
	paths := []string{"/v1/btc/network-data/supply", "/v1/btc/market-indicator/mvrv"}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/discovery/endpoints" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		var items []string
		for _, p := range paths {
			items = append(items, `{"path": "`+p+`", "parameters": {"window": ["day"]}}`)
		}
		_, _ = w.Write([]byte(`{"status": {"code": 200, "message": "success"}, "result": {"data": [` + strings.Join(items, ",") + `]}}`))
	}))
	t.Cleanup(s.Close)
	clock := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	x := expand.New(log.NewNopLogger(), expand.Options{Now: func() time.Time { return clock }, Plan: func(*config.API) *plan.Plan { return nil }})
	cfg := testtool.Config(t, s.URL, testtool.DataSection+"    - path: /v1/btc/**\n")
	first, err := x.Expand(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	paths = []string{"/v1/btc/network-data/supply", "/v1/btc/exchange-flows/netflow-total"}
	mu.Unlock()
	clock = clock.Add(expand.Refresh)
	second, err := x.Expand(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want1 := "/v1/btc/market-indicator/mvrv?window=day\n/v1/btc/network-data/supply?window=day"
	want2 := "/v1/btc/exchange-flows/netflow-total?window=day\n/v1/btc/network-data/supply?window=day"
	if got := tupleList(first); got != want1 {
		t.Errorf("first read:\n%s\nwant\n%s", got, want1)
	}
	if got := tupleList(second); got != want2 {
		t.Errorf("after discovery changed:\n%s\nwant\n%s", got, want2)
	}
}

// A listed path is outside text: one with a character that acts on the
// text around it (U+202E, ESC), a space or a query is not selected, and
// what is said of it is inert.
func TestPatternLeavesOutAPathThatIsNotPlain(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status": {"code": 200, "message": "success"}, "result": {"data": [
 {"path": "/v1/btc/network-data/supply", "parameters": {"window": ["day"]}},
 {"path": "/v1/btc/flows/\u202ereserve", "parameters": {"window": ["day"]}},
 {"path": "/v1/btc/flows/\u001b[31mred", "parameters": {"window": ["day"]}},
 {"path": "/v1/btc/flows/with space", "parameters": {"window": ["day"]}},
 {"path": "/v1/btc/flows/q?window=hour", "parameters": {"window": ["day"]}}]}}`)
	}))
	t.Cleanup(s.Close)
	x := expand.New(log.NewNopLogger(), expand.Options{Plan: func(*config.API) *plan.Plan { return nil }})
	out, err := x.Expand(context.Background(), testtool.Config(t, s.URL, testtool.DataSection+"    - path: /v1/btc/**\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tupleList(out), "/v1/btc/network-data/supply?window=day"; got != want {
		t.Errorf("tuples:\n%s\nwant\n%s", got, want)
	}
	left := strings.Join(out.APIs[config.APIData].Patterns[0].Left, "\n")
	if strings.ContainsAny(left, "\u202e\x1b") || !strings.Contains(left, `/v1/btc/flows/\u{202E}reserve (not a path to ask`) ||
		strings.Count(left, "not a path to ask") != 4 {
		t.Errorf("left out:\n%s\nwant the four paths, inert", left)
	}
}

// On v2, discovery lists an endpoint's assets beside its parameters: a
// pattern's asset: applies to them, and all stands for them.
func TestPatternOnV2(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/discovery/endpoints" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"status": {"code": 200, "message": "success"}, "result": {"data": [
 {"path": "/v2/indicator/valuation/mvrv-z-score", "parameters": {"window": ["day"]}, "required_parameters": ["asset"], "assets": ["btc", "eth"]},
 {"path": "/v2/network/events-count", "parameters": {"window": ["day", "hour"], "chain": ["ethereum"]}, "required_parameters": ["asset"], "assets": ["usdt"]}
]}}`))
	}))
	t.Cleanup(s.Close)
	cfg := testtool.Config(t, s.URL, testtool.DataSection+"    - path: /v2/**\n      asset: all\n")
	out, err := expand.New(log.NewNopLogger(), expand.Options{Plan: func(*config.API) *plan.Plan { return nil }}).Expand(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"/v2/indicator/valuation/mvrv-z-score?asset=btc&window=day",
		"/v2/indicator/valuation/mvrv-z-score?asset=eth&window=day",
		"/v2/network/events-count?asset=usdt&window=day",
	}, "\n")
	if got := tupleList(out); got != want {
		t.Errorf("tuples:\n%s\nwant\n%s\nleft: %v", got, want, out.APIs[config.APIData].Patterns[0].Left)
	}
}

// BenchmarkPatternExpansion expands /v1/** (every asset, every window the
// professional plan allows) over the fake's full catalog, the lists read
// once and reused: the cost of a reload of such a file.
func BenchmarkPatternExpansion(b *testing.B) {
	u := testtool.StartFake(b, fakeapi.Options{Catalog: fakeapi.CatalogFull, DataKeys: map[string]fakeapi.Tier{testtool.DataToken: fakeapi.TierProfessional}})
	cfg := u.Config(b, strings.Replace(testtool.DataSection, "  metrics:\n", "  max_tuples: 10000\n  metrics:\n", 1)+"    - path: /v1/**\n      window: all\n      coarsen: true\n")
	x := expand.New(log.NewNopLogger())
	out, err := x.Expand(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := x.Expand(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out.Tuples)), "tuples")
}

// TestOnceLetsGoOfTheLists: an Expander that expands once (the check)
// selects what one that keeps expanding does, and has let go of the
// discovery answer once it succeeds; one whose expansion fails keeps it
// (the check expands again from it, as at start).
func TestOnceLetsGoOfTheLists(t *testing.T) {
	s := discoveryServer(t)
	p := mustPlan(t, patternPlan)
	kept := func(x *expand.Expander, cfg *config.Config) bool {
		a := cfg.APIs[config.APIData]
		return x.ListCache().Saved(a.Name, upstream.Account(a))[config.ListDataV1] != nil
	}
	var want string
	for _, once := range []bool{false, true} {
		cfg := testtool.Config(t, s.URL, testtool.DataSection+"    - path: /v1/btc/**\n")
		x := expand.New(log.NewNopLogger(), expand.Options{Plan: func(*config.API) *plan.Plan { return p }, Once: once})
		out, err := x.Expand(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !once {
			want = tupleList(out)
		} else if got := tupleList(out); got != want {
			t.Errorf("once, tuples:\n%s\nwant\n%s", got, want)
		}
		if kept(x, cfg) == once {
			t.Errorf("once %v: the discovery answer kept: %v", once, !once)
		}
	}
	cfg := testtool.Config(t, s.URL, testtool.DataSection+"    - path: /v1/btc/**\n    - path: /v1/btc/market-indicator/mvrx\n")
	x := expand.New(log.NewNopLogger(), expand.Options{Plan: func(*config.API) *plan.Plan { return p }, Once: true})
	if _, err := x.Expand(context.Background(), cfg); err == nil {
		t.Fatal("a path no list knows expands")
	}
	if !kept(x, cfg) {
		t.Error("a failed expansion let go of the discovery answer")
	}
}
