package charts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

const examplesDir = "../examples"

// alertGroups returns the groups of examples/alerts.yml as generic JSON
// values.
func alertGroups(t *testing.T) []any {
	t.Helper()
	b, err := os.ReadFile(examplesDir + "/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []any `json:"groups"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("examples/alerts.yml: %v", err)
	}
	if len(doc.Groups) == 0 {
		t.Fatal("examples/alerts.yml: no groups")
	}
	return doc.Groups
}

// jobMatcher returns the job regexp of OnchainExporterDown: every scrape
// job must match it, or the alert does not cover that job.
func jobMatcher(t *testing.T) *regexp.Regexp {
	t.Helper()
	b, err := json.Marshal(alertGroups(t))
	if err != nil {
		t.Fatal(err)
	}
	var groups []monitoringv1.RuleGroup
	if err := json.Unmarshal(b, &groups); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Alert != "OnchainExporterDown" {
				continue
			}
			m := regexp.MustCompile(`job=~"([^"]+)"`).FindStringSubmatch(r.Expr.String())
			if m == nil {
				t.Fatalf("OnchainExporterDown: no job=~ matcher in %q", r.Expr.String())
			}
			return regexp.MustCompile("^(?:" + m[1] + ")$")
		}
	}
	t.Fatal("examples/alerts.yml: no OnchainExporterDown rule")
	return nil
}

// scrapeJob is what checkServiceMonitor compares of a job of
// examples/prometheus.yml.
type scrapeJob struct {
	Interval, Timeout string
	Params            map[string][]string
	DropRegex         []string
}

func prometheusJobs(t *testing.T) []scrapeJob {
	t.Helper()
	b, err := os.ReadFile(examplesDir + "/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			ScrapeInterval string              `json:"scrape_interval"`
			ScrapeTimeout  string              `json:"scrape_timeout"`
			Params         map[string][]string `json:"params"`
			Relabel        []struct {
				Action string `json:"action"`
				Regex  string `json:"regex"`
			} `json:"metric_relabel_configs"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("examples/prometheus.yml: %v", err)
	}
	var jobs []scrapeJob
	for _, sc := range cfg.ScrapeConfigs {
		j := scrapeJob{Interval: sc.ScrapeInterval, Timeout: sc.ScrapeTimeout, Params: sc.Params}
		for _, r := range sc.Relabel {
			if r.Action == "drop" {
				j.DropRegex = append(j.DropRegex, r.Regex)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// checkServiceMonitor checks that the ServiceMonitor reaches the Service
// and scrapes it with the jobs of examples/prometheus.yml: the same
// collect[] split and dropped families, job names the alerts cover.
// intervals, when given, are the endpoints' interval and scrapeTimeout;
// nil means those of prometheus.yml.
func checkServiceMonitor(t *testing.T, m *manifests, intervals []string) {
	t.Helper()
	sm, svc := m.ServiceMonitor, m.Service
	if sm == nil {
		t.Fatal("no ServiceMonitor rendered")
	}
	if len(sm.Spec.Selector.MatchLabels) == 0 || !subset(sm.Spec.Selector.MatchLabels, svc.Labels) || len(sm.Spec.Selector.MatchExpressions) > 0 {
		t.Errorf("ServiceMonitor selector %+v does not select the Service's labels %v", sm.Spec.Selector, svc.Labels)
	}
	if ns := sm.Spec.NamespaceSelector; !ns.Any && !slices.Contains(ns.MatchNames, svc.Namespace) && !(len(ns.MatchNames) == 0 && sm.Namespace == svc.Namespace) {
		t.Errorf("ServiceMonitor namespaceSelector %+v does not reach the Service's namespace %q", ns, svc.Namespace)
	}
	jobs := prometheusJobs(t)
	if len(sm.Spec.Endpoints) != len(jobs) {
		t.Fatalf("ServiceMonitor: %d endpoints, examples/prometheus.yml has %d jobs", len(sm.Spec.Endpoints), len(jobs))
	}
	jobRE := jobMatcher(t)
	names := map[string]bool{}
	for i, ep := range sm.Spec.Endpoints {
		if ep.Port != svc.Spec.Ports[0].Name {
			t.Errorf("endpoint %d: port %q, the Service's port is %q", i, ep.Port, svc.Spec.Ports[0].Name)
		}
		if ep.Path != "/metrics" {
			t.Errorf("endpoint %d: path %q, want /metrics", i, ep.Path)
		}
		job := svc.Name // the Operator's default job label
		for _, r := range ep.RelabelConfigs {
			if r.TargetLabel == "job" && r.Replacement != nil {
				job = *r.Replacement
			}
		}
		if !jobRE.MatchString(job) {
			t.Errorf("endpoint %d: job %q escapes OnchainExporterDown's matcher %s", i, job, jobRE)
		}
		if names[job] {
			t.Errorf("endpoint %d: job %q is another endpoint's too; two jobs of one pod need two names", i, job)
		}
		names[job] = true

		want := jobs[i]
		if !reflect.DeepEqual(ep.Params, want.Params) {
			t.Errorf("endpoint %d: params %v, examples/prometheus.yml's job %d has %v", i, ep.Params, i, want.Params)
		}
		var drops []string
		for _, r := range ep.MetricRelabelConfigs {
			if r.Action == "drop" {
				drops = append(drops, r.Regex)
			}
		}
		if !slices.Equal(drops, want.DropRegex) {
			t.Errorf("endpoint %d: drops %q, examples/prometheus.yml's job %d drops %q", i, drops, i, want.DropRegex)
		}
		wantInterval, wantTimeout := want.Interval, want.Timeout
		if intervals != nil {
			wantInterval, wantTimeout = intervals[2*i], intervals[2*i+1]
		}
		if string(ep.Interval) != wantInterval || string(ep.ScrapeTimeout) != wantTimeout {
			t.Errorf("endpoint %d: interval %s, timeout %s; want %s, %s", i, ep.Interval, ep.ScrapeTimeout, wantInterval, wantTimeout)
		}
	}
}

// fileSelector is the selector setting of examples/alerts.yml: the matcher
// every series of its rules is selected with (examples/rules_test.go).
const fileSelector = `job=~"onchain.*"`

// chartSelector is the selector the chart puts in its place: the file's,
// narrowed to the release's namespace.
func chartSelector(ns string) string {
	return fileSelector + `, namespace="` + ns + `"`
}

// checkPrometheusRule checks that the PrometheusRule's groups are those of
// examples/alerts.yml, value for value, but for the selector, which is the
// chart's in every selector of every rule; and that promtool accepts them.
func checkPrometheusRule(t *testing.T, m *manifests) {
	t.Helper()
	if m.PrometheusRule == nil {
		t.Fatal("no PrometheusRule rendered")
	}
	var raw struct {
		Spec struct {
			Groups []any `json:"groups"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(m.Raw["PrometheusRule"], &raw); err != nil {
		t.Fatal(err)
	}
	want := alertGroupsWith(t, chartSelector(m.PrometheusRule.Namespace))
	if len(raw.Spec.Groups) != len(want) {
		t.Fatalf("PrometheusRule: %d groups, examples/alerts.yml has %d", len(raw.Spec.Groups), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(raw.Spec.Groups[i], want[i]) {
			got, _ := json.MarshalIndent(raw.Spec.Groups[i], "", "  ")
			exp, _ := json.MarshalIndent(want[i], "", "  ")
			t.Errorf("PrometheusRule group %d differs from examples/alerts.yml with the chart's selector:\n got %s\nwant %s", i, got, exp)
		}
	}
	for _, g := range m.PrometheusRule.Spec.Groups {
		for _, r := range g.Rules {
			for _, p := range selectorProblems(r.Expr.String(), m.PrometheusRule.Namespace) {
				t.Errorf("PrometheusRule %s: %s", r.Alert, p)
			}
		}
	}
	b, err := json.Marshal(map[string]any{"groups": raw.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	promtool := testtool.Require(t, "install the Debian package prometheus", "promtool")
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the PrometheusRule's groups: %v\n%s", err, out)
	}
}

// alertGroupsWith returns the groups of examples/alerts.yml with its
// selector replaced by selector, as the chart's template does.
func alertGroupsWith(t *testing.T, selector string) []any {
	t.Helper()
	b, err := os.ReadFile(examplesDir + "/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []any `json:"groups"`
	}
	if err := yaml.Unmarshal(bytes.ReplaceAll(b, []byte(fileSelector), []byte(selector)), &doc); err != nil {
		t.Fatalf("examples/alerts.yml with the selector %s: %v", selector, err)
	}
	return doc.Groups
}

// selectorProblems says which selectors of expr lack the job matcher of
// the file or the release's namespace.
func selectorProblems(expr, ns string) []string {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, ms := range parser.ExtractSelectors(e) {
		var job, inNamespace bool
		for _, m := range ms {
			job = job || m.String() == fileSelector
			inNamespace = inNamespace || (m.Name == "namespace" && m.Type == labels.MatchEqual && m.Value == ns)
		}
		if !job || !inNamespace {
			problems = append(problems, fmt.Sprintf("selector %v: want %s", ms, chartSelector(ns)))
		}
	}
	return problems
}
