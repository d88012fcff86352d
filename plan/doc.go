// Package plan owns what a key's plan on the data API allows, as the
// provider's GET /v1/my/discovery/endpoints answers it for the key that
// asks: the plan's name, the windows of each /v1/{asset}/{category}/{metric}
// path with how far back each may be read (ISO 8601 durations, P0D: no
// limit), the paths always allowed (statics) and the plan's rate limit.
//
// Check says whether a tuple is allowed, else a Refusal in the plan's
// words. Parse reads both dialects of the answer, its endpoints a token
// at a time, the paths with the same windows sharing one Windows, so that
// an answer at its cap costs its paths and little more; MarshalJSON writes
// the current dialect back, so a plan is stored as an answer. Answer turns
// what the exporter's client read (upstream.Client.ReadPlan) into an
// Outcome: a plan, no plan endpoint (404), the basic plan with nothing
// listed (403, 500), a rejected key (401), or unknown.
//
// It imports no package of the exporter but internal/text, so every part
// (configuration check, expansion, budget, engine, backfill) can read a
// plan without importing the others.
package plan
