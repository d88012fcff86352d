// Package upstream owns the one path every call to an upstream API takes:
// one long-lived client per API with its keep-alive connections (built
// from the section's TLS and proxy settings by prometheus/common,
// httpclient.go), its concurrency cap and rate limit, one retry of server
// faults (transport.go), API-wide pauses after errors that say "stop
// calling", the request metrics, every rule that differs between the APIs
// (dialect.go, consensus.go: how the credential is sent, how an answer
// says it failed, where rows sit); the one way rows and their time are
// found in an answer of any shape is package decode's (shape.go), used by
// scrapes and listing endpoints alike. An error of any API becomes one *Error, classified
// once (errors.go), and every text an upstream sends leaves the client
// scrubbed of the credential, cut to MaxText, with a code from the closed
// set Codes (text.go).
package upstream
