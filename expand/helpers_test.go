package expand_test

import (
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// The tests of expansion run it against the fake upstream, and serve what
// it put in force through a collector.Exporter, as main does.

const supplyConfig = testtool.SupplyConfig

// env is the fake upstream (testtool.Upstream: Clock, Fake, Srv) and an
// exporter serving what is in force.
type env struct {
	*testtool.Upstream
	t   *testing.T
	exp *collector.Exporter
	reg *prometheus.Registry
}

// newEnv starts the fake upstream and an exporter on the config in yml,
// where {{URL}} stands for the fake's address and token_env T holds the
// fake's credential.
func newEnv(t *testing.T, yml string, fo fakeapi.Options) *env {
	t.Helper()
	e := &env{Upstream: testtool.StartFake(t, fo), t: t}
	e.serve(e.parse(yml))
	return e
}

// serve puts an exporter on cfg in place of the env's, on a new registry
// that holds cs beside it, as main serves an expansion.
func (e *env) serve(cfg *config.Config, cs ...prometheus.Collector) {
	e.t.Helper()
	if e.exp != nil {
		e.exp.Close()
	}
	e.reg = prometheus.NewRegistry()
	e.reg.MustRegister(cs...)
	exp, err := collector.New(cfg, log.NewNopLogger(), e.reg, collector.Options{Clock: e.Clock})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(exp.Close)
	e.exp = exp
}

// parse loads yml against the env's fake, unexpanded.
func (e *env) parse(yml string) *config.Config {
	e.t.Helper()
	return e.Config(e.t, yml)
}

// scrape serves one /metrics request, once the engines have done what is
// due at the clock's time (a reload's new tuples included), and returns
// the body.
func (e *env) scrape(timeout string) string {
	e.t.Helper()
	return testtool.Scrape(e.t, e.exp, timeout)
}

// The exposition helpers and the fake's credential are shared with the
// other packages' tests (testtool).
var (
	lines       = testtool.Lines
	valueOf     = testtool.ValueOf
	seriesValue = testtool.SeriesValue
)

const testToken = testtool.DataToken
