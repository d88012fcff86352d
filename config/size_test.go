package config

import (
	"testing"
	"unsafe"
)

// TestTupleSize: a tuple stays in the size class BENCHMARKS.md's memory
// table counts (a field added may move it into the next class: say so
// there).
func TestTupleSize(t *testing.T) {
	if size := unsafe.Sizeof(Tuple{}); size > 192 {
		t.Errorf("Tuple is %d bytes, more than 192", size)
	}
}
