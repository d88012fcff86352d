package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// The default state directory is the exporter's own; a data/ that holds
// the exporter's state keeps being used (with a warning) until
// onchain_exporter_data/ exists; a data/ of Prometheus' or Alertmanager's
// is left alone; a path the user gave is used as it is.
func TestResolveStoragePath(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   []string // created under the working directory
		path    string
		set     bool
		want    string
		warning bool
	}{
		{name: "fresh checkout", path: DefaultStoragePath, want: DefaultStoragePath},
		{name: "exporter state in data/", files: []string{"data/data.json"}, path: DefaultStoragePath, want: legacyStoragePath, warning: true},
		{name: "budget in data/", files: []string{"data/budget-consensus.json"}, path: DefaultStoragePath, want: legacyStoragePath, warning: true},
		{name: "cluster name in data/", files: []string{"data/cluster-member-name"}, path: DefaultStoragePath, want: legacyStoragePath, warning: true},
		{name: "prometheus' data/", files: []string{"data/lock", "data/queries.active", "data/wal/00000000"}, path: DefaultStoragePath, want: DefaultStoragePath},
		{name: "alertmanager's data/", files: []string{"data/nflog", "data/silences"}, path: DefaultStoragePath, want: DefaultStoragePath},
		{name: "moved already", files: []string{"data/data.json", "onchain_exporter_data/data.json"}, path: DefaultStoragePath, want: DefaultStoragePath},
		{name: "given by the user", files: []string{"data/data.json"}, path: DefaultStoragePath, set: true, want: DefaultStoragePath},
		{name: "given elsewhere", files: []string{"data/data.json"}, path: "/var/lib/onchain_exporter", set: true, want: "/var/lib/onchain_exporter"},
		{name: "nothing kept", files: []string{"data/data.json"}, path: "", set: true, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			for _, f := range tc.files {
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte("{}"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var logs testtool.LogBuffer
			got := resolveStoragePath(tc.path, tc.set, log.NewLogfmtLogger(&logs))
			if got != tc.want {
				t.Errorf("storage path %q, want %q", got, tc.want)
			}
			if warned := strings.Contains(logs.String(), "level=warn"); warned != tc.warning {
				t.Errorf("warning logged: %v, want %v:\n%s", warned, tc.warning, logs.String())
			}
			if tc.warning && !strings.Contains(logs.String(), DefaultStoragePath) {
				t.Errorf("the warning does not say where to move the state:\n%s", logs.String())
			}
		})
	}
}
