package examples

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// selector is the matcher every series of alerts.yml is selected with:
// the rules file's selector setting, as a monitoring mixin has one. A user
// (docs/operations.md) and the Helm chart replace this text throughout.
const selector = `job=~"onchain.*"`

// runbookBase is where every alert's runbook_url points: a section of
// docs/operations.md, named by the alert, in the project's repository.
const runbookBase = "https://github.com/onchain-exporter/onchain_exporter/blob/main/docs/operations.md#"

// marketGroup holds the market-signal alerts, apart from the operational
// ones.
const marketGroup = "onchain-market-signals"

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// checkSelector says what is wrong with how expr selects its series: each
// vector selector must carry the matcher of selector, and the selector's
// text must appear in expr exactly once per vector selector, so that
// replacing the text changes the selectors and nothing else.
func checkSelector(expr, selector string) []string {
	p := parser.NewParser(parser.Options{})
	e, err := p.ParseExpr(expr)
	if err != nil {
		return []string{err.Error()}
	}
	want, err := p.ParseMetricSelector("{" + selector + "}")
	if err != nil {
		return []string{"the selector " + selector + ": " + err.Error()}
	}
	var problems []string
	sels := parser.ExtractSelectors(e)
	for _, ms := range sels {
		for _, w := range want {
			if !slices.ContainsFunc(ms, func(m *labels.Matcher) bool { return m.String() == w.String() }) {
				problems = append(problems, "a selector without "+w.String()+": {"+matchersString(ms)+"}")
			}
		}
	}
	if n := strings.Count(expr, selector); n != len(sels) {
		problems = append(problems, "the text "+selector+" appears "+strconv.Itoa(n)+" times for "+strconv.Itoa(len(sels))+" selectors")
	}
	return problems
}

func matchersString(ms []*labels.Matcher) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.String())
	}
	return strings.Join(s, ", ")
}

// headingAnchors are the GitHub anchors of a Markdown file's headings.
func headingAnchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	drop := regexp.MustCompile("[^a-z0-9 _-]")
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		out[strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-")] = true
	}
	return out
}

// The rules follow a monitoring mixin's conventions: one selector, set in
// one place; a runbook_url to the alert's section of docs/operations.md;
// a pending period on every alert; market signals apart from operational
// alerts (severity info, category market, their own group); and an alert
// for the target gone from discovery.
func TestRulesFollowMixinConventions(t *testing.T) {
	var rf ruleFile
	decodeFile(t, "alerts.yml", &rf)
	anchors := headingAnchors(t, "../docs/operations.md")
	alerts := map[string]bool{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = true
			for _, p := range checkSelector(r.Expr, selector) {
				t.Errorf("%s: %s", r.Alert, p)
			}
			anchor := strings.ToLower(r.Alert)
			if got := r.Annotations["runbook_url"]; got != runbookBase+anchor {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, runbookBase+anchor)
			}
			if !anchors[anchor] {
				t.Errorf("%s: docs/operations.md has no section #%s for its runbook_url", r.Alert, anchor)
			}
			if _, ok := r.Annotations["runbook"]; ok {
				t.Errorf("%s: the prose runbook annotation belongs in docs/operations.md", r.Alert)
			}
			if r.For == "" {
				t.Errorf("%s: no for:, one evaluation pages", r.Alert)
			}
			market := g.Name == marketGroup
			if market != (r.Labels["category"] == "market") {
				t.Errorf("%s (group %s): category %q; market signals, and only they, are in group %s with category market", r.Alert, g.Name, r.Labels["category"], marketGroup)
			}
			if market && r.Labels["severity"] != "info" {
				t.Errorf("%s: a market signal with severity %q, want info", r.Alert, r.Labels["severity"])
			}
		}
	}
	if !alerts["OnchainExporterAbsent"] {
		t.Error("no OnchainExporterAbsent: a target gone from discovery has no up series for OnchainExporterDown")
	}
}

// checkSelector sees a selector without the matcher, and the selector's
// text where a replacement would change something else.
func TestCheckSelectorSeesMistakes(t *testing.T) {
	for _, expr := range []string{
		`up == 0`,
		`up{job=~"onchain.*"} / onchain_exporter_tuples`,
		`up{job=~"onchain.*"} == 0 # job=~"onchain.*"`,
	} {
		if len(checkSelector(expr, selector)) == 0 {
			t.Errorf("%s: no problem found", expr)
		}
	}
	if p := checkSelector(`sum by (api) (rate(onchain_exporter_upstream_requests_total{job=~"onchain.*", code!~"2.."}[5m])) / up{job=~"onchain.*"}`, selector); len(p) > 0 {
		t.Errorf("a correct expression: %v", p)
	}
}
