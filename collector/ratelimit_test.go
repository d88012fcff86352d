package collector

import (
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

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
	lim := e.exp.apis[0].up.Limiter()
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
