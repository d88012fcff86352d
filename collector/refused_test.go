package collector

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// refusedPath is an endpoint the key's plan does not include in
// TestPlanRefusalHoldsItsEndpointOnly.
const refusedPath = "/v1/erc20/exchange-flows/reserve"

// refusing answers 403, as the data API does for a resource the key may
// not read, to every request for refusedPath, and counts them.
func refusing(n *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != refusedPath {
				next.ServeHTTP(w, r)
				return
			}
			n.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"status":{"code":403,"message":"forbidden"}}`))
		})
	}
}

// An endpoint outside the key's plan beside live series: the 403 holds
// that endpoint and window (one call for its two series, not one each),
// its series show plan_refused (api_errors_total the upstream's word,
// forbidden), nothing of the API is paused, and the
// live min series go on being refreshed every minute. A reload asks the
// refused endpoint again, once.
func TestPlanRefusalHoldsItsEndpointOnly(t *testing.T) {
	yml := `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: min
      exchange: [binance, bybit, okx, deribit]
    - path: ` + refusedPath + `
      window: hour
      token: usdt
      exchange: [binance, okx]
`
	var refused atomic.Int64
	u := testtool.StartFake(t, fakeapi.Options{}, refusing(&refused))
	e := envOn(t, u.Clock, u.Srv, yml)
	e.fake = u.Fake
	logs := e.withLogs(yml)
	oi := func() int64 { return e.fake.CallsFor("/v1/btc/market-data/open-interest") }

	body := e.scrape("10")
	// Both series of the refused endpoint are asked at once at start
	// (concurrency); the first refusal holds them both from then on.
	start := refused.Load()
	if start < 1 || start > 2 {
		t.Errorf("%d calls to the refused endpoint at start, want 1 or 2 for its two series", start)
	}
	if got := lines(body, "onchain_exporter_query_refused"); len(got) != 2 {
		t.Errorf("query_refused:\n%v\nwant both series of the refused endpoint", got)
	}
	if got := seriesValue(body, "onchain_exporter_api_paused", "api", "data"); got != "0" {
		t.Errorf("api_paused = %q: the plan's refusal of one endpoint paused the API", got)
	}
	// The upstream's own word for the refusal (its 403: forbidden).
	if got, want := seriesValue(body, "onchain_exporter_api_errors_total", "api", "data", "code", "forbidden"), strconv.FormatInt(start, 10); got != want {
		t.Errorf("api_errors_total{code=forbidden} = %q, want %s", got, want)
	}
	if got := lines(body, "onchain_open_interest_usd"); len(got) != 4 {
		t.Errorf("open interest served for %d series, want 4", len(got))
	}
	if n := logs.Count("level=warn", "plan refuses", "code=forbidden"); n != 1 {
		t.Errorf("%d warn lines for the refusal, want 1", n)
	}

	// 40 minutes of rows: the live series are refreshed for each, the
	// refused endpoint is not asked again (it was, every 30 minutes,
	// when a 403 paused the whole API).
	before := oi()
	for range 40 {
		e.clock.Add(time.Minute)
		body = e.scrape("10")
	}
	if got := oi() - before; got < 4*38 {
		t.Errorf("%d open-interest calls in 40 min of min rows, want about 160", got)
	}
	if n := refused.Load(); n != start {
		t.Errorf("%d calls to the refused endpoint after 40 min, want still %d", n, start)
	}
	if got := lines(body, "onchain_open_interest_usd"); len(got) != 4 {
		t.Errorf("open interest served for %d series after 40 min, want 4", len(got))
	}
	if n := logs.Count("level=warn"); n != 1 {
		t.Errorf("%d warn lines, want the refusal's alone", n)
	}

	// A reload: the plan may have changed. One call, then held again.
	if err := e.exp.ApplyConfig(e.parse(yml)); err != nil {
		t.Fatal(err)
	}
	e.scrape("10")
	again := refused.Load() - start
	if again < 1 || again > 2 {
		t.Errorf("%d calls to the refused endpoint after a reload, want 1 or 2", again)
	}
	e.clock.Add(time.Hour)
	e.scrape("10")
	if n := refused.Load() - start; n != again {
		t.Errorf("%d calls to the refused endpoint an hour after the reload, want %d", n, again)
	}
	// One at a time, the first refusal holds its sibling before it is
	// asked: one call for the endpoint and window.
	refused.Store(0)
	one := strings.Replace(yml, "token_env: T", "token_env: T\n  concurrency: 1", 1)
	if err := e.exp.ApplyConfig(e.parse(one)); err != nil {
		t.Fatal(err)
	}
	e.scrape("10")
	if n := refused.Load(); n != 1 {
		t.Errorf("%d calls to the refused endpoint with concurrency 1, want 1 for its two series", n)
	}
}
