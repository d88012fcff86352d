package backfill

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The output path: what the run finds there is never overwritten or
// deleted unless it made it, and the run says so before any call.

// calls is every call the env's fake has answered.
func (e *env) calls() int64 {
	return e.fake.Calls("data") + e.fake.Calls("indicator") + e.fake.Calls("consensus")
}

// TestOutputThatExistsIsRefused: an existing file is refused before any
// call and left as it was; --output.replace replaces it. A file named
// FILE.tmp beside it is never touched.
func TestOutputThatExistsIsRefused(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	o := e.options(3)
	for path, text := range map[string]string{o.Output: "mine\n", o.Output + ".tmp": "mine too\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var dry strings.Builder
	if err := DryRun(&dry, e.cfg, o); err != nil || !strings.Contains(dry.String(), "# a run would stop here, before any call: --output "+o.Output+" exists") {
		t.Errorf("the dry run does not say the output is refused (%v):\n%s", err, dry.String())
	}
	for _, check := range []func() error{
		func() error { return CheckOutput(o) },
		func() error { _, err := Run(context.Background(), e.cfg, e.pool, o); return err },
	} {
		if err := check(); err == nil || !strings.Contains(err.Error(), "exists: give --output.replace to replace it") {
			t.Errorf("an existing output: %v", err)
		}
	}
	if b, _ := os.ReadFile(o.Output); string(b) != "mine\n" || e.calls() != 0 {
		t.Fatalf("the existing output now holds %.60q after %d calls", b, e.calls())
	}
	o.ReplaceOutput = true
	if sum := e.run(o); !sum.Complete {
		t.Fatalf("with --output.replace: %+v", sum)
	}
	parseOM(t, o.Output)
	if b, _ := os.ReadFile(o.Output + ".tmp"); string(b) != "mine too\n" {
		t.Errorf("FILE.tmp now holds %.40q", b)
	}
	if _, err := os.Stat(o.Output + ".parts"); !os.IsNotExist(err) {
		t.Errorf("parts left: %v", err)
	}
}

// TestOutputNotAFileIsRefused: a directory, a device and a symbolic link
// are refused before any call, with or without --output.replace.
func TestOutputNotAFileIsRefused(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	dir := filepath.Join(e.dir, "a-directory")
	link := filepath.Join(e.dir, "a-link")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(e.dir, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, want := range map[string]string{dir: "is a directory", os.DevNull: "is a device", link: "is a symbolic link"} {
		for _, replace := range []bool{false, true} {
			n++
			o := e.options(3)
			o.Output, o.ReplaceOutput = path, replace
			o.ProgressFile = filepath.Join(e.dir, fmt.Sprintf("p%d.json", n))
			if _, err := Run(context.Background(), e.cfg, e.pool, o); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("--output %s (replace %v): %v, want %q", path, replace, err, want)
			}
		}
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s is no longer a device: %v %v", os.DevNull, fi.Mode(), err)
	}
	if e.calls() != 0 {
		t.Errorf("%d calls", e.calls())
	}
}

// TestPartsDirectoryNotOursIsKept: a FILE.parts directory the command did
// not make is refused, and what is in it kept.
func TestPartsDirectoryNotOursIsKept(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	o := e.options(3)
	parts := o.Output + ".parts"
	if err := os.MkdirAll(filepath.Join(parts, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parts, "sub", "precious"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), e.cfg, e.pool, o); err == nil || !strings.Contains(err.Error(), "was not made by onchain_exporter backfill") {
		t.Errorf("a parts directory not ours: %v", err)
	}
	if _, err := os.Stat(filepath.Join(parts, "sub", "precious")); err != nil || e.calls() != 0 {
		t.Errorf("the user's file: %v; %d calls", err, e.calls())
	}
}

// TestFailedLastStepResumes: when the output cannot be put where it was
// asked (a directory appeared there during the run), the run fails, keeps
// its parts and is not recorded complete; run again once the way is free,
// it writes the output without calling the upstream again.
func TestFailedLastStepResumes(t *testing.T) {
	var once sync.Once
	var out string
	e := newEnv(t, mixedConfig, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			once.Do(func() { os.Mkdir(out, 0o755) })
			h.ServeHTTP(w, r)
		})
	})
	o := e.options(3)
	out = o.Output
	sum, err := Run(context.Background(), e.cfg, e.pool, o)
	if err == nil || !strings.Contains(err.Error(), "is a directory") || sum.Complete {
		t.Fatalf("the last step failed: %v, %+v", err, sum)
	}
	calls := e.calls()
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	sum = e.run(o)
	if !sum.Complete || sum.Already != 6 || e.calls() != calls {
		t.Fatalf("run again: %+v, %d calls more", sum, e.calls()-calls)
	}
	if p := parseOM(t, o.Output); len(p.series) < 20 {
		t.Errorf("%d series in the output", len(p.series))
	}
	// Complete now; the output removed, the run says so instead of
	// "nothing left to do".
	if err := os.Remove(o.Output); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), e.cfg, e.pool, o); err == nil || !strings.Contains(err.Error(), "it is not there") {
		t.Errorf("a complete output removed: %v", err)
	}
}
