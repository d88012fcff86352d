package schedule

import (
	"testing"
	"time"
)

// TestCadenceGrid: a learned cadence is rounded to the clock unit nearest
// it, and a change found at a time is the row of the grid's last closed
// interval.
func TestCadenceGrid(t *testing.T) {
	for _, tc := range []struct{ learned, want time.Duration }{
		{23*time.Hour + 41*time.Minute, 24 * time.Hour},
		{25 * time.Hour, 24 * time.Hour},
		{5*time.Hour + 50*time.Minute, 6 * time.Hour},
		{58 * time.Minute, time.Hour},
		{6 * 24 * time.Hour, 7 * 24 * time.Hour},
		{40 * time.Second, time.Minute},
	} {
		if got := Grid(tc.learned); got != tc.want {
			t.Errorf("Grid(%v) = %v, want %v", tc.learned, got, tc.want)
		}
	}
	found := time.Date(2026, 11, 25, 8, 42, 0, 0, time.UTC)
	if got, want := gridRow(found, 24*time.Hour), time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("gridRow(%v, 24h) = %v, want the day before's start %v", found, got, want)
	}
	if got, want := gridRow(found, 6*time.Hour), time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("gridRow(%v, 6h) = %v, want %v", found, got, want)
	}
}

// TestLearnCadence: the cadence as a pure function. Dated rows teach
// their smallest spacing and weekdays; an answer without times teaches
// the gap between two changes seen within narrow brackets, and once a
// cadence is known a change is the row of its grid, the first one placed
// with the poll that missed it.
func TestLearnCadence(t *testing.T) {
	p := &Default
	day := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC) // a Monday
	c, missed := p.LearnCadence(Cadence{}, Seen{Newest: day, Oldest: day.Add(-4 * 24 * time.Hour), Step: 24 * time.Hour, Weekdays: 0x1f},
		time.Time{}, true, day.Add(25*time.Hour))
	if c.Interval != 24*time.Hour || c.Timeless || c.Weekdays != 0x1f || !c.Since.Equal(day.Add(-4*24*time.Hour)) || !missed.IsZero() {
		t.Errorf("dated rows: %+v, missed %v", c, missed)
	}
	// Without times: changes seen at 06:00 and 12:00 the next day
	// (polls an hour apart) teach a cadence of about six hours.
	var tl Cadence
	poll := day.Add(5 * time.Hour)
	tl, _ = p.LearnCadence(tl, Seen{}, time.Time{}, true, poll)
	tl, _ = p.LearnCadence(tl, Seen{Changed: true}, poll, false, poll.Add(time.Hour))
	tl, missed = p.LearnCadence(tl, Seen{Changed: true}, poll.Add(6*time.Hour), false, poll.Add(7*time.Hour))
	if tl.Interval != 6*time.Hour || !tl.Timeless {
		t.Fatalf("changes six hours apart taught %+v", tl)
	}
	// Once the cadence is known a change is the row of the grid's last
	// closed interval; the first placed comes with the poll that missed
	// it, where its delay lies after.
	if want := day.Add(6 * time.Hour); !tl.Newest.Equal(want) || !missed.Equal(poll.Add(6*time.Hour)) {
		t.Errorf("placed the change at %v (missed %v), want the row of %v", tl.Newest, missed, want)
	}
	tl, missed = p.LearnCadence(tl, Seen{Changed: true}, poll.Add(12*time.Hour), false, poll.Add(13*time.Hour))
	if want := day.Add(12 * time.Hour); !tl.Newest.Equal(want) || !missed.IsZero() {
		t.Errorf("placed the next change at %v (missed %v), want the row of %v", tl.Newest, missed, want)
	}
}
