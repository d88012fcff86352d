package schedule

import (
	"testing"
	"time"
)

// A series is one row behind once the row after the one it serves is out
// (its start, a window and the offset at which rows appear), and is not
// counted two rows or more behind.
func TestExcess(t *testing.T) {
	w, earliest := time.Hour, 5*time.Minute
	newest := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC) // serves 10:00-11:00
	for _, tc := range []struct {
		now     time.Time
		excess  time.Duration
		counted bool
	}{
		{newest.Add(w + 4*time.Minute), 0, true},            // 11:00 is not out yet
		{newest.Add(w + earliest), w, true},                 // 11:00 is out: a row behind
		{newest.Add(2*w + earliest - time.Second), w, true}, // still one row
		{newest.Add(2*w + earliest), 0, false},              // two rows: not counted
		{newest.Add(10 * w), 0, false},                      // an upstream that stopped
		{newest.Add(-2 * w), 0, true},                       // a clock behind the row: not behind
	} {
		if e, c := Excess(newest, w, earliest, tc.now); e != tc.excess || c != tc.counted {
			t.Errorf("at %s: %s, %v; want %s, %v", tc.now.Format(time.TimeOnly), e, c, tc.excess, tc.counted)
		}
	}
}

// Behind counts the rows out past the one served (the page's "late" is
// two); none without a spacing or a row.
func TestBehind(t *testing.T) {
	w, earliest := time.Hour, 5*time.Minute
	newest := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		newest time.Time
		w      time.Duration
		now    time.Time
		want   int
	}{
		{newest, w, newest.Add(w + earliest - time.Second), 0},
		{newest, w, newest.Add(w + earliest), 1},
		{newest, w, newest.Add(3*w + earliest), 3},
		{newest, 0, newest.Add(3 * w), 0},
		{time.Time{}, w, newest, 0},
	} {
		if got := Behind(tc.newest, tc.w, earliest, tc.now); got != tc.want {
			t.Errorf("Behind(%s, %s, at %s) = %d, want %d", tc.newest.Format(time.TimeOnly), tc.w, tc.now.Format(time.TimeOnly), got, tc.want)
		}
	}
}
