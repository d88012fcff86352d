package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// The backfill command's wiring: flags, configuration, exit codes. What it
// writes is tested in package backfill, and end to end in e2e.

func TestBackfillCommand(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{DataToken: "tok"})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "onchain.yml")
	yml := "data:\n  url: " + up.URL + "\n  token_env: BACKFILL_TEST_TOKEN\n  rate_limit: 600\n  metrics:\n    - path: /v1/btc/network-data/supply\n      window: [day, hour]\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BACKFILL_TEST_TOKEN", "tok")
	from := time.Now().UTC().AddDate(0, 0, -5).Format(time.DateOnly)
	out := filepath.Join(dir, "history.om")
	base := []string{"backfill", "--config.file=" + cfg, "--from=" + from, "--storage.path=" + dir}

	var stdout, stderr bytes.Buffer
	if code := run(append(base, "--output="+out, "--dry-run"), &stdout, &stderr); code != 0 ||
		strings.Count(stdout.String(), "data GET /v1/btc/network-data/supply?") != 2 || up.fake.Calls("data") != 0 {
		t.Fatalf("dry run: code %d, %d calls\n%s\n%s", code, up.fake.Calls("data"), stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(append(base, "--output="+out, "--label=job=onchain", "--label=instance=h:9799"), &stdout, &stderr); code != 0 {
		t.Fatalf("backfill: code %d\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.HasSuffix(string(b), "# EOF\n") || !strings.Contains(string(b), `onchain_supply{asset="btc",instance="h:9799",job="onchain",window="hour"} `) {
		t.Errorf("output (%v):\n%.600s", err, b)
	}
	if !strings.Contains(stderr.String(), "msg=\"backfill done\"") || !strings.Contains(stderr.String(), "upstream_requests=2") {
		t.Errorf("summary line:\n%s", stderr.String())
	}
	if up.fake.Calls("data") != 2 {
		t.Errorf("%d calls for 2 series", up.fake.Calls("data"))
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--output=" + out, "--label=job"}, 2, `--label \"job\": want name=value`},
		{[]string{"--output=" + out, "--to=yesterday"}, 2, `--to \"yesterday\": want a date`},
		{[]string{"--remote-write.url=ftp://x"}, 2, "want an http:// or https:// address"},
		{[]string{"--remote-write.config=" + cfg, "--remote-write.tls.insecure-skip-verify"}, 2, "--remote-write.config holds the whole entry"},
		{[]string{"--output=" + out, "--remote-write.url=http://127.0.0.1:1/api/v1/write"}, 2, "give one of --output and --remote-write.url"},
		{[]string{"--output=" + out, "--rate-limit.share=2"}, 2, "--rate-limit.share 2"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(append(base, c.args...), &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: code %d, want %d with %q:\n%s", c.args, code, c.code, c.want, stderr.String())
		}
	}
}

// TestHelpListsBackfill: --help names the command beside the exporter.
func TestHelpListsBackfill(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "exporter*") || !strings.Contains(out.String(), "backfill --from=FROM") {
		t.Errorf("--help: %d\n%s", code, out.String())
	}
}
