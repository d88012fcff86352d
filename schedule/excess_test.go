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
	} {
		if e, c := Excess(newest, w, earliest, tc.now); e != tc.excess || c != tc.counted {
			t.Errorf("at %s: %s, %v; want %s, %v", tc.now.Format(time.TimeOnly), e, c, tc.excess, tc.counted)
		}
	}
}
