package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// The mixin (mixin/) generates every rule and dashboard the repository
// ships; these tests regenerate them with go-jsonnet and compare byte for
// byte, check the mixin's formatting with jsonnetfmt, lint the alerts by
// mixtool's rules and render the multi-cluster variant.

const jsonnetInstall = "go install github.com/google/go-jsonnet/cmd/jsonnet@v0.22.0 github.com/google/go-jsonnet/cmd/jsonnetfmt@v0.22.0"

// generatedFiles are the files mixin/generate.jsonnet writes.
var generatedFiles = []string{
	"examples/alerts.yml",
	"charts/onchain-exporter/files/alerts.yml",
	"examples/kubernetes/prometheusrule.yaml",
	"dashboards/onchain-overview.json",
	"dashboards/onchain-stablecoins.json",
	"dashboards/onchain-equities-consensus.json",
	"dashboards/onchain-exporter-health.json",
	"dashboards/onchain-signals.json",
	"examples/signals.yml",
	"examples/signals_test.yml",
	"examples/late.yml",
	"docs/signals.md",
}

func runJsonnet(t *testing.T, args ...string) []byte {
	t.Helper()
	jsonnet := testtool.Require(t, jsonnetInstall, "jsonnet")
	cmd := exec.Command(jsonnet, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jsonnet %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func TestMixinGeneratesTheShippedFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range generatedFiles {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	written := strings.Fields(string(runJsonnet(t, "-J", "mixin", "-S", "-m", dir, "mixin/generate.jsonnet")))
	if len(written) != len(generatedFiles) {
		t.Errorf("generate.jsonnet wrote %d files, want %d: %v", len(written), len(generatedFiles), written)
	}
	for _, f := range generatedFiles {
		want, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("generate.jsonnet did not write %s: %v", f, err)
			continue
		}
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the mixin generates; run: jsonnet -J mixin -S -m . mixin/generate.jsonnet", f)
		}
	}
}

func TestMixinIsFormatted(t *testing.T) {
	jsonnetfmt := testtool.Require(t, jsonnetInstall, "jsonnetfmt")
	var files []string
	err := filepath.WalkDir("mixin", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".jsonnet") || strings.HasSuffix(p, ".libsonnet")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d jsonnet files under mixin/", len(files))
	}
	out, err := exec.Command(jsonnetfmt, append([]string{"--test"}, files...)...).CombinedOutput()
	if err != nil {
		t.Errorf("jsonnetfmt --test: %v; run jsonnetfmt -i on:\n%s", err, out)
	}
}

// The entry points a consumer uses (monitoring-mixins layout) evaluate.
func TestMixinEntryPoints(t *testing.T) {
	var alerts struct {
		Groups []any `yaml:"groups"`
	}
	if err := yaml.Unmarshal(runJsonnet(t, "-S", "mixin/alerts.jsonnet"), &alerts); err != nil || len(alerts.Groups) < 3 {
		t.Errorf("mixin/alerts.jsonnet: %d groups, %v", len(alerts.Groups), err)
	}
	runJsonnet(t, "-S", "mixin/rules.jsonnet")
	dashboards := string(runJsonnet(t, "mixin/dashboards.jsonnet"))
	for _, name := range []string{"onchain-overview.json", "onchain-exporter-health.json"} {
		if !strings.Contains(dashboards, `"`+name+`"`) {
			t.Errorf("mixin/dashboards.jsonnet lacks %s", name)
		}
	}
}

type lintRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

var (
	staticSummaryRE = regexp.MustCompile(`^[A-Z].+\.$`)
	camelCaseRE     = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]*$`)
)

// lintAlerts returns mixtool's findings on a rules file.
func lintAlerts(b []byte) []string {
	var rf struct {
		Groups []struct {
			Name  string     `yaml:"name"`
			Rules []lintRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rf); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, g := range rf.Groups {
		if len(g.Rules) > 20 {
			out = append(out, fmt.Sprintf("%s: alert-group-rule-count: %d rules, at most 20", g.Name, len(g.Rules)))
		}
		if len(g.Name) > 40 {
			out = append(out, g.Name+": alert-group-name-length: at most 40 characters")
		}
		for _, r := range g.Rules {
			s, d := r.Annotations["summary"], r.Annotations["description"]
			if !staticSummaryRE.MatchString(s) || strings.Contains(s, "{{") {
				out = append(out, r.Alert+": alert-summary-rule: the summary is a static sentence (capital first, period last): "+s)
			}
			if !strings.Contains(d, "{{") {
				out = append(out, r.Alert+": alert-description-rule: the description is templated")
			}
			if !camelCaseRE.MatchString(r.Alert) || len(r.Alert) > 40 {
				out = append(out, r.Alert+": alert-name-rule: CamelCase, at most 40 characters")
			}
			switch r.Labels["severity"] {
			case "critical", "warning", "info":
			default:
				out = append(out, r.Alert+": alert-severity-rule: severity critical, warning or info")
			}
			if r.Annotations["runbook_url"] == "" {
				out = append(out, r.Alert+": no runbook_url")
			}
		}
	}
	return out
}

func TestAlertsLintRules(t *testing.T) {
	// The default rules and the opt-in groups, each as the mixin renders
	// it with its categories enabled.
	for _, file := range []string{"examples/alerts.yml", "examples/signals.yml", "examples/late.yml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range lintAlerts(b) {
			t.Errorf("%s: %s", file, f)
		}
	}
	bad := []byte(`groups:
  - name: a-group-name-longer-than-forty-characters-in-all
    rules:
      - alert: bad_name
        labels: {severity: page}
        annotations: {summary: "{{ $labels.job }} is down", description: "Static."}
` + strings.Repeat("      - alert: Many\n", 20))
	got := strings.Join(lintAlerts(bad), "\n")
	for _, rule := range []string{"alert-summary-rule", "alert-description-rule", "alert-name-rule", "alert-severity-rule", "runbook_url", "alert-group-rule-count", "alert-group-name-length"} {
		if !strings.Contains(got, rule) {
			t.Errorf("the alert lint misses %s in:\n%s", rule, got)
		}
	}
}

// showMultiCluster keeps the cluster label in every aggregation of the
// alerts and gives the dashboards a cluster variable and matcher; the
// rules stay valid for promtool.
func TestMixinMultiCluster(t *testing.T) {
	const override = `(import 'mixin.libsonnet') + { _config+:: { showMultiCluster: true, clusterLabel: 'k8s_cluster', onchainSelector: 'job="x"' } }`
	rules := runJsonnet(t, "-J", "mixin", "-S", "-e", "std.manifestYamlDoc(("+override+").prometheusAlerts, true, false)")
	text := string(rules)
	for _, want := range []string{
		"by (k8s_cluster, namespace, job, api)",
		"min by (k8s_cluster, namespace, instance) (up{job=\"x\"})",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("multi-cluster rules lack %q", want)
		}
	}
	if strings.Contains(text, `job=~"onchain.*"`) {
		t.Error("multi-cluster rules still carry the default selector")
	}
	var rf struct {
		Groups []struct {
			Rules []lintRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(rules, &rf); err != nil {
		t.Fatal(err)
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if regexp.MustCompile(`\bby \((namespace|instance)`).MatchString(r.Expr) {
				t.Errorf("%s: an aggregation without the cluster label: %s", r.Alert, r.Expr)
			}
		}
	}
	// The unit tests of mixin/tests: the same names in two clusters are
	// two incidents. They fail on the rules without the switch.
	if promtool := testtool.Lookup(t, "install the Debian package prometheus", "promtool"); promtool != "" {
		tests, err := os.ReadFile("mixin/tests/multicluster_test.yml")
		if err != nil {
			t.Fatal(err)
		}
		single, err := os.ReadFile("examples/alerts.yml")
		if err != nil {
			t.Fatal(err)
		}
		multi := runJsonnet(t, "-J", "mixin", "-S", "-e",
			"std.manifestYamlDoc(((import 'mixin.libsonnet') + { _config+:: { showMultiCluster: true } }).prometheusAlerts, true, false)")
		for _, tc := range []struct {
			rules []byte
			pass  bool
		}{{multi, true}, {single, false}} {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), tc.rules, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "multicluster_test.yml"), tests, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(promtool, "check", "rules", filepath.Join(dir, "alerts.yml")).CombinedOutput(); err != nil {
				t.Errorf("promtool check rules: %v\n%s", err, out)
			}
			cmd := exec.Command(promtool, "test", "rules", "multicluster_test.yml")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if (err == nil) != tc.pass {
				t.Errorf("promtool test rules mixin/tests/multicluster_test.yml (multi-cluster rules: %v): passed %v\n%s", tc.pass, err == nil, out)
			}
		}
	}

	dash := string(runJsonnet(t, "-J", "mixin", "-e", "("+override+").grafanaDashboards['onchain-overview.json']"))
	for _, want := range []string{
		`k8s_cluster=~\"$cluster\", job=~\"$job\", instance=~\"$instance\"`,
		`"name": "cluster"`,
		`label_values(onchain_data_timestamp_seconds{api=\"data\", job=\"x\"}, k8s_cluster)`,
	} {
		if !strings.Contains(dash, want) {
			t.Errorf("the multi-cluster overview dashboard lacks %s", want)
		}
	}
}

// checkRulesV3 is promtool 3's check rules --lint-fatal, in process: the
// rules file parsed and validated by Prometheus 3.16's own rule loader
// (github.com/prometheus/prometheus v0.316.0), strictly (unknown fields
// refused, legacy metric and label names), and no two rules alike.
func checkRulesV3(b []byte) []error {
	groups, errs := rulefmt.Parse(b, false, model.LegacyValidation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return errs
	}
	n := 0
	seen := map[string]bool{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			n++
			key := fmt.Sprint(r.Alert, r.Record, r.Labels, r.Expr)
			if seen[key] {
				errs = append(errs, fmt.Errorf("group %s: %s%s is there twice", g.Name, r.Alert, r.Record))
			}
			seen[key] = true
		}
	}
	if n == 0 {
		errs = append(errs, fmt.Errorf("no rules"))
	}
	return errs
}

// The shipped rules, and the multi-cluster variant, load in Prometheus 3.
func TestRulesLoadInPrometheus3(t *testing.T) {
	for _, f := range []string{"examples/alerts.yml", "charts/onchain-exporter/files/alerts.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range checkRulesV3(b) {
			t.Errorf("%s: %v", f, err)
		}
	}
	multi := runJsonnet(t, "-J", "mixin", "-S", "-e",
		"std.manifestYamlDoc(((import 'mixin.libsonnet') + { _config+:: { showMultiCluster: true } }).prometheusAlerts, true, false)")
	for _, err := range checkRulesV3(multi) {
		t.Errorf("multi-cluster rules: %v", err)
	}
	for _, bad := range []string{
		"      - alert: A\n        expr: up ==\n",                                         // a bad expression
		"      - alert: A\n        expr: up\n        keep_firing: 1m\n",                   // an unknown field
		"      - alert: A\n        expr: up\n      - alert: A\n        expr: up\n",        // twice
		"      - alert: A\n        expr: up\n        annotations:\n          s: '{{ x'\n", // a bad template
	} {
		if errs := checkRulesV3([]byte("groups:\n  - name: g\n    rules:\n" + bad)); len(errs) == 0 {
			t.Errorf("no error for:\n%s", bad)
		}
	}
}
