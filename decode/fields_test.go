package decode

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// fieldBomb is an answer of one row of n numeric fields beside its date,
// the answer of issue 26 (100 000 fields, 2 MB).
func fieldBomb(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[{"date":"2026-11-20","netflow_total":1`)
	for i := range n {
		fmt.Fprintf(&b, `,"x_%06d":%d.5`, i, i) // after netflow_total by name
	}
	b.WriteString(`}]}}`)
	return []byte(b.String())
}

// BenchmarkFieldBomb reads the latest values of the 100 000-field answer
// (parsed once, outside the loop): what a refresh spends on it beyond
// the parse.
func BenchmarkFieldBomb(b *testing.B) {
	tp := tupleFor(&testing.T{}, netflowYAML)
	root, err := Parse(fieldBomb(100_000), 1000)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d, err := LatestAt(root, tp, "result.data", time.Time{})
		if err != nil || len(d.Samples) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkFieldBombParse is the parse of the same answer, for scale.
func BenchmarkFieldBombParse(b *testing.B) {
	body := fieldBomb(100_000)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Parse(body, 1000); err != nil {
			b.Fatal(err)
		}
	}
}

// A row of 100 000 numeric fields outside the catalog adds max_fields of
// them as families (64 by default, the first by name: a field the user
// needs past them is pinned with fields:); the rest are counted,
// reported, and cost no sample. Before the bound, the answer
// made 100 001 samples.
func TestFieldBombBounded(t *testing.T) {
	tp := tupleFor(t, netflowYAML)
	d, err := decode(fieldBomb(100_000), tp, rowsAt("result.data"))
	if err != nil {
		t.Fatal(err)
	}
	got := values(d)
	// netflow_total and x_000000 to x_000062: the first 64 by name.
	if len(d.Samples) != config.DefaultMaxFields || got["exchange_netflow{}"] != 1 || got["exchange_netflow_x_000062{}"] != 62.5 {
		t.Errorf("%d samples: %v", len(d.Samples), got)
	}
	if _, ok := got["exchange_netflow_x_000063{}"]; ok {
		t.Error("a field past max_fields was served")
	}
	want := "a row holds 99937 numeric fields outside the catalog beyond max_fields=64; the first 64 by name are served (list the fields wanted under fields:, or raise max_fields)"
	if d.FieldsDropped != 100_001-64 || d.FieldsOver != want {
		t.Errorf("FieldsDropped %d, FieldsOver %q", d.FieldsDropped, d.FieldsOver)
	}
	// The bytes spent reading the values of the parsed answer: 108 MB
	// before the bound (100 001 samples), 1.7 MB after (the row's names,
	// sorted). BenchmarkFieldBomb measures the same.
	root, err := Parse(fieldBomb(100_000), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := LatestAt(root, tp, "result.data", time.Time{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if spent := after.TotalAlloc - before.TotalAlloc; spent > 8<<20 {
		t.Errorf("reading the 100 000-field answer allocated %d bytes", spent)
	} else {
		t.Logf("reading the 100 000-field answer allocated %d bytes", spent)
	}
}

// max_fields sets the bound per entry; fields: lists the fields exactly,
// and then nothing is dropped or counted.
func TestMaxFieldsAndPinnedFields(t *testing.T) {
	tp := tupleFor(t, netflowYAML+"      max_fields: 3\n")
	d, err := decode(fieldBomb(10), tp, rowsAt("result.data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Samples) != 3 || d.FieldsDropped != 8 {
		t.Errorf("max_fields 3: %d samples, %d dropped; want 3 and 8", len(d.Samples), d.FieldsDropped)
	}
	pinned := tupleFor(t, netflowYAML+"      fields: {x_000005: {}}\n")
	d, err = decode(fieldBomb(100), pinned, rowsAt("result.data"))
	if err != nil {
		t.Fatal(err)
	}
	if got := values(d); len(got) != 1 || got["exchange_netflow_x_000005{}"] != 5.5 || d.FieldsDropped != 0 || d.FieldsOver != "" {
		t.Errorf("fields: pinned: %v, dropped %d %q", got, d.FieldsDropped, d.FieldsOver)
	}
	// 64 fields, netflow_total among them: within the bound, nothing said.
	d, err = decode(fieldBomb(63), tupleFor(t, netflowYAML), rowsAt("result.data"))
	if err != nil || d.FieldsDropped != 0 || d.FieldsOver != "" || len(d.Samples) != 64 {
		t.Errorf("64 fields: %v, %d samples, dropped %d", err, len(d.Samples), d.FieldsDropped)
	}
}

// A row of a thousand strings where numbers belong lists maxProblems of
// them and counts the rest.
func TestProblemsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[{"date":"2026-11-20","netflow_total":1`)
	for i := range 1000 {
		fmt.Fprintf(&b, `,"text_%04d":"n/a"`, i)
	}
	b.WriteString(`}]}}`)
	d, err := decode([]byte(b.String()), tupleFor(t, netflowYAML), rowsAt("result.data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Problems) != maxProblems+1 || d.Problems[0] != `field text_0000 is not a finite number (string "n/a")` ||
		d.Problems[maxProblems] != "900 more values are not finite numbers" || len(d.Samples) != 1 {
		t.Errorf("%d problems (first %q, last %q), %d samples", len(d.Problems), d.Problems[0], d.Problems[len(d.Problems)-1], len(d.Samples))
	}
}
