package page

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Every field docs/operations.md names for /api/v1/status is one the JSON
// has, and every field the JSON has is named there.
func TestJSONFieldsAsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "| field | what |")
	if start < 0 {
		t.Fatal("docs/operations.md has no table of the JSON's fields")
	}
	table := doc[start:]
	table = table[:strings.Index(table, "\n\n")]
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_]+)(\\[\\])?`").FindAllStringSubmatch(table, -1) {
		if !strings.HasPrefix(m[1], "onchain_exporter_") { // the metric a field equals
			documented[m[1]] = true
		}
	}
	now := time.Now()
	one := 1.0
	yes := true
	plans := []PlanChange{{At: now, Plan: "p", Summary: "s", Changed: []string{"c"}, ForSeries: "f"}}
	st := Status{Findings: []string{}, States: map[string]int{},
		Cluster: &Cluster{Members: []Member{{HeartbeatAge: &one, SameConfig: &yes, Failed: now}}, Fallbacks: []Fallback{{}}},
		APIs: []API{{URL: "u", Auth: "a", Credential: "c", TimeoutSeconds: 1, Concurrency: 1, MaxStaleness: 1, RevalidateEvery: 1, MaxTuples: 1, Hold: "h",
			Entries: []Entry{{}}, Pauses: []Pause{{}}, Expansion: Expansion{Read: now, Error: "e"},
			Patterns: []Pattern{{Left: []string{"l"}, Error: "e"}}, PlanHistory: plans, Fill: &Fill{Done: now}, Waiting: &Waiting{}}},
		Endpoints: []Endpoint{{PublicationDelay: &one}},
		Series: SeriesPage{Items: []Series{{Newest: now, Age: 1, Spacing: 1, Next: now, Error: "e", Failing: now, Owner: "o", Deprec: true, Earliest: 1,
			HeldUntil: now, PlanHistory: plans, Values: []Value{{Labels: map[string]string{"l": "v"}}}, Points: []Point{{At: now}}, Changed: now, Due: now, Answers: []Answer{{At: now, Duration: &one, Outcome: "o", Code: "c", HeldBy: "h", Until: now, By: "b",
				Rows: "r", TimeKey: "t", CountedBy: "c", LabelsFrom: "l", Expected: true, Samples: 1, Fields: 1, Newest: now, Note: "n"}}}}}}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				keys[k] = true
				if k != "labels" && k != "states" {
					walk(e)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	walk(v)
	for k := range keys {
		if !documented[k] {
			t.Errorf("the JSON has %q, which docs/operations.md does not name", k)
		}
	}
	for k := range documented {
		if !keys[k] {
			t.Errorf("docs/operations.md names %q, which the JSON does not have", k)
		}
	}
}
