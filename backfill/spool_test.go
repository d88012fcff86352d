package backfill

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestSpoolReplaysEachSeriesOldestFirst: pages come newest first, samples
// within a page oldest first, series interleaved; each series comes back
// alone and oldest first, from memory and from a spilled file alike.
func TestSpoolReplaysEachSeriesOldestFirst(t *testing.T) {
	for _, limit := range []int{0, 3 * recordSize} {
		t.Run(fmt.Sprintf("spill at %d", limit), func(t *testing.T) {
			s := &spool{dir: t.TempDir(), limit: limit}
			defer s.close()
			// Three pages of rows 7-9, 4-6, 1-3; series 0 and 1 on every
			// row, series 2 on odd rows only.
			for page := 2; page >= 0; page-- {
				s.page()
				for row := 3*page + 1; row <= 3*page+3; row++ {
					for series := 0; series < 3; series++ {
						if series == 2 && row%2 == 0 {
							continue
						}
						if err := s.add(series, int64(row), float64(10*series+row)); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if limit > 0 && s.file == nil {
				t.Fatal("not spilled")
			}
			for series, want := range [][]int64{{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 5, 7, 9}} {
				var got []int64
				err := s.replay(series, func(ms int64, v float64) error {
					if v != float64(10*series)+float64(ms) {
						t.Errorf("series %d at %d: %g", series, ms, v)
					}
					got = append(got, ms)
					return nil
				})
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("series %d: %v (%v), want %v", series, got, err, want)
				}
			}
		})
	}
}

// TestReplayWithStep: with --sample-interval each row's value repeats
// until the next row, the last until its spacing ends or --to.
func TestReplayWithStep(t *testing.T) {
	s := &spool{}
	s.page()
	for _, ms := range []int64{0, 10_000, 30_000} {
		_ = s.add(0, ms, float64(ms))
	}
	var got []point
	add := func(ms int64, v float64) error { got = append(got, point{ms, v}); return nil }
	if err := replay(s, 0, 5*time.Second, 10*time.Second, 36_000, add); err != nil {
		t.Fatal(err)
	}
	want := []point{{0, 0}, {5000, 0}, {10_000, 10_000}, {15_000, 10_000}, {20_000, 10_000}, {25_000, 10_000}, {30_000, 30_000}, {35_000, 30_000}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	got = nil
	if err := replay(s, 0, 0, 10*time.Second, 36_000, add); err != nil || len(got) != 3 {
		t.Errorf("without a step: %v, %v", got, err)
	}
}
