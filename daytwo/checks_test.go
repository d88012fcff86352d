package daytwo

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// answer is one OpenMetrics answer of a member to one scrape job.
type answer struct {
	at     string // simulated time, for messages
	member string
	job    string
}

func (a answer) String() string { return fmt.Sprintf("%s %s job %s", a.at, a.member, a.job) }

// strictParser runs the OpenMetrics reference parser of the Python client
// on a stream of answers, one JSON string a line: for each, a line "ok"
// or the parser's error, as a JSON string.
const strictParser = `
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse
for line in sys.stdin:
    try:
        list(parse(json.loads(line)))
        out = "ok"
    except Exception as e:
        out = str(e) or type(e).__name__
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
`

// referenceParser parses answers as the run makes them, in a process of
// its own beside it.
type referenceParser struct {
	cmd      *exec.Cmd
	in       io.WriteCloser
	done     chan struct{}
	verdicts []string
	stderr   bytes.Buffer
}

// startReferenceParser starts the reference parser (testtool.StrictPython:
// a missing one fails the test under CI=true, skips it otherwise).
func startReferenceParser(t *testing.T) *referenceParser {
	t.Helper()
	python := testtool.StrictPython(t)
	p := &referenceParser{cmd: exec.Command(python, "-c", strictParser), done: make(chan struct{})}
	p.cmd.Stderr = &p.stderr
	in, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.in = in
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var v string
			if json.Unmarshal(sc.Bytes(), &v) != nil {
				v = "unreadable verdict: " + sc.Text()
			}
			p.verdicts = append(p.verdicts, v)
		}
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

// parse hands the parser one answer.
func (p *referenceParser) parse(t *testing.T, body string) {
	t.Helper()
	b, _ := json.Marshal(body)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("the reference parser: %v\n%s", err, p.stderr.String())
	}
}

// results waits for the verdicts of every answer handed to it.
func (p *referenceParser) results(t *testing.T) []string {
	t.Helper()
	_ = p.in.Close()
	<-p.done
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("the reference parser: %v\n%s", err, p.stderr.String())
	}
	return p.verdicts
}

// shape is what promtool check metrics can find fault with in an answer:
// its metadata and the names and labels of its series, not the values
// (a sample line without what follows its last space). Answers of one
// shape are checked once.
func shape(body string) [32]byte {
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if i := strings.LastIndexByte(l, ' '); i >= 0 && !strings.HasPrefix(l, "#") {
			l = l[:i]
		}
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return sha256.Sum256([]byte(strings.Join(lines, "\n")))
}

// promtoolFindings runs promtool check metrics on a text-format answer:
// its findings, one per line, or "".
func promtoolFindings(t *testing.T, promtool, body string) string {
	t.Helper()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return strings.TrimSpace(string(out))
	}
	return ""
}
