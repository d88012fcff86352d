package collector

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// TestNotRetryableAnswersAreSentOnce runs 400, 401 and 404 through the
// exporter: one request each, and no further call while the tuple is held
// or the API paused.
func TestNotRetryableAnswersAreSentOnce(t *testing.T) {
	for _, tc := range []struct {
		name, yml, code string
	}{
		{"401", faultConfig, "401"},
		{"404", `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/nosuchcoin/network-data/supply
`, "404"},
		{"400", `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      exchange: no_such_exchange
`, "400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.yml, fakeapi.Options{})
			if tc.code == "401" {
				e.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Unauthorized})
			}
			body := e.scrape("5")
			if got := requests(body, "data", tc.code); got != 1 {
				t.Fatalf("upstream_requests_total{code=%q} = %v, want 1:\n%s", tc.code, got, strings.Join(lines(body, "onchain_exporter_upstream_requests_total"), "\n"))
			}
			for range 5 {
				e.clock.Add(2 * time.Minute)
				e.scrape("5")
			}
			if got := e.fake.Calls("data"); got != 1 {
				t.Errorf("%d calls in 10 minutes after HTTP %s, want the one", got, tc.code)
			}
		})
	}
}

// TestRetryAfterIsAFloorForTheNextCall: after a 429 with Retry-After, the
// API is not called again before that time has passed.
func TestRetryAfterIsAFloorForTheNextCall(t *testing.T) {
	for _, api := range config.APINames {
		t.Run(api, func(t *testing.T) {
			e := newEnv(t, faultConfig, fakeapi.Options{})
			e.scrape("5")
			e.fake.SetFault(api, fakeapi.Fault{Kind: fakeapi.TooManyRequests, RetryAfter: 300})
			e.clock.Add(2 * time.Minute)
			e.scrape("5")
			calls := e.fake.Calls(api)
			e.fake.ClearFaults()
			for range 4 {
				e.clock.Add(time.Minute)
				e.scrape("5")
			}
			if got := e.fake.Calls(api); got != calls {
				t.Errorf("%d calls within Retry-After: 300", got-calls)
			}
			body := e.scrape("5")
			if got := valueOf(body, `onchain_exporter_api_paused{api="`+api+`"`); got != "1" {
				t.Errorf("api_paused = %q while Retry-After runs", got)
			}
			e.clock.Add(2 * time.Minute)
			body = e.scrape("5")
			if got := e.fake.Calls(api); got != calls+1 {
				t.Errorf("%d calls after Retry-After passed, want 1", got-calls)
			}
			if got := valueOf(body, `onchain_exporter_query_success{api="`+api+`"`); got != "1" {
				t.Errorf("query_success = %q after Retry-After passed", got)
			}
		})
	}
}

// TestRetryWaitsOutsideTheScrape: a 503 asking for Retry-After: 4 is
// retried no sooner than that, by the refresh and not by the scrape, which
// answers within its own deadline meanwhile.
func TestRetryWaitsOutsideTheScrape(t *testing.T) {
	e := newEnv(t, `
data:
  url: "{{URL}}"
  token_env: T
  timeout: 20s
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
`, fakeapi.Options{})
	var mu sync.Mutex
	var arrivals []time.Time
	setBase(t, e.exp, config.APIData, func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			arrivals = append(arrivals, time.Now())
			if len(arrivals) == 1 {
				return &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"4"}}, Request: r,
					Body: io.NopCloser(strings.NewReader(`{"status":{"code":503,"message":"service_unavailable"},"result":{}}`))}, nil
			}
			return next.RoundTrip(r)
		})
	})
	start := time.Now()
	e.scrape("1") // a 0.5 s deadline
	// Causal: a scrape that waited for the retry would take its 4 s.
	if took := time.Since(start); took >= 4*time.Second {
		t.Errorf("the scrape waited %v for the retry", took)
	}
	waitIdle(t, e.exp)
	body := e.scrape("1")
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) != 2 {
		t.Fatalf("%d requests, want the 503 and one retry", len(arrivals))
	}
	if gap := arrivals[1].Sub(arrivals[0]); gap < 4*time.Second-50*time.Millisecond {
		t.Errorf("retried %v after a Retry-After: 4", gap)
	}
	if len(lines(body, "onchain_supply{")) != 1 || valueOf(body, `onchain_exporter_query_success{api="data"`) != "1" {
		t.Errorf("the retried refresh did not land:\n%s", strings.Join(lines(body, "onchain_"), "\n"))
	}
}
