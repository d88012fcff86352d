// Package demo runs the project's fake upstream (fakeapi) with fixed,
// public credentials: in process on a loopback port for --demo, with the
// embedded demo configuration built against it, and on a fixed address
// for the `onchain_exporter fake` command (Listen), with a handler that
// switches its faults.
package demo
