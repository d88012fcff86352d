package config

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// aliasedLists is a configuration of one entry with n parameters, each an
// alias of one list of 30 values: 30ⁿ combinations in about 300 bytes.
func aliasedLists(n int) string {
	values := make([]string, 30)
	for i := range values {
		values[i] = fmt.Sprintf("v%d", i)
	}
	var b strings.Builder
	b.WriteString("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n  - path: /v1/btc/x/y\n")
	fmt.Fprintf(&b, "    p0: &l [%s]\n", strings.Join(values, ","))
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "    p%d: *l\n", i)
	}
	return b.String()
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A file whose lists multiply past max_tuples is refused at the entry
// that lists them, after counting, before building anything: the
// allocation of the load does not grow with the product.
func TestProductCountedBeforeItIsBuilt(t *testing.T) {
	for _, tc := range []struct {
		lists int
		want  string
	}{
		{3, "x.yml:5: data.metrics[0]: expands to 27000 series (p0 30 × p1 30 × p2 30), more than max_tuples (1000)"},
		{9, "x.yml:5: data.metrics[0]: expands to 19683000000000 series (p0 30 × p1 30 × p2 30 × p3 30 × p4 30 × p5 30 × p6 30 × p7 30 × p8 30), more than max_tuples (1000)"},
		{14, "x.yml:5: data.metrics[0]: expands to more than 9223372036854775806 series (p0 30 × p1 30 × p2 30 × p3 30 × p4 30 × p5 30 × p6 30 × p7 30 × p8 30 × p9 30 × …), more than max_tuples (1000)"},
	} {
		yml := aliasedLists(tc.lists)
		var err error
		bytes := allocated(func() { _, err = Parse("x.yml", []byte(yml), testEnv) })
		if err == nil || err.Error() != tc.want {
			t.Errorf("%d lists: error\n got %v\nwant %s", tc.lists, err, tc.want)
		}
		// The file itself, its YAML nodes and 30 values per list: some
		// tens of KiB whatever the product. Building the 27 000 tuples
		// of three lists took 100 MB; nine did not fit in memory.
		if bytes > 1<<20 {
			t.Errorf("%d lists (%d bytes of YAML): loading allocated %d bytes", tc.lists, len(yml), bytes)
		}
	}
}

// Entries that fit one by one are refused at the entry that takes the
// list past max_tuples, and nothing after it is built.
func TestRunningTotalRefusedAtItsEntry(t *testing.T) {
	yml := `data:
  url: http://127.0.0.1:1
  token_env: T
  max_tuples: 5
  metrics:
    - path: /v1/btc/market-data/open-interest
      exchange: [binance, bybit, okx]
    - path: /v1/btc/market-data/open-interest
      exchange: [deribit, bitmex, kraken]
    - path: /v1/btc/market-data/open-interest
      exchange: [gate_io]
`
	_, err := Parse("x.yml", []byte(yml), testEnv)
	want := "x.yml:8: data.metrics[1]: with this entry the metrics list expands to 6 series, more than max_tuples (5)"
	if err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
}

// An alias repeats a node without its bytes: a list of entries that are
// all one entry of 2 000 parameters is refused after a bounded read.
func TestAliasesReadToABound(t *testing.T) {
	var b strings.Builder
	b.WriteString("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  max_tuples: 100000\n  metrics:\n  - &e\n    path: /v1/btc/x/y\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "    q%d: v\n", i)
	}
	for range 1000 {
		b.WriteString("  - *e\n")
	}
	var err error
	bytes := allocated(func() { _, err = Parse("x.yml", []byte(b.String()), testEnv) })
	want := fmt.Sprintf("x.yml:6: the file holds more than %d keys and values (an alias counts as what it repeats)", maxRead)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error\n got %.300v\nwant %s…", err, want)
	}
	// Read to the bound: about 80 MB allocated over the load, most of it
	// garbage at once. Read whole, the 2 million parameters took 140 GB
	// of allocations over 107 s.
	if bytes > 128<<20 {
		t.Errorf("%d bytes of YAML: loading allocated %d bytes", b.Len(), bytes)
	}
}

func TestMaxTuplesBounded(t *testing.T) {
	yml := "data:\n  url: http://127.0.0.1:1\n  token_env: T\n  max_tuples: 1000000000\n  metrics:\n    - path: /v1/btc/network-data/supply\n"
	_, err := Parse("x.yml", []byte(yml), testEnv)
	if want := "x.yml:4: data.max_tuples: must be at most 100000, got 1000000000"; err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
}

// A file past MaxFileSize is refused before it is parsed: ten megabytes
// of one list cost gigabytes to expand.
func TestFileSizeBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n  - path: /v1/btc/x/y\n    p: [")
	for i := 0; b.Len() <= MaxFileSize; i++ {
		fmt.Fprintf(&b, "v%d,", i)
	}
	b.WriteString("v]\n")
	var err error
	big := []byte(b.String())
	bytes := allocated(func() { _, err = Parse("big.yml", big, testEnv) })
	if want := "big.yml: the file is larger than 1 MiB; a configuration is a few KiB"; err == nil || err.Error() != want {
		t.Errorf("error\n got %.300v\nwant %s", err, want)
	}
	if bytes > 64<<10 {
		t.Errorf("refusing %d bytes allocated %d bytes", b.Len(), bytes)
	}
}

// The most a file of MaxFileSize can cost: one list of single-character
// values, refused by max_tuples after it is read.
func BenchmarkParseLargestList(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n  - path: /v1/btc/x/y\n    p: [")
	for i := 0; sb.Len() < MaxFileSize-16; i++ {
		fmt.Fprintf(&sb, "%d,", i)
	}
	sb.WriteString("x]\n")
	yml := []byte(sb.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("x.yml", yml, testEnv); err == nil {
			b.Fatal("accepted")
		}
	}
}

// The 315-byte file of issue 17: nine aliased lists of 30 values.
func BenchmarkParseAliasedLists(b *testing.B) {
	for _, n := range []int{3, 4, 9} {
		yml := []byte(aliasedLists(n))
		b.Run(fmt.Sprintf("lists=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse("x.yml", yml, testEnv); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
