// Package budget owns what an API's upstream calls cost per UTC day and
// how that cost is capped: the daily budget (Budget: paced over the day,
// shared in a cluster, reserved through a Reserver before calls leave so
// that no sequence of crashes spends more than one process would), the
// degradation when the configuration costs more (Allotment), the offline
// forecast printed by --config.check (Forecast), what the key's plan
// changes (keyplan.go) and the metric families (Metrics).
//
// It is pure: no I/O (a Reserver writes through package state), no
// goroutines, and the time is passed in. Budget is safe for concurrent
// use; the rest are values.
package budget
