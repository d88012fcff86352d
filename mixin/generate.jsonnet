// The files the repository ships, generated from the mixin with its
// default _config. From the repository's root:
//
//   jsonnet -J mixin -S -m . mixin/generate.jsonnet
//
// writes every one of them; CI runs it and fails on any difference
// (mixin_test.go). Edit the mixin, never these files.
local mixin = import 'mixin.libsonnet';

local rules = std.manifestYamlDoc(mixin.prometheusAlerts, true, false);

// The groups the default install leaves out, each rendered alone: the
// signal pack with every category enabled, and the late-row alerts.
local signalList = import 'alerts/signal-list.libsonnet';
local optIn = mixin {
  _config+:: {
    signals+: { categories: { [c]: true for c in signalList.categories } },
    dataLate+: { enabled: true },
  },
};
// groups renders the groups of the opt-in mixin whose name starts with
// prefix: the signal pack is a group a category (onchain-signals-<category>).
local groups(prefix) = std.manifestYamlDoc({
  groups: [g for g in optIn.prometheusAlerts.groups if std.startsWith(g.name, prefix)],
}, true, false);

local signalsHeader = |||
  # The signal pack of onchain_exporter: alerts on the levels the data
  # provider's analysts read (docs/signals.md), every category enabled.
  #
  # Generated from the mixin (mixin/alerts/signals.libsonnet) by
  #   jsonnet -J mixin -S -m . mixin/generate.jsonnet
  # Do not edit: change mixin/ and regenerate.
  #
  # Not part of alerts.yml: the default install stays quiet. Load this
  # file beside alerts.yml to take the whole pack, or enable categories in
  # the mixin's _config.signals.categories. signals_test.yml holds its
  # promtool unit tests.
|||;

local lateHeader = |||
  # Alerts on late rows: the provider has not published an endpoint's
  # next row by its learned release time and spread (docs/signals.md).
  #
  # Generated from the mixin (mixin/alerts/late.libsonnet) by
  #   jsonnet -J mixin -S -m . mixin/generate.jsonnet
  # Do not edit: change mixin/ and regenerate.
  #
  # They read onchain_exporter_row_due_timestamp_seconds, and are off in
  # the mixin (_config.dataLate.enabled) until the exporter serves it.
  # late_test.yml holds their promtool unit tests.
|||;

local alertsHeader = |||
  # Alerting rules for onchain_exporter.
  #
  # Generated from the mixin (mixin/, docs/metrics.md) by
  #   jsonnet -J mixin -S -m . mixin/generate.jsonnet
  # Do not edit: change mixin/ and regenerate.
  #
  # Load with `rule_files: [alerts.yml]` in prometheus.yml. Every series
  # the rules read is selected with %(onchainSelector)s, the mixin's
  # onchainSelector, which matches the scrape jobs of
  # examples/prometheus.yml, the Kubernetes Service onchain-exporter and
  # the Helm chart's jobs. To scope the rules to other jobs (or a
  # namespace), set it in the mixin's _config (docs/metrics.md); the
  # Helm chart narrows it to its release's namespace.
  #
  # examples/kubernetes/prometheusrule.yaml and the chart's
  # files/alerts.yml carry the same groups; alerts_test.yml holds a
  # promtool unit test for every rule.
||| % mixin._config;

local prometheusRuleHeader = |||
  # Generated from the mixin (mixin/, docs/metrics.md) by
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
|||;

// indent puts two spaces before every line that is not empty.
local indent(text) = std.join('\n', [
  if line == '' then line else '  ' + line
  for line in std.split(text, '\n')
]);

{
  'examples/alerts.yml': alertsHeader + rules + '\n',
  'charts/onchain-exporter/files/alerts.yml': alertsHeader + rules + '\n',
  'examples/kubernetes/prometheusrule.yaml': prometheusRuleHeader + indent(rules) + '\n',
  'examples/signals.yml': signalsHeader + groups('onchain-signals-') + '\n',
  // JSON, which is YAML: go-jsonnet v0.20.0 (mixtool's) writes YAML
  // through its standard library's jsonnet, 35 s of CPU for this file,
  // and JSON natively.
  'examples/signals_test.yml': "# The signal pack's promtool tests, written by mixin/tests/signals_test.jsonnet: JSON, which is YAML.\n"
                               + std.manifestJsonEx(import 'tests/signals_test.jsonnet', '  ') + '\n',
  'examples/late.yml': lateHeader + groups('onchain-data-late') + '\n',
  'docs/signals.md': (import 'docs/signals.libsonnet')(mixin),
} + {
  ['dashboards/' + name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ') + '\n'
  for name in std.objectFields(mixin.grafanaDashboards)
}
