package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The example configuration passes --config.check as written, given its
// credential; a broken one fails with file:line messages and exit code 1.
func TestConfigCheck(t *testing.T) {
	t.Setenv("ONCHAIN_DATA_TOKEN", "example-token")
	var out, errOut bytes.Buffer
	if code := run([]string{"--config.check", "--config.file=examples/config.yml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	// The forecast that follows is TestConfigCheckForecast's.
	if got, _, _ := strings.Cut(out.String(), "\n"); got != "OK: examples/config.yml: 13 tuples" {
		t.Errorf("stdout = %q", got)
	}
	if strings.Contains(out.String()+errOut.String(), "example-token") {
		t.Error("the credential was printed")
	}

	out.Reset()
	errOut.Reset()
	t.Setenv("T", "x")
	code := run([]string{"--config.check", "--config.file=config/testdata/bad_window_not_allowed.yml"}, &out, &errOut)
	want := "config/testdata/bad_window_not_allowed.yml:6: data.metrics[0].window: \"block\" is not allowed for /v1/btc/market-data/open-interest (allowed: day, hour, min)\n"
	if code != 1 || errOut.String() != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut.String(), want)
	}

	t.Setenv("ONCHAIN_DATA_TOKEN", "")
	errOut.Reset()
	if code := run([]string{"--config.check", "--config.file=examples/config.yml"}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "examples/config.yml:9: data.token_env: environment variable ONCHAIN_DATA_TOKEN is not set or empty") {
		t.Errorf("missing credential: exit %d, stderr %q", code, errOut.String())
	}
}

// Flag values are checked by kingpin: a bad one exits 2 and says what is
// allowed.
func TestBadFlagsExitNonZero(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"--log.level=loud", "onchain_exporter: enum value must be one of debug,info,warn,error, got 'loud' (try --help)\n"},
		{"--log.format=xml", "onchain_exporter: enum value must be one of logfmt,json, got 'xml' (try --help)\n"},
		{"--no-such-flag", "onchain_exporter: unknown long flag '--no-such-flag' (try --help)\n"},
	} {
		var out, errOut bytes.Buffer
		if code := run([]string{c.arg}, &out, &errOut); code != 2 || errOut.String() != c.want {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.arg, code, errOut.String(), c.want)
		}
	}
}

// One tuple is "1 tuple".
func TestConfigCheckSingular(t *testing.T) {
	t.Setenv("ONCHAIN_TEST_TOKEN", "x")
	file := filepath.Join(t.TempDir(), "one.yml")
	writeFile(t, file, "data:\n  url: http://127.0.0.1:1\n  token_env: ONCHAIN_TEST_TOKEN\n  metrics:\n    - path: /v1/btc/network-data/supply\n")
	var out, errOut bytes.Buffer
	if code := run([]string{"--config.check", "--config.file=" + file}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "OK: "+file+": 1 tuple\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// A first run without a configuration file says what to do, and doing it
// works: examples/config.yml copied to the file passes --config.check.
func TestMissingConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "onchain.yml")
	hint := "no configuration file: to try the exporter without a real upstream, run it with --demo; " +
		"to configure it, copy examples/config.yml to " + file + ", set ONCHAIN_DATA_TOKEN and edit its metrics"

	var out, errOut bytes.Buffer
	code := run([]string{"--config.check", "--config.file=" + file}, &out, &errOut)
	want := "reading config: open " + file + ": no such file or directory\n" + hint + "\n"
	if code != 1 || errOut.String() != want {
		t.Errorf("--config.check: exit %d, stderr %q; want 1 and %q", code, errOut.String(), want)
	}
	errOut.Reset()
	if code := run([]string{"--config.file=" + file}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), fmt.Sprintf("hint=%q", hint)) {
		t.Errorf("serving: exit %d, stderr %q; want 1 and the hint", code, errOut.String())
	}

	example, err := os.ReadFile("examples/config.yml")
	if err != nil {
		t.Fatalf("the file the hint names: %v", err)
	}
	writeFile(t, file, string(example))
	t.Setenv("ONCHAIN_DATA_TOKEN", "example-token")
	out.Reset()
	errOut.Reset()
	if code := run([]string{"--config.check", "--config.file=" + file}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "OK: ") {
		t.Errorf("the example copied as the hint says: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}

	// A file that exists but cannot be read gets no such hint.
	errOut.Reset()
	if code := run([]string{"--config.check", "--config.file=" + dir}, &out, &errOut); code != 1 || strings.Contains(errOut.String(), "--demo") {
		t.Errorf("a directory as the file: exit %d, stderr %q", code, errOut.String())
	}
}
