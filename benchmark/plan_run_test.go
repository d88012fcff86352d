package benchmark

import (
	"context"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// exporter starts the run's exporter on yml: alone, or, with ReadPlan,
// after the expansion that reads the key's plan at start and puts it in
// force on the clients the exporter calls through, as main wires them.
func (o FreshnessOptions) exporter(yml string, clock *simclock.Clock) (*config.Config, *collector.Exporter, error) {
	if !o.ReadPlan {
		return newExporter("freshness.yml", yml, collector.Options{Clock: clock})
	}
	cfg, err := config.Parse("freshness.yml", []byte(yml), func(string) string { return "bench" })
	if err != nil {
		return nil, nil, err
	}
	reg := prometheus.NewRegistry()
	pool := upstream.NewPool(reg, clock.Now, log.NewNopLogger())
	x := expand.New(log.NewNopLogger(), expand.Options{Now: clock.Now, Clients: pool})
	if cfg, err = x.Start(context.Background(), cfg); err != nil {
		return nil, nil, err
	}
	exp, err := collector.New(cfg, log.NewNopLogger(), reg, collector.Options{Clock: clock, Clients: pool})
	if err != nil {
		return nil, nil, err
	}
	x.OnPlanChanged(exp.PlanChanged)
	return cfg, exp, nil
}
