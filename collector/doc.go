// Package collector runs the refresh engine of each API and serves what it
// fetched. Read in the order a row travels:
//
//   - engine.go, queue.go: the engine's loop per API over its tuples
//     queued by when the policy plans each (Poll.Next), refreshed within
//     concurrency, each with a turn of rate_limit taken before it starts;
//     demand: it idles without scrapes;
//   - fill.go: the first fill (every tuple asked once before any twice,
//     logged once a minute) and the wait for rate_limit's next turn, as
//     the page reads them;
//   - api.go: one refresh (fetch through package upstream, read through
//     package decode), handed to the door as an event;
//   - door.go: the one door of a tuple's state: every event (an answer
//     fetched or failed, a peer's row, a saved entry, a reset, a
//     sibling's find, a leader chasing, an owner awaited, held by the
//     budget, refused by the key's plan, the plan changed) goes through
//     step, a pure function: the tuple's state and the event in, the new
//     state and its effects out; outside input meets its checks there
//     (admit, tuple.go);
//   - apply.go: the one place effects become metrics, log lines, rows
//     sent to the cluster and the queue's order;
//   - schedule.go: what a tuple's state is to the policy of package
//     schedule (schedule.Series), and the cadence of a series without a
//     window;
//   - state.go, tuple.go, save.go: each tuple's state (Tuple), its
//     published view, and the snapshots a Keeper (package persist, over
//     the files of --storage.path) writes and hands back, each tuple's
//     entry taken back through the door's checks (TakeSaved);
//   - cluster.go, replicated.go: the rows members share (package
//     cluster): each row sent and taken, and the full state a member
//     that joins takes, a batch of rows at a time;
//   - exporter.go, view.go: /metrics (the series rendered at refresh,
//     written by package exposition) and the page, which only read the
//     published views.
//
// What a configuration leaves to the upstream's lists (all, consensus
// asset names) is resolved before it reaches the engine, by package
// expand; what is kept across restarts is package persist's. The engine
// imports neither.
package collector
