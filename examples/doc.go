// Package examples holds no code. Its directory carries the files users
// copy: the exporter configuration, alerting rules with their promtool unit
// tests, Prometheus and Alertmanager configurations and the Kubernetes
// manifests. The package's tests keep them valid and consistent with each
// other: every YAML file parses, every exporter configuration fits its own
// daily_budget with room for backfill, the PrometheusRule is alerts.yml, the
// scrape jobs reach the exporter's port and match the rules' selector, the
// rules follow a monitoring mixin's conventions (one selector, runbook_url,
// market signals apart), and promtool and amtool accept the files.
package examples
