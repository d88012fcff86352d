package state

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// keys returns the sorted keys of a JSON object.
func keys(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not a JSON object: %#v", v)
	}
	return slices.Sorted(maps.Keys(m))
}

// sampleFile is a file of every part, each an owner's snapshot as the
// owner would write it.
func sampleFile() *File {
	f := NewFile("data", "acct")
	f.Tuples["k"] = json.RawMessage(`{"digest":"d","state":{"ok":true,"polls":2}}`)
	f.Tuples["j"] = json.RawMessage(`{"digest":"e","state":{}}`)
	f.Delays = json.RawMessage(`{"data /p hour":{"first":60000000000}}`)
	f.Pauses = json.RawMessage(`[{"keyed":true,"until":"2026-11-20T13:00:00Z","by":"x"}]`)
	f.Lists = json.RawMessage(`{"/p":{"rows":[{"a":1}],"at":"2026-11-20T12:00:00Z"}}`)
	f.Budget = json.RawMessage(`{"day":"2026-11-20","used":3,"at":"2026-11-20T12:00:00Z"}`)
	return f
}

// TestFileShape pins the names a state file is written with at the level
// this package owns: a file of another shape is a file of another
// version, which a restart ignores. Each part is written as its owner
// gave it and read back byte for byte.
func TestFileShape(t *testing.T) {
	f := sampleFile()
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
	back, err := Decode(data, "data")
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]json.RawMessage{
		"tuples.k": {f.Tuples["k"], back.Tuples["k"]}, "tuples.j": {f.Tuples["j"], back.Tuples["j"]},
		"delays": {f.Delays, back.Delays}, "pauses": {f.Pauses, back.Pauses},
		"lists": {f.Lists, back.Lists}, "budget": {f.Budget, back.Budget},
	} {
		if string(pair[0]) != string(pair[1]) {
			t.Errorf("%s written as %s, read back as %s", name, pair[0], pair[1])
		}
	}
	if len(back.Tuples) != 2 {
		t.Errorf("%d tuples read back, want 2", len(back.Tuples))
	}
	// An empty file of the format: no part but its head.
	empty, err := json.Marshal(NewFile("data", "acct"))
	if err != nil || string(empty) != `{"version":3,"api":"data","account":"acct"}` {
		t.Errorf("an empty file is %s (%v)", empty, err)
	}
}

// Decode refuses what is not a state file of this format and API, naming
// the problem; what the owners' parts hold is not its to judge.
func TestDecode(t *testing.T) {
	cases := []struct{ name, data, problem string }{
		{"empty", " \n", "empty file"},
		{"not JSON", "{", "not a state file"},
		{"other version", `{"version":2,"api":"data"}`, "format version 2, this exporter reads version 3"},
		{"other API", `{"version":3,"api":"indicator"}`, `the file holds the state of API "indicator", not "data"`},
		{"wrong types", `{"version":3,"api":"data","account":5}`, "corrupt state"},
		{"tuples not an object", `{"version":3,"api":"data","tuples":[1]}`, "the tuples are not an object"},
		{"data after the end", `{"version":3,"api":"data"} {}`, "after top-level value"},
	}
	for _, tc := range cases {
		if _, err := Decode([]byte(tc.data), "data"); err == nil || !strings.Contains(err.Error(), tc.problem) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.problem)
		}
	}
	f, err := Decode([]byte(`{"version":3,"api":"data","account":"a","tuples":{"k":{"state":{"polls":"many"}}},"delays":null,"lists":{"/p":null}}`), "data")
	if err != nil {
		t.Fatalf("a file whose parts an owner would refuse: %v", err)
	}
	if string(f.Tuples["k"]) != `{"state":{"polls":"many"}}` || f.Delays != nil || string(f.Lists) != `{"/p":null}` {
		t.Errorf("parts read as tuples %s, delays %s, lists %s", f.Tuples["k"], f.Delays, f.Lists)
	}
}
