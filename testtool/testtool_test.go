package testtool

import (
	"testing"
)

// fakeTB records what a helper did to a test instead of doing it.
type fakeTB struct {
	testing.TB
	fatal, skipped bool
	logged         string
}

func (f *fakeTB) Helper()             {}
func (f *fakeTB) Fatal(args ...any)   { f.fatal = true }
func (f *fakeTB) Skip(args ...any)    { f.skipped = true }
func (f *fakeTB) Log(args ...any)     { f.logged = "log" }
func (f *fakeTB) Logf(string, ...any) {}

const absent = "onchain-exporter-no-such-program"

func TestMissingProgramSkipsOutsideCI(t *testing.T) {
	t.Setenv("CI", "")
	f := &fakeTB{}
	if p := Require(f, "install it", absent); p != "" || !f.skipped || f.fatal {
		t.Errorf("Require = %q, skipped %v, fatal %v; want a skip", p, f.skipped, f.fatal)
	}
	f = &fakeTB{}
	if p := Lookup(f, "install it", absent); p != "" || f.skipped || f.fatal || f.logged == "" {
		t.Errorf("Lookup = %q, skipped %v, fatal %v, logged %q; want a log line", p, f.skipped, f.fatal, f.logged)
	}
}

func TestMissingProgramFailsInCI(t *testing.T) {
	t.Setenv("CI", "true")
	for name, fn := range map[string]func(testing.TB, string, ...string) string{"Require": Require, "Lookup": Lookup} {
		f := &fakeTB{}
		fn(f, "install it", absent)
		if !f.fatal || f.skipped {
			t.Errorf("%s under CI=true: fatal %v, skipped %v; want a failure", name, f.fatal, f.skipped)
		}
	}
}

func TestPresentProgramIsFound(t *testing.T) {
	t.Setenv("CI", "true")
	// go runs this test, so it is on PATH.
	f := &fakeTB{}
	if p := Require(f, "install Go", absent, "go"); p == "" || f.fatal || f.skipped {
		t.Errorf("Require(%s, go) = %q, fatal %v, skipped %v", absent, p, f.fatal, f.skipped)
	}
}
