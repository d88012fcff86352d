// Package page is the operator's page at /, the view of one series, and
// the same as JSON at /api/v1/status: for every series, is it fresh, when
// is the next call, why, what did it cost today. It reads only what the
// exporter publishes (Engines): no lock of the refresh engine, no
// upstream call. Rendered on the server from embedded templates: no
// script, nothing loaded from elsewhere.
//
// Files: model.go is the Status and its JSON; status.go builds it;
// words.go says a series' state and next call; serve.go is the HTTP side;
// plans.go keeps the key's plan history.
package page
