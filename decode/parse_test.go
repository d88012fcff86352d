package decode

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// ParseStats is Parse that also says how many array items were dropped.
func ParseStats(body []byte, maxItems int) (any, int, error) {
	if v, ok := parseWhole(body, maxItems); ok {
		return v, 0, nil
	}
	return parseTokens(body, maxItems)
}

// bigAnswer is a data-API answer of n rows, newest first unless reversed.
func bigAnswer(n int, reversed bool) []byte {
	var b strings.Builder
	b.WriteString(`{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[`)
	for i := 0; i < n; i++ {
		day := n - i
		if reversed {
			day = i + 1
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"date":"%s","netflow_total":%d,"note":"padding padding padding"}`, dayName(day), day)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// dayName is the n-th day after 1700-01-01 as a date, so every row differs.
func dayName(n int) string {
	return fmt.Sprintf("%04d-%02d-%02d", 1700+n/336, 1+n/28%12, 1+n%28)
}

func TestParseKeepsTheEndsOfLongArrays(t *testing.T) {
	for _, reversed := range []bool{false, true} {
		root, dropped, err := ParseStats(bigAnswer(5000, reversed), 100)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := Lookup(root, "result.data")
		list := rows.([]any)
		if len(list) != 100 || dropped != 4900 {
			t.Fatalf("kept %d rows, dropped %d; want 100 and 4900", len(list), dropped)
		}
		first := list[0].(map[string]any)["netflow_total"]
		last := list[99].(map[string]any)["netflow_total"]
		wantFirst, wantLast := "5000", "1"
		if reversed {
			wantFirst, wantLast = "1", "5000"
		}
		if fmt.Sprint(first) != wantFirst || fmt.Sprint(last) != wantLast {
			t.Errorf("reversed=%v: first %v last %v, want %s and %s", reversed, first, last, wantFirst, wantLast)
		}
		// Head and tail keep the answer's order.
		for i := 1; i < len(list); i++ {
			prev, _ := Number(list[i-1].(map[string]any)["netflow_total"])
			next, _ := Number(list[i].(map[string]any)["netflow_total"])
			if reversed != (prev < next) {
				t.Fatalf("reversed=%v: row %d (%g) then %g: out of order", reversed, i, prev, next)
			}
		}
	}
}

func TestParseRejectsWhatIsNotOneJSONValue(t *testing.T) {
	for _, body := range []string{``, `{`, `[1,2`, `{"a":1}{"b":2}`, `{"a":}`, `{1:2}`} {
		if _, err := Parse([]byte(body), 10); err == nil {
			t.Errorf("%q: parsed", body)
		}
	}
	for _, body := range []string{`[]`, `{}`, `null`, `1`, `"x"`, `[[1,2,3],[4]]`} {
		if _, err := Parse([]byte(body), 2); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// The memory an answer costs is bounded by what is kept: a 7 MB answer of
// rows the exporter did not ask for costs about what a thousand rows do
// (the body itself aside, which the caller holds).
func TestParseMemoryIsBoundedByWhatIsKept(t *testing.T) {
	body := bigAnswer(100_000, false)
	kept := heapAfter(t, func() any { v, _ := Parse(body, 1000); return v })
	all := heapAfter(t, func() any { v, _ := Parse(body, 0); return v })
	if kept*10 > all {
		t.Errorf("keeping 1000 of 100 000 rows holds %d KiB, keeping all %d KiB: not bounded", kept>>10, all>>10)
	}
}

// heapAfter is the live heap that what f returns keeps.
func heapAfter(t *testing.T, f func() any) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

func BenchmarkParse7MB(b *testing.B) {
	body := bigAnswer(100_000, false)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body, 1000); err != nil {
			b.Fatal(err)
		}
	}
}

// parseCorpus are answers, JSON or not, that Parse reads whole or token
// by token.
var parseCorpus = []string{``, ` `, `{`, `}`, `]`, `[`, `[1,2`, `{"a":1}{"b":2}`, `{"a":}`, `{1:2}`, `[]`, `{}`, `null`, `1`, `"x"`,
	`[[1,2,3],[4]]`, `[1,2,3]`, ` [1, 2] `, "[1,2]\n\t", `[1,2] x`, `[1,2]]`, `5x`, `{"a":[1,2,3],"a":[4]}`,
	`{"s":"[,,,]","t":"\"[1,2,3]\"","u":"\\","v":[1,2,3]}`, `["a,b","c\\",",d"]`, `[{},{},[],[[]]]`, `[1,[2,3,4,5],6]`,
	`{"x":"\u00e9\ud800","y":"` + "\xff" + `"}`, `[1e400]`, `[-0, 1.50, 1E2]`, `[true,false,null]`, `{"a":{"b":{"c":[1,2,3,4]}}}`,
	strings.Repeat("[", 70) + strings.Repeat("]", 70), strings.Repeat("[1,", 70) + "1" + strings.Repeat("]", 70),
	strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100), `{"a":1,}`, `[1,]`, `[,1]`, `{"a" 1}`}

// Parse reads an answer whole when no array is longer than it keeps, and
// gives what reading it token by token gives: the same value, nothing
// dropped, the same error.
func TestParseWholeIsParseByTokens(t *testing.T) {
	for _, body := range append(parseCorpus, string(bigAnswer(7, false))) {
		for _, most := range []int{0, 1, 2, 3, 4, 5, 1000} {
			checkParseWhole(t, []byte(body), most)
		}
	}
	for _, body := range []string{string(bigAnswer(7, false)), `[1,2,3]`, `{"s":"[,,,]","v":[1,2,3]}`} {
		if _, whole := parseWhole([]byte(body), 7); !whole {
			t.Errorf("%q, at most 7 items: not read whole", body)
		}
	}
}

func FuzzParseWhole(f *testing.F) {
	for _, body := range parseCorpus {
		f.Add([]byte(body), 3)
	}
	f.Fuzz(func(t *testing.T, body []byte, most int) {
		checkParseWhole(t, body, most%8)
	})
}

func checkParseWhole(t *testing.T, body []byte, most int) {
	t.Helper()
	v, dropped, err := ParseStats(body, most)
	tv, tdropped, terr := parseTokens(body, most)
	if fmt.Sprint(err) != fmt.Sprint(terr) || dropped != tdropped || !reflect.DeepEqual(v, tv) {
		t.Errorf("%q, at most %d items: %#v, %d dropped, %v; token by token %#v, %d dropped, %v", body, most, v, dropped, err, tv, tdropped, terr)
	}
	if _, whole := parseWhole(body, most); whole && (terr != nil || tdropped > 0) {
		t.Errorf("%q, at most %d items: read whole, but token by token %d dropped, %v", body, most, tdropped, terr)
	}
}
