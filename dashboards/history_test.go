package dashboards

import (
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// TestPanelsDrawBackfilledHistory: a backfilled series has one sample per
// row (docs/history.md), a day apart for day rows, which an instant
// selector sees only within Prometheus' 5-minute lookback: the panel would
// show dots. So every panel selector of a family that has history sits in
// a range (last_over_time(...[1d]), avg_over_time(...[7d])). The Analyst
// Consensus API has no history, and the health dashboard shows the live
// exporter; both are left as they are.
func TestPanelsDrawBackfilledHistory(t *testing.T) {
	noHistory := map[string]bool{}
	for _, ep := range config.Endpoints {
		if ep.API == config.APIConsensus {
			for _, f := range ep.Fields {
				noHistory["onchain_"+f.Name] = true
			}
		}
	}
	checked := 0
	for file, d := range loadDashboards(t) {
		if strings.Contains(file, "health") {
			continue
		}
		for _, p := range allPanels(d.Panels) {
			for _, tg := range p.Targets {
				expr, err := parser.NewParser(parser.Options{}).ParseExpr(expand(tg.Expr))
				if err != nil {
					t.Fatalf("%s: %q: %v", file, p.Title, err)
				}
				parser.Inspect(expr, func(n parser.Node, path []parser.Node) error {
					vs, ok := n.(*parser.VectorSelector)
					if !ok {
						return nil
					}
					name := ""
					for _, m := range vs.LabelMatchers {
						if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
							name = m.Value
						}
					}
					if strings.HasPrefix(name, "onchain_exporter_") || noHistory[name] {
						return nil
					}
					checked++
					if len(path) == 0 {
						t.Errorf("%s: panel %q: %s is an instant selector: backfilled rows a day apart would draw as dots; wrap it in last_over_time(...[1d])", file, p.Title, name)
						return nil
					}
					if _, inRange := path[len(path)-1].(*parser.MatrixSelector); !inRange {
						t.Errorf("%s: panel %q: %s is an instant selector: backfilled rows a day apart would draw as dots; wrap it in last_over_time(...[1d])", file, p.Title, name)
					}
					return nil
				})
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d selectors checked", checked)
	}
}
