package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	sdkdashboard "github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"gopkg.in/yaml.v3"
)

// The rules of grafana/dashboard-linter (and mixtool lint), checked on the
// dashboards the mixin generates; the deliberate exceptions are in mixin/.lint, each with its reason. The
// rate window is checked more strictly than the linter does: increase()
// as well as rate() and irate().

// lintFile is mixin/.lint, dashboard-linter's format: per rule, a
// reason and the dashboard (and panel) it does not apply to.
type lintFile struct {
	Exclusions map[string]struct {
		Reason  string `yaml:"reason"`
		Entries []struct {
			Dashboard string `yaml:"dashboard"`
			Panel     string `yaml:"panel"`
		} `yaml:"entries"`
	} `yaml:"exclusions"`
}

// lintRules are the rules this test knows; an exclusion of another is a
// mistake in .lint.
var lintRules = []string{
	"template-datasource-rule", "template-job-rule", "template-instance-rule",
	"panel-datasource-rule", "panel-title-description-rule", "target-rate-interval-rule",
	"target-instance-rule", "target-job-rule", "dashboard-editable-rule", "dashboard-uid-rule",
	"dashboard-inputs-rule", "alert-summary-rule", "alert-description-rule", "alert-name-rule",
	"alert-severity-rule",
}

func loadLint(t *testing.T) lintFile {
	t.Helper()
	b, err := os.ReadFile("../mixin/.lint")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	var l lintFile
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("mixin/.lint: %v", err)
	}
	for rule, ex := range l.Exclusions {
		if !slices.Contains(lintRules, rule) {
			t.Errorf("mixin/.lint: unknown rule %q", rule)
		}
		if strings.TrimSpace(ex.Reason) == "" || len(ex.Entries) == 0 {
			t.Errorf("mixin/.lint: %s needs a reason and its entries", rule)
		}
	}
	return l
}

// excluded says whether rule is excepted for the panel of the dashboard
// (whose title is dash); an entry without a panel covers the dashboard.
func (l lintFile) excluded(rule, dash, panel string) bool {
	for _, e := range l.Exclusions[rule].Entries {
		if e.Dashboard == dash && (e.Panel == "" || e.Panel == panel) {
			return true
		}
	}
	return false
}

// lintDashboard is what the rules read of a dashboard.
type lintDashboard struct {
	Title    string `json:"title"`
	UID      string `json:"uid"`
	Editable *bool  `json:"editable"`
	Inputs   []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Panels     []lintPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasource     `json:"datasource"`
			IncludeAll bool            `json:"includeAll"`
			Multi      bool            `json:"multi"`
			AllValue   string          `json:"allValue"`
		} `json:"list"`
	} `json:"templating"`
}

type lintPanel struct {
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Datasource  *datasource `json:"datasource"`
	Targets     []target    `json:"targets"`
	Panels      []lintPanel `json:"panels"`
}

func flatten(ps []lintPanel) []lintPanel {
	var out []lintPanel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

// rangeWindowRE finds the range of a rate-like function's argument.
var rangeWindowRE = regexp.MustCompile(`\b(rate|irate|increase)\((?:[^()]|\([^()]*\))*?\[([^\]]+)\]`)

// lintDashboardJSON returns the findings of the rules on one dashboard.
func lintDashboardJSON(l lintFile, file string, b []byte) []string {
	var d lintDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return []string{file + ": " + err.Error()}
	}
	var out []string
	add := func(rule, panel, format string, args ...any) {
		if !l.excluded(rule, d.Title, panel) {
			out = append(out, fmt.Sprintf("%s: %s: ", file, rule)+fmt.Sprintf(format, args...))
		}
	}
	if d.UID == "" || d.Title == "" {
		add("dashboard-uid-rule", "", "a uid and a title are required")
	}
	if d.Editable == nil || *d.Editable {
		add("dashboard-editable-rule", "", "dashboards are shipped not editable")
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		add("dashboard-inputs-rule", "", "__inputs must declare DS_PROMETHEUS, a prometheus datasource, for an import on grafana.com")
	}
	vars := map[string]int{}
	for i, v := range d.Templating.List {
		vars[v.Name] = i
	}
	if i, ok := vars["datasource"]; !ok || d.Templating.List[i].Type != "datasource" || string(d.Templating.List[i].Query) != `"prometheus"` {
		add("template-datasource-rule", "", "a datasource variable of type datasource for prometheus is required")
	}
	for _, name := range []string{"job", "instance"} {
		rule := "template-" + name + "-rule"
		i, ok := vars[name]
		if !ok {
			add(rule, "", "no %s variable", name)
			continue
		}
		v := d.Templating.List[i]
		if v.Type != "query" || !v.IncludeAll || !v.Multi || v.AllValue != ".+" || v.Datasource == nil || *v.Datasource != wantDatasource {
			add(rule, "", "the %s variable must be a multi-value query on ${datasource} with All as .+", name)
		}
		if name == "instance" && vars["instance"] < vars["job"] {
			add(rule, "", "the instance variable comes after the job variable")
		}
	}
	for _, p := range flatten(d.Panels) {
		if p.Type == "row" {
			continue
		}
		if strings.TrimSpace(p.Description) == "" {
			add("panel-title-description-rule", p.Title, "panel %q has no description", p.Title)
		}
		if p.Datasource == nil || *p.Datasource != wantDatasource {
			add("panel-datasource-rule", p.Title, "panel %q does not use ${datasource}", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range rangeWindowRE.FindAllStringSubmatch(tg.Expr, -1) {
				if m[2] != "$__rate_interval" {
					add("target-rate-interval-rule", p.Title, "panel %q: %s() over [%s], want [$__rate_interval]", p.Title, m[1], m[2])
				}
			}
			if !strings.Contains(tg.Expr, `job=~"$job"`) {
				add("target-job-rule", p.Title, "panel %q target %s has no job=~\"$job\"", p.Title, tg.RefID)
			}
			if !strings.Contains(tg.Expr, `instance=~"$instance"`) {
				add("target-instance-rule", p.Title, "panel %q target %s has no instance=~\"$instance\"", p.Title, tg.RefID)
			}
		}
	}
	return out
}

func TestDashboardLintRules(t *testing.T) {
	l := loadLint(t)
	n := 0
	for f := range loadDashboards(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, finding := range lintDashboardJSON(l, f, b) {
			t.Error(finding)
		}
		n++
	}
	if n < 4 {
		t.Errorf("linted %d dashboards", n)
	}
}

// The lint finds what it looks for: a dashboard with each fault.
func TestDashboardLintSeesMistakes(t *testing.T) {
	bad := `{"title": "Bad", "uid": "bad", "editable": true,
	  "templating": {"list": [{"name": "job", "type": "query", "includeAll": true, "multi": true, "allValue": ".*"}]},
	  "panels": [{"type": "timeseries", "title": "P", "datasource": {"type": "prometheus", "uid": "prom"},
	    "targets": [{"refId": "A", "expr": "rate(x{job=~\"$job\"}[5m])"}]}]}`
	got := strings.Join(lintDashboardJSON(lintFile{}, "bad.json", []byte(bad)), "\n")
	for _, rule := range []string{
		"dashboard-editable-rule", "dashboard-inputs-rule", "template-datasource-rule", "template-job-rule",
		"template-instance-rule", "panel-title-description-rule", "panel-datasource-rule",
		"target-rate-interval-rule", "target-instance-rule",
	} {
		if !strings.Contains(got, rule) {
			t.Errorf("no %s finding in:\n%s", rule, got)
		}
	}
	if strings.Contains(got, "target-job-rule") {
		t.Errorf("a target with the job matcher flagged:\n%s", got)
	}
}

// Every dashboard decodes strictly against Grafana's schema as
// grafana-foundation-sdk has it: no unknown field, no type error, no
// required field missing. __inputs is import metadata that Grafana
// strips on import, not part of the model, so it is removed first.
func TestDashboardsDecodeStrictly(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	for f := range loadDashboards(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "__inputs")
		b, err = json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := decodeStrictly(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The decoder refuses what it should.
	if err := decodeStrictly([]byte(`{"title": "x", "panelz": []}`)); err == nil {
		t.Error("an unknown field decoded strictly")
	}
	if err := decodeStrictly([]byte(`{"title": 3}`)); err == nil {
		t.Error("a number for a title decoded strictly")
	}
}

// decodeStrictly decodes a dashboard with the SDK's strict decoder. It
// returns its findings as a cog.BuildErrors, empty (but not nil) when
// there are none.
func decodeStrictly(b []byte) error {
	// The files are Grafana's classic dashboard JSON (schemaVersion 39),
	// which is what import and provisioning take; dashboardv2 is another
	// model (Grafana's v2 API), so the deprecation does not apply here.
	//lint:ignore SA1019 the classic model is the one these files are in
	var d sdkdashboard.Dashboard
	err := d.UnmarshalJSONStrict(b)
	if errs, ok := err.(cog.BuildErrors); ok && len(errs) == 0 {
		return nil
	}
	return err
}
