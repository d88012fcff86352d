package state

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

var now = time.Date(2026, 11, 20, 12, 34, 56, 0, time.UTC)

func hourTuple(key string) *config.Tuple {
	return &config.Tuple{API: config.APIData, Path: "/v1/btc/market-data/open-interest", Window: "hour", Key: key,
		Query: map[string][]string{"exchange": {"binance"}}}
}

// keys returns the sorted keys of a JSON object.
func keys(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not a JSON object: %#v", v)
	}
	return slices.Sorted(maps.Keys(m))
}

// TestFileShape pins the names a state file is written with, at every
// level this package owns: a file of another shape is a file of another
// version, which a restart ignores.
func TestFileShape(t *testing.T) {
	block := 870000.0
	f := NewFile(config.APIData, "acct")
	f.Delays = map[string]schedule.Estimate{"k": {First: time.Minute}}
	f.Pauses = []upstream.Pause{{Until: now, By: "x"}}
	f.Lists = map[string]*expand.Answer{"/p": {Rows: []map[string]any{{"a": 1}}, At: now}}
	f.Budget = &budget.Saved{Day: "2026-11-20", Used: 3, At: now}
	f.Put(hourTuple("k"), Tuple{
		Samples: []decode.Sample{{Field: &config.Field{Name: "a"}, Value: 1}},
		RowTime: now, Newest: now, Interval: time.Hour, Block: &block, Deprecated: true,
		OK: true, LastCode: "x", LastSuccess: now, LastAttempt: now, FailingSince: now, Failures: 2,
		Plan: schedule.Plan{Next: now, Planned: true, Due: time.Minute, Probing: true, Following: true, Polls: 1, Missed: time.Second},
	})
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if got, want := keys(t, v), []string{"account", "api", "budget", "delays", "lists", "pauses", "tuples", "version"}; !slices.Equal(got, want) {
		t.Errorf("file keys %v, want %v", got, want)
	}
	if v["version"] != 3.0 || v["api"] != "data" || v["account"] != "acct" {
		t.Errorf("version, api, account: %v %v %v", v["version"], v["api"], v["account"])
	}
	entry := v["tuples"].(map[string]any)["k"]
	if got, want := keys(t, entry), []string{"digest", "state"}; !slices.Equal(got, want) {
		t.Errorf("tuple entry keys %v, want %v", got, want)
	}
	want := []string{"block", "deprecated", "due", "failing_since", "failures", "following", "interval",
		"last_attempt", "last_code", "last_success", "missed", "newest", "next", "ok", "planned", "polls",
		"probing", "row_time", "samples"}
	if got := keys(t, entry.(map[string]any)["state"]); !slices.Equal(got, want) {
		t.Errorf("tuple state keys %v, want %v", got, want)
	}
	if got := keys(t, v["lists"].(map[string]any)["/p"]); !slices.Equal(got, []string{"at", "rows"}) {
		t.Errorf("listing answer keys %v, want [at rows]", got)
	}
}

// A saved tuple applies to a configured tuple of the same request and
// series only.
func TestTupleTakenBySameDigest(t *testing.T) {
	f := NewFile(config.APIData, "acct")
	f.Put(hourTuple("k"), Tuple{OK: true, Failures: 3})
	if s, ok := f.Tuple(hourTuple("k"), now); !ok || !s.OK || s.Failures != 3 {
		t.Errorf("the same tuple: %+v, %v", s, ok)
	}
	changes := map[string]func(*config.Tuple){
		"path":      func(t *config.Tuple) { t.Path = "/v1/btc/market-data/funding-rates" },
		"window":    func(t *config.Tuple) { t.Window = "day" },
		"query":     func(t *config.Tuple) { t.Query = map[string][]string{"exchange": {"okx"}} },
		"fields":    func(t *config.Tuple) { t.Fields = map[string]*config.Field{"open_interest": {Scale: 2}} },
		"labels":    func(t *config.Tuple) { t.LabelNames, t.LabelValues = []string{"venue"}, []string{"b"} },
		"cache_ttl": func(t *config.Tuple) { t.CacheTTL = 60 },
		"rows":      func(t *config.Tuple) { t.Rows = "history" },
	}
	for name, change := range changes {
		c := hourTuple("k")
		change(c)
		if _, ok := f.Tuple(c, now); ok {
			t.Errorf("a tuple whose %s changed takes the saved state", name)
		}
	}
	if _, ok := f.Tuple(hourTuple("other"), now); ok {
		t.Error("another key takes the saved state")
	}
	var none *File
	if _, ok := none.Tuple(hourTuple("k"), now); ok {
		t.Error("a nil file has a tuple")
	}
}

// A saved plan further ahead than any schedule plans is not trusted: the
// tuple is due at once. One within it stands.
func TestPlanBeyondScheduleIsDropped(t *testing.T) {
	for _, tu := range []*config.Tuple{hourTuple("k"), {API: config.APIData, Path: "/p", Window: "day", Key: "d"},
		{API: config.APIData, Path: "/p", Key: "ttl", CacheTTL: 3 * 86400}} {
		ahead := plannedAhead(tu)
		if ahead < upstream.MaxRestoredPause {
			t.Errorf("%s: plans up to %v ahead, less than a restored pause (%v)", tu.Key, ahead, upstream.MaxRestoredPause)
		}
		f := NewFile(config.APIData, "acct")
		f.Put(tu, Tuple{Plan: schedule.Plan{Next: now.Add(ahead - time.Second)}})
		if s, _ := f.Tuple(tu, now); !s.Next.Equal(now.Add(ahead - time.Second)) {
			t.Errorf("%s: a plan within %v ahead became %v", tu.Key, ahead, s.Next)
		}
		f.Put(tu, Tuple{Plan: schedule.Plan{Next: now.Add(ahead + time.Second), Polls: 2}})
		if s, ok := f.Tuple(tu, now); !ok || !s.Next.IsZero() || s.Polls != 2 {
			t.Errorf("%s: a plan beyond %v ahead: %v (ok %v, polls %d); want it due at once, the rest kept", tu.Key, ahead, s.Next, ok, s.Polls)
		}
	}
}

func TestDecode(t *testing.T) {
	cases := []struct{ name, data, problem string }{
		{"empty", " \n", "empty file"},
		{"not JSON", "{", "not a state file"},
		{"other version", `{"version":2,"api":"data"}`, "format version 2, this exporter reads version 3"},
		{"other API", `{"version":3,"api":"indicator"}`, `the file holds the state of API "indicator", not "data"`},
		{"wrong types", `{"version":3,"api":"data","tuples":{"k":{"state":{"polls":"many"}}}}`, "corrupt state"},
		{"data after the end", `{"version":3,"api":"data"} {}`, "after top-level value"},
	}
	for _, tc := range cases {
		if _, err := Decode([]byte(tc.data), "data"); err == nil || !strings.Contains(err.Error(), tc.problem) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.problem)
		}
	}
	f, err := Decode([]byte(`{"version":3,"api":"data","account":"a","tuples":{"k":{"digest":"d","state":{"polls":-3,"failures":-1}}},"lists":{"/p":null,"/q":{"rows":[{"a":1}]}}}`), "data")
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Tuples["k"].State; s.Polls != 0 || s.Failures != 0 {
		t.Errorf("negative counters decoded as polls %d, failures %d; want 0", s.Polls, s.Failures)
	}
	if _, ok := f.Lists["/p"]; ok || f.Lists["/q"] == nil {
		t.Errorf("lists decoded as %v; want /q alone", f.Lists)
	}
	if n, ok := f.Lists["/q"].Rows[0]["a"].(json.Number); !ok || n != "1" {
		t.Errorf("a listing row's number decoded as %#v; want json.Number 1, as upstream.List reads it", f.Lists["/q"].Rows[0]["a"])
	}
}
