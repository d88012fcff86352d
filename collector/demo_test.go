package collector

import (
	"context"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// The embedded demo, expanded the way main expands it, serves every
// Indicator and Analyst Consensus family of the catalog, every tuple
// succeeds, and the exposition passes promtool, in every payload dialect.
func TestDemoShowsEveryIndicatorAndConsensusFamily(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect fakeapi.Dialect) {
		d, err := demo.Listen(log.NewNopLogger(), "127.0.0.1:0", fakeapi.Options{Dialect: dialect})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		cfg, err := expand.New(log.NewNopLogger()).Expand(context.Background(), d.Config)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := New(cfg, log.NewNopLogger(), prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		defer exp.Close()
		e := &env{t: t, exp: exp}
		body := e.scrape("30")

		for _, ep := range config.Endpoints {
			if ep.API == config.APIData {
				continue
			}
			for field, f := range ep.Fields {
				if len(lines(body, "onchain_"+f.Name+"{")) == 0 {
					t.Errorf("%s %s: family onchain_%s (field %s) missing from the demo", ep.API, ep.Template, f.Name, field)
				}
			}
		}
		for _, api := range []string{config.APIIndicator, config.APIConsensus} {
			n := 0
			for _, l := range lines(body, "onchain_exporter_query_success{") {
				if strings.Contains(l, `api="`+api+`"`) {
					n++
					if !strings.HasSuffix(l, " 1") {
						t.Errorf("failing demo tuple: %s", l)
					}
				}
			}
			if n != len(cfg.APIs[api].Tuples) || n == 0 {
				t.Errorf("%s: %d query_success series for %d tuples", api, n, len(cfg.APIs[api].Tuples))
			}
		}
		for _, l := range lines(body, `onchain_exporter_api_errors_total{api="consensus"`) {
			if !strings.HasSuffix(l, " 0") { // the known codes are there from the start, at 0
				t.Errorf("consensus errors in the demo: %s", l)
			}
		}
		checkMetrics(t, body)
	})
}
