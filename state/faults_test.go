package state_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/plan"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// A state file that is damaged, from elsewhere or not a file never stops
// a start: its API starts cold and the log names the file and the problem.
func TestDamagedStateFilesStartCold(t *testing.T) {
	r := newRestartRig(t)
	first := r.start(restartConfig, testToken)
	first.dataLines(t)
	first.stop()
	good, err := os.ReadFile(filepath.Join(r.dir, "data.json"))
	if err != nil {
		t.Fatal(err)
	}
	account := regexp.MustCompile(`"account":"[0-9a-f]+"`)
	cases := []struct {
		name, problem string
		damage        func(path string) error
	}{
		{"garbage", "not a state file", func(p string) error { return os.WriteFile(p, []byte("\x00\x01garbage{"), 0o644) }},
		{"truncated", "not a state file", func(p string) error { return os.WriteFile(p, good[:len(good)/2], 0o644) }},
		{"empty", "empty file", func(p string) error { return os.WriteFile(p, nil, 0o644) }},
		{"other version", "format version 99", func(p string) error {
			return os.WriteFile(p, bytes.Replace(good, []byte(`"version":3`), []byte(`"version":99`), 1), 0o644)
		}},
		{"other API", `state of API \"indicator\"`, func(p string) error {
			return os.WriteFile(p, bytes.Replace(good, []byte(`"api":"data"`), []byte(`"api":"indicator"`), 1), 0o644)
		}},
		{"other account", "address, auth or credential changed", func(p string) error {
			return os.WriteFile(p, account.ReplaceAll(good, []byte(`"account":"0123456789abcdef"`)), 0o644)
		}},
		{"wrong types", "tuples.", func(p string) error {
			// One entry of the wrong types: that entry is dropped, named.
			polls := regexp.MustCompile(`"polls":[0-9]+`)
			return os.WriteFile(p, polls.ReplaceAll(good, []byte(`"polls":"many"`)), 0o644)
		}},
		{"directory", "is a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r.dir = t.TempDir()
			path := filepath.Join(r.dir, "data.json")
			if err := tc.damage(path); err != nil {
				t.Fatal(err)
			}
			r.fake.ResetCalls()
			run := r.start(restartConfig, testToken)
			if len(run.dataLines(t)) == 0 {
				t.Error("no data served after a cold start")
			}
			if r.fake.Calls("data") == 0 {
				t.Error("no upstream calls: the damaged state was used")
			}
			logs := run.logs.String()
			var warning string
			for _, l := range strings.Split(logs, "\n") {
				if strings.Contains(l, "level=warn") && strings.Contains(l, "file="+path) {
					warning = l
					break
				}
			}
			if warning == "" || !strings.Contains(warning, tc.problem) {
				t.Errorf("want a warning naming %s and %q; logs:\n%s", path, tc.problem, logs)
			}
		})
	}
}

// TestFarFuturePlansAreNotTrusted: a state file whose times lie far ahead
// (written under a wrong clock, or altered) neither freezes a tuple nor
// pauses the API for longer than a day: the tuples are fetched at once
// and the pause ends within MaxRestoredPause.
func TestFarFuturePlansAreNotTrusted(t *testing.T) {
	r := newRestartRig(t)
	first := r.start(restartConfig, testToken)
	first.dataLines(t)
	first.stop()
	path := filepath.Join(r.dir, "data.json")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(good, &f); err != nil {
		t.Fatal(err)
	}
	for _, v := range f["tuples"].(map[string]any) {
		v.(map[string]any)["state"].(map[string]any)["next"] = "2099-01-01T00:00:00Z"
	}
	data, _ := json.Marshal(f)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r.fake.ResetCalls()
	second := r.start(restartConfig, testToken)
	second.dataLines(t)
	if n := r.fake.Calls("data"); n == 0 {
		t.Error("tuples planned for 2099 were not fetched")
	}
	second.stop()

	far := r.clock.Now().Add(24 * 365 * time.Hour)
	c := upstream.New(&config.API{Name: config.APIData, Concurrency: 1, Timeout: time.Second},
		upstream.NewMetrics(prometheus.NewRegistry()), r.clock.Now, log.NewNopLogger())
	c.RestorePauses([]upstream.Pause{{Keyed: true, Until: far, By: "quota_exceeded"}})
	ps := c.Pauses()
	if len(ps) != 1 || ps[0].Until.After(r.clock.Now().Add(upstream.MaxRestoredPause)) {
		t.Errorf("a saved pause until %v restored as %+v", far, ps)
	}
}

// A write replaces the file whole: no temporary file stays behind, and one
// left by a write a crash interrupted is ignored and removed at start.
func TestStateWriteIsAtomic(t *testing.T) {
	r := newRestartRig(t)
	crashed := filepath.Join(r.dir, ".data.json.tmp123456")
	if err := os.WriteFile(crashed, []byte(`{"version":1,"api":"data","tuples":{`), 0o644); err != nil {
		t.Fatal(err)
	}
	first := r.start(restartConfig, testToken)
	want := first.dataLines(t)
	first.exp.Save()
	first.stop()
	files := stateFiles(t, r.dir)
	if len(files) != 1 || filepath.Base(files[0]) != "data.json" {
		t.Fatalf("files after saving: %v; want data.json alone (and the reservation of the plan's daily budget)", files)
	}

	// A crash between writing the temporary file and renaming it leaves
	// the old file whole: the next start reads it.
	if err := os.WriteFile(crashed, []byte("half a fi"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.fake.ResetCalls()
	second := r.start(restartConfig, testToken)
	calls := func() int64 { return r.fake.Calls("data") - r.fake.CallsFor(plan.Path) } // a start reads the key's plan
	if got := second.dataLines(t); strings.Join(got, "\n") != strings.Join(want, "\n") || calls() != 0 {
		t.Errorf("after an interrupted write: %d calls besides the plan's read, series equal: %v", calls(), strings.Join(got, "\n") == strings.Join(want, "\n"))
	}
	if _, err := os.Stat(crashed); !os.IsNotExist(err) {
		t.Errorf("the temporary file of the interrupted write is still there: %v", err)
	}
}

// A directory that cannot be made or written costs one warning, not the
// start (a path under a regular file fails for root too).
func TestUnusableStorageDirectory(t *testing.T) {
	r := newRestartRig(t)
	file := filepath.Join(r.dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.dir = filepath.Join(file, "data")
	run := r.start(restartConfig, testToken)
	if len(run.dataLines(t)) == 0 {
		t.Fatal("no data served")
	}
	run.exp.Save()
	run.stop()
	if logs := run.logs.String(); strings.Count(logs, "cannot be written") != 1 || strings.Contains(logs, "cannot save state") {
		t.Errorf("want one warning about the directory; logs:\n%s", logs)
	}
}
