package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// checkTotals runs the overview dashboard's totals over exchanges in
// Prometheus and compares them with the same totals computed here from the
// series they read: each asset (and token) counted once, by its
// all_exchange aggregate where the file names it, else by the sum of its
// exchanges, never both.
func checkTotals(ctx context.Context, t *testing.T, promURL string) {
	t.Helper()
	for _, tc := range []struct {
		panel, family string
		by            []string // the labels of one total
		of            []string // the labels of one asset counted once
	}{
		{"Exchange reserves (USD)", "onchain_exchange_reserve_usd", []string{"window"}, []string{"asset", "token", "window"}},
		{"Open interest (all exchanges)", "onchain_open_interest_usd", []string{"asset", "window"}, []string{"asset", "window"}},
	} {
		expr := overviewExpr(t, tc.panel)
		eventually(ctx, t, "dashboard panel "+tc.panel, func() error {
			raw, err := query(ctx, promURL, tc.family)
			if err != nil {
				return err
			}
			want, naive := totals(raw, tc.by, tc.of)
			got, err := query(ctx, promURL, expr)
			if err != nil {
				return fmt.Errorf("%s: %v", expr, err)
			}
			if len(want) == 0 || len(got) != len(want) {
				return fmt.Errorf("%d totals, want %d (%v)", len(got), len(want), want)
			}
			counted := false // an aggregate beside its parts, counted once
			for _, s := range got {
				k := key(s.Metric, tc.by)
				v, err := value(s)
				if err != nil {
					return err
				}
				if w, ok := want[k]; !ok || math.Abs(v-w) > 1e-9*math.Abs(w) {
					return fmt.Errorf("total %s = %g, want %g (all series summed: %g)", k, v, w, naive[k])
				}
				counted = counted || naive[k] != want[k]
			}
			if !counted {
				return fmt.Errorf("no total has an aggregate beside its parts; the check would prove nothing")
			}
			return nil
		})
	}
}

// totals computes, per total, the sum over the assets counted once, and
// the sum of every series (what a naive sum would show).
func totals(raw []sample, by, of []string) (want, naive map[string]float64) {
	type part struct {
		aggregate, parts float64
		hasAggregate     bool
	}
	groups := map[string]*part{}
	total := map[string]string{}
	naive = map[string]float64{}
	for _, s := range raw {
		v, err := value(s)
		if err != nil {
			continue
		}
		g := key(s.Metric, of)
		if groups[g] == nil {
			groups[g] = &part{}
		}
		total[g] = key(s.Metric, by)
		naive[total[g]] += v
		switch ex := s.Metric["exchange"]; {
		case ex == "all_exchange":
			groups[g].aggregate, groups[g].hasAggregate = v, true
		case !strings.HasPrefix(ex, "all_"):
			groups[g].parts += v
		}
	}
	want = map[string]float64{}
	for g, p := range groups {
		if p.hasAggregate {
			want[total[g]] += p.aggregate
		} else {
			want[total[g]] += p.parts
		}
	}
	return want, naive
}

func key(m map[string]string, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + m[n]
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func value(s sample) (float64, error) {
	str, _ := s.Value[1].(string)
	return strconv.ParseFloat(str, 64)
}

// grafanaVarRE matches a Grafana variable in a query.
var grafanaVarRE = regexp.MustCompile(`\$\{?[a-zA-Z_][a-zA-Z0-9_]*\}?`)

// overviewExpr returns the query of a panel of the overview dashboard with
// every variable at its All value (.*).
func overviewExpr(t *testing.T, title string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "dashboards", "onchain-overview.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Panels {
		if p.Title == title && len(p.Targets) == 1 {
			return grafanaVarRE.ReplaceAllString(p.Targets[0].Expr, ".*")
		}
	}
	t.Fatalf("onchain-overview.json: no panel %q with one target", title)
	return ""
}
