package collector

import (
	"container/heap"
	"time"

	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// planQueue is the plan of one API: its tuples not in flight, earliest
// due first, the configuration's order among equals; guarded by the
// apiCollector's lock. During a fill of at most maxFill, a tuple never
// asked is due when the fill began at the latest, and one asked already
// the fill's length later than its plan says (docs/budget.md, "The first
// fill").
type planQueue struct {
	items []*tupleState
	// since is when the fill began, hold its length at the rate in force.
	filling bool
	since   time.Time
	hold    time.Duration
}

// key is when a tuple comes in the queue's order.
func (q *planQueue) key(st *tupleState) time.Time {
	switch {
	case !q.filling:
		return st.Next.Time()
	case !st.asked():
		if st.Next.Time().After(q.since) {
			return st.Next.Time() // held for a reason of its own (a cluster's owner)
		}
		return q.since
	}
	return st.Next.Time().Add(q.hold)
}

func (q *planQueue) Len() int { return len(q.items) }
func (q *planQueue) Less(i, j int) bool {
	if c := q.key(q.items[i]).Compare(q.key(q.items[j])); c != 0 {
		return c < 0
	}
	return q.items[i].order < q.items[j].order
}
func (q *planQueue) Swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	q.items[i].slot, q.items[j].slot = int32(i), int32(j)
}
func (q *planQueue) Push(x any) {
	st := x.(*tupleState)
	st.slot = int32(len(q.items))
	q.items = append(q.items, st)
}
func (q *planQueue) Pop() any {
	old := q.items
	st := old[len(old)-1]
	old[len(old)-1] = nil
	q.items = old[:len(old)-1]
	st.slot = -1
	return st
}

// first is the tuple that comes first, nil when none waits.
func (q *planQueue) first() *tupleState {
	if len(q.items) == 0 {
		return nil
	}
	return q.items[0]
}

// due says whether the first tuple's key is due at now.
func (q *planQueue) due(now time.Time) bool {
	st := q.first()
	return st != nil && !q.key(st).After(now)
}

// planLocked (re)places a tuple not in flight in the queue; when another
// series of its key found its row, it is due as soon as the floor allows.
func (c *apiCollector) planLocked(st *tupleState) {
	if st.inflight || st.removed {
		return // queued again when its refresh ends; or gone
	}
	// The floor runs from the last refresh, sent or held back.
	last := st.LastAttempt
	if held := st.heldAt.Time(); held.After(last.Time()) {
		last = schedule.InstantOf(held)
	}
	if floor := last.Time().Add(minInterval); floor.Before(st.Next.Time()) && (st.Polls > 0 || st.Following) &&
		c.sched.book.SiblingFound(st.delayKey(), c.sched.series(st.tuple, &st.Tuple), st.Poll, floor) {
		c.transitLocked(st, event{kind: evSiblingFound, until: floor})
	}
	if st.slot >= 0 {
		heap.Fix(&c.queue, int(st.slot))
	} else {
		heap.Push(&c.queue, st)
	}
	c.publishLocked(st)
}

// replanKeyLocked places again every tuple of a key.
func (c *apiCollector) replanKeyLocked(key string) {
	if c.replanLater != nil {
		c.replanLater[key] = true // a batch of a peer's rows: once, after it
		return
	}
	for _, st := range c.byKey[key] {
		c.planLocked(st)
	}
}

// popDueLocked takes the first tuple due at now off the queue, nil when
// none is; a follower whose leader chases the row is placed again later.
func (c *apiCollector) popDueLocked(now time.Time) *tupleState {
	for {
		if !c.queue.due(now) {
			return nil
		}
		st := c.queue.first()
		if c.sched.waitsForLeader(st, now) {
			c.transitLocked(st, event{kind: evLeaderChasing})
			heap.Fix(&c.queue, int(st.slot))
			continue
		}
		heap.Pop(&c.queue)
		return st
	}
}
