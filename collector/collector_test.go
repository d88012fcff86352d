package collector

import (
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/series"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

const supplyConfig = testtool.SupplyConfig

// rawRows asks the fake directly, as a reference independent of the
// exporter's decoder, for the rows of one series.
func rawRows(t *testing.T, e *env, pathAndQuery string) []map[string]any {
	t.Helper()
	var env struct {
		Result struct {
			Data []map[string]any `json:"data"`
		} `json:"result"`
	}
	testtool.FetchJSON(t, e.srv.URL+pathAndQuery, &env)
	e.fake.ResetCalls()
	return env.Result.Data
}

func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestExpositionMatchesUpstream(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	day := rawRows(t, e, "/v1/btc/network-data/supply?window=day&limit=5")
	block := rawRows(t, e, "/v1/btc/network-data/supply?window=block&limit=5")
	bybit := rawRows(t, e, "/v1/btc/market-data/open-interest?window=hour&exchange=bybit&limit=5")
	if bybit[0]["open_interest"] != nil || bybit[1]["open_interest"] == nil {
		t.Fatalf("the fake's bybit rows no longer start with a null: %v", bybit[:2])
	}
	body := e.scrape("10")

	ts := func(row map[string]any) string {
		s, _ := row["date"].(string)
		for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02"} {
			if tm, err := time.Parse(layout, s); err == nil {
				return formatValue(float64(tm.Unix()))
			}
		}
		t.Fatalf("row time %q", s)
		return ""
	}
	want := []string{
		`onchain_supply{asset="btc",window="block"} ` + formatValue(block[0]["supply_total"].(float64)),
		`onchain_supply{asset="btc",window="day"} ` + formatValue(day[0]["supply_total"].(float64)),
		`onchain_supply_new{asset="btc",window="block"} ` + formatValue(block[0]["supply_new"].(float64)),
		`onchain_supply_new{asset="btc",window="day"} ` + formatValue(day[0]["supply_new"].(float64)),
	}
	sort.Strings(want)
	if got := lines(body, "onchain_supply"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("supply:\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The newest bybit row is null: its value and time come from the row before.
	if got, want := valueOf(body, `onchain_open_interest_usd{asset="btc",exchange="bybit",window="hour"}`), formatValue(bybit[1]["open_interest"].(float64)); got != want {
		t.Errorf("bybit open interest = %q, want the latest non-null %q", got, want)
	}
	if got, want := valueOf(body, `onchain_data_timestamp_seconds{api="data",asset="btc",endpoint="/v1/btc/market-data/open-interest",exchange="bybit",window="hour"}`), ts(bybit[1]); got != want {
		t.Errorf("bybit timestamp = %q, want %q", got, want)
	}
	if got, want := valueOf(body, `onchain_data_block_height{api="data",asset="btc",endpoint="/v1/btc/network-data/supply",window="block"}`), formatValue(block[0]["blockheight"].(float64)); got != want {
		t.Errorf("block height = %q, want %q", got, want)
	}
	if got := lines(body, "onchain_exporter_query_success"); len(got) != 4 || strings.Count(strings.Join(got, "\n"), "} 1") != 4 {
		t.Errorf("query_success:\n%s", strings.Join(got, "\n"))
	}
	checkMetrics(t, body)
}

// checkMetrics runs promtool check metrics on an exposition when promtool
// is installed; under CI=true a missing promtool fails the test.
func checkMetrics(t *testing.T, body string) {
	t.Helper()
	promtool := testtool.Lookup(t, "install the Debian package prometheus", "promtool")
	if promtool == "" {
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestSecondScrapeWithinScheduleMakesNoCall(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	e.scrape("10")
	first := e.fake.Calls("data")
	if first != 4 {
		t.Fatalf("first scrape made %d calls, want 4 (one per tuple)", first)
	}
	e.clock.Add(15 * time.Second)
	body := e.scrape("10")
	if got := e.fake.Calls("data"); got != first {
		t.Errorf("second scrape within the schedule made %d more calls", got-first)
	}
	if n := len(lines(body, "onchain_supply{")); n != 2 {
		t.Errorf("the second scrape served %d supply values, want 2 from the first scrape's rows", n)
	}
}

func TestConcurrentScrapesShareOneCallPerTuple(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{Latency: 200 * time.Millisecond})
	var wg sync.WaitGroup
	bodies := make([]string, 8)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bodies[i] = e.scrape("10")
		}()
	}
	wg.Wait()
	if got := e.fake.Calls("data"); got != 4 {
		t.Errorf("8 concurrent scrapes made %d upstream calls, want 4", got)
	}
	for i, b := range bodies {
		if len(lines(b, "onchain_supply{")) != 2 {
			t.Errorf("scrape %d lacks supply values:\n%s", i, strings.Join(lines(b, "onchain_"), "\n"))
		}
	}
}

func TestSlowUpstreamDoesNotHoldTheScrape(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	e.scrape("10") // values cached
	calls := e.fake.Calls("data")
	e.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Slow, Delay: 5 * time.Second})
	e.clock.Add(48 * time.Hour) // rows are due: the engine asks the slow upstream
	for deadline := time.Now().Add(time.Minute); e.fake.Calls("data") < calls+4; {
		if time.Now().After(deadline) {
			t.Fatal("the engine did not ask for the rows due")
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	body := e.serve("1.5") // 1.5 s scrape timeout, minus the 0.5 s offset
	// Causal, not a timing target: a scrape that waited for the refresh
	// would take the upstream's 5 s.
	if took := time.Since(start); took >= 5*time.Second {
		t.Errorf("scrape took %v with a 1.5 s scrape timeout: it waited for the slow upstream", took)
	}
	if len(lines(body, "onchain_supply{")) != 2 {
		t.Errorf("last good values not served:\n%s", body)
	}
	// The refreshes under way are the engine's: the scrape served what
	// the last ones, which succeeded, left.
	if got := valueOf(body, `onchain_exporter_scrape_collector_success{collector="data"}`); got != "1" {
		t.Errorf("collector success = %q while the last refreshes succeeded", got)
	}
}

func TestCollectSelectsAPIs(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	for _, tc := range []struct {
		query string
		code  int
		data  bool
	}{
		{"collect[]=data", 200, true},
		{"collect[]=consensus", 200, false},
		{"collect[]=nope", 400, false},
	} {
		req, _ := http.NewRequest(http.MethodGet, "/metrics?"+tc.query, nil)
		rec := newRecorder()
		e.exp.ServeHTTP(rec, req)
		if rec.Code != tc.code {
			t.Errorf("%s: HTTP %d, want %d", tc.query, rec.Code, tc.code)
		}
		if has := strings.Contains(rec.Body.String(), "onchain_supply{"); has != tc.data {
			t.Errorf("%s: data families present = %v", tc.query, has)
		}
	}
	if got := e.fake.Calls("data"); got != 4 {
		t.Errorf("%d calls, want 4", got)
	}
	// A hostile value is refused with a short answer, not echoed whole.
	req, _ := http.NewRequest(http.MethodGet, "/metrics?collect[]="+strings.Repeat("x", 500_000), nil)
	rec := newRecorder()
	e.exp.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || rec.Body.Len() > 300 || !strings.Contains(rec.Body.String(), "unknown collector") {
		t.Errorf("a 500 KB collect[] value: HTTP %d, %d bytes: %.200s", rec.Code, rec.Body.Len(), rec.Body.String())
	}
}

// TestAPIPausedIsThereFromTheStart: every configured API has its
// api_paused series from the first scrape, 0 until a pause, so that
// dashboards and alerts need no "or vector(0)"; a pause replaces it with
// the code's series, and its end brings it back.
func TestAPIPausedIsThereFromTheStart(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	body := e.scrape("10")
	if got := seriesValue(body, "onchain_exporter_api_paused", "api", "data"); got != "0" {
		t.Fatalf("first scrape: api_paused{api=\"data\"} = %q, want 0", got)
	}
	e.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Unauthorized})
	e.clock.Add(time.Hour)
	body = e.scrape("10")
	if got := seriesValue(body, "onchain_exporter_api_paused", "api", "data", "code", "unauthorized"); got != "1" {
		t.Fatalf("after a 401: api_paused{code=\"unauthorized\"} = %q\n%s", got, strings.Join(lines(body, "onchain_exporter_api_paused"), "\n"))
	}
	if n := len(lines(body, "onchain_exporter_api_paused{")); n != 1 {
		t.Errorf("while paused: %d api_paused series, want the code's only", n)
	}
	e.fake.ClearFaults()
	e.clock.Add(31 * time.Minute)
	body = e.scrape("10")
	if got := seriesValue(body, "onchain_exporter_api_paused", "api", "data"); got != "0" {
		t.Errorf("after the pause: api_paused = %q, want 0\n%s", got, strings.Join(lines(body, "onchain_exporter_api_paused"), "\n"))
	}
}

// TestFailedRefreshSaysWhatIsServed: the log line of a failed refresh says
// what is true of the series: no value yet on a first refresh, the last
// good value while it is within max_staleness, nothing once it is older.
func TestFailedRefreshSaysWhatIsServed(t *testing.T) {
	const yml = `
data:
  url: "{{URL}}"
  token_env: T
  max_staleness: 1h
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
`
	e := newEnv(t, yml, fakeapi.Options{})
	logs := e.withLogs(yml)
	e.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Status500})
	e.scrape("10")
	if n := logs.Count("level=warn", "refresh failed; the series has no value yet and is not served"); n != 1 {
		t.Errorf("first refresh failed: %d lines saying there is no value yet:\n%s", n, logs)
	}
	if strings.Contains(logs.String(), "serving the last good value") {
		t.Errorf("a first failed refresh claims a last good value:\n%s", logs)
	}
	e.fake.ClearFaults()
	e.clock.Add(time.Minute)
	e.scrape("10")
	e.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.ConnReset})
	e.clock.Add(25 * time.Hour) // the next row is due
	e.scrape("10")
	if n := logs.Count("level=warn", "refresh failed; serving the last good value until max_staleness"); n != 1 {
		t.Errorf("a failing refresh with a value: %d lines saying it is served:\n%s", n, logs)
	}
	e.clock.Add(2 * time.Hour)
	e.scrape("10")
	if n := logs.Count("level=warn", "the last good value is older than max_staleness and is no longer served"); n != 1 {
		t.Errorf("a value past max_staleness: %d lines saying it is no longer served:\n%s", n, logs)
	}
}

// TestDataHelpSaysTheValueIsCached: every data family's HELP says how
// its value is cached, as the guide to writing exporters asks.
func TestDataHelpSaysTheValueIsCached(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	body := e.scrape("10")
	n := 0
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, "# HELP onchain_") || strings.HasPrefix(l, "# HELP onchain_exporter_") || strings.HasPrefix(l, "# HELP onchain_data_") {
			continue
		}
		n++
		if !strings.HasSuffix(l, series.CachedNote) {
			t.Errorf("HELP without the caching note: %s", l)
		}
	}
	if n == 0 {
		t.Fatalf("no data family in the scrape:\n%s", body)
	}
}
