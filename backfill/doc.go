// Package backfill owns the history of the configured series: it asks the
// upstream for every row since a date through the exporter's one client
// per API (upstream.Pool: rate_limit, concurrency, pauses, credential)
// with the largest limit each API takes, paging by `to` only where an
// answer is full; reads the rows with decode.History, the reading a
// refresh uses; names them with package series, as the live exposition
// does; and writes them, sorted per series, to an OpenMetrics file for
// `promtool tsdb create-blocks-from openmetrics` or to a remote-write
// receiver. A progress file records what was written, so that a run
// interrupted and started again calls the upstream only for the rest.
//
// The Analyst Consensus API has no history endpoint: its series are left
// out, and the run says so.
package backfill
