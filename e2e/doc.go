// Package e2e holds the end-to-end test: the exporter, run in the test's
// process (package app), against the project's fake upstream, scraped by a
// real Prometheus that evaluates examples/alerts.yml and notifies a real
// Alertmanager, whose webhook the test receives; two members of a cluster
// and the death of one (cluster_test.go); and the backfill's
// (backfill_test.go, the command in process): history written through
// promtool's blocks and through remote write, joined by the live scrape.
// It needs the Debian packages prometheus and prometheus-alertmanager:
// without them it skips with a message, or fails under CI=true.
package e2e
