// Package examples holds no code. Its directory carries the files users
// copy: the exporter configuration, alerting rules with their promtool unit
// tests, Prometheus and Alertmanager configurations and the Kubernetes
// manifests. The package's tests keep them valid and consistent with each
// other: every YAML file parses, the PrometheusRule is alerts.yml, the scrape
// jobs reach the exporter's port and match the rules' job matcher, and
// promtool and amtool accept the files.
package examples
