package main

import (
	"bytes"
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
	if got := out.String(); got != "OK: examples/config.yml: 13 tuples\n" {
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

func TestBadFlagsExitNonZero(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--log.level=loud"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "log.level") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}
