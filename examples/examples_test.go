package examples

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// exporterPort is the exporter's default listen port.
const exporterPort = "9799"

// yamlFiles lists every YAML file of the directory and its subdirectories.
func yamlFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := filepath.Ext(path); !d.IsDir() && (ext == ".yml" || ext == ".yaml") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// documents decodes every YAML document of a file into generic values.
func documents(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

// decodeFile strictly decodes a single-document YAML file into v.
func decodeFile(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func TestEveryYAMLFileParses(t *testing.T) {
	files := yamlFiles(t)
	if len(files) < 6 {
		t.Fatalf("found only %d YAML files: %v", len(files), files)
	}
	for _, f := range files {
		docs := documents(t, f)
		if len(docs) == 0 {
			t.Errorf("%s: no YAML document", f)
		}
		if !strings.HasPrefix(f, "kubernetes"+string(filepath.Separator)) {
			continue
		}
		for i, d := range docs {
			meta, _ := d["metadata"].(map[string]any)
			if d["apiVersion"] == nil || d["kind"] == nil || (d["kind"] != "Kustomization" && (meta == nil || meta["name"] == nil)) {
				t.Errorf("%s: document %d lacks apiVersion, kind or metadata.name", f, i)
			}
		}
	}
}

// prometheusRuleHeader starts kubernetes/prometheusrule.yaml; the groups of
// alerts.yml follow under spec. The mixin generates both
// (mixin/generate.jsonnet; mixin_test.go checks they are up to date).
const prometheusRuleHeader = `# Generated from the mixin (mixin/, docs/metrics.md) by
#   jsonnet -J mixin -S -m . mixin/generate.jsonnet
# Do not edit: change mixin/ and regenerate.
#
# The Prometheus resource's ruleSelector must match this rule's labels
# (with kube-prometheus-stack, add release: <the Helm release name>).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: onchain-exporter
  labels:
    app.kubernetes.io/name: onchain-exporter
spec:
`

// prometheusRule renders alerts.yml as a PrometheusRule: its text from the
// groups key on, indented under spec.
func prometheusRule(t *testing.T, alerts []byte) []byte {
	t.Helper()
	i := bytes.Index(alerts, []byte("\ngroups:"))
	if i < 0 {
		t.Fatal("alerts.yml: no top-level groups key")
	}
	var b bytes.Buffer
	b.WriteString(prometheusRuleHeader)
	for _, line := range strings.SplitAfter(string(alerts[i+1:]), "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString("  ")
		}
		b.WriteString(line)
	}
	return b.Bytes()
}

func TestPrometheusRuleIsAlertsYML(t *testing.T) {
	const file = "kubernetes/prometheusrule.yaml"
	alerts, err := os.ReadFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	want := prometheusRule(t, alerts)

	var rules struct {
		Groups []any `yaml:"groups"`
	}
	decodeFile(t, "alerts.yml", &rules)
	var pr struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Spec       struct {
			Groups []any `yaml:"groups"`
		} `yaml:"spec"`
	}
	decodeFile(t, file, &pr)
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" {
		t.Errorf("%s: got %s %s, want monitoring.coreos.com/v1 PrometheusRule", file, pr.APIVersion, pr.Kind)
	}
	if len(rules.Groups) == 0 || !reflect.DeepEqual(rules.Groups, pr.Spec.Groups) {
		t.Errorf("%s: spec.groups differ from the groups of alerts.yml", file)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s does not carry the groups of the current alerts.yml; run from the repository's root: jsonnet -J mixin -S -m . mixin/generate.jsonnet", file)
	}
}

// jobMatcher returns the job regexp of OnchainExporterDown in alerts.yml.
func jobMatcher(t *testing.T) *regexp.Regexp {
	t.Helper()
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	decodeFile(t, "alerts.yml", &rules)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "OnchainExporterDown" {
				continue
			}
			m := regexp.MustCompile(`job=~"([^"]+)"`).FindStringSubmatch(r.Expr)
			if m == nil {
				t.Fatalf("OnchainExporterDown: no job=~ matcher in %q", r.Expr)
			}
			return regexp.MustCompile("^(?:" + m[1] + ")$")
		}
	}
	t.Fatal("alerts.yml: no OnchainExporterDown rule")
	return nil
}

// checkCollect checks that collect[] names only known collectors and that
// the jobs together scrape every collector.
func checkCollect(t *testing.T, file string, params []map[string][]string) {
	t.Helper()
	covered := map[string]bool{}
	for _, p := range params {
		names := p["collect[]"]
		if len(names) == 0 { // a job without collect[] scrapes everything
			for _, n := range config.APINames {
				covered[n] = true
			}
		}
		for _, n := range names {
			if !slices.Contains(config.APINames, n) {
				t.Errorf("%s: collect[]=%q is not a collector (known: %v)", file, n, config.APINames)
			}
			covered[n] = true
		}
	}
	for _, n := range config.APINames {
		if !covered[n] {
			t.Errorf("%s: no job scrapes the %s collector", file, n)
		}
	}
}

func TestPrometheusConfigScrapesTheExporter(t *testing.T) {
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string              `yaml:"job_name"`
			Params        map[string][]string `yaml:"params"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	decodeFile(t, "prometheus.yml", &cfg)
	if !slices.Contains(cfg.RuleFiles, "alerts.yml") {
		t.Errorf("prometheus.yml: rule_files %v does not load alerts.yml", cfg.RuleFiles)
	}
	jobRE := jobMatcher(t)
	var params []map[string][]string
	for _, sc := range cfg.ScrapeConfigs {
		if !jobRE.MatchString(sc.JobName) {
			t.Errorf("prometheus.yml: job %q escapes OnchainExporterDown's matcher %s", sc.JobName, jobRE)
		}
		port := false
		for _, s := range sc.StaticConfigs {
			for _, target := range s.Targets {
				port = port || strings.HasSuffix(target, ":"+exporterPort)
			}
		}
		if !port {
			t.Errorf("prometheus.yml: job %q has no target on port %s", sc.JobName, exporterPort)
		}
		params = append(params, sc.Params)
	}
	if len(cfg.ScrapeConfigs) == 0 {
		t.Fatal("prometheus.yml: no scrape_configs")
	}
	checkCollect(t, "prometheus.yml", params)
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

func TestPromtool(t *testing.T) {
	t.Parallel() // a minute of promtool, beside the signal pack's
	promtool := testtool.Require(t, "install the Debian package prometheus", "promtool")
	run(t, promtool, "check", "rules", "alerts.yml")
	run(t, promtool, "test", "rules", "alerts_test.yml")
	run(t, promtool, "check", "config", "prometheus.yml")
}

func TestAmtool(t *testing.T) {
	amtool := testtool.Require(t, "install the Debian package prometheus-alertmanager", "amtool")
	run(t, amtool, "check-config", "alertmanager.yml")
}

// TestEveryRuleHasAUnitTest checks that alerts_test.yml holds, for every
// alert of alerts.yml, a case where it fires and one where it does not.
func TestEveryRuleHasAUnitTest(t *testing.T) {
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	decodeFile(t, "alerts.yml", &rules)
	fires, silent := ruleTestCases(t, "alerts_test.yml")
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if !fires[r.Alert] || !silent[r.Alert] {
				t.Errorf("%s: alerts_test.yml needs a case where it fires and one where it does not", r.Alert)
			}
			for _, k := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[k]) == "" {
					t.Errorf("%s: annotation %s is missing", r.Alert, k)
				}
			}
		}
	}
}

// ruleTestCases reads a promtool rule test file: the alerts it has a case
// of firing for, and those it has a case of silence for.
func ruleTestCases(t *testing.T, file string) (fires, silent map[string]bool) {
	t.Helper()
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	decodeFile(t, file, &tests)
	fires, silent = map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	return fires, silent
}
