package testtool

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The two readers an exposition must satisfy besides Prometheus itself:
// promtool's lint (check metrics, on the text format) and the OpenMetrics
// reference parser of the Python client (Debian's python3-prometheus-client),
// strict as the OpenMetrics repository's parser cases require.

// OMParserInstall says how to install the reference parser.
const OMParserInstall = "apt-get install -y python3-prometheus-client"

// omParser prints, for each family the reference parser reads, its name,
// type, unit, HELP and the names of its samples.
const omParser = `
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse
json.dump([{"name": f.name, "type": f.type, "unit": f.unit, "help": f.documentation,
            "samples": sorted({s.name for s in f.samples})} for f in parse(sys.stdin.read())], sys.stdout)
`

// OMFamily is a family as the reference parser read it.
type OMFamily struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Unit    string   `json:"unit"`
	Help    string   `json:"help"`
	Samples []string `json:"samples"` // the names of its samples, sorted
}

// StrictPython returns a Python that has the reference parser: Debian's
// /usr/bin/python3 first (the package installs there), then python3 on
// PATH. Without one it fails the test under CI and skips it otherwise.
func StrictPython(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import prometheus_client.openmetrics.parser").Run() == nil {
			return path
		}
	}
	msg := "no python3 with prometheus_client.openmetrics.parser: " + OMParserInstall + " (bash .ci/run does)"
	if InCI() {
		t.Fatal(msg + " (CI=true: a missing program fails the test)")
	}
	t.Skip(msg)
	return ""
}

// ParseOpenMetrics runs the reference parser (python, from StrictPython)
// on an OpenMetrics answer: the families it read, or the parser's own
// last line of complaint.
func ParseOpenMetrics(t testing.TB, python, body string) ([]OMFamily, string) {
	t.Helper()
	cmd := exec.Command(python, "-c", omParser)
	cmd.Stdin = strings.NewReader(body)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		return nil, lines[len(lines)-1]
	}
	var fams []OMFamily
	if err := json.Unmarshal(out, &fams); err != nil {
		t.Fatalf("reading the reference parser's output: %v", err)
	}
	return fams, ""
}

// PromtoolCheckMetrics runs promtool check metrics on a text-format answer
// and returns its findings, "" for none. Without promtool it fails the
// test under CI and skips it otherwise.
func PromtoolCheckMetrics(t testing.TB, body string) string {
	t.Helper()
	promtool := Require(t, "install the Debian package prometheus", "promtool")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		return err.Error()
	}
	return strings.TrimSpace(string(out))
}
