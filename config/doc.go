// Package config owns the exporter's YAML configuration: its schema, strict
// loading with file:line errors (every error of a file at once, with a
// suggestion for a mistyped key), validation against the built-in catalog
// and, through CheckListing, against a discovery listing; the findings of a
// configuration (findings.go: probable typos, warned about, never refused);
// the expansion of entries into tuples (one upstream series each) and of
// path patterns into entries (pattern.go, ResolveWith); family names
// (naming.go) and what "all" stands for; the tuples the key's plan refuses
// (plan.go); credentials from env or file; and safe reloading.
package config
