package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/version"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// The command line: flags, subcommands, exit codes. What the exporter
// does is tested in package app (in process), --config.check in package
// check, the subcommands in backfill and demo; TestBinary runs the built
// binary once, signals and all.

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

// A path that cannot be served is refused with exit code 2, not a panic
// (app's TestMetricsPathEscaped: one that can is escaped on the page).
func TestMetricsPathChecked(t *testing.T) {
	for _, p := range []string{"metrics", "/m {x}", "/-/reload", "/a b", "/m?x"} {
		var out, errOut bytes.Buffer
		if code := run([]string{"--web.telemetry-path=" + p}, &out, &errOut); code != 2 ||
			!strings.Contains(errOut.String(), "--web.telemetry-path must be a path starting with /") {
			t.Errorf("%q: exit %d: %s", p, code, errOut.String())
		}
	}
}

// A binary built without -ldflags says what it knows, and no field is
// left empty in --version (app's TestBuildInfoWithoutLdflags: nor in
// onchain_exporter_build_info).
func TestVersionWithoutLdflags(t *testing.T) {
	v, r, b, u, d := version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate
	t.Cleanup(func() {
		version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate = v, r, b, u, d
	})
	version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate = "", "", "", "", ""
	var out, errOut bytes.Buffer
	if code := run([]string{"--version"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	first, rest, _ := strings.Cut(out.String(), "\n")
	if !regexp.MustCompile(`^onchain_exporter, version \S+ \(branch: \S+, revision: \S+\)$`).MatchString(first) {
		t.Errorf("--version: %q", first)
	}
	for _, l := range strings.Split(strings.TrimSpace(rest), "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), ":") {
			t.Errorf("--version: empty field in %q", l)
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

// The exporter stays the default command: its flags work without naming
// it, and naming it works too.
func TestExporterIsTheDefaultCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "onchain.yml")
	if err := os.WriteFile(file, []byte("consensus:\n  url: http://127.0.0.1:1\n  metrics:\n    - path: /calls\n      asset: btc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--config.file=" + file, "--config.check"}, {"exporter", "--config.file=" + file, "--config.check"}} {
		var stdout, stderr testtool.LogBuffer
		if code := run(args, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "OK: ") {
			t.Errorf("%v: exit %d, %s%s", args, code, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr testtool.LogBuffer
	if code := run([]string{"fake", "--fake.listen-address=127.0.0.1:notaport"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "cannot start the fake upstream") {
		t.Errorf("a bad address: exit %d, %s", code, stderr.String())
	}
}

// TestBinary is the one test that builds the binary and runs it: SIGHUP
// reloads; SIGTERM is logged, then the end of the shutdown; every line,
// the exporter-toolkit's included, carries one time key, ts, in either
// format; a backfill that fails is the process's exit code 1. (The other
// tests run the exporter and the backfill in process: packages app and
// backfill.)
func TestBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "onchain_exporter")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	backfill := exec.CommandContext(ctx, bin, "backfill", "--config.file="+filepath.Join(dir, "missing.yml"), "--from=2024-01-01",
		"--output="+filepath.Join(dir, "history.om"))
	if out, err := backfill.CombinedOutput(); backfill.ProcessState == nil || backfill.ProcessState.ExitCode() != 1 ||
		!strings.Contains(string(out), "cannot load the configuration") {
		t.Errorf("a backfill without its file: %v, want exit code 1\n%s", err, out)
	}
	for _, format := range []string{"logfmt", "json"} {
		t.Run(format, func(t *testing.T) {
			stderr := &testtool.LogBuffer{}
			addr := freeAddress(t)
			cmd := exec.CommandContext(ctx, bin, "--demo", "--log.format="+format, "--storage.path="+t.TempDir(), "--web.listen-address="+addr)
			cmd.Stdout, cmd.Stderr = io.Discard, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			testtool.Until(t, 15*time.Second, "the binary serves /metrics", func() bool {
				resp, err := http.Get("http://" + addr + "/metrics")
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusOK
			})
			reloaded, shutdown, stopped := "configuration reloaded", `msg="shutting down" signal=terminated`, "msg=stopped"
			ts, timeKey := "ts=", "time="
			if format == "json" {
				reloaded, shutdown, stopped = `"msg":"configuration reloaded"`, `"msg":"shutting down","signal":"terminated"`, `"msg":"stopped"`
				ts, timeKey = `"ts":`, `"time":`
			}
			if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			testtool.Until(t, 15*time.Second, "SIGHUP reloads", func() bool { return strings.Contains(stderr.String(), reloaded) })
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("after SIGTERM: %v\n%s", err, stderr.String())
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the binary did not stop after SIGTERM")
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			toolkit := false
			for _, l := range lines {
				if strings.Count(l, ts) != 1 || strings.Contains(l, timeKey) {
					t.Errorf("not one %s and no %s: %s", ts, timeKey, l)
				}
				toolkit = toolkit || strings.Contains(l, "Listening on")
			}
			if !toolkit {
				t.Errorf("no line of the exporter-toolkit to check:\n%s", stderr.String())
			}
			// "stopped" comes last, after everything the exporter closes.
			at := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, shutdown) })
			if n := len(lines); at < 0 || at == n-1 || !strings.Contains(lines[n-1], stopped) {
				t.Errorf("the log does not end with the shutdown:\n%s", stderr.String())
			}
		})
	}
}

// freeAddress is a 127.0.0.1 address nothing listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
