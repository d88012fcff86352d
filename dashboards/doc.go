// Package dashboards holds no code. Its directory carries the Grafana
// dashboards of the exporter; the package's tests check that each file is
// dashboard JSON, that every query parses as PromQL and that every metric a
// dashboard or an alert rule of examples/alerts.yml names is one a real
// scrape of the demo exporter shows, and that panels draw backfilled
// history, trading-day series across weekends included.
package dashboards
