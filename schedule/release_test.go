package schedule

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The tolerance is k(n) times the spread of the rows found on time, at
// least 2 minutes, at most a 12th of the window: the cap while few rows
// are known, about a third of the spread once ReleaseRows are.
func TestDueTolerance(t *testing.T) {
	day := 24 * time.Hour
	spread := func(n int, s time.Duration) []time.Duration {
		rs := make([]time.Duration, n)
		for i := range rs {
			rs[i] = day + 25*time.Minute + s*time.Duration(i)/time.Duration(max(n-1, 1))
		}
		return rs
	}
	for _, tc := range []struct {
		name     string
		released []time.Duration
		w        time.Duration
		want     time.Duration
	}{
		{"no row", nil, day, 2 * time.Hour},
		{"two rows: the cap", spread(2, 40*time.Minute), day, 2 * time.Hour},
		{"16 day rows 44 min apart", spread(16, 44*time.Minute), day, 13*time.Minute + 44*time.Second},
		{"16 rows found at one poll: the floor", spread(16, 0), day, 2 * time.Minute},
		{"16 hour rows 4 min apart: the floor", spread(16, 4*time.Minute), time.Hour, 2 * time.Minute},
		{"3 hour rows 4 min apart: the cap", spread(3, 4*time.Minute), time.Hour, 5 * time.Minute},
	} {
		if got := DueTolerance(tc.released, tc.w).Round(time.Second); got != tc.want {
			t.Errorf("%s: tolerance %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Over 3 000 day rows whose delays are uniform over 50 min ±50 %, the due
// time is passed by about one row in a thousand (dueFalseShare), and once
// ReleaseRows rows are known it lies less than 15 minutes past the
// learned release at the median.
func TestDueTimeOnAUniformJitter(t *testing.T) {
	const rows = 3000
	w := 24 * time.Hour
	rng := rand.New(rand.NewPCG(1, 2))
	var e Estimate
	past, margins := 0, []time.Duration{}
	for i := range rows {
		at := w + 25*time.Minute + time.Duration(rng.Float64()*float64(50*time.Minute))
		if due, ok := e.DueOffset(w); ok {
			if at > due {
				past++
			}
			if i > ReleaseRows {
				r, _ := e.Release()
				margins = append(margins, due-r)
			}
		}
		e.released(w, at)
	}
	slices.Sort(margins)
	p50, p95 := margins[len(margins)/2], margins[len(margins)*95/100]
	t.Logf("%d of %d rows past their due time; the due time %v past the learned release at the median, %v at p95", past, rows, p50.Round(time.Second), p95.Round(time.Second))
	if past > 3*rows/1000 {
		t.Errorf("%d of %d rows past their due time, want about one in a thousand", past, rows)
	}
	if p50 > 15*time.Minute {
		t.Errorf("the due time is %v past the learned release at the median, want within 15 min", p50)
	}
}

// A day row found 5 hours late moves neither the first poll of the next
// row nor its due time; the next row, found on time, is learned; two rows
// late in a row are the provider's new habit.
func TestALateRowTeachesNothing(t *testing.T) {
	p := &Default
	w := 24 * time.Hour
	row := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	k := Known{Members: 1, Key: Estimate{First: w + 70*time.Minute, Depth: 10 * time.Minute, Learned: true, Rows: 8,
		Released: []time.Duration{w + 60*time.Minute, w + 70*time.Minute, w + 50*time.Minute}}}
	k.Key.Seen = row
	due, _ := k.Key.DueOffset(w)
	first := k.Key.First

	row = row.Add(w)
	p.found(&k, row, w, w+5*time.Hour, w+4*time.Hour+50*time.Minute, 20, false)
	if got, _ := k.Key.DueOffset(w); k.Key.First != first || got != due || k.Key.Late != w+5*time.Hour {
		t.Errorf("after a row 5 h late: first %v, due %v, late %v; want %v, %v and the row kept aside", k.Key.First, got, k.Key.Late, first, due)
	}

	row = row.Add(w)
	p.found(&k, row, w, w+70*time.Minute, 0, 0, false)
	if k.Key.Late != 0 || len(k.Key.Released) != 4 {
		t.Errorf("after a row on time: late %v, released %v; want it learned", k.Key.Late, k.Key.Released)
	}

	for _, late := range []time.Duration{5 * time.Hour, 6 * time.Hour} {
		row = row.Add(w)
		p.found(&k, row, w, w+late, w+late-10*time.Minute, 20, false)
	}
	if r, _ := k.Key.Release(); r != w+6*time.Hour || len(k.Key.Released) != 2 || k.Key.First < w+6*time.Hour {
		t.Errorf("after two rows late in a row: release %v of %v, first %v; want the new habit learned", r, k.Key.Released, k.Key.First)
	}
}
