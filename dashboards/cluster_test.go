package dashboards

import (
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// sharedExporterFamilies are the exporter's families that every member of
// a cluster serves with the same values: those of a tuple and those of
// the configuration or the cluster's budget. The others (calls, errors,
// pauses, the cache, the process) are each member's own.
var sharedExporterFamilies = map[string]bool{
	"onchain_exporter_query_success":                  true,
	"onchain_exporter_query_deprecated":               true,
	"onchain_exporter_last_success_timestamp_seconds": true,
	"onchain_exporter_tuples":                         true,
	"onchain_exporter_forecast_calls_per_day":         true,
	"onchain_exporter_daily_calls_used":               true,
	"onchain_exporter_daily_budget_calls":             true,
}

// sharedFamily says whether every member of a cluster serves name with
// the same values: a data family, or one of sharedExporterFamilies.
func sharedFamily(name string) bool {
	if strings.HasPrefix(name, "onchain_exporter_") {
		return sharedExporterFamilies[name]
	}
	return strings.HasPrefix(name, "onchain_")
}

// acrossMembers says what is wrong with how expr reads the families every
// member of a cluster serves: between each such selector and what is
// above it there must be an aggregation that drops instance and takes one
// member's value (max, min, avg...), not a sum or a count, which would
// count the series once per member.
func acrossMembers(expr string) []string {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expand(expr))
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	parser.Inspect(e, func(node parser.Node, path []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok || !sharedFamily(selectorName(vs.LabelMatchers)) {
			return nil
		}
		var agg *parser.AggregateExpr
		for i := len(path) - 1; i >= 0 && agg == nil; i-- {
			agg, _ = path[i].(*parser.AggregateExpr)
		}
		switch {
		case agg == nil:
			problems = append(problems, vs.String()+": one series per member; read it with max without (instance, pod)")
		case agg.Without != contains(agg.Grouping, model.InstanceLabel):
			problems = append(problems, vs.String()+": "+agg.Op.String()+" keeps instance")
		case agg.Op == parser.SUM || agg.Op == parser.COUNT:
			problems = append(problems, vs.String()+": "+agg.Op.String()+" across members counts each series once per member")
		}
		return nil
	})
	return problems
}

func selectorName(ms []*labels.Matcher) string {
	for _, m := range ms {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

func contains(ls []string, l string) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// Every member of a cluster serves every data series and every per-tuple
// family (docs/operations.md, Scraping a cluster): the panels read them
// across members, so that a cluster scraped pod by pod draws each series
// once and no total counts one twice. Variables only list label values.
func TestPanelsReadSharedSeriesAcrossMembers(t *testing.T) {
	for _, q := range dashboardQueries(t) {
		if strings.Contains(q.where, ": variable ") {
			continue
		}
		for _, p := range acrossMembers(q.expr) {
			t.Errorf("%s: %s", q.where, p)
		}
	}
}

// acrossMembers sees a sum across members, a bare shared series and an
// aggregation that keeps instance, and lets per-member families be.
func TestAcrossMembersSeesMistakes(t *testing.T) {
	for _, expr := range []string{
		`sum(last_over_time(onchain_stablecoin_events{job=~"$job"}[1d]))`,
		`onchain_supply{job=~"$job"}`,
		`max by (instance, asset) (onchain_supply{job=~"$job"})`,
		`sum(onchain_exporter_tuples{job=~"$job"})`,
		`sum by (api) (max without (pod) (onchain_exporter_forecast_calls_per_day{job=~"$job"}))`,
	} {
		if len(acrossMembers(expr)) == 0 {
			t.Errorf("%s: no problem found", expr)
		}
	}
	for _, expr := range []string{
		`sum(max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job"}[1d])))`,
		`sum by (asset) (max by (asset, exchange) (onchain_exchange_reserve_usd{job=~"$job"}))`,
		`sum by (api) (rate(onchain_exporter_upstream_requests_total{job=~"$job"}[$__rate_interval]))`,
		`sum(1 - min without (instance, pod) (onchain_exporter_query_success{job=~"$job"}))`,
	} {
		if p := acrossMembers(expr); len(p) > 0 {
			t.Errorf("%s: %v", expr, p)
		}
	}
}
