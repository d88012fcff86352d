package state

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/internal/testtool"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// checkConfig is a configuration of the data API with the tuples keys
// name, each an hour tuple.
func checkConfig(keys ...string) *config.Config {
	a := &config.API{Name: config.APIData, MaxTuples: config.DefaultMaxTuples}
	for _, k := range keys {
		a.Tuples = append(a.Tuples, hourTuple(k))
	}
	return &config.Config{APIs: map[string]*config.API{config.APIData: a}}
}

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

// loadState opens dir under cfg at now and takes the data API's file, as
// a start does; it returns the file and the log.
func loadState(t *testing.T, dir string, cfg *config.Config) (*File, string) {
	t.Helper()
	logs := &testtool.LogBuffer{}
	s := open(dir, cfg, log.NewLogfmtLogger(logs), func() time.Time { return now })
	f := s.Take(cfg.APIs[config.APIData], "acct")
	return f, logs.String()
}

// Each number a state file restores is within what the exporter writes,
// or its entry is dropped with one warning naming the file and the
// entry; the other entries are kept.
func TestStateEntriesOutOfRangeAreDropped(t *testing.T) {
	block := 870000.0
	good := Tuple{OK: true, RowTime: now.Add(-time.Hour), Newest: now.Add(-time.Hour), Interval: time.Hour, Block: &block,
		LastSuccess: now.Add(-time.Minute), LastAttempt: now.Add(-time.Minute), Failures: 1,
		Samples: []decode.Sample{{Field: &config.Field{Name: "x", Scale: 1}, Value: 42}},
		Plan:    schedule.Plan{Next: now.Add(time.Hour), Due: 5 * time.Minute, Polls: 2}}
	goodDelay := schedule.Estimate{First: 5 * time.Minute, Depth: time.Minute, Credit: 1, Rows: 3, Seen: now.Add(-time.Hour)}
	negative := -1.0
	cases := []struct {
		name, entry, problem string
		tuple                func(*Tuple)
		delay                func(*schedule.Estimate)
		budget               func(*budget.Saved)
	}{
		{name: "learned delay of 9e18 ns", entry: "delays.data /p hour", problem: "learned first 2562047h47m16.854775807s is beyond 4h0m0s for hour rows",
			delay: func(e *schedule.Estimate) { e.First = math.MaxInt64 }},
		{name: "negative depth", entry: "delays.data /p hour", problem: "learned depth -5h0m0s is beyond 4h0m0s",
			delay: func(e *schedule.Estimate) { e.Depth = -5 * time.Hour }},
		{name: "credit of 1e300", entry: "delays.data /p hour", problem: "credit 1e+300 is not a number the schedule keeps",
			delay: func(e *schedule.Estimate) { e.Credit = 1e300 }},
		{name: "row seen in 9999", entry: "delays.data /p hour", problem: "seen 9999-12-31T23:00:00Z is more than",
			delay: func(e *schedule.Estimate) { e.Seen = time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC) }},
		{name: "NaN sample", entry: "tuples.k", problem: "sample 0 is NaN, not a finite number",
			tuple: func(s *Tuple) { s.Samples[0].Value = math.NaN() }},
		{name: "+Inf sample", entry: "tuples.k", problem: "sample 0 is +Inf, not a finite number",
			tuple: func(s *Tuple) { s.Samples[0].Value = math.Inf(1) }},
		{name: "-Inf sample", entry: "tuples.k", problem: "sample 0 is -Inf, not a finite number",
			tuple: func(s *Tuple) { s.Samples[0].Value = math.Inf(-1) }},
		{name: "negative block", entry: "tuples.k", problem: "block height -1 is not a block",
			tuple: func(s *Tuple) { s.Block = &negative }},
		{name: "newest row in 9999", entry: "tuples.k", problem: "newest 9999-12-31T23:00:00Z is more than 1h0m0s ahead of now",
			tuple: func(s *Tuple) { s.Newest = time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC) }},
		{name: "attempt in the future", entry: "tuples.k", problem: "last_attempt 2026-11-20T13:34:56Z is more than 10m0s ahead",
			tuple: func(s *Tuple) { s.LastAttempt = now.Add(time.Hour) }},
		{name: "attempt before 1970", entry: "tuples.k", problem: "last_attempt 1969-12-31T00:00:00Z is before 1970",
			tuple: func(s *Tuple) { s.LastAttempt = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC) }},
		{name: "huge failures", entry: "tuples.k", problem: "counts (failures 9223372036854775807, polls 2) are beyond 1000000",
			tuple: func(s *Tuple) { s.Failures = math.MaxInt64 }},
		{name: "planned offset of centuries", entry: "tuples.k", problem: "planned offsets (due 2562047h47m16.854775807s, missed 0s) are beyond 4h0m0s for hour rows",
			tuple: func(s *Tuple) { s.Due = math.MaxInt64 }},
		{name: "negative spacing", entry: "tuples.k", problem: "row spacing -1h0m0s is not between 0 and 744h0m0s",
			tuple: func(s *Tuple) { s.Interval = -time.Hour }},
		{name: "count of MaxInt64", entry: "budget", problem: "saved counts are beyond any day's calls",
			budget: func(s *budget.Saved) { s.Used = math.MaxInt64 }},
		{name: "budget saved in the future", entry: "budget", problem: "later than now",
			budget: func(s *budget.Saved) { s.At = now.Add(time.Hour) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFile(config.APIData, "acct")
			tu, other := good, good
			tu.Samples = append([]decode.Sample(nil), good.Samples...)
			d, otherDelay := goodDelay, goodDelay
			b := budget.Saved{Day: "2026-11-20", Used: 3, At: now.Add(-time.Minute)}
			if tc.tuple != nil {
				tc.tuple(&tu)
			}
			if tc.delay != nil {
				tc.delay(&d)
			}
			if tc.budget != nil {
				tc.budget(&b)
			}
			f.Put(hourTuple("k"), tu)
			f.Put(hourTuple("other"), other)
			f.Delays = map[string]schedule.Estimate{"data /p hour": d, "data /q hour": otherDelay}
			f.Budget = &b
			got, logs := loadState(t, writeState(t, f), checkConfig("k", "other"))
			var warning string
			for _, l := range strings.Split(logs, "\n") {
				if strings.Contains(l, "level=warn") {
					if warning != "" {
						t.Errorf("more than one warning:\n%s", logs)
					}
					warning = l
				}
			}
			if !strings.Contains(warning, fmt.Sprintf("entry=%q", tc.entry)) && !strings.Contains(warning, "entry="+tc.entry) ||
				!strings.Contains(warning, tc.problem) || !strings.Contains(warning, "data.json") {
				t.Errorf("want one warning naming data.json, entry %s and %q; logs:\n%s", tc.entry, tc.problem, logs)
			}
			if got == nil {
				t.Fatal("the file was not handed over")
			}
			if _, ok := got.Tuple(hourTuple("other"), now); !ok || len(got.Delays) == 0 || got.Delays["data /q hour"] != otherDelay {
				t.Errorf("the good entries were not kept: tuple %v, delays %v", ok, got.Delays)
			}
			_, kept := got.Tuple(hourTuple("k"), now)
			_, keptDelay := got.Delays["data /p hour"]
			switch {
			case tc.tuple != nil && kept, tc.delay != nil && keptDelay, tc.budget != nil && got.Budget != nil:
				t.Errorf("the entry out of range was kept")
			}
		})
	}
}

// Entries of tuples no longer configured are dropped at load, unread (an
// info line counts them); the file of an API no longer configured is not
// read at all.
func TestStaleEntriesArePruned(t *testing.T) {
	f := NewFile(config.APIData, "acct")
	for i := range 1000 {
		f.Put(hourTuple(fmt.Sprintf("stale%d", i)), Tuple{OK: true})
	}
	f.Put(hourTuple("k"), Tuple{OK: true})
	dir := writeState(t, f)
	got, logs := loadState(t, dir, checkConfig("k"))
	if len(got.Tuples) != 1 {
		t.Errorf("%d tuples taken, want the configured one", len(got.Tuples))
	}
	if !strings.Contains(logs, `msg="state of tuples no longer configured dropped"`) || !strings.Contains(logs, "count=1000") {
		t.Errorf("no line counting the stale entries:\n%s", logs)
	}
	logs2 := &testtool.LogBuffer{}
	s := open(dir, &config.Config{APIs: map[string]*config.API{}}, log.NewLogfmtLogger(logs2), func() time.Time { return now })
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
	cfg := checkConfig("k")
	bound := fileBound(cfg.APIs[config.APIData])
	if bound >= 210<<20 || bound < baseFile+int64(config.DefaultMaxTuples)*perTuple {
		t.Fatalf("bound %d for max_tuples %d", bound, config.DefaultMaxTuples)
	}
	var allocs uint64
	var logs string
	allocs = allocated(func() { _, logs = loadState(t, dir, cfg) })
	if !strings.Contains(logs, "220200960 bytes, more than a state file holds for this configuration (47 MiB); not read") {
		t.Errorf("no warning about the size:\n%s", logs)
	}
	if allocs > 1<<20 {
		t.Errorf("refusing the file allocated %d bytes", allocs)
	}
	t.Logf("a 210 MB state file refused at start with %d bytes allocated", allocs)

	// max_tuples raises the bound, up to maxFile.
	cfg.APIs[config.APIData].MaxTuples = config.MaxMaxTuples
	if b := fileBound(cfg.APIs[config.APIData]); b != maxFile {
		t.Errorf("bound at max_tuples %d: %d, want %d", config.MaxMaxTuples, b, maxFile)
	}
}

// A file of many stale entries within its bound costs their bytes, not
// their values: entries of tuples not configured are skipped unread.
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
	cfg := checkConfig("k")
	var got *File
	allocs := allocated(func() { got, _ = loadState(t, dir, cfg) })
	if len(got.Tuples) != 1 {
		t.Fatalf("%d tuples taken", len(got.Tuples))
	}
	// Decoding every entry allocates 4.2 times the file's bytes besides
	// reading it (measured with Decode); skipping them, reading included,
	// 2.4 times.
	if ratio := float64(allocs) / float64(b.Len()); ratio > 3 {
		t.Errorf("a %d-byte file of %d stale entries allocated %d bytes (%.1f× its size)", b.Len(), stale, allocs, ratio)
	}
	t.Logf("a %d-byte file of %d stale entries: %d bytes allocated at load (%.1f× its size)", b.Len(), stale, allocs, float64(allocs)/float64(b.Len()))
}

// A tuple planned for year 10000 (from a row dated 9999-12-31 23:00, one
// hour later) does not stop the file from being written: its times that
// JSON cannot hold are forgotten, and the day's count is written with
// the rest.
func TestTimesPastYear9999DoNotStopTheWrite(t *testing.T) {
	dir := t.TempDir()
	s := open(dir, nil, log.NewNopLogger(), func() time.Time { return now })
	f := NewFile(config.APIData, "acct")
	year10000 := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Put(hourTuple("k"), Tuple{OK: true, Newest: time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC), Plan: schedule.Plan{Next: year10000}})
	f.Delays = map[string]schedule.Estimate{"data /p hour": {Seen: year10000}}
	f.Budget = &budget.Saved{Day: "2026-11-20", Used: 7, At: now}
	s.Write(config.APIData, f)
	data, err := os.ReadFile(filepath.Join(dir, "data.json"))
	if err != nil {
		t.Fatalf("the file was not written: %v", err)
	}
	back, err := Decode(data, config.APIData)
	if err != nil {
		t.Fatal(err)
	}
	if st := back.Tuples["k"].State; !st.Next.IsZero() || st.Newest.Year() != 9999 || !st.OK {
		t.Errorf("tuple written as %+v", st)
	}
	if back.Budget == nil || back.Budget.Used != 7 || !back.Delays["data /p hour"].Seen.IsZero() {
		t.Errorf("budget %+v, delays %+v", back.Budget, back.Delays)
	}
}

// A listing answer dated ahead of now (it would be reused for ever) is
// dropped with a warning naming it; the others are kept.
func TestListingAnswerFromTheFutureIsDropped(t *testing.T) {
	f := NewFile(config.APIData, "acct")
	f.Lists = map[string]*expand.Answer{
		"/v1/discovery/endpoints": {Rows: []map[string]any{{"a": "b"}}, At: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		"/v1/other":               {Rows: []map[string]any{{"a": "c"}}, At: now.Add(-time.Hour)},
	}
	dir := writeState(t, f)
	logs := &testtool.LogBuffer{}
	s := open(dir, checkConfig("k"), log.NewLogfmtLogger(logs), func() time.Time { return now })
	lists := s.Lists(config.APIData, "acct")
	if _, ok := lists["/v1/discovery/endpoints"]; ok || lists["/v1/other"] == nil {
		t.Errorf("lists kept: %v", lists)
	}
	if !strings.Contains(logs.String(), "entry=lists./v1/discovery/endpoints") || !strings.Contains(logs.String(), "at 9999-01-01T00:00:00Z is more than 10m0s ahead") {
		t.Errorf("no warning naming the listing answer:\n%s", logs)
	}
}
