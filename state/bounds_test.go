package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// writeState writes f as the data API's file under a new directory.
func writeState(t *testing.T, f *File) string {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// only asks for the tuple keys given.
func only(keys ...string) func(string) bool {
	return func(k string) bool {
		for _, x := range keys {
			if k == x {
				return true
			}
		}
		return false
	}
}

// Entries of tuples no longer configured are dropped at load, unread (an
// info line counts them); the file of an API no longer configured is not
// read at all.
func TestStaleEntriesArePruned(t *testing.T) {
	f := NewFile("data", "acct")
	for i := range 1000 {
		f.Tuples[fmt.Sprintf("stale%d", i)] = json.RawMessage(`{"digest":"d","state":{"ok":true}}`)
	}
	f.Tuples["k"] = json.RawMessage(`{"digest":"d","state":{"ok":true}}`)
	dir := writeState(t, f)
	logs := &testtool.LogBuffer{}
	got := open(dir, map[string]int{"data": 1}, log.NewLogfmtLogger(logs)).Take("data", "acct", only("k"))
	if got == nil || len(got.Tuples) != 1 || got.Tuples["k"] == nil {
		t.Errorf("tuples taken: %v, want the configured one", got)
	}
	if !strings.Contains(logs.String(), `msg="state of tuples no longer configured dropped"`) || !strings.Contains(logs.String(), "count=1000") {
		t.Errorf("no line counting the stale entries:\n%s", logs)
	}
	logs2 := &testtool.LogBuffer{}
	s := open(dir, map[string]int{}, log.NewLogfmtLogger(logs2))
	if len(s.loaded) != 0 || strings.Contains(logs2.String(), "state loaded") {
		t.Errorf("the file of an API no longer configured was read:\n%s", logs2)
	}
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A file larger than its configuration writes is refused before it is
// read: the 210 MB file of issue 26 costs a stat, not seconds and
// hundreds of MB.
func TestStateFileBoundedByConfiguration(t *testing.T) {
	dir := t.TempDir()
	big, err := os.Create(filepath.Join(dir, "data.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(210 << 20); err != nil { // sparse
		t.Fatal(err)
	}
	big.Close()
	const maxTuples = 1000 // config.DefaultMaxTuples
	if bound := fileBound(maxTuples); bound >= 210<<20 || bound < baseFile+maxTuples*perTuple {
		t.Fatalf("bound %d for %d tuples", bound, maxTuples)
	}
	logs := &testtool.LogBuffer{}
	allocs := allocated(func() { open(dir, map[string]int{"data": maxTuples}, log.NewLogfmtLogger(logs)) })
	if !strings.Contains(logs.String(), "220200960 bytes, more than a state file holds for this configuration (47 MiB); not read") {
		t.Errorf("no warning about the size:\n%s", logs)
	}
	if allocs > 1<<20 {
		t.Errorf("refusing the file allocated %d bytes", allocs)
	}
	t.Logf("a 210 MB state file refused at start with %d bytes allocated", allocs)

	// More tuples raise the bound, up to maxFile; no configuration is
	// maxFile.
	if b := fileBound(100_000); b != maxFile {
		t.Errorf("bound for 100 000 tuples: %d, want %d", b, maxFile)
	}
	if b := fileBound(-1); b != maxFile {
		t.Errorf("bound without a configuration: %d, want %d", b, maxFile)
	}
}

// A file of many stale entries within its bound costs their bytes, not
// copies of them: entries of tuples not asked for are skipped unread.
func TestStaleEntriesCostTheirBytesOnly(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"version":3,"api":"data","account":"acct","tuples":{`)
	entry := `{"digest":"0123456789abcdef01234567","state":{"samples":[{"field":{"Name":"x","Scale":1},"value":"1"}],"row_time":"2026-11-20T11:00:00Z","newest":"2026-11-20T11:00:00Z","ok":true,"last_success":"2026-11-20T11:00:00Z","last_attempt":"2026-11-20T11:00:00Z","failing_since":"0001-01-01T00:00:00Z","next":"2026-11-20T13:00:00Z","planned":true,"due":0,"probing":false,"polls":0,"missed":0}}`
	const stale = 20000
	for i := range stale {
		fmt.Fprintf(&b, `"stale%d":%s,`, i, entry)
	}
	b.WriteString(`"k":` + entry + `}}`)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var got *File
	allocs := allocated(func() {
		got = open(dir, map[string]int{"data": 1}, log.NewNopLogger()).Take("data", "acct", only("k"))
	})
	if got == nil || len(got.Tuples) != 1 {
		t.Fatalf("tuples taken: %v", got)
	}
	// Reading the file and skipping the entries, 2.4 times the file's
	// bytes (copying every entry, 4.2 times with their values decoded).
	if ratio := float64(allocs) / float64(b.Len()); ratio > 3 {
		t.Errorf("a %d-byte file of %d stale entries allocated %d bytes (%.1f× its size)", b.Len(), stale, allocs, ratio)
	}
	t.Logf("a %d-byte file of %d stale entries: %d bytes allocated at load (%.1f× its size)", b.Len(), stale, allocs, float64(allocs)/float64(b.Len()))
}

// The entries an owner did not take back are named one by one, with the
// file, up to maxWarnings; the rest are counted.
func TestDroppedEntriesNamed(t *testing.T) {
	logs := &testtool.LogBuffer{}
	s := OpenStore(t.TempDir(), log.NewLogfmtLogger(logs))
	var bad []Problem
	for i := range maxWarnings + 5 {
		bad = append(bad, Problem{Entry: fmt.Sprintf("tuples.k%d", i), Err: "sample 0 is NaN"})
	}
	s.Dropped("data", bad)
	if n := strings.Count(logs.String(), "state entry dropped"); n != maxWarnings {
		t.Errorf("%d entries named, want %d:\n%s", n, maxWarnings, logs)
	}
	if !strings.Contains(logs.String(), "entry=tuples.k0") || !strings.Contains(logs.String(), `err="sample 0 is NaN"`) ||
		!strings.Contains(logs.String(), "data.json") || !strings.Contains(logs.String(), `msg="more state entries dropped"`) || !strings.Contains(logs.String(), "count=5") {
		t.Errorf("the warnings do not name the file, entry and problem, or count the rest:\n%s", logs)
	}
}
