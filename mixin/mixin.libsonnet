// The onchain_exporter monitoring mixin: prometheusAlerts,
// prometheusRules (none: the alerts need no recording rule) and
// grafanaDashboards, all from _config (config.libsonnet).
(import 'config.libsonnet') +
(import 'alerts/alerts.libsonnet') +
(import 'alerts/signals.libsonnet') + (import 'alerts/late.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
