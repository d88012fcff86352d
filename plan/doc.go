// Package plan owns what a key's plan on the data API allows, as the
// provider's GET /v1/my/discovery/endpoints answers it for the key that
// asks: the plan's name, the windows of each /v1/{asset}/{category}/{metric}
// path with how far back each may be read, the paths always allowed
// (statics) and the plan's rate limit.
//
// It owns:
//
//   - plan.go: the Plan, and Check: whether a tuple (path, window, the
//     start of the history it reads) is allowed, and when not a Refusal
//     that says why in the plan's words;
//   - duration.go: the ISO 8601 durations the plan gives history depths
//     in (P0D: no limit);
//   - parse.go: Parse, both dialects of the answer (a metric mapping
//     windows to depths, and the older one nesting them under "window"),
//     with errors that name what and where;
//   - endpoints.go: the endpoints of an answer read a token at a time,
//     the paths with the same windows sharing one Windows, so that an
//     answer at its cap costs its paths and little more; MarshalJSON
//     writes the current dialect back, so a plan is stored and shared as
//     an answer;
//   - fetch.go: Answer, the Outcome of an answer of the plan's endpoint
//     that the exporter's client read (upstream.Client.ReadPlan): a plan, no plan endpoint (404), the basic
//     plan with nothing listed (403, 500), a rejected key (401), or
//     unknown.
//
// It depends on the standard library alone, so every part of the exporter
// (configuration check, expansion, budget, engine, backfill) can read a
// plan without importing the others.
package plan
