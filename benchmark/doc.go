// Package benchmark measures what the exporter costs and how fresh it is:
// upstream calls per new data row over a simulated day (the economy); the
// excess staleness of what scrapes serve against what the upstream had
// published, with the calls it took, per window and publication-delay case
// (freshness); and the time, memory and allocations of warm and cold
// scrapes. It drives the real exporter against the project's fake upstream
// with a simulated clock. It is test code alone: its runners (RunFreshness,
// RunCluster, RunJoin, ...) are in _test.go files beside the tests and
// benchmarks that call them, so that nothing of it is built into the
// exporter.
package benchmark
