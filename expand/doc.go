// Package expand resolves what a configuration leaves to the upstream's
// listing endpoints, between loading it (package config) and refreshing
// its tuples (package collector): "all" on a data-API parameter through
// the v1 and v2 discovery endpoints, equity: all of the Indicator API
// through /api/equities, and Analyst Consensus asset names, tickers and
// aliases through /assets; and path patterns of the data API, through
// its discovery and the key's plan. It calls through the same clients as the
// collector (upstream.Pool) and never imports package collector.
//
// It owns:
//
//   - expand.go: the Expander, and one expansion (Expand, and Start at
//     start): which lists a configuration needs, the entries that wait
//     while a list cannot be read;
//   - lists.go: the listing calls of an expansion, made at the same time,
//     an answer reused while recent, the last good one standing in when
//     a call fails;
//   - cache.go: the Cache, the one copy in memory of the listing
//     answers. A Store (persist.Store) fills it at start with those the
//     last run saved and writes from it at every save, per API section
//     and account;
//   - discovery.go: what each list says, resolved into parameter values,
//     and the warnings about what discovery does not list;
//   - plan.go: the data API key's plan, read with the lists, kept in the
//     Cache and put in force on the API's client;
//   - unlisted.go: a path named that neither discovery, nor the key's
//     plan, nor the built-in catalog lists (Unlisted, NotInPlan): a typo,
//     an error of the file with the listed path nearest it, shared with
//     --config.check, and the entry kept out until the file is fixed;
//   - pattern.go: pattern entries (path: /v1/btc/**) matched against
//     discovery and the plan (config.Matcher), the rate_limit and
//     daily_budget the plan gives, what each pattern came to (metrics,
//     log), and Offline, an expansion from kept answers with no call;
//   - background.go: the state of each API's expansion (State, and the
//     expansion metrics), the retries while lists fail and the daily
//     refresh (Maintain).
package expand
