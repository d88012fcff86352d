package fakeapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// answer serves target from both dialects at the same time and returns
// the two bodies, parsed with numbers kept as json.Number.
func answers(t *testing.T, target string) (a, b any) {
	t.Helper()
	for i, d := range []Dialect{DialectA, DialectB} {
		s, _ := newTestServer(Options{Dialect: d})
		rec := get(t, s, target)
		if rec.Code != http.StatusOK {
			t.Fatalf("dialect %s: GET %s: HTTP %d %s", d, target, rec.Code, rec.Body)
		}
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("dialect %s: %v", d, err)
		}
		if i == 0 {
			a = v
		} else {
			b = v
		}
	}
	return a, b
}

func objOf(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v (%T) is not an object", v, v)
	}
	return m
}

func listOf(t *testing.T, v any) []map[string]any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("%v (%T) is not a list", v, v)
	}
	out := make([]map[string]any, len(l))
	for i, it := range l {
		out[i] = objOf(t, it)
	}
	return out
}

// moved returns row with its "date" dropped and key set to want(date).
func moved(t *testing.T, row map[string]any, key string, want func(time.Time) any) map[string]any {
	t.Helper()
	day, err := time.Parse(time.DateOnly, row["date"].(string))
	if err != nil {
		t.Fatal(err)
	}
	out := maps.Clone(row)
	delete(out, "date")
	out[key] = want(day)
	return out
}

func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n B %v\n A %v", what, got, want)
	}
}

func dateString(d time.Time) any { return d.Format(time.DateOnly) }
func rfcString(d time.Time) any  { return d.Format(time.RFC3339) }
func millis(d time.Time) any     { return json.Number(strconv.FormatInt(d.UnixMilli(), 10)) }

// Dialect B serves every Indicator and Analyst Consensus answer in its own
// shape, with the numbers and times of dialect A. Each dialect is read
// here by its own known shape, not by the exporter's detection.
func TestDialectBServesTheNumbersOfA(t *testing.T) {
	for _, path := range []string{"/indicator/api/equities", "/indicator/api/indicators", "/consensus/assets",
		"/consensus/analysts/chain_oracle/calls?asset=bitcoin"} {
		a, b := answers(t, path)
		same(t, path, listOf(t, b), listOf(t, objOf(t, a)["data"]))
	}

	a, b := answers(t, "/indicator/api/equities/KRX:005930/pbr-band?limit=5")
	var want []map[string]any
	for _, r := range listOf(t, objOf(t, a)["data"]) {
		want = append(want, moved(t, r, "timestamp", millis))
	}
	same(t, "pbr-band", listOf(t, objOf(t, b)["items"]), want)
	same(t, "pbr-band equity", objOf(t, b)["equity"], objOf(t, a)["equity"])

	a, b = answers(t, "/consensus/consensus?asset=btc")
	latest := moved(t, listOf(t, objOf(t, a)["data"])[0], "updated_at", rfcString)
	latest["asset"] = "bitcoin"
	same(t, "consensus", objOf(t, b), latest)

	a, b = answers(t, "/consensus/consensus?asset=btc&days=30")
	want = nil
	for _, r := range listOf(t, objOf(t, a)["data"]) {
		want = append(want, moved(t, r, "as_of", dateString))
	}
	same(t, "consensus history", listOf(t, objOf(t, b)["history"]), want)
	same(t, "consensus days", objOf(t, b)["days"], json.Number("30"))

	a, b = answers(t, "/consensus/analysts/top?asset=bitcoin&limit=5")
	same(t, "top", listOf(t, objOf(t, b)["results"]), listOf(t, objOf(t, a)["data"]))

	a, b = answers(t, "/consensus/analysts/chain_oracle")
	same(t, "profile", objOf(t, b), moved(t, objOf(t, objOf(t, a)["data"]), "updated_at", rfcString))

	// Views and calls: one row per analyst, counted by direction, give A's
	// counts.
	for _, tc := range []struct{ path, label, list, at string }{
		{"/consensus/analyst-views?asset=ethereum", "stance", "", "as_of"},
		{"/consensus/calls?asset=ethereum", "direction", "calls", "updated_at"},
	} {
		a, b := answers(t, tc.path)
		counts := map[string]any{}
		for _, r := range listOf(t, objOf(t, a)["data"]) {
			counts[r[tc.label].(string)] = r["count"]
		}
		var items []map[string]any
		var at any
		if tc.list == "" {
			items = listOf(t, b)
		} else {
			items = listOf(t, objOf(t, b)[tc.list])
			at = objOf(t, b)[tc.at]
		}
		got := map[string]int{}
		handles := map[string]bool{}
		for _, it := range items {
			got[it["direction"].(string)]++
			handles[it["handle"].(string)] = true
			if tc.list == "" {
				at = it[tc.at]
			}
			if _, has := it["count"]; has {
				t.Errorf("%s: an item carries a count: %v", tc.path, it)
			}
		}
		if len(handles) != len(items) {
			t.Errorf("%s: %d items by %d analysts, want one each", tc.path, len(items), len(handles))
		}
		for k, n := range counts {
			if json.Number(strconv.Itoa(got[k])) != n {
				t.Errorf("%s: %d items %s, A counts %v", tc.path, got[k], k, n)
			}
		}
		day, _ := time.Parse(time.DateOnly, objOf(t, a)["date"].(string))
		if want := map[bool]any{true: dateString(day), false: rfcString(day)}[tc.list == ""]; at != want {
			t.Errorf("%s: time %v, want %v", tc.path, at, want)
		}
	}
}

// Errors keep their one shape in both dialects: they are not payloads.
func TestDialectBKeepsTheErrorShapes(t *testing.T) {
	s, _ := newTestServer(Options{Dialect: DialectB, IndicatorToken: "k"})
	consensusError(t, get(t, s, "/consensus/consensus?asset=dogecoin"), 400, "UNKNOWN_ASSET")
	rec := get(t, s, "/indicator/api/equities/KRX:005930/pbr-band")
	if m := decode(t, rec.Body.Bytes()); rec.Code != 401 || m["error"] != "unauthorized" {
		t.Errorf("HTTP %d %v", rec.Code, m)
	}
}

func TestParseDialect(t *testing.T) {
	for in, want := range map[string]Dialect{"": DialectA, "a": DialectA, "B": DialectB, " b ": DialectB} {
		if got, err := ParseDialect(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseDialect("c"); err == nil {
		t.Error("c accepted")
	}
	for _, d := range Dialects {
		if got, err := ParseDialect(d.String()); err != nil || got != d {
			t.Errorf("%s does not read back: %v %v", d, got, err)
		}
	}
}
