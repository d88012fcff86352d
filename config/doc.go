// Package config owns the exporter's YAML configuration: its schema, strict
// loading with file:line errors, validation against the endpoints the
// upstream APIs are known to serve, expansion of metric entries into tuples
// (one upstream series each), credentials read from env or file, and safe
// reloading.
package config
