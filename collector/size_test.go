package collector

import (
	"testing"
	"unsafe"
)

// TestStateSizes: what the engine keeps of every tuple stays in the size
// classes BENCHMARKS.md's memory table counts (a field added may move
// one into the next class: say so there).
func TestStateSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		size, max uintptr
	}{
		{"tupleState", unsafe.Sizeof(tupleState{}), 288},
		{"tupleView", unsafe.Sizeof(tupleView{}), 128},
		{"pageNotes", unsafe.Sizeof(pageNotes{}), 64},
		{"tupleInfo", unsafe.Sizeof(tupleInfo{}), 64},
	} {
		if c.size > c.max {
			t.Errorf("%s is %d bytes, more than %d", c.name, c.size, c.max)
		}
	}
}
