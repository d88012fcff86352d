package collector

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// keyedConsensus is one keyed tuple: /consensus with days sends the key.
const keyedConsensus = `
consensus:
  url: "{{URL}}/consensus"
  token_env: T
  max_staleness: 1d
  metrics:
    - path: /consensus
      cache_ttl: 5m # the test steps by 5 minutes; without a window a series follows its learned cadence
      asset: bitcoin
      days: 7
`

var keyedSeries = []string{"api", "consensus", "endpoint", "/consensus", "asset", "bitcoin", "days", "7"}

// step advances the clock, scrapes, and returns the body and the number of
// consensus calls the scrape made.
func (e *env) step(d time.Duration) (string, int64) {
	e.t.Helper()
	before := e.fake.Calls("consensus")
	e.clock.Add(d) // the engine calls what is due by then
	body := e.scrape("10")
	return body, e.fake.Calls("consensus") - before
}

// Codes that say "this request will not work as it is": the tuple is not
// called again until its hold is over (30 minutes for the key's plan, an
// hour for a bad request), nothing is retried at once, no other call is
// paused, and the first failure is logged at warn with the details the
// body carries. The key's plan falling short keeps the last good value
// while max_staleness allows; a series the API says does not exist as
// asked (bad parameter, unknown asset or analyst, no data) is absent.
func TestConsensusCodesHoldTheTuple(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		for _, tc := range []struct {
			code   string
			hold   time.Duration
			detail string
			gone   bool
			// counted is the code of api_errors_total, when not code.
			counted string
		}{
			{"API_KEY_REQUIRED", upstream.AuthPause, "X-API-Key", false, ""},
			// The plan's refusal: held until a reload or the plan
			// may have changed, counted by the provider's code.
			{"PLAN_REQUIRED", upstream.PlanHold, "required_plans=premium,enterprise", false, ""},
			{"INVALID_PARAMETER", upstream.HoldNotFound, "param=asset", true, ""},
			{"UNKNOWN_ASSET", upstream.HoldNotFound, "resolve the asset through /assets", true, ""},
			{"ANALYST_NOT_FOUND", upstream.HoldNotFound, "/analysts/top", true, ""},
			{"ANALYST_NOT_ELIGIBLE", upstream.HoldNotFound, "excluded from the stance pipeline", true, ""},
			{"NO_DATA", upstream.HoldNotFound, "No rows", true, ""},
		} {
			if tc.counted == "" {
				tc.counted = tc.code
			}
			t.Run(tc.code, func(t *testing.T) {
				e := newEnv(t, keyedConsensus, fakeapi.Options{Dialect: d})
				logs := e.withLogs(keyedConsensus)
				body, calls := e.step(0)
				good := seriesValue(body, "onchain_consensus_score", "asset", "bitcoin")
				if calls != 1 || good == "" {
					t.Fatalf("warm-up: %d calls, score %q", calls, good)
				}

				e.fake.SetConsensusError(tc.code)
				body, calls = e.step(5*time.Minute + time.Second)
				if calls != 1 {
					t.Errorf("failing refresh made %d calls, want 1 (no retry)", calls)
				}
				if got := seriesValue(body, "onchain_exporter_query_success", keyedSeries...); got != "0" {
					t.Errorf("query_success = %q", got)
				}
				want := good
				if tc.gone {
					want = ""
				}
				if got := seriesValue(body, "onchain_consensus_score", "asset", "bitcoin"); got != want {
					t.Errorf("score %q, want %q (gone: %v)", got, want, tc.gone)
				}
				if got := seriesValue(body, "onchain_exporter_api_errors_total", "api", "consensus", "code", tc.counted); got != "1" {
					t.Errorf("api_errors_total = %q", got)
				}
				if got := seriesValue(body, "onchain_exporter_api_paused", "api", "consensus"); got != "0" {
					t.Errorf("a tuple-level error paused the API: api_paused = %q, want 0", got)
				}
				if n := logs.Count("level=warn", tc.code, tc.detail); n != 1 {
					t.Errorf("%d warn lines with %s and %q, want 1", n, tc.code, tc.detail)
				}

				if _, calls = e.step(tc.hold - time.Minute); calls != 0 {
					t.Errorf("called %d times within the %v hold", calls, tc.hold)
				}
				body, calls = e.step(2 * time.Minute)
				if calls != 1 {
					t.Errorf("%d calls after the hold, want 1", calls)
				}
				if got := seriesValue(body, "onchain_exporter_api_errors_total", "api", "consensus", "code", tc.counted); got != "2" {
					t.Errorf("api_errors_total after the second failure = %q", got)
				}
				if n := logs.Count("level=warn", tc.code); n != 1 {
					t.Errorf("the same error was logged at warn %d times, want once", n)
				}

				e.fake.SetConsensusError("")
				body, calls = e.step(tc.hold + time.Minute)
				if calls != 1 || seriesValue(body, "onchain_exporter_query_success", keyedSeries...) != "1" {
					t.Errorf("after the error cleared: %d calls, query_success %q", calls,
						seriesValue(body, "onchain_exporter_query_success", keyedSeries...))
				}
			})
		}
	})
}

// The same codes as the fake gives them on its own: a series that never
// worked is absent, with query_success 0, and is held for an hour while
// the good tuples refresh every 5 minutes.
func TestConsensusNaturalErrors(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		yml := `
consensus:
  url: "{{URL}}/consensus"
  token_env: T
  metrics:
    - path: /consensus
      cache_ttl: 5m # the test steps by 5 minutes; without a window a series follows its learned cadence
      asset: [bitcoin, dogecoin]
      days: [7, 400]
    - path: /analysts/{handle}
      cache_ttl: 5m # the test steps by 5 minutes; without a window a series follows its learned cadence
      handle: [chain_oracle, nobody_here, newsfeed_bot]
`
		e := newEnv(t, yml, fakeapi.Options{Dialect: d, ConsensusKeys: map[string]string{testToken: "premium"}})
		logs := e.withLogs(yml)
		body, calls := e.step(0)
		if calls != 7 {
			t.Errorf("%d calls, want one per tuple (7)", calls)
		}
		for _, tc := range []struct {
			series []string
			code   string
			detail string
			n      int // tuples failing with the code
		}{
			{[]string{"asset", "bitcoin", "days", "400"}, "INVALID_PARAMETER", "param=days", 1},
			{[]string{"asset", "dogecoin", "days", "7"}, "UNKNOWN_ASSET", "resolve the asset through /assets", 2},
			{[]string{"handle", "nobody_here"}, "ANALYST_NOT_FOUND", "endpoint=/analysts/nobody_here", 1},
			{[]string{"handle", "newsfeed_bot"}, "ANALYST_NOT_ELIGIBLE", "endpoint=/analysts/newsfeed_bot", 1},
		} {
			if got := seriesValue(body, "onchain_exporter_query_success", append([]string{"api", "consensus"}, tc.series...)...); got != "0" {
				t.Errorf("%s: query_success %q", tc.code, got)
			}
			if n := logs.Count("level=warn", tc.code, tc.detail); n != tc.n {
				t.Errorf("%s: %d warn lines naming %q, want %d", tc.code, n, tc.detail, tc.n)
			}
			if got, want := seriesValue(body, "onchain_exporter_api_errors_total", "api", "consensus", "code", tc.code), strconv.Itoa(tc.n); got != want {
				t.Errorf("api_errors_total{code=%s} = %q, want %s", tc.code, got, want)
			}
		}
		if seriesValue(body, "onchain_consensus_score", "asset", "bitcoin", "days", "7") == "" ||
			seriesValue(body, "onchain_analyst_accuracy_ratio", "handle", "chain_oracle") == "" {
			t.Error("a good tuple has no value")
		}
		for _, absent := range []string{`asset="dogecoin"`, `days="400"`, `handle="nobody_here"`, `handle="newsfeed_bot"`} {
			for _, l := range lines(body, "onchain_consensus", "onchain_analyst") {
				if strings.Contains(l, absent) {
					t.Errorf("series of a failing tuple: %s", l)
				}
			}
		}
		if _, calls = e.step(59 * time.Minute); calls != 2 {
			t.Errorf("at 59 min: %d calls, want the 2 good tuples' only", calls)
		}
		if _, calls = e.step(2 * time.Minute); calls != 5 {
			t.Errorf("at 61 min: %d calls, want the 5 held tuples'", calls)
		}
	})
}

// A key whose plan is below premium asking for an analyst: PLAN_REQUIRED
// with the plans that can, held until a reload (or 24 h), counted by the
// provider's stable code (api_errors_total{code="PLAN_REQUIRED"}, which
// was renamed plan_refused), the API never paused.
func TestConsensusPlanRequired(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		yml := `
consensus:
  url: "{{URL}}/consensus"
  token_env: T
  metrics:
    - path: /analysts/{handle}
      cache_ttl: 5m # the test steps by 5 minutes; without a window a series follows its learned cadence
      handle: chain_oracle
`
		e := newEnv(t, yml, fakeapi.Options{Dialect: d, ConsensusKeys: map[string]string{testToken: "pro"}})
		logs := e.withLogs(yml)
		body, calls := e.step(0)
		if calls != 1 || seriesValue(body, "onchain_exporter_api_errors_total", "api", "consensus", "code", "PLAN_REQUIRED") != "1" {
			t.Fatalf("%d calls; errors %q", calls, seriesValue(body, "onchain_exporter_api_errors_total", "api", "consensus"))
		}
		if n := logs.Count("level=warn", "PLAN_REQUIRED", "plan=pro", "required_plans=premium,enterprise"); n != 1 {
			t.Errorf("%d warn lines with the plan and required_plans", n)
		}
		if got := lines(body, "onchain_exporter_query_refused"); len(got) != 1 || !strings.HasSuffix(got[0], " 1") {
			t.Errorf("query_refused:\n%v\nwant the tuple's at 1", got)
		}
		if got := seriesValue(body, "onchain_exporter_api_paused", "api", "consensus"); got != "0" {
			t.Errorf("the plan's refusal paused the API: api_paused = %q", got)
		}
		if _, calls = e.step(6 * time.Hour); calls != 0 {
			t.Errorf("%d calls within the hold", calls)
		}
		// A reload may follow a change of plan: asked again at once. The
		// engine may call before the next scrape: calls are counted from
		// before the reload.
		before := e.fake.Calls("consensus")
		if err := e.exp.ApplyConfig(e.parse(yml)); err != nil {
			t.Fatal(err)
		}
		if e.scrape("10"); e.fake.Calls("consensus")-before != 1 {
			t.Errorf("%d calls after a reload, want 1", e.fake.Calls("consensus")-before)
		}
		if _, calls = e.step(23 * time.Hour); calls != 0 {
			t.Errorf("%d calls within the hold after the reload", calls)
		}
		if _, calls = e.step(2 * time.Hour); calls != 1 {
			t.Errorf("%d calls after the hold", calls)
		}
	})
}

// An invalid key pauses keyed calls only: key-free calls do not send the
// key and go on. A reload tries the key again at once.
func TestConsensusInvalidKeyPausesKeyedCallsOnly(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		yml := `
consensus:
  url: "{{URL}}/consensus"
  token_env: T
  metrics:
    - path: /consensus
      cache_ttl: 5m # the test steps by 5 minutes; without a window a series follows its learned cadence
      asset: bitcoin
      days: 7
    - path: /analyst-views
      cache_ttl: 5m # the test steps by 5 minutes; without a window a series follows its learned cadence
      asset: bitcoin
`
		e := newEnv(t, yml, fakeapi.Options{Dialect: d, ConsensusKeys: map[string]string{"another-key": "premium"}})
		keyed, free := "/consensus/consensus", "/consensus/analyst-views"
		body, _ := e.step(0)
		if e.fake.CallsFor(keyed) != 1 || e.fake.CallsFor(free) != 1 {
			t.Fatalf("calls: keyed %d, key-free %d", e.fake.CallsFor(keyed), e.fake.CallsFor(free))
		}
		if got := seriesValue(body, "onchain_exporter_api_paused", "api", "consensus", "code", "INVALID_API_KEY"); got != "1" {
			t.Errorf("api_paused = %q", got)
		}
		if seriesValue(body, "onchain_analyst_views", "asset", "bitcoin", "stance", "bullish") == "" {
			t.Error("key-free series missing")
		}
		for _, at := range []time.Duration{6 * time.Minute, 12 * time.Minute, 18 * time.Minute, 24 * time.Minute} {
			body, _ = e.step(6 * time.Minute)
			if e.fake.CallsFor(keyed) != 1 {
				t.Errorf("at %v the invalid key was sent again", at)
			}
		}
		if n := e.fake.CallsFor(free); n != 5 {
			t.Errorf("key-free tuple called %d times in 24 min, want 5 (every 5 min)", n)
		}
		if got := seriesValue(body, "onchain_exporter_query_success", "endpoint", "/analyst-views"); got != "1" {
			t.Errorf("key-free query_success = %q", got)
		}
		if _, _ = e.step(7 * time.Minute); e.fake.CallsFor(keyed) != 2 {
			t.Errorf("after the 30 min pause: %d keyed calls, want 2", e.fake.CallsFor(keyed))
		}

		if err := e.exp.ApplyConfig(testtool.Config(t, e.srv.URL, yml)); err != nil {
			t.Fatal(err)
		}
		if _, _ = e.step(time.Second); e.fake.CallsFor(keyed) != 3 {
			t.Errorf("a reload did not try the key again: %d keyed calls", e.fake.CallsFor(keyed))
		}
	})
}
