package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// shellBlock is a fenced shell block of a Markdown file: its text, and
// the file and line of its first line.
type shellBlock struct {
	file string
	line int
	text string
}

func (b shellBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// fenceRE matches a fence line, indented or not (a block inside a list
// item), with its language.
var fenceRE = regexp.MustCompile("^( *)```([a-z]*)\\s*$")

// shellBlocks returns the ```sh (bash, shell) blocks of a Markdown text,
// their lines unindented by the fence's indentation.
func shellBlocks(file, text string) []shellBlock {
	var out []shellBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, lang := m[1], m[2]
		j := i + 1
		for j < len(lines) && !fenceRE.MatchString(lines[j]) {
			j++
		}
		if lang == "sh" || lang == "bash" || lang == "shell" {
			var body []string
			for _, l := range lines[i+1 : min(j, len(lines))] {
				body = append(body, strings.TrimPrefix(l, indent))
			}
			out = append(out, shellBlock{file: file, line: i + 2, text: strings.Join(body, "\n") + "\n"})
		}
		i = j
	}
	return out
}

// blockRule says how one documented block is run: a block is found by its
// file and a piece of its text. A block no rule names is run and must
// exit 0 with every command succeeding (bash -e).
type blockRule struct {
	file, contains string
	// notRun says why the block is deliberately not run here.
	notRun string
	// server is the URL the block's server answers on while it runs: the
	// block runs in the background until the URL answers, its output and
	// the answer are checked, and everything it started is killed.
	server string
	// want and reject are texts its output (and the server's answer)
	// must and must not hold.
	want, reject []string
	// tools are the programs the block needs besides bash and coreutils.
	tools []string
}

// blockRules are the documented blocks that are not run, and why, and the
// checks of those that are. Every block runs in a network namespace of its
// own with only a loopback interface (no network: a documented command
// that calls out fails; servers on fixed ports neither collide nor listen
// beyond the namespace), in a scratch copy of the repository (its entries
// linked, what the blocks write kept apart), in the order of the files:
// the README's build gives later blocks ./onchain_exporter, and what one
// block of a file exports, the next block of that file sees, as in one
// terminal.
var blockRules = []blockRule{
	{file: "docs/signals.md", contains: "categories+: { valuation: true, flows: true }", want: []string{"SUCCESS"}, tools: []string{"jsonnet", "promtool"}},
	{file: "docs/signals.md", contains: "promtool test rules signals_test.yml", notRun: "a minute of promtool over weeks of synthetic rows; package examples runs the same (TestSignalRulesPromtool)"},
	{file: "README.md", contains: "go run . --demo", server: "http://127.0.0.1:9799/metrics",
		want: []string{"\nonchain_exporter_build_info{", "\nonchain_supply"}},
	{file: "README.md", contains: "bash .ci/run", notRun: "the project's whole CI: installs the tools and runs every test, this one included"},
	{file: "README.md", contains: "go build -o onchain_exporter .", want: []string{"onchain_exporter, version "}},
	{file: "README.md", contains: "config-fake.yml &", want: []string{"\nonchain_"}, tools: []string{"curl"}},
	{file: "README.md", contains: "cp examples/config.yml onchain.yml", want: []string{"OK: onchain.yml: 13 tuples"},
		reject: []string{"WARNING", "exceeds daily_budget"}},
	{file: "README.md", contains: "./onchain_exporter --config.file=onchain.yml\n", server: "http://127.0.0.1:9799/metrics",
		want: []string{"\nonchain_exporter_build_info{"}, reject: []string{"polling is coarsened"}},
	{file: "README.md", contains: "prometheus --config.file=examples/prometheus.yml", notRun: "two servers for two terminals (the first runs until stopped); package e2e runs both with these files, package examples checks them with promtool and amtool"},
	{file: "README.md", contains: "backfill --config.file=onchain.yml", notRun: "calls the paid data API of onchain.yml (https://data-api.example.com) and writes into /var/lib/prometheus; backfill runs against the fake in backfill/command_test.go and package e2e"},
	{file: "README.md", contains: "ONCHAIN_BENCH_FULL=1", notRun: "benchmarks of seconds to minutes each; package benchmark's tests run their short forms"},
	{file: "docs/budget.md", contains: "--config.check", want: []string{"OK: examples/config.yml: 13 tuples"},
		reject: []string{"WARNING", "exceeds daily_budget"}},
	{file: "docs/fake.md", contains: "# or: go run . fake", server: "http://127.0.0.1:9800/",
		want: []string{"Fake upstream"}},
	{file: "docs/fake.md", contains: "config-fake.yml &", want: []string{"\nonchain_"}, tools: []string{"curl"}},
	{file: "docs/history.md", contains: "--dry-run", notRun: "its backfill calls the paid data API and its promtool writes into /var/lib/prometheus; the dry run alone is TestBackfillDryRunAsDocumented"},
	{file: "docs/history.md", contains: "--remote-write.url", notRun: "a Prometheus with elided flags (...) and a remote-write target on another host; package e2e backfills into a real one"},
	{file: "docs/metrics.md", contains: "prometheus --config.file=examples/prometheus.yml", notRun: "the README's two servers again (see there)"},
	{file: "docs/metrics.md", contains: "jsonnet -J mixin -S -e", want: []string{"SUCCESS"}, tools: []string{"jsonnet", "promtool"}},
	{file: "docs/metrics.md", contains: "jb install", notRun: "jsonnet-bundler fetches the mixin from GitHub (no network here; the module proxy refuses jb); TestMixinEntryPoints evaluates the entry points it vendors"},
	{file: "docs/operations.md", contains: "releases/download", notRun: "downloads a release from GitHub (no network here); release_test.go checks the archive names against .goreleaser.yml"},
	{file: "docs/operations.md", contains: "buildah bud", notRun: "builds an image (base images cannot be pulled here), pushes it to a registry and installs into a cluster"},
	{file: "docs/operations.md", contains: "-X github.com/prometheus/common/version.Version", want: []string{}, tools: []string{"git"}},
	{file: "docs/operations.md", contains: "go build -o onchain_exporter .\n./onchain_exporter --config.file=onchain.yml --config.check", server: "http://127.0.0.1:9799/metrics",
		want: []string{"OK: onchain.yml: 13 tuples", "\nonchain_exporter_build_info{"}, reject: []string{"WARNING", "polling is coarsened"}},
	{file: "docs/operations.md", contains: "docker run -p 9799:9799", notRun: "no Docker engine here; the Dockerfile is checked by reading"},
	{file: "docs/operations.md", contains: "kubectl -n monitoring create secret", notRun: "needs a cluster; package charts renders and checks the chart"},
	{file: "docs/operations.md", contains: "rotate the gossip key", notRun: "needs a cluster; TestKeyRotationWithoutPartition (package cluster) rotates a key file on running members the same three steps"},
	{file: "docs/operations.md", contains: "promtool check rules alerts.yml", want: []string{"SUCCESS"}, tools: []string{"promtool"}},
	{file: "docs/operations.md", contains: "api/v1/status?api=data&state=fresh", want: []string{`"state": "fresh"`, `"plan_line": "natural cost`},
		tools: []string{"curl", "jq"}},
}

// documentedBlocks returns the shell blocks of README.md and docs/*.md,
// README first.
func documentedBlocks(t *testing.T) []shellBlock {
	t.Helper()
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []shellBlock
	for _, f := range append([]string{"README.md"}, docs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, shellBlocks(f, string(b))...)
	}
	return out
}

// ruleOf returns the rule of a block: the one whose file and text match.
func ruleOf(b shellBlock) (blockRule, int) {
	var found blockRule
	n := 0
	for _, r := range blockRules {
		if r.file == b.file && strings.Contains(b.text, r.contains) {
			found = r
			n++
		}
	}
	return found, n
}

// Every rule names one block: a block moved or rewritten must not leave a
// rule that checks nothing, nor a block two rules.
func TestEveryBlockRuleNamesOneBlock(t *testing.T) {
	blocks := documentedBlocks(t)
	for _, r := range blockRules {
		n := 0
		for _, b := range blocks {
			if r.file == b.file && strings.Contains(b.text, r.contains) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("the rule for %s %q matches %d blocks; want 1", r.file, r.contains, n)
		}
	}
	for _, b := range blocks {
		if _, n := ruleOf(b); n > 1 {
			t.Errorf("%s: %d rules match the block", b, n)
		}
	}
}

func TestShellBlocks(t *testing.T) {
	text := "# T\n```sh\necho a\n```\ntext\n```yaml\nx: 1\n```\n- item\n\n  ```sh\n  echo b\n  ```\n```text\n```sh\n```\n"
	got := shellBlocks("f.md", text)
	if len(got) != 2 || got[0].line != 3 || got[0].text != "echo a\n" || got[1].line != 12 || got[1].text != "echo b\n" {
		t.Errorf("shellBlocks = %+v", got)
	}
}

// TestDocumentedCommands runs every shell block of README.md and
// docs/*.md that can run offline here, as written, and checks what it
// prints; blockRules lists those deliberately not run and why. A failure
// names the file and line of the block.
func TestDocumentedCommands(t *testing.T) {
	unshare := testtool.Require(t, "install util-linux (unshare) and iproute2 (ip)", "unshare")
	testtool.Require(t, "install iproute2", "ip")
	if out, err := exec.Command(unshare, netnsArgs("true")...).CombinedOutput(); err != nil {
		msg := fmt.Sprintf("no private network namespace for the documented commands (%s: %v: %s)", strings.Join(netnsArgs("true"), " "), err, out)
		if testtool.InCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	work := scratchRepo(t)
	envDir := t.TempDir()
	ran := 0
	for _, b := range documentedBlocks(t) {
		r, _ := ruleOf(b)
		if r.notRun != "" {
			t.Logf("%s: not run: %s", b, r.notRun)
			continue
		}
		tools := r.tools
		if r.server != "" {
			tools = append(tools, "curl")
		}
		for _, tool := range tools {
			testtool.Require(t, "bash .ci/run installs it", tool)
		}
		envFile := filepath.Join(envDir, strings.ReplaceAll(b.file, "/", "_")+".env")
		start := time.Now()
		out, err := runBlock(t, unshare, work, envFile, b, r)
		t.Logf("%s: ran in %s", b, time.Since(start).Round(100*time.Millisecond))
		ran++
		if err != nil {
			t.Errorf("%s: %v\n--- block\n%s--- output\n%s", b, err, b.text, out)
			continue
		}
		for _, w := range r.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the output lacks %q\n--- block\n%s--- output\n%s", b, w, b.text, out)
			}
		}
		for _, w := range r.reject {
			if strings.Contains(out, w) {
				t.Errorf("%s: the output has %q\n--- block\n%s--- output\n%s", b, w, b.text, out)
			}
		}
	}
	if ran < 8 {
		t.Errorf("only %d blocks ran", ran)
	}
}

// netnsArgs are unshare's arguments to run argv in a new network and PID
// namespace: only loopback, and every process the block starts killed
// when it ends (its shell is the namespace's init). Root needs no user
// namespace; another user maps itself to root in one.
func netnsArgs(argv ...string) []string {
	args := []string{"--net", "--pid", "--fork", "--kill-child"}
	if os.Geteuid() != 0 {
		args = append([]string{"--map-root-user"}, args...)
	}
	return append(args, argv...)
}

// docsRoot is the repository: the directory the tests of package main
// start in, taken before any test changes it.
var docsRoot, _ = os.Getwd()

// scratchRepo is a directory with the repository's top-level files copied
// (go:embed takes no symbolic link) and its directories linked, but for
// what the blocks write (the binary, onchain.yml, state), so that what
// they write stays out of the working tree.
func scratchRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(docsRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case "onchain_exporter", "onchain.yml", "data", "onchain_exporter_data", "dist", "alerts.yml", "history.om":
			continue
		}
		from, to := filepath.Join(docsRoot, e.Name()), filepath.Join(dir, e.Name())
		if e.Type().IsRegular() {
			b, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			err = os.WriteFile(to, b, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Symlink(from, to); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// blockTimeout bounds one block: a build, or a server until it answers.
const blockTimeout = 2 * time.Minute

// runBlock runs a block with bash -e in its own namespace, in work, after
// the environment the file's earlier blocks exported, and returns what it
// printed (and, for a server, what the URL answered).
func runBlock(t *testing.T, unshare, work, envFile string, b shellBlock, r blockRule) (string, error) {
	t.Helper()
	var script strings.Builder
	script.WriteString("ip link set lo up\n")
	fmt.Fprintf(&script, "[ -f %[1]q ] && . %[1]q\n", envFile)
	if r.server == "" {
		fmt.Fprintf(&script, "set -e\n%s\nexport -p > %q\n", b.text, envFile)
	} else {
		// The block in the background; its end, or the URL's first
		// answer, ends the wait.
		fmt.Fprintf(&script, `(
set -e
%s
) > block.log 2>&1 &
pid=$!
until curl -s -o block.answer %q; do
  if ! kill -0 $pid 2>/dev/null; then
    cat block.log; echo "the block ended before %s answered"; exit 1
  fi
  sleep 0.2
done
cat block.log block.answer
rm -f block.log block.answer
`, b.text, r.server, r.server)
	}
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, netnsArgs("bash", "-c", script.String())...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=readonly")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %s", blockTimeout)
	}
	return out.String(), err
}
