package expand_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/internal/testtool"
)

// The tests of expansion run it against the fake upstream, and serve what
// it put in force through a collector.Exporter, as main does.

// supplyConfig needs no list.
const supplyConfig = `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/network-data/supply
      window: [day, block]
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [binance, bybit]
`

// env is a running fake upstream and an exporter configured against it.
type env struct {
	t     *testing.T
	clock *fakeapi.SimClock
	fake  *fakeapi.Server
	srv   *httptest.Server
	exp   *collector.Exporter
	reg   *prometheus.Registry
}

// newEnv starts the fake upstream and an exporter on the config in yml,
// where {{URL}} stands for the fake's address and token_env T holds the
// fake's credential.
func newEnv(t *testing.T, yml string, fo fakeapi.Options) *env {
	t.Helper()
	c := newClock()
	if fo.Now == nil {
		fo.Now = c.Now
	}
	if fo.DataToken == "" {
		fo.DataToken = testToken
	}
	fake := fakeapi.New(fo)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	e := &env{t: t, clock: c, fake: fake, srv: srv, reg: prometheus.NewRegistry()}
	exp, err := collector.New(e.parse(yml), log.NewNopLogger(), e.reg, collector.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	e.exp = exp
	return e
}

// parse loads yml against the env's fake, unexpanded.
func (e *env) parse(yml string) *config.Config {
	e.t.Helper()
	cfg, err := config.Parse("test.yml", []byte(strings.ReplaceAll(yml, "{{URL}}", e.srv.URL)), func(string) string { return testToken })
	if err != nil {
		e.t.Fatal(err)
	}
	return cfg
}

// scrape serves one /metrics request, once the engines have done what is
// due at the clock's time (a reload's new tuples included), and returns
// the body.
func (e *env) scrape(timeout string) string {
	e.t.Helper()
	e.exp.Settle()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if timeout != "" {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
	}
	rec := httptest.NewRecorder()
	e.exp.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("scrape: HTTP %d: %s", rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// The exposition helpers and the fake's clock and credential are shared
// with the other packages' tests (internal/testtool).
var (
	newClock    = testtool.Clock
	lines       = testtool.Lines
	valueOf     = testtool.ValueOf
	seriesValue = testtool.SeriesValue
)

const testToken = testtool.DataToken
