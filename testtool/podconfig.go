package testtool

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// LoadPodConfig loads a configuration file shipped in a ConfigMap the way
// the pod would: each section's token_env must be set from the pod's
// Secret (env), each token_file must be a file of the mounted Secret
// (secretFiles, by path); the files are stood in for by local ones. It
// fails the test when the configuration does not load.
func LoadPodConfig(t *testing.T, name, text string, env map[string]string, secretFiles map[string]bool) *config.Config {
	t.Helper()
	var sections map[string]struct {
		TokenEnv  string `yaml:"token_env"`
		TokenFile string `yaml:"token_file"`
	}
	if err := yaml.Unmarshal([]byte(text), &sections); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	dir := t.TempDir()
	for api, s := range sections {
		switch {
		case s.TokenEnv != "" && env[s.TokenEnv] == "":
			t.Errorf("%s: token_env %s is not set from the Secret (env %v)", api, s.TokenEnv, slices.Sorted(maps.Keys(env)))
		case s.TokenFile != "":
			if !secretFiles[s.TokenFile] {
				t.Errorf("%s: token_file %s is not a file of the mounted Secret (%v)", api, s.TokenFile, slices.Sorted(maps.Keys(secretFiles)))
			}
			local := filepath.Join(dir, api+"-token")
			if err := os.WriteFile(local, []byte("key"), 0o600); err != nil {
				t.Fatal(err)
			}
			text = strings.ReplaceAll(text, s.TokenFile, local)
		}
	}
	cfg, err := config.Parse(name, []byte(text), func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("%s does not load:\n%v", name, err)
	}
	return cfg
}

// argVar is a Kubernetes dependent variable reference, $(VAR), in a
// container's args.
var argVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// UndefinedArgVars returns, for each $(VAR) of args that defined does not
// hold, "arg: VAR": Kubernetes leaves an unknown reference as it is, and
// the exporter would read "$(POD_IP)" as a host.
func UndefinedArgVars(args []string, defined func(string) bool) []string {
	var out []string
	for _, a := range args {
		for _, ref := range argVar.FindAllStringSubmatch(a, -1) {
			if !defined(ref[1]) {
				out = append(out, a+": "+ref[1])
			}
		}
	}
	return out
}
