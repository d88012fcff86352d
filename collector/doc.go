// Package collector runs the refresh engine of each API and serves what it
// fetched. Read in the order a row travels:
//
//   - engine.go, queue.go: the engine's loop per API over its tuples
//     queued by when each is due, refreshed within concurrency; demand:
//     it idles without scrapes;
//   - schedule.go: what a tuple's state is to the policy of package
//     schedule, which says when each tuple is refreshed next and keeps
//     what is learned of publication delays;
//   - api.go: one refresh (fetch through package upstream, read through
//     package decode, the outcome stored and turned into metrics once);
//   - state.go, tuple.go, save.go, store.go: each tuple's state (Tuple,
//     its snapshot), and the Store that joins the files of package state
//     (--storage.path) to the owners of what they hold: saves gather each
//     owner's snapshot, ApplyConfig takes them back, each checked by its
//     owner;
//   - families.go, exposition.go, exporter.go: the series built at refresh
//     and /metrics, which only reads them.
//
// What a configuration leaves to the upstream's lists (all, consensus
// asset names) is resolved before it reaches the engine, by package
// expand. The Store keeps its listing answers across restarts: it
// writes them from expand's Cache, their one copy in memory, which it
// fills at start with those the files held.
package collector
