// Package charts holds no code. Its directory carries the Helm chart
// onchain-exporter; the package's tests lint it, render it with its default
// values (two replicas in cluster mode), with every optional part on and
// with one replica alone, decode each manifest strictly into its Kubernetes
// type, and check the pieces fit: the configuration loads with the
// credentials the pod gets, the replicas find each other through the
// headless Service with flags the exporter accepts, the ServiceMonitor
// reaches the Service with the scrape jobs of examples/prometheus.yml, and
// the PrometheusRule is examples/alerts.yml.
package charts
