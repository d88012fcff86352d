// Package collector runs the refresh engine of each API and serves what it
// fetched. Read in the order a row travels:
//
//   - engine.go, queue.go: the loop per API over its tuples, queued by
//     when the policy plans each, within concurrency and rate_limit; it
//     idles without scrapes;
//   - fill.go: the first fill (every tuple asked once before any twice)
//     and the wait for a turn;
//   - api.go: one refresh, handed to the door as an event;
//   - door.go: step, the pure function every event of a tuple's state
//     goes through; outside input meets its checks there (admit);
//   - apply.go: the one place effects become metrics, logs, rows sent
//     and the queue's order;
//   - schedule.go: a tuple's state as the policy reads it;
//   - state.go, tuple.go, save.go: each tuple's state, its published
//     view, and the snapshots a Keeper (package persist) keeps;
//   - cluster.go, replicated.go: the rows members share;
//   - exporter.go, view.go: /metrics and the page, which read only the
//     published views.
//
// Lists are resolved before the engine by package expand; the engine
// imports neither it nor persist.
package collector
