package schedule

import (
	"reflect"
	"testing"
	"time"
)

// An answer that says nothing of the row (Unread) is polled on as a late
// row is: from a learn step, doubling with each such answer in a row, at
// most 8 learn steps (and a quarter of the window); nothing is learned
// from it.
func TestUnreadIsPolledAsALateRow(t *testing.T) {
	p := Default
	now := time.Date(2026, 11, 20, 12, 3, 0, 0, time.UTC)
	cases := []struct {
		window   string
		w        time.Duration
		failures []int
		want     []time.Duration
	}{
		{"10min", 10 * time.Minute, []int{1, 2, 3, 4, 5, 50}, []time.Duration{12 * time.Second, 24 * time.Second, 48 * time.Second, 96 * time.Second, 96 * time.Second, 96 * time.Second}},
		{"hour", time.Hour, []int{1, 2, 4, 9}, []time.Duration{72 * time.Second, 144 * time.Second, 576 * time.Second, 576 * time.Second}},
		{"min", time.Minute, []int{1, 4, 9}, []time.Duration{5 * time.Second, 15 * time.Second, 15 * time.Second}},
	}
	for _, tc := range cases {
		for i, n := range tc.failures {
			s := Series{ID: "k", Window: tc.window, W: tc.w, Failures: n, Newest: now.Truncate(tc.w).Add(-tc.w)}
			k := Known{Fresh: true}
			k, _ = p.Next(k, s, Poll{}, Outcome{}, now) // a first success: the key's estimate
			before := k.Key
			k2, pl := p.Next(k, s, Poll{}, Outcome{Unread: true}, now)
			if got := pl.Next.Time().Sub(now); got != tc.want[i] {
				t.Errorf("%s, %d answers from the future in a row: next poll after %s, want %s", tc.window, n, got, tc.want[i])
			}
			if !reflect.DeepEqual(k2.Key, before) {
				t.Errorf("%s: an answer from the future taught the key %+v (was %+v)", tc.window, k2.Key, before)
			}
		}
	}
}
