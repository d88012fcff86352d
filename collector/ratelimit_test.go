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
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// TestRateLimitCountsRetries: under a fault that makes every request a
// retried one, the retries take turns under rate_limit like first tries:
// with rate_limit 10 and 12 tuples (24 attempts wanted), 10 requests
// reach the upstream within the scrape. The retries find no turn and are
// not sent (each call's outcome is the reset it met), and the two tuples
// left wait for a turn: not failures, not counted as errors.
func TestRateLimitCountsRetries(t *testing.T) {
	var sent atomic.Int64
	e := newEnv(t, `
data:
  url: "{{URL}}"
  token_env: T
  rate_limit: 10
  concurrency: 24
  timeout: 10s
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: [day, hour]
      exchange: [binance, bybit, okx, deribit, bitmex, kraken]
`, fakeapi.Options{})
	setBase(t, e.exp, config.APIData, func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			return next.RoundTrip(r)
		})
	})
	e.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.ConnReset})
	body := e.scrape("15")
	if n := sent.Load(); n != 10 {
		t.Errorf("%d requests reached the upstream in one scrape; rate_limit 10 allows 10", n)
	}
	if got := requests(body, "data", "error"); got != 10 {
		t.Errorf("%v requests counted, want 10", got)
	}
	if got := counter(body, `onchain_exporter_api_errors_total{api="data",code="rate_limited"}`); got != 0 {
		t.Errorf("%v calls held back counted as errors", got)
	}
	if got := counter(body, `onchain_exporter_tuples_due{api="data"}`); got != 2 {
		t.Errorf("%v tuples due and waiting for a turn, want the 2 rate_limit left no turn for", got)
	}
	if got := counter(body, `onchain_exporter_tuples_unasked{api="data"}`); got != 2 {
		t.Errorf("%v tuples never asked, want 2", got)
	}
}

// TestRateLimitHoldsAcrossReloadsAndExpansion counts the requests that
// reach the upstream in every sliding 60 s window of real time, over 75 s
// of scrapes that always find tuples due (cache_ttl 1s, a scrape every
// 50 ms), reloads every 300 ms that expand "all" through discovery and
// every other one of which changes the section's timeout (so the client
// is rebuilt), and list refreshes every 200 ms. All of them share the data
// API's one client and its rate_limit of 20: no window may hold more than
// 20 requests. With a client per reload or per expansion, or a budget that
// a rebuilt client starts afresh, each would have a budget of its own.
func TestRateLimitHoldsAcrossReloadsAndExpansion(t *testing.T) {
	if testing.Short() {
		t.Skip("75 s of real time")
	}
	const yml = `
data:
  url: "{{URL}}"
  token_env: T
  rate_limit: 20
  concurrency: 16
  timeout: {{TIMEOUT}}
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: [hour, day]
      exchange: [all, all_exchange, ftx]
      cache_ttl: 1s
`
	const limit = 20
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
	var parses atomic.Int64
	parse := func() (*config.Config, error) {
		timeout := []string{"10s", "11s"}[parses.Add(1)%2]
		text := strings.NewReplacer("{{URL}}", srv.URL, "{{TIMEOUT}}", timeout).Replace(yml)
		return config.Parse("test.yml", []byte(text), func(string) string { return testToken })
	}
	reg := prometheus.NewRegistry()
	clients := upstream.NewPool(reg, time.Now, log.NewNopLogger())
	defer clients.Close()
	x := expand.New(log.NewNopLogger(), expand.Options{Clients: clients})
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
	if len(cfg.Tuples) <= limit {
		t.Fatalf("expansion gave %d tuples; the test needs more than rate_limit", len(cfg.Tuples))
	}
	exp, err := New(cfg, log.NewNopLogger(), reg, Options{Clients: clients})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()

	const run = 75 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), run)
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

	mu.Lock()
	defer mu.Unlock()
	sort.Slice(arrivals, func(i, j int) bool { return arrivals[i].Before(arrivals[j]) })
	discovery := fake.CallsFor("/v1/discovery/endpoints")
	// The limit binds (tuples wait for a turn), and the run reached past
	// the first minute's budget. (A turn taken by a refresh that a reload
	// cancels before it reaches the upstream is spent all the same, so
	// fewer than the limit may arrive in a minute.)
	rec := httptest.NewRecorder()
	exp.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	waiting := counter(rec.Body.String(), `onchain_exporter_tuples_due{api="data"}`)
	if reloads.Load() < 20 || discovery < 1 || waiting < 1 || len(arrivals) < 2 || arrivals[len(arrivals)-1].Sub(arrivals[0]) <= time.Minute {
		t.Fatalf("the run did too little to tell: %d reloads, %d discovery calls, %v tuples waiting for a turn, %d requests in %v",
			reloads.Load(), discovery, waiting, len(arrivals), run)
	}
	for i := range arrivals {
		n := 0
		for j := i; j < len(arrivals) && arrivals[j].Sub(arrivals[i]) <= time.Minute; j++ {
			n++
		}
		if n > limit {
			t.Fatalf("%d requests within 60 s from request %d of %d (at %v); rate_limit is %d",
				n, i+1, len(arrivals), arrivals[i].Sub(arrivals[0]).Round(time.Millisecond), limit)
		}
	}
	t.Logf("%d requests (%d to discovery) over %d reloads", len(arrivals), discovery, reloads.Load())
}
