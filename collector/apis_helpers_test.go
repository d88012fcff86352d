package collector

import (
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/internal/testtool"
)

// seriesValue returns the value text of the first series of family whose
// labels include every k="v" pair given, or "" when there is none. Labels
// not named are ignored, so tests do not depend on the file's label union.
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

// withLogs replaces the env's exporter, before its first scrape, by one on
// yml whose log lines are recorded.
func (e *env) withLogs(yml string) *testtool.LogBuffer {
	e.t.Helper()
	cfg, err := config.Parse("test.yml", []byte(strings.ReplaceAll(yml, "{{URL}}", e.srv.URL)), func(string) string { return testToken })
	if err != nil {
		e.t.Fatal(err)
	}
	buf := &testtool.LogBuffer{}
	e.exp.Close()
	e.reg = prometheus.NewRegistry()
	exp, err := New(cfg, log.NewLogfmtLogger(buf), e.reg, Options{Now: e.clock.Now})
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
