// Package demo runs the project's fake upstream in process on a loopback
// port and builds the embedded demo configuration against it, so that one
// command (--demo) shows every family the exporter can produce.
package demo
