//go:build !linux

package e2e

import "os/exec"

// dieWithTest has no portable equivalent outside Linux; t.Cleanup still
// kills the children when the test ends normally.
func dieWithTest(*exec.Cmd) {}
