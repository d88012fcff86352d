package examples

import (
	"slices"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// signalCategories are the signal pack's categories, a group each
// (onchain-signals-<category>), as mixin/alerts/signal-list.libsonnet has them.
var signalCategories = []string{"valuation", "flows", "derivatives", "stablecoins", "miners"}

// signalsRunbookBase is where the signal pack's and the late-row alerts'
// runbook_url point: their sections of docs/signals.md.
const signalsRunbookBase = "https://github.com/onchain-exporter/onchain_exporter/blob/main/docs/signals.md#"

// The signal pack (signals.yml) and the late-row alerts (late.yml), both
// generated from the mixin and left out of alerts.yml: promtool checks
// them and runs their unit tests (signals_test.yml, about a minute).
func TestSignalRulesPromtool(t *testing.T) {
	t.Parallel() // a minute of promtool, beside alerts_test.yml's
	promtool := testtool.Require(t, "install the Debian package prometheus", "promtool")
	run(t, promtool, "check", "rules", "signals.yml", "late.yml")
	run(t, promtool, "test", "rules", "late_test.yml")
	if testing.Short() {
		t.Skip("-short: signals_test.yml evaluates weeks of rows")
	}
	run(t, promtool, "test", "rules", "signals_test.yml")
}

// The pack's conventions: one selector, category market and severity
// info (none pages), no for: (a signal is evaluated on its row), a
// runbook_url to its section of docs/signals.md, a description that says
// the level is not advice, at least 20 rules; and its tests have, for
// every alert, a case where it fires and one where it does not.
func TestSignalRulesConventions(t *testing.T) {
	var rf ruleFile
	decodeFile(t, "signals.yml", &rf)
	anchors := headingAnchors(t, "../docs/signals.md")
	var alerts []string
	for _, g := range rf.Groups {
		category, ok := strings.CutPrefix(g.Name, "onchain-signals-")
		if !ok || !slices.Contains(signalCategories, category) {
			t.Errorf("signals.yml: group %s, want onchain-signals-<category> alone, of %v", g.Name, signalCategories)
		}
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			for _, p := range checkSelector(r.Expr, selector) {
				t.Errorf("%s: %s", r.Alert, p)
			}
			if r.Labels["category"] != "market" || r.Labels["severity"] != "info" {
				t.Errorf("%s: labels %v, want category market and severity info", r.Alert, r.Labels)
			}
			if r.For != "" {
				t.Errorf("%s: for: %s; a signal fires at the evaluation that sees its row", r.Alert, r.For)
			}
			if !strings.Contains(r.Annotations["description"], "not advice") {
				t.Errorf("%s: the description does not say the level is not advice", r.Alert)
			}
			checkSignalsRunbook(t, anchors, r)
		}
	}
	if len(alerts) < 20 {
		t.Errorf("signals.yml: %d rules, want at least 20", len(alerts))
	}

	var late ruleFile
	decodeFile(t, "late.yml", &late)
	for _, g := range late.Groups {
		for _, r := range g.Rules {
			for _, p := range checkSelector(r.Expr, selector) {
				t.Errorf("%s: %s", r.Alert, p)
			}
			if r.For == "" {
				t.Errorf("%s: no for:", r.Alert)
			}
			checkSignalsRunbook(t, anchors, r)
		}
	}

	fires, silent := ruleTestCases(t, "signals_test.yml")
	for _, a := range alerts {
		if !fires[a] || !silent[a] {
			t.Errorf("%s: signals_test.yml needs a case where it fires and one where it does not", a)
		}
	}
}

func checkSignalsRunbook(t *testing.T, anchors map[string]bool, r rule) {
	t.Helper()
	anchor := strings.ToLower(r.Alert)
	if got := r.Annotations["runbook_url"]; got != signalsRunbookBase+anchor {
		t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, signalsRunbookBase+anchor)
	}
	if !anchors[anchor] {
		t.Errorf("%s: docs/signals.md has no section #%s for its runbook_url", r.Alert, anchor)
	}
}
