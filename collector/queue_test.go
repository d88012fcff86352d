package collector

import (
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// TestQueueOrdersByDue: the engine takes tuples in the order they are
// due, the configuration's order among equals; a tuple that waits for
// the row another series of its key found comes due at the 5 s floor
// once that series' refresh is stored, not at its own plan.
func TestQueueOrdersByDue(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	tuple := func(key, path string) *config.Tuple {
		return &config.Tuple{API: "data", Path: path, Window: "hour", Key: key}
	}
	at := func(d time.Duration) time.Time { return now.Add(d) }
	c := &apiCollector{clk: simclock.New(now), api: &config.API{Concurrency: 1}, sched: &apiSchedule{book: schedule.NewBook(nil)}, byKey: map[string][]*tupleState{}}
	mk := func(key, path string, next time.Time) *tupleState {
		st := &tupleState{tuple: tuple(key, path), slot: -1, order: int32(len(c.states))}
		st.Next = schedule.InstantOf(next)
		c.states = append(c.states, st)
		c.byKey[st.delayKey()] = append(c.byKey[st.delayKey()], st)
		return st
	}
	mk("late", "/q", at(3*time.Minute))
	mk("first", "/q", at(time.Minute))
	mk("tie-1", "/q", at(2*time.Minute))
	mk("tie-2", "/q", at(2*time.Minute))
	leader := mk("leader", "/p", at(time.Hour))
	follower := mk("follower", "/p", at(time.Hour))
	c.mu.Lock()
	for _, st := range c.states {
		c.planLocked(st)
	}
	var order []string
	for st := c.popDueLocked(at(10 * time.Minute)); st != nil; st = c.popDueLocked(at(10 * time.Minute)) {
		order = append(order, st.tuple.Key)
		st.inflight = true // taken, as the engine does
	}
	c.mu.Unlock()
	if want := []string{"first", "tie-1", "tie-2", "late"}; len(order) != len(want) || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] || order[3] != want[3] {
		t.Fatalf("taken in the order %v, want %v", order, want)
	}

	// The follower waits for the 10:00 row of its key (it has 09:00);
	// the leader finds it.
	row := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	follower.Newest, follower.Following, follower.Planned, follower.LastAttempt = schedule.InstantOf(row), true, true, schedule.InstantOf(at(-time.Second))
	c.mu.Lock()
	c.planLocked(follower)
	if !follower.Next.Time().Equal(at(time.Hour)) {
		t.Errorf("before its leader found the row, the follower is due at %v, want its plan", follower.Next)
	}
	leader.Newest = schedule.InstantOf(row.Add(time.Hour))
	var siblings bool
	leader.Poll, siblings = c.sched.book.Next(leader.delayKey(), c.sched.series(leader.tuple, &leader.Tuple), leader.Poll, schedule.Outcome{PrevNewest: row}, at(0))
	if !siblings {
		t.Error("the leader found the row its key's followers wait for, and the refresh does not say so")
	}
	c.replanKeyLocked(leader.delayKey())
	due := c.popDueLocked(at(5 * time.Second))
	c.mu.Unlock()
	if due != follower || !follower.Next.Time().Equal(at(4*time.Second)) {
		t.Errorf("after its leader found the row, the follower is due at %v (taken: %v), want the 5 s floor after its last call", follower.Next, due != nil)
	}
}
