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
	noHistory := families(config.APIConsensus)
	checked := 0
	for file, d := range loadDashboards(t) {
		if strings.Contains(file, "health") {
			continue
		}
		for _, p := range allPanels(d.Panels) {
			for _, tg := range p.Targets {
				sels, err := selectors(tg.Expr)
				if err != nil {
					t.Fatalf("%s: %q: %v", file, p.Title, err)
				}
				for _, s := range sels {
					if strings.HasPrefix(s.name, "onchain_exporter_") || noHistory[s.name] {
						continue
					}
					checked++
					if s.in == nil {
						t.Errorf("%s: panel %q: %s is an instant selector: backfilled rows a day apart would draw as dots; wrap it in last_over_time(...[1d])", file, p.Title, s.name)
					}
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d selectors checked", checked)
	}
}

// families returns the families of the fields of api's endpoints.
func families(api string) map[string]bool {
	out := map[string]bool{}
	for _, ep := range config.Endpoints {
		if ep.API == api {
			for _, f := range ep.Fields {
				out["onchain_"+f.Name] = true
			}
		}
	}
	return out
}

// selector is a vector selector of a panel's query: the family it names
// and the range it sits in (nil: an instant selector).
type selector struct {
	name string
	in   *parser.MatrixSelector
}

// selectors returns the vector selectors of expr, its dashboard variables
// expanded, in order.
func selectors(expr string) ([]selector, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expand(expr))
	if err != nil {
		return nil, err
	}
	var out []selector
	parser.Inspect(e, func(n parser.Node, path []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		s := selector{}
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
				s.name = m.Value
			}
		}
		if len(path) > 0 {
			s.in, _ = path[len(path)-1].(*parser.MatrixSelector)
		}
		out = append(out, s)
		return nil
	})
	return out, nil
}
