package published

import (
	"math"
	"testing"
	"unsafe"
)

// A series keeps its last MaxPoints rows, oldest first: a newer row is
// added, the newest seen again takes its value now, an older row is no
// news, and the points noted before are never written.
func TestPointsKeepTheLastRows(t *testing.T) {
	var p *Points
	if p.Rows() != nil {
		t.Fatal("no points have rows")
	}
	p = p.With(100, 1)
	q := p.With(100, 1)
	if q != p {
		t.Error("the same row again is news")
	}
	q = p.With(100, 2) // revised
	if rows := q.Rows(); len(rows) != 1 || rows[0] != (Point{100, 2}) || p.Rows()[0].Value != 1 {
		t.Errorf("a revised row: %v, the points before %v", rows, p.Rows())
	}
	if r := q.With(50, 9); r != q {
		t.Error("an older row is news")
	}
	if n := p.With(101, math.NaN()).With(101, math.NaN()); len(n.Rows()) != 2 {
		t.Error("a NaN row seen twice is two rows")
	}
	for i := range 3 * MaxPoints {
		q = q.With(int64(200+i), float64(i))
	}
	rows := q.Rows()
	if len(rows) != MaxPoints || rows[0].At != 200+2*MaxPoints || rows[MaxPoints-1].At != 200+3*MaxPoints-1 {
		t.Errorf("after %d rows: %v", 3*MaxPoints, rows)
	}
	if r := q.With(-1, 1).With(1<<32, 1); r != q {
		t.Error("a row outside the years Points hold is news")
	}
	if size := unsafe.Sizeof(Points{}); size > 160 {
		t.Errorf("Points are %d bytes", size)
	}
}
