// Package config owns the exporter's YAML configuration: its schema, strict
// loading with file:line errors (every error of a file at once, with a
// suggestion for a mistyped key), validation against the endpoints the
// upstream APIs are known to serve and, through CheckListing, against the
// paths, parameter names and values a discovery listing gives, the
// findings of a configuration (findings.go: what is probably a typo but
// may be a real endpoint the catalog lacks, warned about, never refused),
// expansion
// of metric entries into tuples (one upstream series each), the names of
// their metric families (naming.go) and what "all" stands for, path
// patterns and their expansion into one entry per path selected
// (pattern.go, ResolveWith), the tuples the key's plan refuses (plan.go),
// credentials read from env or file (files relative to the configuration
// file), and safe reloading.
package config
