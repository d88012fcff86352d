package backfill_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/backfill"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The backfill command's wiring: flags, configuration, exit codes. What it
// writes is tested in package backfill's other tests, and end to end in
// e2e.

// run is the command line as package main reads it for the command: the
// application's flags the command reads (--config.file, --storage.path,
// --demo, --log.level, --log.format) and the command's own.
func run(args []string, stdout, stderr io.Writer) int {
	a := kingpin.New("onchain_exporter", "")
	a.UsageWriter(stdout)
	a.ErrorWriter(stderr)
	var g backfill.Globals
	a.Flag("config.file", "").Default("onchain.yml").StringVar(&g.ConfigFile)
	a.Flag("storage.path", "").Default("onchain_exporter_data/").StringVar(&g.StoragePath)
	a.Flag("demo", "").BoolVar(&g.Demo)
	logLevel := a.Flag("log.level", "").Default("info").String()
	logFormat := a.Flag("log.format", "").Default("logfmt").String()
	c := backfill.AddCommand(a)
	if _, err := a.Parse(args); err != nil {
		fmt.Fprintf(stderr, "onchain_exporter: %v (try --help)\n", err)
		return 2
	}
	if !c.Chosen() {
		panic(fmt.Sprintf("not the backfill command: %q", args))
	}
	g.NewLogger = func(w io.Writer) log.Logger { l, _ := app.NewLoggers(w, *logLevel, *logFormat); return l }
	return c.Run(context.Background(), g, stdout, stderr)
}

// fakeUpstream is the fake upstream on 127.0.0.1.
type fakeUpstream struct {
	*httptest.Server
	fake *fakeapi.Server
}

func newFakeUpstream(t *testing.T, o fakeapi.Options) *fakeUpstream {
	t.Helper()
	u := &fakeUpstream{fake: fakeapi.New(o)}
	u.Server = httptest.NewServer(u.fake)
	t.Cleanup(u.Close)
	return u
}

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
	// Beside the 2 history calls, the key's plan is read once.
	if !strings.Contains(stderr.String(), "msg=\"backfill done\"") || !strings.Contains(stderr.String(), fmt.Sprintf("upstream_requests=%d", up.fake.Calls("data"))) {
		t.Errorf("summary line, %d requests served:\n%s", up.fake.Calls("data"), stderr.String())
	}
	if n := up.fake.CallsFor("/v1/btc/network-data/supply"); n != 2 {
		t.Errorf("%d calls for 2 series", n)
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
		{[]string{"--remote-write.url=http://127.0.0.1:1/api/v1/write", "--remote-write.query-url=127.0.0.1:1/api/v1/query"}, 2, `--remote-write.query-url \"127.0.0.1:1/api/v1/query\": want an http:// or https:// address, or none`},
		{[]string{"--remote-write.url=http://127.0.0.1:1/api/v1/write", "--remote-write.read-back-wait=0s"}, 2, "--remote-write.read-back-wait 0s: want a positive duration"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(append(base, c.args...), &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: code %d, want %d with %q:\n%s", c.args, code, c.code, c.want, stderr.String())
		}
	}
}

// repoRoot is the repository's root, above package backfill's directory.
var repoRoot, _ = filepath.Abs("..")

// documentedDryRun is the dry run of docs/history.md's worked example,
// as written there, without its program name.
func documentedDryRun(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "history.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 2 && strings.HasSuffix(f[0], "onchain_exporter") && f[1] == "backfill" && slices.Contains(f, "--dry-run") {
			return f[1:]
		}
	}
	t.Fatal("docs/history.md has no backfill --dry-run command")
	return nil
}

// TestBackfillDryRunAsDocumented: the dry run of docs/history.md, which
// names no --output, prints the calls and calls nothing.
func TestBackfillDryRunAsDocumented(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{DataToken: "tok"})
	dir := t.TempDir()
	t.Chdir(dir)
	yml := "data:\n  url: " + up.URL + "\n  token_env: BACKFILL_TEST_TOKEN\n  metrics:\n    - path: /v1/btc/network-data/supply\n      window: day\n"
	if err := os.WriteFile("onchain.yml", []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BACKFILL_TEST_TOKEN", "tok")
	args := documentedDryRun(t)
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "data GET /v1/btc/network-data/supply?") || up.fake.Calls("data") != 0 {
		t.Fatalf("%v: code %d, %d calls\n%s\n%s", args, code, up.fake.Calls("data"), stdout.String(), stderr.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the dry run wrote files: %v", entries)
	}
}

// TestBackfillOutputCheckedFirst: an --output that exists is refused
// before any call, the listing that resolves "all" included.
func TestBackfillOutputCheckedFirst(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{DataToken: "tok"})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "onchain.yml")
	yml := "data:\n  url: " + up.URL + "\n  token_env: BACKFILL_TEST_TOKEN\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      exchange: all\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BACKFILL_TEST_TOKEN", "tok")
	out := filepath.Join(dir, "history.om")
	if err := os.WriteFile(out, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"backfill", "--config.file=" + cfg, "--from=2026-01-01", "--storage.path=" + dir, "--output=" + out}
	if code := run(args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "exists: give --output.replace") {
		t.Errorf("code %d:\n%s", code, stderr.String())
	}
	if n := up.fake.Calls("data"); n != 0 {
		t.Errorf("%d calls before the output was refused", n)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep me\n" {
		t.Errorf("the output now holds %.60q", b)
	}
}

// TestBackfillNoShareNoListing: an API whose daily_budget the live
// exporter needs whole, as the file is written (each "all" counted as one
// value), is not called at all, not even for the listing that resolves
// "all".
func TestBackfillNoShareNoListing(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{DataToken: "tok"})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "onchain.yml")
	yml := "data:\n  url: " + up.URL + "\n  token_env: BACKFILL_TEST_TOKEN\n  daily_budget: 1\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      exchange: all\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BACKFILL_TEST_TOKEN", "tok")
	var stdout, stderr bytes.Buffer
	args := []string{"backfill", "--config.file=" + cfg, "--from=2026-01-01", "--storage.path=" + dir, "--output=" + filepath.Join(dir, "h.om")}
	if code := run(args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "0 left for backfill") {
		t.Errorf("code %d:\n%s", code, stderr.String())
	}
	if n := up.fake.Calls("data"); n != 0 {
		t.Errorf("%d calls (listing: %d) for an API the backfill has no share of", n, up.fake.CallsFor("/v1/discovery/endpoints"))
	}
}

// TestBackfillUnreachableUpstreamStopsSoon: the README's backfill command
// on examples/config.yml, its url where nothing listens (the file's own
// placeholder name does not resolve either), stops after a few calls
// with an error that names the URL and not the credential. (Before, it
// tried every series four times: 78 requests for the file's 13 series.)
func TestBackfillUnreachableUpstreamStopsSoon(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "config.yml"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	const placeholder = "https://data-api.example.com"
	if !strings.Contains(string(b), placeholder) {
		t.Fatalf("examples/config.yml has no url %s", placeholder)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("config.yml", []byte(strings.ReplaceAll(string(b), placeholder, closed)), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "unreachable-test-token-7f3a"
	t.Setenv("ONCHAIN_DATA_TOKEN", token)
	args := []string{"backfill", "--config.file=config.yml", "--from=2022-01-01", "--label=job=onchain_exporter",
		"--label=instance=exporter.example:9799", "--output=history.om", "--storage.path=" + dir}
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	logs := stderr.String()
	if code != 1 || !strings.Contains(logs, `msg="backfill failed" err="the data API's upstream `+closed+` cannot be reached`) ||
		!strings.Contains(logs, "connection refused") || strings.Contains(logs, token) {
		t.Fatalf("code %d\n%s", code, logs)
	}
	m := regexp.MustCompile(`upstream_requests=(\d+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no summary line:\n%s", logs)
	}
	// The plan's read and its client retry, then at most two rounds of
	// the two series fetched at once, each sent twice by the client.
	if n, _ := strconv.Atoi(m[1]); n > 2+2*2*4 {
		t.Errorf("%d requests before it stopped:\n%s", n, logs)
	}
}

// TestBackfillClampedByThePlan: the command reads the key's plan before
// the history (the fake's basic plan: BTC supply at day 90 days back, no
// hour), starts the day series where the plan's history starts, does not
// call the hour series, and says so in its last line; the upstream
// refuses none of its calls.
func TestBackfillClampedByThePlan(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{DataToken: "tok", DataKeys: map[string]fakeapi.Tier{"basic-key": fakeapi.TierBasic}})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "onchain.yml")
	yml := "data:\n  url: " + up.URL + "\n  token_env: BACKFILL_TEST_TOKEN\n  metrics:\n    - path: /v1/btc/network-data/supply\n      window: [day, hour]\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BACKFILL_TEST_TOKEN", "basic-key")
	from := time.Now().UTC().AddDate(0, 0, -200).Format(time.DateOnly)
	var stdout, stderr bytes.Buffer
	code := run([]string{"backfill", "--config.file=" + cfg, "--from=" + from, "--storage.path=" + dir, "--output=" + filepath.Join(dir, "h.om")}, &stdout, &stderr)
	logs := stderr.String()
	if code != 0 || !strings.Contains(logs, "clamped_by_plan=1") || !strings.Contains(logs, "written=1") || !strings.Contains(logs, "refused=1") ||
		!strings.Contains(logs, "reads /v1/btc/network-data/supply at day back to P90D") {
		t.Errorf("code %d\n%s", code, logs)
	}
	if n := up.fake.Refused(); n != 0 {
		t.Errorf("the upstream refused %d calls by the plan:\n%s", n, logs)
	}
}

// TestBackfillDryRunByTheSavedPlan: the dry run calls nothing, so it
// clamps by the plan the exporter's last run kept under --storage.path:
// the day series starts where the plan's 90 days start, the hour series,
// which the plan does not read, is not listed as a call.
func TestBackfillDryRunByTheSavedPlan(t *testing.T) {
	t.Setenv("BACKFILL_TEST_TOKEN", "saved-plan-key-51")
	dir := t.TempDir()
	file := filepath.Join(dir, "onchain.yml")
	writeFile(t, file, "data:\n  url: http://127.0.0.1:1\n  token_env: BACKFILL_TEST_TOKEN\n  metrics:\n    - path: /v1/btc/network-data/supply\n      window: [day, hour]\n")
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse([]byte(`{"plan":{"name":"BASIC"},"apiEndpoint":{"btc":{"network-data":{"supply":{"day":"P90D"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	lists, err := json.Marshal(map[string]*expand.Answer{plan.Path: expand.PlanAnswer(plan.Outcome{Kind: plan.Read, Plan: p, Status: 200}, time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	storage := filepath.Join(dir, "state")
	s, err := state.Open(storage, map[string]int{config.APIData: 100}, log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	f := state.NewFile(config.APIData, upstream.Account(cfg.APIs[config.APIData]))
	f.Lists = lists
	s.Write(config.APIData, f)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	to := time.Now().UTC().Add(-backfill.DefaultMargin).Truncate(time.Minute)
	// The plan's 90 days back from now, to the next day's start.
	start := time.Now().UTC().AddDate(0, 0, -90).Add(time.Minute).Truncate(24 * time.Hour).Add(24 * time.Hour)
	var stdout, stderr bytes.Buffer
	args := []string{"backfill", "--config.file=" + file, "--from=2022-01-01", "--to=" + to.Format(time.RFC3339), "--storage.path=" + storage, "--dry-run"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	for _, want := range []string{
		"# the key's plan: BASIC",
		"reads /v1/btc/network-data/supply at day back to P90D",
		"data GET /v1/btc/network-data/supply?from=" + start.Format("20060102T150405"),
		"# not called, the key's plan refuses it: data /v1/btc/network-data/supply?limit=5&window=hour",
		"# 2 series, 1 calls",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the dry run does not say %q:\n%s", want, stdout.String())
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
