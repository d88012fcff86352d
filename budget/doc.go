// Package budget owns what the upstream calls of an API cost per UTC day
// and how that cost is capped: the daily budget itself (Budget: at most N
// calls a day, paced over the day, the upstream's own daily limit
// applying when lower, kept across restarts as a Saved value, and
// reserved in chunks through a Reserver before the calls leave, so that
// no sequence of crashes spends more than one process would), the
// degradation when the configuration's natural cost exceeds it (Allotment: the
// finest windows polled less often first, evenly within a window, no
// series starved; the series of patterns before those named one by one),
// the offline forecast of a configuration's calls per day (Forecast,
// printed by --config.check), what the key's plan changes in spending
// (keyplan.go: the rate_limit and daily_budget it gives, a pattern over
// the budget, a pattern's cost per category), and the metric families the
// refresh engine sets from them (Metrics).
//
// Everything here is pure: no I/O (a Reserver, given by persist.Store,
// writes through package state; a Budget's logger, SetLogger, gets the
// other members' counts it refuses), no goroutines, and the time is
// passed in (in a cluster a Budget takes its day on the cluster's clock,
// SetClock). Budget is safe for concurrent use; the rest are values.
package budget
