package collector

import (
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// TestExcessTally: the exporter's own excess staleness counts a series one
// row behind once the next row is out by the learned delay, and leaves
// out what it cannot judge: deprecated series, series two rows or more
// behind just after their refresh (a stopped upstream), cache_ttl ones.
func TestExcessTally(t *testing.T) {
	b := schedule.NewBook(nil)
	w := time.Hour
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	tuple := func(key string) *config.Tuple {
		return &config.Tuple{API: "data", Path: "/p", Window: "hour", Key: key}
	}
	// The next row (11:00-12:00) appears at 12:00 plus the first guess
	// (18 s): the estimate before anything is learned.
	now := start.Add(2*w + time.Minute)
	states := []*tupleState{
		{tuple: tuple("fresh"), cell: cell{Tuple: Tuple{Newest: schedule.InstantOf(start.Add(w))}}},          // serves 11:00: nothing newer is out
		{tuple: tuple("behind"), cell: cell{Tuple: Tuple{Newest: schedule.InstantOf(start)}}},                // serves 10:00: 11:00 is out
		{tuple: tuple("gone"), cell: cell{Tuple: Tuple{Newest: schedule.InstantOf(start.Add(-5 * w))}}},      // rows stopped: left out
		{tuple: tuple("old"), cell: cell{Tuple: Tuple{Newest: schedule.InstantOf(start), Deprecated: true}}}, // deprecated: left out
		{tuple: &config.Tuple{API: "data", Path: "/p", Window: "hour", Key: "ttl", CacheTTL: 60}, cell: cell{Tuple: Tuple{Newest: schedule.InstantOf(start)}}},
	}
	c := &apiCollector{sched: &apiSchedule{book: b}}
	x := excessTally{}
	for _, st := range states {
		c.publishLocked(st)
		x.add(st.view.Load(), now)
	}
	if got := x["hour"]; got == nil || got.n != 2 || got.sum != w {
		t.Fatalf("tally %+v, want 2 series counted, one an hour behind", got)
	}
}
