// Package collector turns configured tuples into Prometheus metrics. It owns
// the one path every upstream call takes (upstream.go: client, concurrency,
// rate limit, retries, pauses), the one cache (state.go and schedule.go: a
// value per tuple, refreshed when a new row is due, coalesced across
// concurrent scrapes), the one decoder (decode.go: rows to samples) and the
// one way an error becomes a metric (errors.go).
package collector
