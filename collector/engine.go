package collector

import (
	"slices"
	"time"
)

// The refresh engine of one API. It owns the plan of its tuples: each
// tuple's next refresh (tupleState.Next, set by the schedule after every
// refresh) and the rules that move one earlier (a follower whose leader
// found the row) or later (a follower that waits for its leader). Its
// loop refreshes every tuple when the plan says, within the API's
// concurrency (and rate_limit, which the client holds), one refresh per
// tuple at a time, and stores the outcome where scrapes read it. A scrape
// never starts a call nor waits for one, except for the first fill of
// tuples never asked (collect).
//
// Demand: an exporter nobody scrapes spends nothing. The engine calls
// upstream only while scrapes come: after idleAfter (or three times the
// gap between the last two scrapes, if longer) without one it stops, and
// the next scrape wakes it. Until the first scrape it does nothing.

// DefaultIdleAfter is how long the engine goes on calling upstream after
// the last scrape.
const DefaultIdleAfter = 10 * time.Minute

// start runs the engine's loop in the background (not for a simulated
// clock: step is then called by whoever moves the clock).
func (c *apiCollector) start() {
	c.wakeup = make(chan struct{}, 1)
	if c.manual {
		return
	}
	c.loopDone = make(chan struct{})
	go c.loop()
}

// wake asks the loop to plan again.
func (c *apiCollector) wake() {
	select {
	case c.wakeup <- struct{}{}:
	default:
	}
}

// touch records a scrape: demand. A scrape after an idle spell wakes the
// loop.
func (c *apiCollector) touch(now time.Time) {
	c.mu.Lock()
	idle := c.idleLocked(now)
	if !c.lastScrape.IsZero() && now.After(c.lastScrape) {
		c.scrapeGap = now.Sub(c.lastScrape)
	}
	c.lastScrape = now
	c.mu.Unlock()
	if idle {
		c.wake()
	}
}

// idleLocked says whether nobody scrapes: never yet, or not for a while.
func (c *apiCollector) idleLocked(now time.Time) bool {
	return c.lastScrape.IsZero() || now.Sub(c.lastScrape) > max(c.idleAfter, 3*c.scrapeGap)
}

func (c *apiCollector) loop() {
	defer close(c.loopDone)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := c.dispatch(c.now())
		wait := time.Hour // idle, or nothing planned: a wake comes first
		if !next.IsZero() {
			wait = max(next.Sub(c.now()), time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-c.ctx.Done():
			return
		case <-c.wakeup:
		case <-timer.C:
		}
	}
}

// step runs, on a simulated clock, every refresh due at now and waits
// for them; it returns when the next is due (zero: nothing planned).
func (c *apiCollector) step(now time.Time) time.Time {
	c.touch(now)
	for i := 0; ; i++ {
		for _, w := range c.dispatchAll(now) {
			<-w
		}
		// A refresh that ended may have made others due at once (a
		// follower of a leader that found its row); run those too.
		c.mu.Lock()
		again := false
		for _, st := range c.states {
			again = again || c.dueLocked(st, now)
		}
		c.mu.Unlock()
		if !again || i > 3 {
			break
		}
	}
	return c.nextDue()
}

// dispatchAll starts every refresh due at now, whatever the concurrency
// (the client holds it), and returns what to wait for. For a simulated
// clock only, where the caller moves time.
func (c *apiCollector) dispatchAll(now time.Time) []<-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	var waits []<-chan struct{}
	for _, st := range c.states {
		if st.inflight != nil {
			waits = append(waits, st.inflight)
			continue
		}
		if !c.dueLocked(st, now) {
			continue
		}
		c.running++
		st.inflight = make(chan struct{})
		waits = append(waits, st.inflight)
		c.wg.Add(1)
		go c.refresh(st, st.inflight)
	}
	return waits
}

// nextDue is when the next refresh of the API is due.
func (c *apiCollector) nextDue() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Time
	for _, st := range c.states {
		if st.inflight != nil {
			continue
		}
		if at := c.dueAtLocked(st, c.now()); next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// dueAtLocked is when a tuple not due at now is: its plan, or, when
// another series of its key found the row it waits for, as soon as the
// 5 s floor allows (past that, a tuple not due waits for its key's
// leader, and its plan says until when).
func (c *apiCollector) dueAtLocked(st *tupleState, now time.Time) time.Time {
	if floor := st.LastAttempt.Add(minInterval); floor.After(now) && c.sched.siblingFound(st, floor) {
		return minTime(st.Next, floor)
	}
	return st.Next
}

// dueLocked says whether a tuple is to be refreshed at now.
func (c *apiCollector) dueLocked(st *tupleState, now time.Time) bool {
	switch {
	case st.inflight != nil || c.closed:
		return false
	case now.Before(st.Next) && !c.sched.siblingFound(st, now):
		return false
	case c.sched.waitsForLeader(st, now):
		return false
	}
	return true
}

// dispatch starts the refreshes due at now, as many as the API's
// concurrency leaves room for, first those planned earliest, and returns
// when the next one is due (zero when the engine idles).
func (c *apiCollector) dispatch(now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.idleLocked(now) {
		return time.Time{}
	}
	var due []*tupleState
	var next time.Time
	for _, st := range c.states {
		if c.dueLocked(st, now) {
			due = append(due, st)
			continue
		}
		if st.inflight != nil {
			continue
		}
		if at := c.dueAtLocked(st, now); next.IsZero() || at.Before(next) {
			next = at
		}
	}
	sortByPlan(due)
	for i, st := range due {
		if c.running >= c.api.Concurrency {
			// The rest wait for a slot: a refresh that ends wakes
			// the loop.
			if next.IsZero() || due[i].Next.Before(next) {
				next = now.Add(time.Second)
			}
			break
		}
		c.running++
		st.inflight = make(chan struct{})
		c.wg.Add(1)
		go c.refresh(st, st.inflight)
	}
	return next
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// sortByPlan orders due tuples by when they were planned, earliest first.
func sortByPlan(due []*tupleState) {
	slices.SortStableFunc(due, func(a, b *tupleState) int { return a.Next.Compare(b.Next) })
}
