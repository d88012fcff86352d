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
//   - expand.go: the Expander and one expansion;
//   - lists.go: the listing calls of an expansion, made at once;
//   - cache.go: the Cache, the one copy of the listing answers;
//   - discovery.go: what each list says, resolved into parameter values;
//   - plan.go: the data API key's plan;
//   - unlisted.go: paths no list knows (a typo of the file);
//   - pattern.go: pattern entries, and Offline, an expansion with no call;
//   - background.go: each API's expansion state, and Maintain.
package expand
