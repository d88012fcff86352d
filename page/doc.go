// Package page is the operator's page: what the exporter serves at /,
// the view of one series, and the same as JSON at /api/v1/status. It
// answers, for every series, "is it fresh, when is the next call, why,
// what did it cost today" from what the running exporter already
// publishes (Engines: the refresh engines' views, their plans, the clients' budgets
// and pauses, the cluster's members, the expansion's state): it takes no
// lock of the refresh engine and never calls upstream.
//
// The page is rendered on the server with html/template from templates
// embedded in the binary: no script, nothing loaded from elsewhere.
// Filters (API, state, endpoint) and pages are query parameters.
//
// Files: model.go is the Status, the page's model and its JSON; status.go
// builds it; words.go says a series' state and next call in words;
// serve.go is the HTTP side and the templates; plans.go keeps the key's
// plan history. A series' last answers and last error (masked) are the
// engine's published view (published.Series).
package page
