// Package testtool holds what the tests of several packages share. It
// finds the external programs some tests run: promtool, prometheus,
// amtool, helm. Outside CI a missing program skips the test (or the check)
// with a message saying how to install it; under CI=true it fails the
// test, so a CI run without the program cannot pass by skipping. And
// LogBuffer is the log sink of tests whose exporter logs from goroutines.
package testtool

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true, as .ci/run sets).
func InCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// Lookup returns the path of the first of names on PATH. When none is
// there it fails the test under CI, and otherwise logs why and returns "",
// for a test that goes on without the check the program makes.
func Lookup(t testing.TB, install string, names ...string) string {
	t.Helper()
	if p := find(names); p != "" {
		return p
	}
	msg := missing(install, names)
	if InCI() {
		t.Fatal(msg + " (CI=true: a missing program fails the test)")
	} else {
		t.Log(msg + ": check skipped")
	}
	return ""
}

// Require returns the path of the first of names on PATH. When none is
// there it fails the test under CI and skips it otherwise.
func Require(t testing.TB, install string, names ...string) string {
	t.Helper()
	if p := find(names); p != "" {
		return p
	}
	msg := missing(install, names)
	if InCI() {
		t.Fatal(msg + " (CI=true: a missing program fails the test)")
	} else {
		t.Skip(msg)
	}
	return ""
}

func find(names []string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

func missing(install string, names []string) string {
	return strings.Join(names, " or ") + " not on PATH: " + install + " (bash .ci/run does)"
}
