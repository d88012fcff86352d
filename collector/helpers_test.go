package collector

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// env is a running fake upstream and an exporter configured against it.
type env struct {
	t     *testing.T
	clock *simclock.Clock
	fake  *fakeapi.Server
	srv   *httptest.Server
	exp   *Exporter
	reg   *prometheus.Registry
}

// newEnv starts the fake upstream (testtool.StartFake) and an exporter
// on the config in yml, where {{URL}} stands for the fake's address and
// token_env T holds the fake's credential.
func newEnv(t *testing.T, yml string, fo fakeapi.Options) *env {
	t.Helper()
	u := testtool.StartFake(t, fo)
	e := envOn(t, u.Clock, u.Srv, yml)
	e.fake = u.Fake
	return e
}

// envOn runs an exporter on yml, against an upstream of the test's own
// (srv), on the clock c; {{URL}} in yml stands for srv's address.
func envOn(t *testing.T, c *simclock.Clock, srv *httptest.Server, yml string) *env {
	t.Helper()
	e := &env{t: t, clock: c, srv: srv, reg: prometheus.NewRegistry()}
	exp, err := New(e.parse(yml), log.NewNopLogger(), e.reg, Options{Clock: c, IdleAfter: neverIdle})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	e.exp = exp
	return e
}

// parse loads yml against the env's upstream, unexpanded.
func (e *env) parse(yml string) *config.Config {
	e.t.Helper()
	return testtool.Config(e.t, e.srv.URL, yml)
}

// scrape serves one /metrics request, once the engines have done what is
// due at the clock's time, and returns the body.
func (e *env) scrape(timeout string) string {
	e.t.Helper()
	return testtool.Scrape(e.t, e.exp, timeout)
}

// serve serves one /metrics request at once, whatever the engines are
// doing, and returns the body.
func (e *env) serve(timeout string) string {
	e.t.Helper()
	return testtool.Serve(e.t, e.exp, timeout)
}

// neverIdle keeps an engine calling upstream however far a test moves
// the clock between two scrapes, as if Prometheus scraped all along.
const neverIdle = 100 * 365 * 24 * time.Hour

// engines are the exporter's engines in force.
func engines(e *Exporter) []*apiCollector { return *e.served.Load() }

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

// The exposition helpers and the fake's clock and credential are shared
// with the other packages' tests (testtool).
var (
	newClock    = testtool.Clock
	lines       = testtool.Lines
	valueOf     = testtool.ValueOf
	seriesValue = testtool.SeriesValue
)

const testToken = testtool.DataToken
