// Package collector turns configured tuples into Prometheus metrics. It owns
// the one cache (state.go and schedule.go: a value per tuple, refreshed when
// a new row is due, coalesced across concurrent scrapes), the one decoder
// (decode.go: rows, or items counted by items.go, to samples), the
// exposition, and expansion of what a configuration leaves to the
// upstream's lists. Every upstream call goes through package upstream.
package collector
