// Package upstream owns the one path every call to an upstream API takes:
// one long-lived client per API (httpclient.go) with its concurrency cap,
// rate limit and daily budget, one retry of server faults (transport.go),
// API-wide pauses after errors that say "stop calling", the request
// metrics, and the rules that differ between the APIs (dialect.go,
// consensus.go). An error of any API becomes one *Error, classified once
// (errors.go), and every upstream text leaves the client scrubbed of the
// credential, cut to MaxText, with a code from the closed set Codes
// (text.go).
package upstream
