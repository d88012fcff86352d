package collector

import (
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// TestRateLimitKeepsEveryMinuteUnderTheLimit drives the limiter of
// rate_limit greedily through simulated minutes: no 60 s window sees more
// requests than rate_limit, and a steady client gets close to it.
func TestRateLimitKeepsEveryMinuteUnderTheLimit(t *testing.T) {
	for _, rpm := range []float64{0.5, 1, 30, 60, 90, 120, 600, 1000} {
		u := newUpstream(&config.API{Name: config.APIData, Concurrency: 1, Timeout: time.Second, RateLimit: rpm},
			newSelfMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
		if u.limiter == nil {
			t.Fatalf("rate_limit %v: no limiter", rpm)
		}
		start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		const minutes = 5
		var sent []time.Time
		for ms := 0; ms < minutes*60*1000; ms += 5 {
			now := start.Add(time.Duration(ms) * time.Millisecond)
			for u.limiter.AllowN(now, 1) {
				sent = append(sent, now)
			}
		}
		worst := 0
		for i, j := 0, 0; i < len(sent); i++ {
			for sent[i].Sub(sent[j]) >= time.Minute {
				j++
			}
			worst = max(worst, i-j+1)
		}
		if float64(worst) > max(rpm, 1) {
			t.Errorf("rate_limit %v: %d requests in one 60 s window", rpm, worst)
		}
		if want := rpm * minutes * 0.95; float64(len(sent)) < want {
			t.Errorf("rate_limit %v: only %d requests in %d minutes", rpm, len(sent), minutes)
		}
	}
}

// TestRateLimitCountsRetries: under a fault that makes every request a
// retried one, the exporter still sends no faster than rate_limit allows;
// the retry is a request too.
func TestRateLimitCountsRetries(t *testing.T) {
	var mu sync.Mutex
	var arrivals []time.Time
	e := newEnv(t, `
data:
  url: "{{URL}}"
  token_env: T
  rate_limit: 600
  concurrency: 24
  timeout: 10s
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: [day, hour]
      exchange: [binance, bybit, okx, deribit, bitmex, kraken]
`, fakeapi.Options{})
	setBase(t, e.exp, config.APIData, func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			mu.Unlock()
			return next.RoundTrip(r)
		})
	})
	e.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.ConnReset})
	body := e.scrape("15")
	if got := counter(body, `onchain_exporter_upstream_requests_total{api="data",code="error"}`); got != 24 {
		t.Fatalf("%v requests, want 24 (12 tuples, each retried once)", got)
	}
	lim := e.exp.apis[0].up.limiter
	perSecond, burst := float64(lim.Limit()), lim.Burst()
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(arrivals, func(i, j int) bool { return arrivals[i].Before(arrivals[j]) })
	for i := burst; i < len(arrivals); i++ {
		least := time.Duration(float64(i-burst+1) / perSecond * float64(time.Second))
		if got := arrivals[i].Sub(arrivals[0]); got < least-250*time.Millisecond {
			t.Errorf("request %d sent %v after the first; the limit (%.2f/s, burst %d) allows it no sooner than %v",
				i+1, got.Round(time.Millisecond), perSecond, burst, least)
		}
	}
}
