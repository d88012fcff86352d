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

// TestReadmeListsEveryValue keeps the README's values table and the
// chart's schema naming the same values.
func TestReadmeListsEveryValue(t *testing.T) {
	b, err := os.ReadFile(chartDir + "/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema schemaNode
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	want := slices.Sorted(slices.Values(schemaValues("", schema.Properties)))

	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n#### Helm\n")
	if !ok {
		t.Fatal("README.md: no #### Helm section")
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(section, -1) {
		documented[m[1]] = true
	}
	for _, name := range want {
		if !documented[name] {
			t.Errorf("README.md's Helm values table lacks %s", name)
		}
		delete(documented, name)
	}
	for _, name := range slices.Sorted(maps.Keys(documented)) {
		t.Errorf("README.md's Helm values table lists %s, which values.schema.json does not define", name)
	}
}
