package schedule

import (
	"fmt"
	"testing"
	"time"
)

// coarseRun plays a series the daily budget coarsens by factor against an
// upstream that publishes each hour row 10 min after it closes, polling
// exactly when the schedule says, for the given hours from start. It
// returns the rows found at each poll.
func coarseRun(t *testing.T, id string, factor float64, start time.Time, hours int) []time.Time {
	t.Helper()
	const delay = 70 * time.Minute // after the row's start
	b := NewBook(nil)
	st := newTuple(b, id, "/v1/btc/market-data/open-interest", "hour")
	st.Factor = factor
	newestAt := func(now time.Time) time.Time { return now.Add(-delay).Truncate(time.Hour) }
	// What was learned before the budget cut: the delay, to the step.
	b.Restore(map[string]Estimate{st.key: {First: delay, Depth: Default.LearnStep(time.Hour), Learned: true}})
	var found []time.Time
	now := start
	for now.Before(start.Add(time.Duration(hours) * time.Hour)) {
		prev := st.Newest
		st.Newest = newestAt(now)
		found = append(found, st.Newest)
		next := st.success(prev, now)
		if !next.After(now) {
			t.Fatalf("at %v the next poll is at %v", now, next)
		}
		if want := st.Newest.Add(delay); next.Before(want) && next.Sub(now) < time.Hour {
			// A poll before the learned time of the row after the
			// newest would find nothing new.
			t.Fatalf("at %v, newest %v: polled again at %v, before the next row is out", now, st.Newest, next)
		}
		now = next
	}
	return found
}

// A factor of 2.5 polls alternately every 2nd and 3rd row, each when it
// is out: 2.5 rows a poll on average, and every poll finds a new row.
func TestCoarseFractionalFactor(t *testing.T) {
	start := time.Date(2026, 11, 20, 0, 3, 0, 0, time.UTC)
	for _, f := range []float64{1.5, 2, 2.5, 3, 4.2} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			found := coarseRun(t, "a", f, start, 24*20)
			gaps := map[time.Duration]int{}
			for i := 2; i < len(found); i++ {
				gaps[found[i].Sub(found[i-1])]++
			}
			lo, hi := time.Duration(f)*time.Hour, time.Duration(f+0.999)*time.Hour
			var rows time.Duration
			polls := 0
			for g, n := range gaps {
				if g != lo && g != hi {
					t.Errorf("factor %g: a poll %v after the last, want %v or %v (gaps %v)", f, g, lo, hi, gaps)
				}
				rows += g * time.Duration(n)
				polls += n
			}
			if mean := rows.Hours() / float64(polls); mean < f-0.02 || mean > f+0.02 {
				t.Errorf("factor %g: %.3f rows a poll on average (gaps %v)", f, mean, gaps)
			}
		})
	}
}

// The rows polled for are fixed by the clock and the series' phase, not
// by where polling started: a restart or a late row does not add polls,
// and series of one window are spread over the slot.
func TestCoarsePhase(t *testing.T) {
	start := time.Date(2026, 11, 20, 0, 3, 0, 0, time.UTC)
	a := coarseRun(t, "a", 3, start, 48)
	b := coarseRun(t, "a", 3, start.Add(5*time.Hour+17*time.Minute), 48-5)
	// After the first poll, which takes what is there, the same rows.
	common := map[time.Time]bool{}
	for _, r := range a {
		common[r] = true
	}
	for _, r := range b[1:] {
		if !common[r] {
			t.Errorf("started 5 h later, series a polls for row %v, which the first run skipped", r.Format(time.TimeOnly))
		}
	}
	slots := map[int64]int{}
	for i := range 30 {
		rows := coarseRun(t, fmt.Sprint("series-", i), 3, start, 12)
		slots[rows[len(rows)-1].Unix()/3600%3]++
	}
	for s := range int64(3) {
		if slots[s] < 4 {
			t.Errorf("30 series coarsened by 3: %d polled for the rows of slot %d, of the three (%v): not spread", slots[s], s, slots)
		}
	}
}

// A poll that came before its row (found the one before) is not
// repeated for that row: the next poll is for the next slot's row.
func TestCoarseLateRow(t *testing.T) {
	p := &Default
	row := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	k := Known{Key: Estimate{First: 70 * time.Minute, Depth: p.LearnStep(time.Hour), Learned: true}}
	s := Series{ID: "a", Window: "hour", W: time.Hour, Factor: 3, Newest: row}
	_, pl := p.Next(k, s, Poll{}, Outcome{PrevNewest: row.Add(-3 * time.Hour)}, row.Add(30*time.Minute))
	target := pl.Next
	// At target the row it was for is not out: the newest is the one
	// before it.
	s.Newest = target.Time().Add(-70*time.Minute - p.LearnStep(time.Hour)).Add(-time.Hour)
	_, pl = p.Next(k, s, pl, Outcome{PrevNewest: row}, target.Time())
	if gap := pl.Next.Time().Sub(target.Time()); gap < 2*time.Hour || gap > 3*time.Hour {
		t.Errorf("the row polled for at %v was late: next poll %v later, want the next slot's, 2 to 3 h on", target.Time().Format(time.TimeOnly), gap)
	}
}
