// Package benchmark measures what the exporter costs: upstream calls per
// new data row over a simulated day (the economy), and the time, memory
// and allocations of warm and cold scrapes. It drives the real exporter
// against the project's fake upstream with a simulated clock.
package benchmark
