package published

import (
	"math"
	"testing"
	"time"
	"unsafe"
)

// A series keeps its last MaxPoints rows, oldest first: a newer row is
// added, the newest seen again takes its value now, an older row is no
// news, and the points noted before are never written.
func TestPointsKeepTheLastRows(t *testing.T) {
	same := func(a, b Points) bool { return len(a.b) == len(b.b) && unsafe.SliceData(a.b) == unsafe.SliceData(b.b) }
	var none *Points
	if none.Rows() != nil || none.Len() != 0 {
		t.Fatal("no points have rows")
	}
	var p Points
	if p.Rows() != nil {
		t.Fatal("no points have rows")
	}
	p = p.With(100, 1)
	q := p.With(100, 1)
	if !same(q, p) {
		t.Error("the same row again is news")
	}
	q = p.With(100, 2) // revised
	if rows := q.Rows(); len(rows) != 1 || rows[0] != (Point{100, 2}) || p.Rows()[0].Value != 1 {
		t.Errorf("a revised row: %v, the points before %v", rows, p.Rows())
	}
	if r := q.With(50, 9); !same(r, q) {
		t.Error("an older row is news")
	}
	if n := p.With(101, math.NaN()).With(101, math.NaN()); len(n.Rows()) != 2 {
		t.Error("a NaN row seen twice is two rows")
	}
	var all []Points
	for i := range 3 * MaxPoints {
		q = q.With(int64(200+i), float64(i))
		all = append(all, q)
	}
	rows := q.Rows()
	if len(rows) != MaxPoints || rows[0].At != 200+2*MaxPoints || rows[MaxPoints-1].At != 200+3*MaxPoints-1 {
		t.Errorf("after %d rows: %v", 3*MaxPoints, rows)
	}
	for i, r := range rows {
		if want := (Point{int64(200 + 2*MaxPoints + i), float64(2*MaxPoints + i)}); r != want {
			t.Errorf("row %d is %v, want %v", i, r, want)
		}
	}
	// The points noted before are as they were.
	for i, a := range all {
		n := min(i+2, MaxPoints) // the row of 100 and the ones after it
		if got := a.Rows(); len(got) != n || got[n-1] != (Point{int64(200 + i), float64(i)}) {
			t.Errorf("the points after row %d were written: %v", i, got)
		}
	}
	if r := q.With(-1, 1).With(1<<32, 1); !same(r, q) {
		t.Error("a row outside the years Points hold is news")
	}
	if last := q.With(math.MaxUint32, -0.5); last.Rows()[MaxPoints-1] != (Point{math.MaxUint32, -0.5}) {
		t.Error("the last second Points hold does not read back")
	}
	// Sized to the rows there are: 12 bytes a row, in one buffer.
	if size := unsafe.Sizeof(Points{}); size != 24 {
		t.Errorf("Points are %d bytes", size)
	}
	if one := (Points{}).With(100, 1); cap(one.b) != pointSize {
		t.Errorf("one row takes %d bytes", cap(one.b))
	}
	if cap(q.b) != MaxPoints*pointSize {
		t.Errorf("%d rows take %d bytes", MaxPoints, cap(q.b))
	}
}

// An Answer is 80 bytes (a size class of its own, not 96): a series
// keeps eight.
func TestAnswerSize(t *testing.T) {
	if size := unsafe.Sizeof(Answer{}); size != 80 {
		t.Errorf("an Answer is %d bytes", size)
	}
	held := Answer{At: 1e18, Span: time.Minute, HeldBy: HeldByRateLimit, Outcome: AnswerHeld}
	if !held.Until().Equal(held.At.Time().Add(time.Minute)) {
		t.Errorf("held until %v", held.Until())
	}
	if sent := (Answer{At: 1e18, Span: time.Second}); !sent.Until().IsZero() {
		t.Errorf("a call sent has a turn again at %v", sent.Until())
	}
}
