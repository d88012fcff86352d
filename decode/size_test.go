package decode

import (
	"testing"
	"unsafe"
)

// A sample, which a tuple keeps for each of its values, is 24 bytes: its
// labels of its own, which most have none of, behind a pointer
// (BENCHMARKS.md's memory table counts it so).
func TestSampleSize(t *testing.T) {
	if size := unsafe.Sizeof(Sample{}); size > 24 {
		t.Errorf("a Sample is %d bytes, more than 24", size)
	}
	if ExtraOf(nil, nil) != nil || ExtraOf([]string{}, nil) != nil {
		t.Error("no labels of its own made an Extra")
	}
	if x := (Sample{Extra: ExtraOf([]string{"a"}, []string{"b"})}); x.ExtraNames()[0] != "a" || x.ExtraValues()[0] != "b" {
		t.Errorf("labels %v %v", x.ExtraNames(), x.ExtraValues())
	}
}
