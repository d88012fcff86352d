package collector

import (
	"container/heap"
	"time"
)

// planQueue is the plan of one API: its tuples not in flight, ordered by
// when each is due (the Plan the policy returned), earliest first. The engine pops what
// is due and pushes a tuple back when its refresh ends; it is guarded by
// the apiCollector's lock.
type planQueue []*tupleState

func (q planQueue) Len() int { return len(q) }
func (q planQueue) Less(i, j int) bool {
	if c := q[i].Next.Compare(q[j].Next); c != 0 {
		return c < 0
	}
	return q[i].order < q[j].order // the configuration's order among equals
}
func (q planQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].slot, q[j].slot = i, j
}
func (q *planQueue) Push(x any) {
	st := x.(*tupleState)
	st.slot = len(*q)
	*q = append(*q, st)
}
func (q *planQueue) Pop() any {
	old := *q
	st := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	st.slot = -1
	return st
}

// first is the tuple due earliest, nil when none waits.
func (q planQueue) first() *tupleState {
	if len(q) == 0 {
		return nil
	}
	return q[0]
}

// planLocked (re)places a tuple not in flight in the queue, at when its
// plan says; when another series of its key found the row it waits for,
// that is an event (evSiblingFound): due as soon as the 5 s floor allows.
func (c *apiCollector) planLocked(st *tupleState) {
	if st.inflight || st.removed {
		return // queued again when its refresh ends; or gone
	}
	// The floor runs from the last refresh, sent or held back by the
	// budget: a tuple is never taken more often.
	last := st.LastAttempt
	if st.heldAt.After(last) {
		last = st.heldAt
	}
	if floor := last.Add(minInterval); floor.Before(st.Next) && c.sched.siblingFound(st, floor) {
		c.transitLocked(st, event{kind: evSiblingFound, until: floor})
	}
	if st.slot >= 0 {
		heap.Fix(&c.queue, st.slot)
	} else {
		heap.Push(&c.queue, st)
	}
	c.publishLocked(st)
}

// replanKeyLocked places again every tuple of a key: a refresh of one of
// them may have found the row the others wait for.
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
// none is. A follower whose key's leader still chases the row waits for it
// (evLeaderChasing): its plan moves past now, and it is placed again.
func (c *apiCollector) popDueLocked(now time.Time) *tupleState {
	for {
		st := c.queue.first()
		if st == nil || st.Next.After(now) {
			return nil
		}
		if c.sched.waitsForLeader(st, now) {
			c.transitLocked(st, event{kind: evLeaderChasing})
			heap.Fix(&c.queue, st.slot)
			continue
		}
		heap.Pop(&c.queue)
		return st
	}
}
