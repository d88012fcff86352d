package expand_test

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// The tests of expansion run it against the fake upstream, and serve what
// it put in force through a collector.Exporter, as main does.

// newClock is the simulated time shared by the fake upstream, the
// expander and the exporter of a test.
func newClock() *fakeapi.SimClock {
	return fakeapi.NewSimClock(time.Date(2026, 11, 20, 12, 34, 56, 0, time.UTC))
}

const testToken = "test-data-token"

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
	exp, err := collector.New(e.parse(yml), log.NewNopLogger(), e.reg, collector.Options{Now: c.Now})
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

// scrape serves one /metrics request and returns the body.
func (e *env) scrape(timeout string) string {
	e.t.Helper()
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

// lines returns the sample lines of families whose name starts with one
// of the prefixes, sorted.
func lines(body string, prefixes ...string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// valueOf returns the value text of the one series line starting with
// prefix, or "" when there is none.
func valueOf(body, prefix string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l[strings.LastIndexByte(l, ' ')+1:]
		}
	}
	return ""
}

// seriesValue returns the value text of the first series of family whose
// labels include every k="v" pair given, or "" when there is none.
func seriesValue(body, family string, pairs ...string) string {
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, family+"{") && !strings.HasPrefix(l, family+" ") {
			continue
		}
		match := true
		for i := 0; i+1 < len(pairs); i += 2 {
			if !strings.Contains(l, pairs[i]+`="`+pairs[i+1]+`"`) {
				match = false
				break
			}
		}
		if match {
			return l[strings.LastIndexByte(l, ' ')+1:]
		}
	}
	return ""
}
