package persist

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// savedAt is the time the state files of these tests are read at.
var savedAt = time.Date(2026, 11, 20, 12, 34, 56, 0, time.UTC)

func savedHourTuple(key string) *config.Tuple {
	return &config.Tuple{API: config.APIData, Path: "/v1/btc/market-data/open-interest", Window: "hour", Key: key,
		Params: config.MakeValues("exchange", "binance")}
}

// storeAt opens the Store on dir, reading at `at`.
func storeAt(dir string, at time.Time, logger log.Logger) *Store {
	s := New(state.OpenStore(dir, logger), logger)
	s.now = func() time.Time { return at }
	return s
}

// writeSnapshot writes snap as the data API's file under a new directory,
// as a save does.
func writeSnapshot(t *testing.T, snap *snapshot) string {
	t.Helper()
	dir := t.TempDir()
	s := storeAt(dir, savedAt, log.NewNopLogger())
	s.cache.Restore(snap.API, snap.Account, snap.lists)
	s.write(&snap.Snapshot)
	if _, err := os.Stat(filepath.Join(dir, "data.json")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot is an engine's snapshot and the listing answers of the
// Store's Cache.
type snapshot struct {
	collector.Snapshot
	lists map[string]*expand.Answer
}

func snapshotOf(tuples map[*config.Tuple]collector.Tuple) *snapshot {
	snap := &snapshot{Snapshot: collector.Snapshot{API: config.APIData, Account: "acct", Tuples: map[string]collector.SavedTuple{}}}
	for tu, s := range tuples {
		snap.Tuples[tu.Key] = collector.SaveTuple(tu, s)
	}
	return snap
}

// takeData takes back the data API's file of dir for the tuples given,
// at savedAt; it returns what was taken and the log.
func takeData(t *testing.T, dir string, tuples ...*config.Tuple) (*collector.Saved, string) {
	t.Helper()
	logs := &testtool.LogBuffer{}
	s := storeAt(dir, savedAt, log.NewLogfmtLogger(logs))
	return s.Take(&config.API{Name: config.APIData, Tuples: tuples}, "acct", savedAt), logs.String()
}

// A state file written by an earlier release (format version 3,
// testdata/state-v3) is taken back whole, each part by its owner, and a
// save of what was taken writes it again byte for byte, but for the roles
// a key's series played in the process that wrote it (leader, chaser),
// which are no longer saved: the layout did not change.
func TestStateFileOfAnEarlierReleaseTakenBack(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "state-v3", "data.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.json"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	logs := &testtool.LogBuffer{}
	s := storeAt(dir, at, log.NewLogfmtLogger(logs))
	tu := savedHourTuple("k")
	lists := s.Cache().Saved(config.APIData, "acct")
	raw := state.OpenStore(dir, log.NewNopLogger()).Pauses(config.APIData, "acct")
	var pauses []upstream.Pause
	if err := json.Unmarshal(raw, &pauses); err != nil || len(pauses) != 1 || pauses[0].By != "quota_exceeded" {
		t.Errorf("pauses %s (%v)", raw, err)
	}
	got := s.Take(&config.API{Name: config.APIData, Tuples: []*config.Tuple{tu}}, "acct", at)
	if got == nil || strings.Contains(logs.String(), "level=warn") {
		t.Fatalf("not taken back: %+v\n%s", got, logs)
	}
	st, ok := got.Tuples["k"]
	if !ok || !st.OK || st.Samples[0].Value != 1.5e9 || *st.Block != 870000 || !st.Next.Time().Equal(at.Add(65*time.Minute)) || st.Due != 65*time.Minute {
		t.Errorf("tuple taken back as %+v", st)
	}
	if e := got.Delays["data /v1/btc/market-data/open-interest hour"]; e.First != 65*time.Minute || e.Leader != "" || e.Rows != 12 {
		t.Errorf("delays taken back as %+v", got.Delays)
	}
	if got.Budget == nil || got.Budget.Used != 42 {
		t.Errorf("day's count taken back as %+v", got.Budget)
	}
	if n, ok := lists["/v1/discovery/endpoints"].Rows[0]["n"].(json.Number); !ok || n != "12345678901234567000" {
		t.Errorf("a listing row's number taken back as %#v; want json.Number, as upstream.List reads it", lists["/v1/discovery/endpoints"].Rows[0]["n"])
	}
	again := t.TempDir()
	writeAgain := storeAt(again, at, log.NewNopLogger())
	writeAgain.cache.Restore(config.APIData, "acct", lists)
	writeAgain.Save([]collector.Snapshot{{API: config.APIData, Account: "acct",
		Tuples: map[string]collector.SavedTuple{"k": collector.SaveTuple(tu, st)}, Delays: got.Delays, Pauses: pauses,
		Budget: got.Budget}})
	written, err := os.ReadFile(filepath.Join(again, "data.json"))
	old = bytes.Replace(old, []byte(`"chased":"0001-01-01T00:00:00Z","leader":"k","leader_at":"2026-11-20T11:00:00Z",`), nil, 1)
	if err != nil || !sameJSON(written, old) {
		t.Errorf("written again (%v):\n%s\nwant:\n%s", err, written, old)
	}
}

// sameJSON says a and b hold the same JSON values, whatever the order of
// an object's keys (a field moved within its struct writes another).
func sameJSON(a, b []byte) bool {
	var x, y any
	for _, v := range []struct {
		data []byte
		to   *any
	}{{a, &x}, {b, &y}} {
		d := json.NewDecoder(bytes.NewReader(v.data))
		d.UseNumber()
		if d.Decode(v.to) != nil {
			return false
		}
	}
	return reflect.DeepEqual(x, y)
}

// A saved tuple applies to a configured tuple of the same request and
// series only.
func TestTupleTakenBySameDigest(t *testing.T) {
	dir := writeSnapshot(t, snapshotOf(map[*config.Tuple]collector.Tuple{savedHourTuple("k"): {OK: true, Failures: 3}}))
	if got, _ := takeData(t, dir, savedHourTuple("k")); got.Tuples["k"].Failures != 3 || !got.Tuples["k"].OK {
		t.Errorf("the same tuple: %+v", got.Tuples)
	}
	changes := map[string]func(*config.Tuple){
		"path":   func(t *config.Tuple) { t.Path = "/v1/btc/market-data/funding-rates" },
		"window": func(t *config.Tuple) { t.Window = "day" },
		"query":  func(t *config.Tuple) { t.Params = config.MakeValues("exchange", "okx") },
		"fields": func(t *config.Tuple) { t.Fields = map[string]*config.Field{"open_interest": {Scale: 2}} },
		"labels": func(t *config.Tuple) {
			t.Group, t.LabelValues = &config.LabelGroup{Name: t.LabelGroup(), Names: []string{"venue"}}, []string{"b"}
		},
		"cache_ttl": func(t *config.Tuple) { t.CacheTTL = 60 },
		"rows":      func(t *config.Tuple) { t.Entry = &config.Entry{Rows: "history"} },
	}
	for name, change := range changes {
		c := savedHourTuple("k")
		change(c)
		got, logs := takeData(t, dir, c)
		if _, ok := got.Tuples["k"]; ok || strings.Contains(logs, "level=warn") {
			t.Errorf("a tuple whose %s changed takes the saved state (or warns):\n%s", name, logs)
		}
	}
	if got, _ := takeData(t, dir, savedHourTuple("other")); len(got.Tuples) != 0 {
		t.Error("another key takes the saved state")
	}
	if (*Store)(nil).Take(&config.API{Name: config.APIData}, "acct", savedAt) != nil {
		t.Error("a nil Store has a file")
	}
}

// Each number a state file restores is within what the exporter writes,
// or its entry is dropped with one warning naming the file and the
// entry; the other entries are kept.
func TestStateEntriesOutOfRangeAreDropped(t *testing.T) {
	now := savedAt
	block := 870000.0
	good := collector.Tuple{OK: true, RowTime: schedule.InstantOf(now.Add(-time.Hour)), Newest: schedule.InstantOf(now.Add(-time.Hour)), Interval: time.Hour, Block: &block,
		LastSuccess: schedule.InstantOf(now.Add(-time.Minute)), LastAttempt: schedule.InstantOf(now.Add(-time.Minute)), Failures: 1,
		Samples: []decode.Sample{{Field: &config.Field{Name: "x", Scale: 1}, Value: 42}},
		Poll:    schedule.Poll{Next: schedule.InstantOf(now.Add(time.Hour)), Due: 5 * time.Minute, Polls: 2}}
	goodDelay := schedule.Estimate{First: 5 * time.Minute, Depth: time.Minute, Credit: 1, Rows: 3, Seen: now.Add(-time.Hour)}
	negative := -1.0
	cases := []struct {
		name, entry, problem string
		tuple                func(*collector.Tuple)
		delay                func(*schedule.Estimate)
		budget               func(*budget.Saved)
	}{
		{name: "learned delay of 9e18 ns", entry: "delays.data /p hour", problem: "learned first 2562047h47m16.854775807s is beyond 4h0m0s",
			delay: func(e *schedule.Estimate) { e.First = math.MaxInt64 }},
		{name: "row seen in 9999", entry: "delays.data /p hour", problem: "seen 9999-12-31T23:00:00Z is more than",
			delay: func(e *schedule.Estimate) { e.Seen = time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC) }},
		{name: "+Inf sample", entry: "tuples.k", problem: "sample 0 is +Inf, not a finite number",
			tuple: func(s *collector.Tuple) { s.Samples[0].Value = math.Inf(1) }},
		{name: "NaN sample", entry: "tuples.k", problem: "sample 0 is NaN, not a finite number",
			tuple: func(s *collector.Tuple) { s.Samples[0].Value = math.NaN() }},
		{name: "negative block", entry: "tuples.k", problem: "block height -1 is not a block",
			tuple: func(s *collector.Tuple) { s.Block = &negative }},
		{name: "newest row in 2200", entry: "tuples.k", problem: "newest 2200-12-31T23:00:00Z is more than 1h0m0s ahead of now",
			tuple: func(s *collector.Tuple) {
				s.Newest = schedule.InstantOf(time.Date(2200, 12, 31, 23, 0, 0, 0, time.UTC))
			}},
		{name: "attempt in the future", entry: "tuples.k", problem: "last_attempt 2026-11-20T13:34:56Z is more than 10m0s ahead",
			tuple: func(s *collector.Tuple) { s.LastAttempt = schedule.InstantOf(now.Add(time.Hour)) }},
		{name: "attempt before 1970", entry: "tuples.k", problem: "last_attempt 1969-12-31T00:00:00Z is before 1970",
			tuple: func(s *collector.Tuple) {
				s.LastAttempt = schedule.InstantOf(time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC))
			}},
		{name: "huge failures", entry: "tuples.k", problem: "failures 9223372036854775807 is not between 0 and 1000000",
			tuple: func(s *collector.Tuple) { s.Failures = math.MaxInt64 }},
		{name: "planned offset of centuries", entry: "tuples.k", problem: "planned offsets (due 2562047h47m16.854775807s, missed 0s) are beyond 4h0m0s for hour rows",
			tuple: func(s *collector.Tuple) { s.Due = math.MaxInt64 }},
		{name: "negative spacing", entry: "tuples.k", problem: "row spacing -1h0m0s is not between 0 and 744h0m0s",
			tuple: func(s *collector.Tuple) { s.Interval = -time.Hour }},
		{name: "count of MaxInt64", entry: "budget", problem: "saved counts are beyond any day's calls",
			budget: func(s *budget.Saved) { s.Used = math.MaxInt64 }},
		{name: "budget saved in the future", entry: "budget", problem: "later than now",
			budget: func(s *budget.Saved) { s.At = now.Add(time.Hour) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tu := good
			tu.Samples = append([]decode.Sample(nil), good.Samples...)
			d := goodDelay
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
			snap := snapshotOf(map[*config.Tuple]collector.Tuple{savedHourTuple("k"): tu, savedHourTuple("other"): good})
			snap.Delays = map[string]schedule.Estimate{"data /p hour": d, "data /q hour": goodDelay}
			snap.Budget = &b
			got, logs := takeData(t, writeSnapshot(t, snap), savedHourTuple("k"), savedHourTuple("other"))
			var warning string
			for _, l := range strings.Split(logs, "\n") {
				if strings.Contains(l, "level=warn") {
					if warning != "" {
						t.Errorf("more than one warning:\n%s", logs)
					}
					warning = l
				}
			}
			if !strings.Contains(warning, "entry="+tc.entry) && !strings.Contains(warning, `entry="`+tc.entry+`"`) ||
				!strings.Contains(warning, tc.problem) || !strings.Contains(warning, "data.json") {
				t.Errorf("want one warning naming data.json, entry %s and %q; logs:\n%s", tc.entry, tc.problem, logs)
			}
			if got == nil {
				t.Fatal("the file was not handed over")
			}
			if _, ok := got.Tuples["other"]; !ok || !reflect.DeepEqual(got.Delays["data /q hour"], goodDelay) {
				t.Errorf("the good entries were not kept: tuples %v, delays %v", got.Tuples, got.Delays)
			}
			_, kept := got.Tuples["k"]
			_, keptDelay := got.Delays["data /p hour"]
			switch {
			case tc.tuple != nil && kept, tc.delay != nil && keptDelay, tc.budget != nil && got.Budget != nil:
				t.Errorf("the entry out of range was kept")
			}
		})
	}
}

// A file whose tuple's newest row is dated in 9999 (past what the engine
// holds of a time, the year 2262) has that entry dropped with a warning
// that says so; the other entries are taken.
func TestStateEntryOfYear9999IsDropped(t *testing.T) {
	good := collector.Tuple{OK: true, Newest: schedule.InstantOf(time.Date(2200, 12, 31, 23, 0, 0, 0, time.UTC))}
	snap := snapshotOf(map[*config.Tuple]collector.Tuple{savedHourTuple("k"): good, savedHourTuple("other"): {OK: true}})
	dir := writeSnapshot(t, snap)
	file := filepath.Join(dir, "data.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	far := bytes.Replace(data, []byte(`"2200-12-31T23:00:00Z"`), []byte(`"9999-12-31T23:00:00Z"`), 1)
	if bytes.Equal(far, data) {
		t.Fatalf("no newest row of 2200 in %s", data)
	}
	if err := os.WriteFile(file, far, 0o600); err != nil {
		t.Fatal(err)
	}
	got, logs := takeData(t, dir, savedHourTuple("k"), savedHourTuple("other"))
	if !strings.Contains(logs, "level=warn") || !strings.Contains(logs, "tuples.k") || !strings.Contains(logs, "newest is past the year 2262") {
		t.Errorf("want a warning naming tuples.k and its newest row past 2262; logs:\n%s", logs)
	}
	if got == nil {
		t.Fatal("the file was not handed over")
	}
	if _, kept := got.Tuples["k"]; kept {
		t.Error("the entry of year 9999 was kept")
	}
	if _, kept := got.Tuples["other"]; !kept {
		t.Error("the other entry was not kept")
	}
}

// A tuple planned for year 10000 (from a row dated 9999-12-31 23:00, one
// hour later) does not stop the file from being written: its times that
// JSON cannot hold are forgotten (those past 2262, which the engine does
// not hold), and the day's count is written with the rest; a row of 2200
// is kept.
func TestTimesPastYear9999DoNotStopTheWrite(t *testing.T) {
	year10000 := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := snapshotOf(map[*config.Tuple]collector.Tuple{savedHourTuple("k"): {OK: true, Since: schedule.InstantOf(time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)), Newest: schedule.InstantOf(time.Date(2200, 12, 31, 23, 0, 0, 0, time.UTC)), Poll: schedule.Poll{Next: schedule.InstantOf(year10000)}}})
	snap.Delays = map[string]schedule.Estimate{"data /p hour": {Seen: year10000}}
	snap.Pauses = []upstream.Pause{{Until: year10000, By: "x"}}
	snap.Budget = &budget.Saved{Day: "2026-11-20", Used: 7, At: savedAt}
	dir := writeSnapshot(t, snap)
	data, err := os.ReadFile(filepath.Join(dir, "data.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := state.Decode(data, config.APIData)
	if err != nil {
		t.Fatal(err)
	}
	var st collector.SavedTuple
	var delays map[string]schedule.Estimate
	var b budget.Saved
	if err := json.Unmarshal(f.Tuples["k"], &st); err != nil || !st.State.Next.IsZero() || !st.State.Since.IsZero() || st.State.Newest.Time().Year() != 2200 || !st.State.OK {
		t.Errorf("tuple written as %s (%v)", f.Tuples["k"], err)
	}
	if json.Unmarshal(f.Delays, &delays) != nil || !delays["data /p hour"].Seen.IsZero() || json.Unmarshal(f.Budget, &b) != nil || b.Used != 7 {
		t.Errorf("delays %s, budget %s", f.Delays, f.Budget)
	}
}

// A listing answer dated ahead of now (it would be reused for ever) is
// dropped with a warning naming it; the others go to the Cache.
func TestListingAnswerFromTheFutureIsDropped(t *testing.T) {
	snap := snapshotOf(nil)
	snap.lists = map[string]*expand.Answer{
		"/v1/discovery/endpoints": {Rows: []map[string]any{{"a": "b"}}, At: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		"/v1/other":               {Rows: []map[string]any{{"a": "c"}}, At: savedAt.Add(-time.Hour)},
	}
	dir := writeSnapshot(t, snap)
	logs := &testtool.LogBuffer{}
	lists := storeAt(dir, savedAt, log.NewLogfmtLogger(logs)).Cache().Saved(config.APIData, "acct")
	if _, ok := lists["/v1/discovery/endpoints"]; ok || lists["/v1/other"] == nil {
		t.Errorf("lists kept: %v", lists)
	}
	if !strings.Contains(logs.String(), "entry=lists./v1/discovery/endpoints") || !strings.Contains(logs.String(), "at 9999-01-01T00:00:00Z is more than 10m0s ahead") {
		t.Errorf("no warning naming the listing answer:\n%s", logs)
	}
}

// A nil Store keeps nothing, and every method accepts it.
func TestNilStoreKeepsNothing(t *testing.T) {
	if s := New(nil, log.NewNopLogger()); s != nil {
		t.Fatalf("New without files: %v", s)
	}
	if s, err := Open("", &config.Config{}, log.NewNopLogger()); s != nil || err != nil {
		t.Fatalf("Open without a directory: %v, %v", s, err)
	}
	var s *Store
	s.Keep(nil)
	s.Save([]collector.Snapshot{{API: config.APIData}})
	if c := s.Cache(); c != nil {
		t.Errorf("Cache: %v", c)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// A client's saved pauses are restored once, for its account only.
func TestPausesRestoredOnceForTheAccount(t *testing.T) {
	a := &config.API{Name: config.APIData, Concurrency: 1, Timeout: time.Second, URL: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}}
	account := upstream.Account(a)
	snap := snapshotOf(nil)
	snap.Account = account
	snap.Pauses = []upstream.Pause{{Keyed: true, Until: time.Now().Add(time.Hour), By: "quota_exceeded"}}
	dir := writeSnapshot(t, snap)
	client := func() *upstream.Client {
		return upstream.New(a, upstream.NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
	}
	s := storeAt(dir, savedAt, log.NewNopLogger())
	c := client()
	s.Keep(c)
	if ps := c.Pauses(); len(ps) != 1 || !ps[0].Keyed {
		t.Errorf("pauses restored: %+v", ps)
	}
	again := client()
	s.Keep(again)
	if ps := again.Pauses(); len(ps) != 0 {
		t.Errorf("pauses restored twice: %+v", ps)
	}
	other := &config.API{Name: config.APIData, Concurrency: 1, Timeout: time.Second, URL: &url.URL{Scheme: "http", Host: "127.0.0.1:2"}}
	oc := upstream.New(other, upstream.NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
	storeAt(dir, savedAt, log.NewNopLogger()).Keep(oc)
	if ps := oc.Pauses(); len(ps) != 0 {
		t.Errorf("another account's client took the pauses: %+v", ps)
	}
}
