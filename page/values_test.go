package page

import (
	"net/http"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/published"
)

// sort=late puts the earliest due row first, sort=changed the newest
// change of value first; series with neither come last in the
// configuration's order. The page and the JSON refuse an unknown order.
func TestSortOrders(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ring := func(values ...float64) *published.Points {
		var p published.Points
		for i, v := range values {
			p = p.With(t0.Add(time.Duration(i)*time.Hour).Unix(), v)
		}
		return &p
	}
	series := []published.Series{
		{Due: t0.Add(3 * time.Hour), Points: ring(1, 1, 1)}, // 0: never changed
		{}, // 1: neither
		{Due: t0.Add(time.Hour), Points: ring(1, 2, 2)},        // 2: changed at 1h
		{Due: t0.Add(2 * time.Hour), Points: ring(1, 1, 1, 5)}, // 3: changed at 3h
	}
	for _, tc := range []struct {
		order string
		want  []int
	}{
		{SortLate, []int{2, 3, 0, 1}},
		{SortChanged, []int{3, 2, 0, 1}},
	} {
		var cs []candidate
		for i, s := range series {
			cs = append(cs, candidate{api: i, s: s, key: sortKey(tc.order, s)})
		}
		sortCandidates(tc.order, cs)
		for i, c := range cs {
			if c.api != tc.want[i] {
				t.Errorf("sort=%s: %d at place %d, want %v", tc.order, c.api, i, tc.want)
				break
			}
		}
	}
	r := smallRig(t)
	for _, target := range []string{PathIndex + "?sort=oldest", PathJSON + "?sort=oldest"} {
		if code, _ := r.get(t, target); code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400", target, code)
		}
	}
	for _, order := range SortKeys {
		st := statusOf(t, r, PathJSON+"?sort="+order+"&limit=2")
		if st.Series.Sort != order || len(st.Series.Items) != 2 || st.Series.Matched != st.Series.Total {
			t.Errorf("sort=%s: %s, %d items of %d matched", order, st.Series.Sort, len(st.Series.Items), st.Series.Matched)
		}
	}
}
