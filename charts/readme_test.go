package charts

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// schemaValues returns the dotted names of the values the schema defines:
// the leaves, an object with its own properties counting through them,
// but for a Kubernetes object (its fields are Kubernetes', not ours).
func schemaValues(prefix string, props map[string]schemaNode) []string {
	var names []string
	for name, p := range props {
		if prefix == "" && name == "global" { // Helm's, for charts used as subcharts
			continue
		}
		if len(p.Properties) > 0 && !strings.HasPrefix(p.Description, "A Kubernetes") {
			names = append(names, schemaValues(prefix+name+".", p.Properties)...)
		} else {
			names = append(names, prefix+name)
		}
	}
	return names
}

type schemaNode struct {
	Description string                `json:"description"`
	Properties  map[string]schemaNode `json:"properties"`
}

// valuesDoc is the document whose Helm section lists the chart's values.
const valuesDoc = "../docs/operations.md"

// helmSection returns the text of doc's "Helm" section: from its heading
// (at any level) to the next heading of the same or a higher level,
// headings inside fenced code blocks (a shell comment) not counting.
func helmSection(doc string) (string, bool) {
	lines := strings.Split(doc, "\n")
	level, start := 0, -1
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		hashes := len(line) - len(strings.TrimLeft(line, "#"))
		if hashes == 0 || !strings.HasPrefix(line[hashes:], " ") {
			continue
		}
		switch {
		case start < 0 && strings.TrimSpace(line[hashes:]) == "Helm":
			level, start = hashes, i+1
		case start >= 0 && hashes <= level:
			return strings.Join(lines[start:i], "\n"), true
		}
	}
	if start < 0 {
		return "", false
	}
	return strings.Join(lines[start:], "\n"), true
}

// TestValuesTableListsEveryValue keeps the documented values table (the Helm
// section of docs/operations.md, linked from the README) and the chart's
// schema naming the same values.
func TestValuesTableListsEveryValue(t *testing.T) {
	b, err := os.ReadFile(chartDir + "/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema schemaNode
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	want := slices.Sorted(slices.Values(schemaValues("", schema.Properties)))

	doc, err := os.ReadFile(valuesDoc)
	if err != nil {
		t.Fatal(err)
	}
	section, ok := helmSection(string(doc))
	if !ok {
		t.Fatalf("%s: no Helm section", valuesDoc)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(section, -1) {
		documented[m[1]] = true
	}
	for _, name := range want {
		if !documented[name] {
			t.Errorf("%s: the Helm values table lacks %s", valuesDoc, name)
		}
		delete(documented, name)
	}
	for _, name := range slices.Sorted(maps.Keys(documented)) {
		t.Errorf("%s: the Helm values table lists %s, which values.schema.json does not define", valuesDoc, name)
	}
}

func TestHelmSection(t *testing.T) {
	doc := "# Ops\n## Docker\n| `x` |\n## Helm\n```sh\n# a comment, not a heading\n```\n| `a` |\n### Values\n| `b` |\n## Next\n| `c` |\n"
	got, ok := helmSection(doc)
	want := "```sh\n# a comment, not a heading\n```\n| `a` |\n### Values\n| `b` |"
	if !ok || got != want {
		t.Errorf("helmSection = %q, %v; want %q", got, ok, want)
	}
	if got, ok := helmSection("# Ops\n#### Helm\n| `a` |"); !ok || got != "| `a` |" {
		t.Errorf("a last section at level 4: %q, %v", got, ok)
	}
	if _, ok := helmSection("# Ops\n## Helmet\n```\n## Helm\n```\n"); ok {
		t.Error("found a Helm section in a code block or under another name")
	}
}
