package app

import (
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/common/version"
)

// keepVersion restores the build information FillVersion writes to.
func keepVersion(t *testing.T) {
	t.Helper()
	v, r, b, u, d := version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate
	t.Cleanup(func() {
		version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate = v, r, b, u, d
	})
}

func TestFillVersion(t *testing.T) {
	b, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	devel := strings.TrimSpace(string(b)) + "-devel"
	vcs := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/onchain-exporter/onchain_exporter", Version: "v0.0.0-20251123181100-c2b497ed1a34+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "c2b497ed1a3432a6d682dcdeea559e080b451b80"},
			{Key: "vcs.time", Value: "2025-11-23T18:11:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, c := range []struct {
		name    string
		ldflags [5]string // Version, Revision, Branch, BuildUser, BuildDate
		bi      *debug.BuildInfo
		ok      bool
		want    [5]string
	}{
		{"go build with version control information", [5]string{}, vcs, true,
			[5]string{devel, "c2b497ed1a3432a6d682dcdeea559e080b451b80-modified", "unknown", "unknown", "2025-11-23T18:11:00Z (commit time)"}},
		{"go build between releases", [5]string{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20251123181100-c2b497ed1a34"}}, true,
			[5]string{devel, "unknown", "unknown", "unknown", "unknown"}},
		{"go install of a release tag", [5]string{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, true,
			[5]string{"0.2.0", "unknown", "unknown", "unknown", "unknown"}},
		{"go run: nothing stamped", [5]string{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true,
			[5]string{devel, "unknown", "unknown", "unknown", "unknown"}},
		{"no build information", [5]string{}, nil, false,
			[5]string{devel, "unknown", "unknown", "unknown", "unknown"}},
		{"-ldflags win", [5]string{"1.2.3", "abc", "main", "ci", "20251123-18:11:00"}, vcs, true,
			[5]string{"1.2.3", "abc", "main", "ci", "20251123-18:11:00"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			keepVersion(t)
			version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate = c.ldflags[0], c.ldflags[1], c.ldflags[2], c.ldflags[3], c.ldflags[4]
			FillVersion(string(b), c.bi, c.ok)
			got := [5]string{version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate}
			if got != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

// A binary built without -ldflags says what it knows, and no label of
// onchain_exporter_build_info is left empty (package main's
// TestVersionWithoutLdflags: nor a field of --version).
func TestBuildInfoWithoutLdflags(t *testing.T) {
	keepVersion(t)
	version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate = "", "", "", "", ""
	src, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	bi, ok := debug.ReadBuildInfo()
	FillVersion(string(src), bi, ok)
	e := startRun(t, http.DefaultClient, "http", flags{demo: true})
	line := ""
	for _, l := range strings.Split(e.metrics(), "\n") {
		if strings.HasPrefix(l, "onchain_exporter_build_info{") {
			line = l
		}
	}
	if line == "" || strings.Contains(line, `=""`) {
		t.Errorf("build_info has an empty label: %q", line)
	}
}

// TestDemoKeepsNoStateByDefault: the demo's upstream is new at every
// start, so --demo writes no state (nor warns about it) unless
// --storage.path is given.
func TestDemoKeepsNoStateByDefault(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	e := startRunIn(t, http.DefaultClient, "http", flags{demo: true})
	e.metrics()
	e.stop()
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the demo wrote %v in its working directory (err %v)", entries, err)
	}
	for _, l := range strings.Split(e.stderr.String(), "\n") {
		if strings.Contains(l, "level=warn") && (strings.Contains(l, "state") || strings.Contains(l, "storage")) {
			t.Errorf("the demo warned about its state: %s", l)
		}
	}
}
