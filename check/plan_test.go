package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// planDiscovery is a public discovery of a few v1 paths, in the data
// API's envelope.
const planDiscovery = `{"status": {"code": 200, "message": "success"}, "result": {"data": [
 {"path": "/v1/btc/market-indicator/mvrv", "parameters": {"window": ["day", "hour"]}, "required_parameters": []},
 {"path": "/v1/btc/market-indicator/nupl", "parameters": {"window": ["day"]}, "required_parameters": []},
 {"path": "/v1/btc/network-data/supply", "parameters": {"window": ["day", "hour", "block"]}, "required_parameters": []},
 {"path": "/v1/btc/exchange-flows/reserve", "parameters": {"window": ["day", "hour"], "exchange": ["all_exchange", "binance", "okx"]}, "required_parameters": ["exchange"]}
]}}`

// The same plan in the two dialects API-FACTS.md describes: the current
// one, bare, and the older one (windows under "window"), in the envelope.
var planDialects = map[string]string{
	"current": `{"plan": {"name": "PROFESSIONAL"}, "apiEndpoint": {
	  "btc": {"market-indicator": {"mvrv": {"day": "P0D"}},
	          "network-data": {"supply": {"day": "P3Y", "hour": "P1Y"}},
	          "exchange-flows": {"reserve": {"day": "P0D", "hour": "P1Y"}}},
	  "statics": ["/v1/discovery/endpoints"]},
	  "apiRateLimit": {"token": 1000, "window": "hour"}}`,
	"older": `{"status": {"code": 200, "message": "success"}, "result": {"data": {"plan": {"name": "PROFESSIONAL"}, "apiEndpoint": {
	  "btc": {"market-indicator": {"mvrv": {"window": {"day": "P0D"}, "limit": 1000}},
	          "network-data": {"supply": {"window": {"day": "P3Y", "hour": "P1Y"}, "limit": 1000}},
	          "exchange-flows": {"reserve": {"window": {"day": "P0D", "hour": "P1Y"}, "limit": 1000}}},
	  "statics": ["/v1/discovery/endpoints"]},
	  "apiRateLimit": {"token": "1000", "window": "hour"}}}}`,
}

// planUpstream serves the discovery and, at /v1/my/discovery/endpoints,
// the plan body with status; it counts the plan calls.
func planUpstream(t *testing.T, status int, body string) (string, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer plan-tok-5e1" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"status": {"code": 401, "message": "unauthorized"}}`))
			return
		}
		switch r.URL.Path {
		case "/v1/discovery/endpoints":
			_, _ = w.Write([]byte(planDiscovery))
		case "/v1/my/discovery/endpoints":
			calls.Add(1)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s.URL, &calls
}

const planConfig = `data:
  url: %s
  token_env: ONCHAIN_TEST_PLAN
  metrics:
    - path: /v1/btc/market-indicator/mvrv
      window: [day, hour]
    - path: /v1/btc/market-indicator/nupl
    - path: /v1/btc/network-data/supply
      window: [hour, block]
    - path: /v1/btc/exchange-flows/reserve
      exchange: [binance, okx]
      window: hour
`

func runPlanCheck(t *testing.T, status int, body string) (string, int32) {
	t.Helper()
	url, calls := planUpstream(t, status, body)
	t.Setenv("ONCHAIN_TEST_PLAN", "plan-tok-5e1")
	file := filepath.Join(t.TempDir(), "plan.yml")
	writeFile(t, file, strings.Replace(planConfig, "%s", url, 1))
	var out, errOut bytes.Buffer
	if code := run([]string{"--config.check", "--config.check.upstream", "--config.file=" + file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got, _, _ := strings.Cut(out.String(), "\nForecast")
	if strings.Contains(out.String()+errOut.String(), "plan-tok-5e1") {
		t.Error("the key was printed")
	}
	return strings.ReplaceAll(got, file, "F"), calls.Load()
}

// --config.check --config.check.upstream reads the plan once and names
// every tuple it does not allow, in its words, whichever dialect it
// answers in.
func TestConfigCheckAgainstThePlan(t *testing.T) {
	for name, body := range planDialects {
		t.Run(name, func(t *testing.T) {
			got, calls := runPlanCheck(t, http.StatusOK, body)
			want := strings.Join([]string{
				"OK: F: 7 tuples",
				"WARNING: F:6: data.metrics[0].window: your plan (PROFESSIONAL) reads /v1/btc/market-indicator/mvrv at day only, not at hour; the exporter does not call it",
				"WARNING: F:7: data.metrics[1].path: your plan (PROFESSIONAL) does not include /v1/btc/market-indicator/nupl; the exporter does not call it",
				"WARNING: F:9: data.metrics[2].window: your plan (PROFESSIONAL) reads /v1/btc/network-data/supply at day and hour only, not at block; the exporter does not call it",
				"Checked against the upstream's lists: data /v1/discovery/endpoints (4 items)",
				"Plan: plan PROFESSIONAL: 3 paths with windows, 1 always allowed, rate limit 1000 per hour",
				"Plan: rate_limit and daily_budget not set in the file: daily_budget 17280 a day, the plan's rate limit less the 10 % reserve",
				"Not checked: data: window and limit against discovery (the built-in catalog checks them for its endpoints)",
				""}, "\n")
			if got != want {
				t.Errorf("stdout before the forecast:\n%s\nwant\n%s", got, want)
			}
			if calls != 1 {
				t.Errorf("the plan was read %d times, want once", calls)
			}
		})
	}
}

// Without a plan to read, the check says so once and names no tuple.
func TestConfigCheckWithoutAPlan(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{404, `{"status": {"code": 404, "message": "not_found"}}`, "Plan: the upstream has no plan endpoint (404): working from the public discovery alone\n"},
		{403, `{"status": {"code": 403, "message": "forbidden"}}`, "Plan: the plan endpoint answered 403, read as the basic plan with nothing listed: working from the public discovery alone\n"},
		{500, `{"status": {"code": 500, "message": "internal_server_error"}}`, "Plan: the plan endpoint answered 500, read as the basic plan with nothing listed"},
		{200, `{"unexpected": true}`, "Plan: the plan could not be read (the plan answer holds none of plan, apiEndpoint, apiRateLimit: keys unexpected)"},
	} {
		got, _ := runPlanCheck(t, c.status, c.body)
		if !strings.Contains(got, c.want) || strings.Count(got, "Plan: ") != 1 || strings.Contains(got, "your plan") {
			t.Errorf("%d %s:\n%s\nwant one plan line with %q", c.status, c.body, got, c.want)
		}
	}
}

// A pattern entry: offline, the check says it expands at start; against
// the upstream, what it selects from discovery and the plan, what it
// leaves out and why, and what it costs per category.
func TestConfigCheckPatterns(t *testing.T) {
	url, calls := planUpstream(t, http.StatusOK, planDialects["older"])
	t.Setenv("ONCHAIN_TEST_PLAN", "plan-tok-5e1")
	file := filepath.Join(t.TempDir(), "pattern.yml")
	writeFile(t, file, `data:
  url: `+url+`
  token_env: ONCHAIN_TEST_PLAN
  metrics:
    - path: /v1/btc/**
      exclude: /v1/btc/network-data/*
      window: all
`)
	var out, errOut bytes.Buffer
	if code := run([]string{"--config.check", "--config.file=" + file}, &out, &errOut); code != 0 {
		t.Fatalf("offline: exit %d: %s", code, errOut.String())
	}
	offline := strings.ReplaceAll(out.String(), file, "F")
	for _, want := range []string{"OK: F: 0 tuples named; 1 pattern entry, expanded at start (--config.check.upstream resolves it here)\n", "\nPatterns expand at start from the data API's discovery and the key's plan; --config.check.upstream shows what each selects and costs.\n  5\tdata.metrics[0]\t/v1/btc/**\n"} {
		if !strings.Contains(offline, want) {
			t.Errorf("offline output lacks %q:\n%s", want, offline)
		}
	}
	out.Reset()
	if code := run([]string{"--config.check.upstream", "--config.file=" + file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := strings.ReplaceAll(out.String(), file, "F")
	// The first line says what the file selects once expanded. (It said
	// "OK: F: 0 tuples" for a pattern of 3.)
	if first, _, _ := strings.Cut(got, "\n"); first != "OK: F: 3 tuples" {
		t.Errorf("first line %q, want what the pattern selects", first)
	}
	want := `
Patterns, from the data API's discovery and the key's plan (calls a day before any cut by daily_budget):

data.metrics[0] (line 5) /v1/btc/**: 2 paths, 3 series
  CATEGORY          PATHS  SERIES  CALLS/DAY
  exchange-flows    1      2       26
  market-indicator  1      1       1.1
  left out: 1 path not in your plan (PROFESSIONAL)
`
	if !strings.Contains(got, want) {
		t.Errorf("output lacks\n%s\nin\n%s", want, got)
	}
	if calls.Load() != 1 {
		t.Errorf("the plan was read %d times, want once", calls.Load())
	}

	// A pattern that selects nothing (a typo, a category the plan does
	// not have) fails the check, naming it. (It printed OK and exited 0
	// while the pattern silently selected nothing.)
	writeFile(t, file, `data:
  url: `+url+`
  token_env: ONCHAIN_TEST_PLAN
  metrics:
    - path: /v1/btc/no-such-category/*
      window: all
`)
	out.Reset()
	errOut.Reset()
	code := run([]string{"--config.check.upstream", "--config.file=" + file}, &out, &errOut)
	got = strings.ReplaceAll(out.String(), file, "F")
	if first, _, _ := strings.Cut(got, "\n"); code != 1 || first != "FAILED: F: F:5: /v1/btc/no-such-category/* selects nothing the data API's discovery lists and the key's plan allows" {
		t.Errorf("exit %d, first line %q: want the pattern that selects nothing", code, first)
	}
}

// A file whose patterns cost more than daily_budget leaves them is
// refused, unless the entry allows coarsening. Twenty paths at day and
// hour, without a plan endpoint: discovery alone decides.
func TestConfigCheckPatternOverBudget(t *testing.T) {
	var items []string
	for i := range 20 {
		items = append(items, fmt.Sprintf(`{"path": "/v1/btc/category/m%d", "parameters": {"window": ["day", "hour"]}, "required_parameters": []}`, i))
	}
	discovery := `{"status": {"code": 200, "message": "success"}, "result": {"data": [` + strings.Join(items, ",") + `]}}`
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/discovery/endpoints" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(discovery))
	}))
	t.Cleanup(s.Close)
	t.Setenv("ONCHAIN_TEST_PLAN", "plan-tok-5e1")
	for _, coarsen := range []bool{false, true} {
		file := filepath.Join(t.TempDir(), "budget.yml")
		yml := "data:\n  url: " + s.URL + "\n  token_env: ONCHAIN_TEST_PLAN\n  daily_budget: 200\n  metrics:\n    - path: /v1/btc/**\n      window: all\n"
		if coarsen {
			yml += "      coarsen: true\n"
		}
		writeFile(t, file, yml)
		var out, errOut bytes.Buffer
		code := run([]string{"--config.check.upstream", "--config.file=" + file}, &out, &errOut)
		want := file + ":6: data.metrics[0].path: the 40 series of /v1/btc/** cost 525 calls a day, more than daily_budget (200) leaves them after the entries named one by one: " +
			"set coarsen: true to poll them less often than their rows, narrow the pattern (exclude:, window: coarsest), or raise daily_budget\n"
		switch {
		case !coarsen && (code != 1 || !strings.HasSuffix(errOut.String(), want)):
			t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut.String(), want)
		case coarsen && (code != 0 || strings.Contains(errOut.String(), "coarsen")):
			t.Errorf("with coarsen: true: exit %d, stderr %q", code, errOut.String())
		}
		if coarsen && !strings.Contains(out.String(), "data.metrics[0] (line 6) /v1/btc/**: 20 paths, 40 series") {
			t.Errorf("the pattern's summary is missing:\n%s", out.String())
		}
	}
}

// Offline, --config.check judges the file by the lists and plan the last
// run kept in --storage.path, with no call: the tuples the plan refuses,
// what a pattern selects.
func TestConfigCheckOfflineFromTheState(t *testing.T) {
	t.Setenv("ONCHAIN_TEST_PLAN", "plan-tok-5e1")
	dir := t.TempDir()
	file := filepath.Join(dir, "offline.yml")
	writeFile(t, file, strings.Replace(planConfig, "%s", "http://127.0.0.1:1", 1)+"    - path: /v1/btc/market-indicator/*\n")
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	storage := filepath.Join(dir, "state")
	var rows []map[string]any
	var env struct {
		Result struct {
			Data []map[string]any `json:"data"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(planDiscovery), &env); err != nil {
		t.Fatal(err)
	}
	rows = env.Result.Data
	p, err := plan.Parse([]byte(planDialects["current"]))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	lists, err := json.Marshal(map[string]*expand.Answer{
		"/v1/discovery/endpoints": {Rows: rows, At: at},
		plan.Path:                 expand.PlanAnswer(plan.Outcome{Kind: plan.Read, Plan: p, Status: 200}, at),
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := state.Open(storage, map[string]int{config.APIData: 100}, log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	f := state.NewFile(config.APIData, upstream.Account(cfg.APIs[config.APIData]))
	f.Lists = lists
	s.Write(config.APIData, f)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	if code := checkConfig(&out, &errOut, cfg, nil, "", false, log.NewNopLogger(), storage); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := strings.ReplaceAll(out.String(), file, "F")
	for _, want := range []string{
		"WARNING: F:6: data.metrics[0].window: your plan (PROFESSIONAL) reads /v1/btc/market-indicator/mvrv at day only, not at hour; the exporter does not call it\n",
		"WARNING: F:7: data.metrics[1].path: your plan (PROFESSIONAL) does not include /v1/btc/market-indicator/nupl; the exporter does not call it\n",
		"Plan: as the last run read it (2026-11-26 12:00 UTC): plan PROFESSIONAL: 3 paths with windows, 1 always allowed, rate limit 1000 per hour\n",
		"data.metrics[4] (line 13) /v1/btc/market-indicator/*: 1 path, 0 series\n", // mvrv at day is named already
		"  left out: 1 path not in your plan (PROFESSIONAL)\n",
		"daily_budget 17280 calls a day",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %q:\n%s", want, got)
		}
	}

	// As the flags give it: --storage.path.
	out.Reset()
	if code := run([]string{"--config.check", "--config.file=" + file, "--storage.path=" + storage}, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "Plan: as the last run read it (2026-11-26 12:00 UTC): plan PROFESSIONAL") {
		t.Errorf("run: exit %d, output:\n%s", code, out.String())
	}

	// A state of another key is not used.
	t.Setenv("ONCHAIN_TEST_PLAN", "another-key")
	cfg, err = config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := checkConfig(&out, &errOut, cfg, nil, "", false, log.NewNopLogger(), storage); code != 0 || strings.Contains(out.String(), "your plan") ||
		!strings.Contains(out.String(), "Plan: not read: "+filepath.Join(storage, "data.json")+" was saved for another key or address than the file's data section\n") {
		t.Errorf("exit %d, output:\n%s", code, out.String())
	}

	// A path neither the kept discovery nor the kept plan lists is a typo,
	// an error, as against the upstream (issue 39).
	t.Setenv("ONCHAIN_TEST_PLAN", "plan-tok-5e1")
	writeFile(t, file, strings.Replace(planConfig, "%s", "http://127.0.0.1:1", 1)+"    - path: /v1/btc/market-indicator/mvrvv\n")
	out.Reset()
	errOut.Reset()
	typo := file + ":13: data.metrics[4].path: discovery lists no endpoint /v1/btc/market-indicator/mvrvv, nor does the key's plan (PROFESSIONAL); did you mean /v1/btc/market-indicator/mvrv?"
	if code := run([]string{"--config.check", "--config.file=" + file, "--storage.path=" + storage}, &out, &errOut); code != 1 ||
		!strings.HasPrefix(out.String(), "FAILED: "+file+": "+typo+"\n") || strings.Contains(out.String(), "include /v1/btc/market-indicator/mvrvv") {
		t.Errorf("a typo, offline: exit %d, output:\n%s", code, out.String())
	}
}

// The check expands the data API's patterns only: another section's
// entries are judged against their lists as before, a typo there a
// warning, not a failure.
func TestConfigCheckPatternsBesideOtherAPIs(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{DataToken: "data-tok"})
	t.Setenv("ONCHAIN_TEST_DATA", "data-tok")
	file := filepath.Join(t.TempDir(), "mixed.yml")
	writeFile(t, file, "data:\n  url: "+up.URL+"\n  token_env: ONCHAIN_TEST_DATA\n  metrics:\n    - path: /v1/btc/exchange-flows/*\n"+
		"consensus:\n  url: "+up.URL+"/consensus\n  metrics:\n    - path: /consensus\n      asset: [bitcoin, Etherium]\n")
	var out, errOut bytes.Buffer
	code := run([]string{"--config.check.upstream", "--config.file=" + file}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), `consensus.metrics[0].asset: /assets lists no asset "Etherium"`) ||
		!strings.Contains(out.String(), "data.metrics[0] (line 5) /v1/btc/exchange-flows/*: ") {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s", code, out.String(), errOut.String())
	}
}

// An entry with all is judged against the plan as it resolves: every
// value discovery lists.
func TestConfigCheckAllAgainstThePlan(t *testing.T) {
	url, _ := planUpstream(t, http.StatusOK, planDialects["current"])
	t.Setenv("ONCHAIN_TEST_PLAN", "plan-tok-5e1")
	file := filepath.Join(t.TempDir(), "all.yml")
	writeFile(t, file, "data:\n  url: "+url+"\n  token_env: ONCHAIN_TEST_PLAN\n  metrics:\n    - path: /v1/{asset}/market-indicator/mvrv\n      asset: all\n      window: hour\n")
	var out, errOut bytes.Buffer
	code := run([]string{"--config.check.upstream", "--config.file=" + file}, &out, &errOut)
	want := "WARNING: " + file + ":7: data.metrics[0].window: your plan (PROFESSIONAL) reads /v1/btc/market-indicator/mvrv at day only, not at hour; the exporter does not call it\n"
	if code != 0 || !strings.Contains(out.String(), want) {
		t.Errorf("exit %d, stdout:\n%s\nwant %q; stderr: %s", code, out.String(), want, errOut.String())
	}
}
