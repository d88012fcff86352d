package collector

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/upstream"
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

// TestRateLimitHoldsAcrossReloadsAndExpansion: scrapes that always find
// tuples due, reloads that expand "all" through discovery, and list
// refreshes all share the data API's one client, so the requests that
// reach the upstream never outrun rate_limit. With a client per reload or
// per expansion (as before) each would have a budget of its own. The run is
// a few seconds of real time at 300 requests a minute, with twice as many
// tuples due every second as the limit lets through; the bound checked
// for every window is the limiter's own (its burst plus its rate over the
// window), which for a 60 s window is rate_limit itself.
func TestRateLimitHoldsAcrossReloadsAndExpansion(t *testing.T) {
	const yml = `
data:
  url: "{{URL}}"
  token_env: T
  rate_limit: 300
  concurrency: 16
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: [hour, day]
      exchange: all
      cache_ttl: 1s
`
	fake := fakeapi.New(fakeapi.Options{DataToken: testToken})
	var mu sync.Mutex
	var arrivals []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	parse := func() (*config.Config, error) {
		return config.Parse("test.yml", []byte(strings.ReplaceAll(yml, "{{URL}}", srv.URL)), func(string) string { return testToken })
	}
	reg := prometheus.NewRegistry()
	clients := upstream.NewPool(reg, time.Now, log.NewNopLogger())
	defer clients.Close()
	x := NewExpander(log.NewNopLogger(), Options{Clients: clients})
	load := func() (*config.Config, error) {
		c, err := parse()
		if err != nil {
			return nil, err
		}
		return x.Expand(context.Background(), c)
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tuples) < 10 {
		t.Fatalf("expansion gave %d tuples; the test needs more than the limiter's burst", len(cfg.Tuples))
	}
	exp, err := New(cfg, log.NewNopLogger(), reg, Options{Clients: clients})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // scrapes every 50 ms: every tuple is due every second
		defer wg.Done()
		for ctx.Err() == nil {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "1")
			exp.ServeHTTP(httptest.NewRecorder(), req)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	var reloads atomic.Int64
	go func() { // a reload every 300 ms
		defer wg.Done()
		for ctx.Err() == nil {
			if c, err := load(); err == nil && exp.ApplyConfig(c) == nil {
				reloads.Add(1)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}()
	go func() { // lists asked for afresh every 200 ms
		defer wg.Done()
		x.Maintain(ctx, 200*time.Millisecond, func(derive func() (*config.Config, error)) error {
			c, err := derive()
			if err == nil && c != nil {
				err = exp.ApplyConfig(c)
			}
			if err == nil {
				reloads.Add(1)
			}
			return err
		})
	}()
	wg.Wait()

	lim := exp.apis[0].up.Limiter()
	perSecond, burst := float64(lim.Limit()), lim.Burst()
	mu.Lock()
	defer mu.Unlock()
	discovery := fake.CallsFor("/v1/discovery/endpoints")
	run := arrivals[len(arrivals)-1].Sub(arrivals[0])
	if allowed := float64(burst) + perSecond*run.Seconds(); reloads.Load() < 3 || discovery < 2 || float64(len(arrivals)) < 0.6*allowed {
		t.Fatalf("the run did too little to tell (the limit must bind): %d reloads, %d discovery calls, %d requests in %v where the limit allows %.0f",
			reloads.Load(), discovery, len(arrivals), run, allowed)
	}
	for i := range arrivals {
		for _, span := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second} {
			n := 0
			for j := i; j < len(arrivals) && arrivals[j].Sub(arrivals[i]) < span; j++ {
				n++
			}
			// 1 request of slack for the scheduling of goroutines
			if bound := float64(burst) + perSecond*span.Seconds() + 1; float64(n) > bound {
				t.Fatalf("%d requests within %v (from request %d of %d); the limit allows %.1f", n, span, i+1, len(arrivals), bound)
			}
		}
	}
	t.Logf("%d requests (%d to discovery) over %d reloads; limit %.2f/s, burst %d", len(arrivals), discovery, reloads.Load(), perSecond, burst)
}
