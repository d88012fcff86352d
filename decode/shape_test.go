package decode

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func parseJSON(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// Every place rows are searched for, in handwritten answers: where they
// were found and how many.
func TestFindRows(t *testing.T) {
	for _, tc := range []struct {
		name, body, pinned string
		hints              []string
		at                 string
		n                  int
	}{
		{"bare array", `[{"symbol":"BTC"},{"symbol":"ETH"}]`, "", nil, ".", 2},
		{"data", `{"data":[{"a":1}]}`, "", nil, "data", 1},
		{"data envelope", `{"status":{"code":200},"result":{"window":"day","data":[{"a":1},{"a":2}]}}`, "", nil, "result.data", 2},
		{"results", `{"count":2,"results":[{"a":1},{"a":2}]}`, "", nil, "results", 2},
		{"items", `{"items":[{"a":1}],"next":null}`, "", nil, "items", 1},
		{"data before items", `{"items":[{"a":1}],"data":[{"a":1},{"a":2}]}`, "", nil, "data", 2},
		{"hint first", `{"data":[{"a":1}],"rows":[{"a":1},{"a":2}]}`, "", []string{"rows"}, "rows", 2},
		{"hint missing", `{"history":[{"a":1}]}`, "", []string{"data"}, "history", 1},
		{"only list of objects", `{"asset":"bitcoin","days":30,"history":[{"score":0.1},{"score":0.2}]}`, "", nil, "history", 2},
		{"a list of names is not rows", `{"handle":"x","covered_assets":["bitcoin"],"accuracy":0.7}`, "", nil, ".", 1},
		{"object is the row", `{"asset":"bitcoin","bullish":12,"score":0.25,"updated_at":"2026-11-20T00:00:00Z"}`, "", nil, ".", 1},
		{"numeric strings make a row", `{"asset":"bitcoin","score":"0.25"}`, "", nil, ".", 1},
		{"object under data is a row", `{"data":{"handle":"x","accuracy":0.7}}`, "", nil, "data", 1},
		{"list inside data", `{"data":{"total":2,"rows":[{"a":1},{"a":2}]}}`, "", nil, "data.rows", 2},
		{"null data is no rows", `{"data":null}`, "", nil, "data", 0},
		{"null answer is no rows", `null`, "", nil, ".", 0},
		{"one empty list", `{"asset":"x","calls":[]}`, "", nil, "calls", 0},
		{"pinned", `{"payload":{"rows":[{"a":1}]},"data":[{"a":1},{"a":2}]}`, "payload.rows", nil, "payload.rows", 1},
		{"pinned root", `{"asset":"bitcoin","score":1}`, ".", nil, ".", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, at, err := FindRows(parseJSON(t, tc.body), tc.pinned, tc.hints...)
			if err != nil || at != tc.at || len(rows) != tc.n {
				t.Errorf("got %d rows at %q (%v), want %d at %q", len(rows), at, err, tc.n, tc.at)
			}
		})
	}
}

// What cannot be read as rows is an error that says why, and names what
// the user can pin.
func TestFindRowsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body, pinned string
		want               []string
	}{
		{"two lists", `{"bullish":[{"handle":"a"}],"bearish":[{"handle":"b"}]}`, "", []string{`"bearish"`, `"bullish"`, "rows:"}},
		{"two lists inside data", `{"data":{"a":[{"x":1}],"b":[{"x":2}]}}`, "", []string{`"data.a"`, `"data.b"`}},
		{"words only", `{"error":"internal_error","message":"Internal server error."}`, "", []string{"no rows", "no numeric field"}},
		{"a number", `5`, "", []string{"a number, not rows"}},
		{"pinned missing", `{"data":[{"a":1}]}`, "result.items", []string{`no "result.items"`, "rows: result.items is set in the configuration"}},
		{"pinned not a list", `{"data":"x"}`, "data", []string{`"data" is a string`, "configuration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := FindRows(parseJSON(t, tc.body), tc.pinned)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestFindTimeKey(t *testing.T) {
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	at := time.Date(2026, 11, 20, 12, 34, 56, 0, time.UTC)
	for _, tc := range []struct {
		name, row, pinned string
		hints             []string
		key               string
		want              time.Time
	}{
		{"date", `{"date":"2026-11-20","x":1}`, "", nil, "date", day},
		{"datetime before date", `{"date":"2026-11-19","datetime":"2026-11-20 12:34:56"}`, "", nil, "datetime", at},
		{"RFC 3339", `{"updated_at":"2026-11-20T12:34:56Z"}`, "", nil, "updated_at", at},
		{"RFC 3339 with offset", `{"updated_at":"2026-11-20T21:34:56+09:00"}`, "", nil, "updated_at", at},
		{"RFC 3339 fraction", `{"time":"2026-11-20T12:34:56.000Z"}`, "", nil, "time", at},
		{"no zone is UTC", `{"created_at":"2026-11-20T12:34:56"}`, "", nil, "created_at", at},
		{"epoch seconds", `{"timestamp":1795178096}`, "", nil, "timestamp", at},
		{"epoch milliseconds", `{"timestamp":1795178096000}`, "", nil, "timestamp", at},
		{"epoch as string", `{"ts":"1795178096000"}`, "", nil, "ts", at},
		{"epoch with a fraction", `{"ts":1795178096.0}`, "", nil, "ts", at},
		{"YYYYMMDD number", `{"as_of":20261120}`, "", nil, "as_of", day},
		{"RFC 3339 without seconds", `{"time":"2026-11-20T12:34Z"}`, "", nil, "time", at.Truncate(time.Minute)},
		{"zone name", `{"time":"2026-11-20 12:34:56 UTC"}`, "", nil, "time", at},
		{"slashes", `{"date":"2026/11/20"}`, "", nil, "date", day},
		{"HTTP date", `{"updated_at":"Fri, 20 Nov 2026 12:34:56 GMT"}`, "", nil, "updated_at", at},
		{"asOf", `{"asOf":"2026-11-20"}`, "", nil, "asOf", day},
		{"hint", `{"day_start":"2026-11-20","date":"2026-11-19"}`, "", []string{"day_start"}, "day_start", day},
		{"unreadable key skipped", `{"date":"yesterday","timestamp":1795178096}`, "", nil, "timestamp", at},
		{"pinned nested", `{"meta":{"at":"2026-11-20T12:34:56Z"},"date":"2026-11-19"}`, "meta.at", nil, "meta.at", at},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := parseJSON(t, tc.row).(map[string]any)
			key, got, ok := FindTimeKey(row, tc.pinned, tc.hints...)
			if !ok || key != tc.key || !got.Equal(tc.want) {
				t.Errorf("got %q %v %v, want %q %v", key, got, ok, tc.key, tc.want)
			}
		})
	}
	for name, row := range map[string]string{
		"none":                `{"score":1}`,
		"small number":        `{"time":42}`,
		"null":                `{"date":null}`,
		"pinned elsewhere":    `{"date":"2026-11-20"}`,
		"a word":              `{"updated_at":"soon"}`,
		"not a date YYYYMMDD": `{"date":20261399}`,
	} {
		pinned := ""
		if name == "pinned elsewhere" {
			pinned = "as_of"
		}
		if key, got, ok := FindTimeKey(parseJSON(t, row).(map[string]any), pinned); ok {
			t.Errorf("%s: found %q %v", name, key, got)
		}
	}
}

// timeCorpus are values under a time key, times or not.
var timeCorpus = []string{"2026-11-20", "2026-11-20T00:00:00Z", "2026-11-20T01:02:03.456+02:00", "2026-11-20t01:02:03Z",
	"2026-11-20 01:02:03", "2026-11-20 1:02", "2026-11-20  01:02:03", "2026-11-20 01:02:03 UTC", "2026-11-20 01:02:03+01:00",
	"20261120", "20261120T010203", "2026/11/20", "2026/11/20 01:02:03", "Fri, 20 Nov 2026 01:02:03 GMT", "fri, 20 nov 2026 01:02:03 +0100",
	"2026-11-20T01:02", "2026-11-20T01:02Z", "2026-11-20T1:02", "2026-1-20", "2026-11-2", "26-11-20", "+2026-11-20", "1763600000",
	"1763600000123", "2026-11-20x", "2026-11-20 ", "2026-11-20T", "", "x", "2026-11-32", "0000-01-01", "9999-12-31T23:59:59.999999999Z"}

// A value of another shape than a layout's is not one the layout reads:
// skipping the layout for it changes nothing.
func TestTimeShapesHoldEveryTimeTheirLayoutReads(t *testing.T) {
	if len(timeShapes) != len(timeLayouts) {
		t.Fatalf("%d shapes for %d layouts", len(timeShapes), len(timeLayouts))
	}
	zones := []*time.Location{time.UTC, time.FixedZone("", -7*3600), time.FixedZone("CET", 3600)}
	for i, layout := range timeLayouts {
		for _, tm := range []time.Time{time.Date(2026, 11, 20, 1, 2, 3, 456, time.UTC), time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)} {
			for _, z := range zones {
				x := tm.In(z).Format(layout)
				if _, err := time.ParseInLocation(layout, x, time.UTC); err == nil && !fits(x, timeShapes[i].prefix, timeShapes[i].exact) {
					t.Errorf("%q: read by %q, not of its shape %q", x, layout, timeShapes[i].prefix)
				}
			}
		}
		for _, x := range timeCorpus {
			checkTimeShape(t, x)
		}
	}
}

func FuzzTimeShapes(f *testing.F) {
	for _, x := range timeCorpus {
		f.Add(x)
	}
	f.Fuzz(checkTimeShape)
}

// checkTimeShape: every layout that reads x is one whose shape x has, and
// ParseTime reads x as trying every layout in turn does.
func checkTimeShape(t *testing.T, x string) {
	var want time.Time
	found := false
	for i, layout := range timeLayouts {
		tm, err := time.ParseInLocation(layout, strings.TrimSpace(x), time.UTC)
		if err != nil {
			continue
		}
		if !fits(strings.TrimSpace(x), timeShapes[i].prefix, timeShapes[i].exact) {
			t.Errorf("%q: read by %q, not of its shape %q", x, layout, timeShapes[i].prefix)
		}
		if !found {
			want, found = tm.UTC(), true
		}
	}
	if got, ok := ParseTime(x); found && (!ok || !got.Equal(want) || got.Location() != want.Location()) {
		t.Errorf("%q: ParseTime %v, %v; the first layout that reads it %v", x, got, ok, want)
	}
}
