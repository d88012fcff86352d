package examples

import (
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// fakeURLs is where `onchain_exporter fake` serves each API by default.
var fakeURLs = map[string]string{
	config.APIData:      "http://127.0.0.1:9800",
	config.APIIndicator: "http://127.0.0.1:9800/indicator",
	config.APIConsensus: "http://127.0.0.1:9800/consensus",
}

// sectionSpecific are the keys of an API section that config-fake.yml may
// set otherwise than config.yml: where the API is and its credential.
var sectionSpecific = map[string]bool{"url": true, "token_env": true, "token_file": true}

// config-fake.yml is config.yml pointed at the fake: the two files differ
// in nothing but the url (and credential) of each section and comments,
// so that what runs against the fake is what a user copies.
func TestConfigFakeIsConfigPointedAtTheFake(t *testing.T) {
	real, fake := yamlRoot(t, "config.yml"), yamlRoot(t, "config-fake.yml")
	if len(real.Content) != len(fake.Content) {
		t.Fatalf("config.yml has %d sections and keys, config-fake.yml %d", len(real.Content)/2, len(fake.Content)/2)
	}
	for i := 0; i+1 < len(real.Content); i += 2 {
		name := real.Content[i].Value
		if fake.Content[i].Value != name {
			t.Errorf("section %d: %s in config.yml, %s in config-fake.yml", i/2, name, fake.Content[i].Value)
			continue
		}
		rs, fs := real.Content[i+1], fake.Content[i+1]
		if rs.Kind != yaml.MappingNode || fs.Kind != yaml.MappingNode || len(rs.Content) != len(fs.Content) {
			t.Errorf("%s: the sections differ in their keys", name)
			continue
		}
		for j := 0; j+1 < len(rs.Content); j += 2 {
			key := rs.Content[j].Value
			if fs.Content[j].Value != key {
				t.Errorf("%s: key %s in config.yml, %s in config-fake.yml", name, key, fs.Content[j].Value)
				continue
			}
			if sectionSpecific[key] {
				continue
			}
			if !sameYAML(rs.Content[j+1], fs.Content[j+1]) {
				t.Errorf("%s.%s differs between config.yml and config-fake.yml (line %d and %d)", name, key, rs.Content[j+1].Line, fs.Content[j+1].Line)
			}
		}
		if got := scalarOf(fs, "url"); got != fakeURLs[name] {
			t.Errorf("config-fake.yml: %s.url is %q, want the fake's %q", name, got, fakeURLs[name])
		}
	}
	// And it loads, with the credentials it names set.
	for _, v := range []string{"ONCHAIN_DATA_TOKEN", "ONCHAIN_INDICATOR_KEY", "ONCHAIN_CONSENSUS_KEY"} {
		t.Setenv(v, "demo")
	}
	if _, err := config.Load("config-fake.yml"); err != nil {
		t.Error(err)
	}
}

// The comparison can fail: a changed value is seen.
func TestSameYAMLSeesAChange(t *testing.T) {
	var a, b yaml.Node
	if err := yaml.Unmarshal([]byte("m:\n  - path: /v1/x\n    window: day # c\n"), &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte("m:\n  - path: /v1/x\n    window: day\n"), &b); err != nil {
		t.Fatal(err)
	}
	if !sameYAML(&a, &b) {
		t.Error("a comment made two documents differ")
	}
	if err := yaml.Unmarshal([]byte("m:\n  - path: /v1/x\n    window: hour\n"), &b); err != nil {
		t.Fatal(err)
	}
	if sameYAML(&a, &b) {
		t.Error("window: day and window: hour compare equal")
	}
}

// yamlRoot is the top mapping of a YAML file.
func yamlRoot(t *testing.T, file string) *yaml.Node {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("%s: not a mapping", file)
	}
	return doc.Content[0]
}

// sameYAML compares two nodes by kind, tag, value and children, not by
// comments or lines.
func sameYAML(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameYAML(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// scalarOf is the value of a key of a mapping, "" when absent.
func scalarOf(m *yaml.Node, key string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return strings.TrimSpace(m.Content[i+1].Value)
		}
	}
	return ""
}
