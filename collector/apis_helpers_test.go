package collector

import (
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// withLogs replaces the env's exporter, before its first scrape, by one on
// yml whose log lines are recorded.
func (e *env) withLogs(yml string) *testtool.LogBuffer {
	e.t.Helper()
	cfg := e.parse(yml)
	buf := &testtool.LogBuffer{}
	e.exp.Close()
	e.reg = prometheus.NewRegistry()
	exp, err := New(cfg, log.NewLogfmtLogger(buf), e.reg, Options{Clock: e.clock, IdleAfter: neverIdle})
	if err != nil {
		e.t.Fatal(err)
	}
	e.exp = exp
	e.t.Cleanup(exp.Close)
	return buf
}

// eachDialect runs a test against every dialect of the fake upstream's
// Indicator and Analyst Consensus payloads: a test of a shape the
// specification does not fix must not pass merely because the exporter
// and the fake were written from one guess.
func eachDialect(t *testing.T, test func(t *testing.T, d fakeapi.Dialect)) {
	t.Helper()
	for _, d := range fakeapi.Dialects {
		t.Run("dialect="+d.String(), func(t *testing.T) { test(t, d) })
	}
}
