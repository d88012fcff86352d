// Package fakeapi is the project's own fake upstream. It owns a single
// http.Handler that serves all three paid APIs the exporter reads, with
// deterministic data and a controllable clock:
//
//   - the blockchain data API (v1 and v2) at "/" (paths /v1/..., /v2/...),
//     with the status/result envelope, windows, limits, block series,
//     discovery and bearer or api_key authentication. It serves what its
//     discovery lists and answers any other path 404, and a parameter
//     the path does not take 400, as the real API does. Its catalog is
//     small (the paths the demo and tests read) or full (the provider's,
//     about 200 v1 paths: catalog.go). Keys have plans (plan.go): the
//     plan endpoint /v1/my/discovery/endpoints describes a key's, in
//     either of its dialects or failing as told (planserve.go), and a
//     data call the plan does not cover is 403;
//   - the Indicator API under "/indicator" (public catalog, keyed
//     price-to-book band series);
//   - the Analyst Consensus API under "/consensus", with its full error
//     contract, plan checks and per-minute and daily rate limits.
//
// Rows are published on a model the tests can reason about: the row of the
// interval [t, t+W) of a window of length W becomes visible at t+W+delay,
// block rows at their block time plus delay (see WindowDuration,
// BlockInterval and Server.RowsPublished). The delay is a constant per
// window by default; Options.Publish makes it jittered per row or change
// at a given time (Delay), and Server.NewestVisible and Server.VisibleAt
// tell a test what was visible when. Every value is a pure function of the request's
// path, its series parameters, the window and the row time, so identical
// requests give identical answers across runs and processes.
//
// The Indicator and Analyst Consensus payloads are not documented: the
// server answers in one of two dialects with the same numbers
// (Options.Dialect), with or without times (Options.Timeless). Those two
// APIs have no window (windowless.go; Revisions tells a benchmark when
// each answer changed).
//
// Faults (slow answers, resets, bad statuses, malformed or huge bodies,
// redirects) can be switched on and off while the server runs, so the
// exporter's error handling can be tested end to end. The same handler
// serves the exporter's --demo mode.
package fakeapi
