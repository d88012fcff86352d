package collector

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// mixedConsensus has a keyed tuple and a key-free one on separate paths,
// so that the fake's per-path counters tell the two lanes apart.
const mixedConsensus = `
consensus:
  url: "{{URL}}/consensus"
  token_env: T
  max_staleness: 1d
  metrics:
    - path: /consensus
      cache_ttl: 1h # not due while the test spends the quota around it, minute by minute
      asset: bitcoin
      days: 7
    - path: /analyst-views
      cache_ttl: 5m # the test steps by 5 minutes; without a window a series follows its learned cadence
      asset: bitcoin
`

const keyedPath, freePath = "/consensus/consensus", "/consensus/analyst-views"

// errorCode asks the fake directly and returns the HTTP status and the
// error body's code ("" on success).
func (e *env) errorCode(t *testing.T, pathAndQuery, key string) (int, string, int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+pathAndQuery, nil)
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b struct {
		Code string `json:"code"`
		Used int    `json:"used"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&b)
	return resp.StatusCode, b.Code, b.Used
}

// A free key's daily quota used up pauses keyed calls until 00:00 UTC;
// key-free calls go on, the last good value is served meanwhile, and the
// quota headers become gauges.
func TestConsensusDailyLimitPausesKeyedCallsUntilMidnight(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		e := newEnv(t, mixedConsensus, fakeapi.Options{Dialect: d, ConsensusKeys: map[string]string{testToken: "free"}})
		body, _ := e.step(0)
		good := seriesValue(body, "onchain_consensus_score", "asset", "bitcoin")
		if good == "" || e.fake.CallsFor(keyedPath) != 1 {
			t.Fatalf("warm-up: score %q, %d keyed calls", good, e.fake.CallsFor(keyedPath))
		}
		// Use up the quota around the exporter, minding the plan's per-minute
		// limit; the exporter's own calls count too (it goes on refreshing
		// while the clock moves), so the count is the fake's.
		used := 0
		for i := 0; ; i++ {
			if i > 2000 {
				t.Fatal("the fake never reported DAILY_LIMIT_EXCEEDED")
			}
			status, code, n := e.errorCode(t, "/consensus/consensus?asset=bitcoin&days=7", testToken)
			if status == http.StatusOK {
				continue
			}
			if code == "DAILY_LIMIT_EXCEEDED" {
				used = n // the calls that got through, the exporter's included
				break
			}
			if code != "RATE_LIMIT_EXCEEDED" {
				t.Fatalf("unexpected answer %d %s", status, code)
			}
			e.clock.Add(time.Minute)
		}
		e.fake.ResetCalls()
		midnight := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
		if !e.clock.Now().Before(midnight.Add(-6 * time.Hour)) {
			t.Fatalf("using the quota took the clock to %v", e.clock.Now())
		}

		body, _ = e.step(time.Hour + time.Second) // the keyed tuple is due: its call meets the spent quota
		if e.fake.CallsFor(keyedPath) != 1 {
			t.Fatalf("%d keyed calls, want 1", e.fake.CallsFor(keyedPath))
		}
		for _, c := range []struct{ family, want string }{
			{"onchain_exporter_api_errors_total", "1"},
			{"onchain_exporter_api_paused", "1"},
		} {
			if got := seriesValue(body, c.family, "api", "consensus", "code", "DAILY_LIMIT_EXCEEDED"); got != c.want {
				t.Errorf("%s = %q, want %s", c.family, got, c.want)
			}
		}
		if got, want := seriesValue(body, "onchain_exporter_daily_quota_used", "api", "consensus"), strconv.Itoa(used); got != want {
			t.Errorf("daily_quota_used = %q, want %s (calls that got through)", got, want)
		}
		if got, want := seriesValue(body, "onchain_exporter_daily_quota_limit", "api", "consensus"), strconv.Itoa(used); got != want {
			t.Errorf("daily_quota_limit = %q, want %s", got, want)
		}
		for e.clock.Now().Before(midnight.Add(-time.Hour)) {
			body, _ = e.step(time.Hour)
			if n := e.fake.CallsFor(keyedPath); n != 1 {
				t.Fatalf("at %s a keyed call was made during the pause (%d)", e.clock.Now().Format(time.TimeOnly), n)
			}
			if got := seriesValue(body, "onchain_consensus_score", "asset", "bitcoin"); got != good {
				t.Errorf("at %s the last good score is not served (%q)", e.clock.Now().Format(time.TimeOnly), got)
			}
			if got := seriesValue(body, "onchain_exporter_query_success", "endpoint", "/analyst-views"); got != "1" {
				t.Errorf("at %s key-free query_success = %q", e.clock.Now().Format(time.TimeOnly), got)
			}
		}
		e.step(midnight.Add(-time.Minute).Sub(e.clock.Now()))
		if e.fake.CallsFor(keyedPath) != 1 || e.fake.CallsFor(freePath) < 10 {
			t.Errorf("by 23:59: %d keyed calls (want 1), %d key-free (want one per hourly scrape)",
				e.fake.CallsFor(keyedPath), e.fake.CallsFor(freePath))
		}
		body, _ = e.step(2 * time.Minute)
		if e.fake.CallsFor(keyedPath) != 2 {
			t.Errorf("after 00:00 UTC: %d keyed calls, want 2", e.fake.CallsFor(keyedPath))
		}
		if got := seriesValue(body, "onchain_exporter_query_success", keyedSeries...); got != "1" {
			t.Errorf("after 00:00 UTC query_success = %q", got)
		}
		if got := seriesValue(body, "onchain_exporter_api_paused", "api", "consensus"); got != "0" {
			t.Errorf("still paused: api_paused = %q, want 0", got)
		}
	})
}

// RATE_LIMIT_EXCEEDED: nothing is called before Retry-After has passed,
// although the error back-off alone would have retried after 15 s.
func TestConsensusRateLimitWaitsRetryAfter(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		e := newEnv(t, keyedConsensus, fakeapi.Options{Dialect: d})
		e.fake.SetFault("consensus", fakeapi.Fault{Kind: fakeapi.TooManyRequests, RetryAfter: 90})
		body, calls := e.step(0)
		if calls != 1 || seriesValue(body, "onchain_exporter_api_errors_total", "api", "consensus", "code", "RATE_LIMIT_EXCEEDED") != "1" {
			t.Fatalf("%d calls; errors %q", calls, seriesValue(body, "onchain_exporter_api_errors_total", "api", "consensus"))
		}
		if got := seriesValue(body, "onchain_exporter_query_success", keyedSeries...); got != "0" {
			t.Errorf("query_success = %q", got)
		}
		e.fake.ClearFaults()
		for i := 0; i < 4; i++ {
			if _, calls = e.step(20 * time.Second); calls != 0 {
				t.Fatalf("called %d s after a Retry-After of 90 s", 20*(i+1))
			}
		}
		body, calls = e.step(11 * time.Second)
		if calls != 1 || seriesValue(body, "onchain_exporter_query_success", keyedSeries...) != "1" {
			t.Errorf("after Retry-After: %d calls, query_success %q", calls, seriesValue(body, "onchain_exporter_query_success", keyedSeries...))
		}
	})
}

// SERVICE_UNAVAILABLE is tried again a few seconds later with the same
// request; INTERNAL_ERROR once. Neither pauses the API or holds the tuple.
func TestConsensusServerErrorsRetryOnce(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		for _, tc := range []struct {
			code    string
			status  string
			atLeast time.Duration
		}{
			{"SERVICE_UNAVAILABLE", "503", 2 * time.Second},
			{"INTERNAL_ERROR", "500", time.Second},
		} {
			t.Run(tc.code, func(t *testing.T) {
				e := newEnv(t, keyedConsensus, fakeapi.Options{Dialect: d})
				e.fake.SetConsensusError(tc.code)
				start := time.Now()
				body, calls := e.step(0)
				if took := time.Since(start); took < tc.atLeast {
					t.Errorf("the retry came after %v, want at least %v", took, tc.atLeast)
				}
				if calls != 2 {
					t.Errorf("%d calls, want the request and one retry", calls)
				}
				if got := seriesValue(body, "onchain_exporter_upstream_requests_total", "api", "consensus", "code", tc.status); got != "2" {
					t.Errorf("upstream_requests_total{code=%s} = %q", tc.status, got)
				}
				if got := seriesValue(body, "onchain_exporter_api_errors_total", "api", "consensus", "code", tc.code); got != "1" {
					t.Errorf("api_errors_total = %q", got)
				}
				if got := seriesValue(body, "onchain_exporter_query_success", keyedSeries...); got != "0" {
					t.Errorf("query_success = %q", got)
				}
				e.fake.SetConsensusError("")
				body, calls = e.step(16 * time.Second)
				if calls != 1 || seriesValue(body, "onchain_exporter_query_success", keyedSeries...) != "1" {
					t.Errorf("16 s later: %d calls, query_success %q", calls, seriesValue(body, "onchain_exporter_query_success", keyedSeries...))
				}
			})
		}
	})
}

// RAW_ACCESS_REQUIRED: the refresh asks again at once without source_text
// and keeps asking that way; a key with raw access keeps source_text.
func TestConsensusRawAccessFallsBackToExcerpt(t *testing.T) {
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
      source_text: statement
`
		for _, raw := range []bool{false, true} {
			o := fakeapi.Options{Dialect: d, ConsensusKeys: map[string]string{testToken: "premium"}}
			if raw {
				o.RawAccessKeys = []string{testToken}
			}
			e := newEnv(t, yml, o)
			logs := e.withLogs(yml)
			body, calls := e.step(0)
			wantCalls, wantErrors := int64(1), ""
			if !raw {
				wantCalls, wantErrors = 2, "1"
			}
			if calls != wantCalls {
				t.Errorf("raw=%v: %d calls, want %d", raw, calls, wantCalls)
			}
			if got := seriesValue(body, "onchain_exporter_api_errors_total", "api", "consensus", "code", "RAW_ACCESS_REQUIRED"); got != wantErrors {
				t.Errorf("raw=%v: api_errors_total = %q, want %q", raw, got, wantErrors)
			}
			if seriesValue(body, "onchain_consensus_score", "asset", "bitcoin") == "" || seriesValue(body, "onchain_exporter_query_success", keyedSeries...) != "1" {
				t.Errorf("raw=%v: no value from the excerpt answer", raw)
			}
			if _, calls = e.step(6 * time.Minute); calls != 1 {
				t.Errorf("raw=%v: next refresh made %d calls, want 1", raw, calls)
			}
			if n := logs.Count("level=warn", "raw access"); n != int(wantCalls-1) {
				t.Errorf("raw=%v: %d warn lines about raw access", raw, n)
			}
		}
	})
}

// X-RateLimit-* of the consensus answers become gauges.
func TestConsensusRateLimitGauges(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		yml := `
consensus:
  url: "{{URL}}/consensus"
  metrics:
    - path: /analyst-views
      cache_ttl: 5m # the test steps by 5 minutes; without a window a series follows its learned cadence
      asset: bitcoin
    - path: /calls
      cache_ttl: 5m # the test steps by 5 minutes; without a window a series follows its learned cadence
      asset: [bitcoin, ethereum]
`
		e := newEnv(t, yml, fakeapi.Options{Dialect: d})
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/consensus/assets", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		limit, _ := strconv.Atoi(resp.Header.Get("X-RateLimit-Limit"))
		remaining, _ := strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining"))
		if limit == 0 || remaining != limit-1 {
			t.Fatalf("fake headers: limit %d remaining %d", limit, remaining)
		}
		body, calls := e.step(0)
		if got := seriesValue(body, "onchain_exporter_ratelimit_limit", "api", "consensus"); got != strconv.Itoa(limit) {
			t.Errorf("ratelimit_limit = %q, want %d", got, limit)
		}
		if got, want := seriesValue(body, "onchain_exporter_ratelimit_remaining", "api", "consensus"), strconv.Itoa(remaining-int(calls)); got != want {
			t.Errorf("ratelimit_remaining = %q, want %s", got, want)
		}
		if got := seriesValue(body, "onchain_exporter_daily_quota_limit", "api", "consensus"); got != "" {
			t.Errorf("daily quota gauge without a Free plan key: %q", got)
		}
	})
}
