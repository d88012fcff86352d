package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"
)

// The subset of Grafana's dashboard model the checks read.
type dashboard struct {
	Title         string     `json:"title"`
	UID           string     `json:"uid"`
	SchemaVersion int        `json:"schemaVersion"`
	Panels        []panel    `json:"panels"`
	Templating    templating `json:"templating"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	GridPos    *gridPos    `json:"gridPos"`
	Datasource *datasource `json:"datasource"`
	Targets    []target    `json:"targets"`
	Panels     []panel     `json:"panels"` // a collapsed row's panels
}

type gridPos struct{ H, W, X, Y int }

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type target struct {
	RefID      string      `json:"refId"`
	Expr       string      `json:"expr"`
	Datasource *datasource `json:"datasource"`
}

type templating struct {
	List []variable `json:"list"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	IncludeAll bool            `json:"includeAll"`
	AllValue   string          `json:"allValue"`
}

// A Prometheus datasource chosen through the ${datasource} variable.
var wantDatasource = datasource{Type: "prometheus", UID: "${datasource}"}

func loadDashboards(t *testing.T) map[string]*dashboard {
	t.Helper()
	files, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("found %d dashboards, want at least 4 (overview, stablecoins, equities and consensus, exporter health)", len(files))
	}
	out := map[string]*dashboard{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: not valid JSON: %v", f, err)
		}
		out[f] = &d
	}
	return out
}

// allPanels flattens rows: collapsed rows carry their panels inside.
func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

func TestDashboardModel(t *testing.T) {
	uids := map[string]string{}
	for f, d := range loadDashboards(t) {
		if d.Title == "" || d.UID == "" || len(d.UID) > 40 {
			t.Errorf("%s: title and uid (at most 40 characters) are required", f)
		}
		if prev, dup := uids[d.UID]; dup {
			t.Errorf("%s: uid %q is also the uid of %s", f, d.UID, prev)
		}
		uids[d.UID] = f
		if d.SchemaVersion != 39 {
			t.Errorf("%s: schemaVersion %d, want 39", f, d.SchemaVersion)
		}
		checkVariables(t, f, d)
		ids := map[int]bool{}
		var boxes []panel
		for _, p := range allPanels(d.Panels) {
			name := fmt.Sprintf("%s: panel %d %q", f, p.ID, p.Title)
			if p.ID == 0 || ids[p.ID] {
				t.Errorf("%s: id missing or not unique", name)
			}
			ids[p.ID] = true
			if p.Type == "" || p.Title == "" || p.GridPos == nil {
				t.Errorf("%s: type, title and gridPos are required", name)
				continue
			}
			g := p.GridPos
			if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
				t.Errorf("%s: gridPos %+v does not fit the 24-column grid", name, *g)
			}
			boxes = append(boxes, p)
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || *p.Datasource != wantDatasource {
				t.Errorf("%s: datasource %+v, want %+v", name, p.Datasource, wantDatasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: no targets", name)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if tg.RefID == "" || refs[tg.RefID] || strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("%s: every target needs a unique refId and an expr", name)
				}
				refs[tg.RefID] = true
				if tg.Datasource != nil && *tg.Datasource != wantDatasource {
					t.Errorf("%s: target %s datasource %+v, want %+v", name, tg.RefID, *tg.Datasource, wantDatasource)
				}
			}
		}
		checkOverlaps(t, f, boxes)
	}
}

// checkVariables requires the datasource variable and, on the dashboards
// of data series, the asset, exchange, token and window variables.
func checkVariables(t *testing.T, file string, d *dashboard) {
	t.Helper()
	have := map[string]variable{}
	for _, v := range d.Templating.List {
		have[v.Name] = v
	}
	ds, ok := have["datasource"]
	if !ok || ds.Type != "datasource" || string(ds.Query) != `"prometheus"` {
		t.Errorf("%s: needs a variable datasource of type datasource with query prometheus", file)
	}
	if file == "onchain-overview.json" {
		for _, n := range []string{"asset", "exchange", "token", "window"} {
			if have[n].Type != "query" {
				t.Errorf("%s: needs a query variable %s", file, n)
			}
		}
	}
}

// checkOverlaps fails when two panels cover the same grid cell.
func checkOverlaps(t *testing.T, file string, ps []panel) {
	t.Helper()
	for i, a := range ps {
		for _, b := range ps[i+1:] {
			ga, gb := a.GridPos, b.GridPos
			if ga.X < gb.X+gb.W && gb.X < ga.X+ga.W && ga.Y < gb.Y+gb.H && gb.Y < ga.Y+ga.H {
				t.Errorf("%s: panels %q and %q overlap", file, a.Title, b.Title)
			}
		}
	}
}

// Grafana variables in queries: the interval ones stand where PromQL wants
// a duration; every other variable stands inside a label matcher's string.
var (
	intervalVarRE = regexp.MustCompile(`\$\{?__(rate_interval|interval|range)(_ms|_s)?\}?`)
	otherVarRE    = regexp.MustCompile(`\$\{[a-zA-Z_][a-zA-Z0-9_]*(:[a-z]+)?\}|\$[a-zA-Z_][a-zA-Z0-9_]*|\[\[[a-zA-Z_][a-zA-Z0-9_]*\]\]`)
	labelValuesRE = regexp.MustCompile(`^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)
)

// expand replaces Grafana variables with values PromQL accepts.
func expand(q string) string {
	q = intervalVarRE.ReplaceAllString(q, "5m")
	return otherVarRE.ReplaceAllString(q, "x")
}

// metricNames parses a query and returns the metric names its selectors
// name; a selector without a name is an error.
func metricNames(q string) ([]string, error) {
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(expand(q))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, matchers := range parser.ExtractSelectors(expr) {
		name := ""
		for _, m := range matchers {
			if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			return nil, fmt.Errorf("a selector without a metric name: %v", matchers)
		}
		names = append(names, name)
	}
	return names, nil
}

// query is one PromQL expression shipped to users and where it is.
type query struct{ where, expr string }

func dashboardQueries(t *testing.T) []query {
	t.Helper()
	var qs []query
	for f, d := range loadDashboards(t) {
		for _, p := range allPanels(d.Panels) {
			for _, tg := range p.Targets {
				qs = append(qs, query{fmt.Sprintf("%s: panel %q target %s", f, p.Title, tg.RefID), tg.Expr})
			}
		}
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			var q string
			if json.Unmarshal(v.Query, &q) != nil {
				var obj struct{ Query string }
				if err := json.Unmarshal(v.Query, &obj); err != nil {
					t.Fatalf("%s: variable %s: query is neither a string nor an object with a query", f, v.Name)
				}
				q = obj.Query
			}
			m := labelValuesRE.FindStringSubmatch(q)
			if m == nil {
				t.Errorf("%s: variable %s: want label_values(<selector>, <label>), got %q", f, v.Name, q)
				continue
			}
			qs = append(qs, query{fmt.Sprintf("%s: variable %s", f, v.Name), m[1]})
		}
	}
	return qs
}

// alertQueries returns the expressions of examples/alerts.yml: they name
// metrics too, and the same check keeps them honest.
func alertQueries(t *testing.T) []query {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	var qs []query
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			qs = append(qs, query{"examples/alerts.yml: " + r.Alert, r.Expr})
		}
	}
	return qs
}

func TestQueriesParseAsPromQL(t *testing.T) {
	for _, q := range append(dashboardQueries(t), alertQueries(t)...) {
		if _, err := metricNames(q.expr); err != nil {
			t.Errorf("%s: %v\n  %s", q.where, err, q.expr)
		}
	}
}

// TestQueriesNameExposedMetrics checks every metric a dashboard or an alert
// rule names against what the demo exporter really exposes.
func TestQueriesNameExposedMetrics(t *testing.T) {
	exp := exposed(t)
	used := map[string]bool{}
	for _, q := range append(dashboardQueries(t), alertQueries(t)...) {
		names, err := metricNames(q.expr)
		if err != nil {
			continue // reported by TestQueriesParseAsPromQL
		}
		for _, n := range names {
			if prometheusSynthesized[n] {
				continue
			}
			fam := familyOf(n, exp)
			if fam == "" {
				t.Errorf("%s: %s is not exposed by the exporter", q.where, n)
				continue
			}
			used[fam] = true
		}
	}
	var unused []string
	for n := range exp {
		if strings.HasPrefix(n, "onchain_") && !used[n] {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Logf("families no dashboard or alert shows: %s", strings.Join(unused, ", "))
	}
}

func TestTheQueryCheckCatchesUnknownNames(t *testing.T) {
	names, err := metricNames(`sum by (api) (rate(onchain_no_such_metric_total{job=~"$job"}[$__rate_interval])) / on() group_left up`)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "onchain_no_such_metric_total") {
		t.Fatalf("names %v: the unknown metric is not among them", names)
	}
	if familyOf("onchain_no_such_metric_total", exposed(t)) != "" {
		t.Fatal("an unknown metric passes as exposed")
	}
	if got := familyOf("onchain_exporter_upstream_request_duration_seconds_bucket", exposed(t)); got != "onchain_exporter_upstream_request_duration_seconds" {
		t.Fatalf("a histogram's _bucket series maps to %q", got)
	}
}
