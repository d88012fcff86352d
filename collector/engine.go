package collector

import "time"

// The refresh engine of one API. It owns the plan of its tuples: a queue
// ordered by when each is due (queue.go), its next refresh set by the
// policy of package schedule after every refresh, moved earlier when
// another series of its key found the row it waits for, later when it
// waits for its key's leader. Its loop refreshes every tuple when the plan
// says, within the API's concurrency (and rate_limit, which the client
// holds), one refresh per tuple at a time, and stores the outcome where
// scrapes read it. A scrape
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

// start queues the tuples and runs the engine's loop in the background
// (not for a simulated clock: step is then called by whoever moves the
// clock).
func (c *apiCollector) start() {
	c.wakeup = make(chan struct{}, 1)
	c.byKey = map[string][]*tupleState{}
	c.mu.Lock()
	for i, st := range c.states {
		st.order, st.slot = i, -1
		c.byKey[st.delayKey()] = append(c.byKey[st.delayKey()], st)
		c.planLocked(st)
	}
	c.mu.Unlock()
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

// dispatch starts the refreshes due at now, first those planned
// earliest, as many as the API's concurrency leaves room for, and returns
// when the next one is due (zero when the engine idles).
func (c *apiCollector) dispatch(now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.idleLocked(now) {
		return time.Time{}
	}
	for c.running < c.api.Concurrency {
		st := c.popDueLocked(now)
		if st == nil {
			break
		}
		c.startLocked(st)
	}
	next := c.queue.first()
	switch {
	case next == nil:
		return time.Time{}
	case !next.due.After(now):
		// Due, and waiting for a slot: a refresh that ends wakes the
		// loop; this is the fallback.
		return now.Add(time.Second)
	}
	return next.due
}

// startLocked starts the refresh of a tuple taken off the queue.
func (c *apiCollector) startLocked(st *tupleState) {
	c.running++
	st.inflight = make(chan struct{})
	c.wg.Add(1)
	go c.refresh(st, st.inflight)
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
		st := c.queue.first()
		again := st != nil && !st.due.After(now) && !c.closed
		c.mu.Unlock()
		if !again || i > 3 {
			break
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.queue.first(); st != nil {
		return st.due
	}
	return time.Time{}
}

// dispatchAll starts every refresh due at now, whatever the concurrency
// (the client holds it), and returns what to wait for: those and the
// refreshes already under way. For a simulated clock only, where the
// caller moves time.
func (c *apiCollector) dispatchAll(now time.Time) []<-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	var waits []<-chan struct{}
	for _, st := range c.states {
		if st.inflight != nil {
			waits = append(waits, st.inflight)
		}
	}
	if c.closed {
		return waits
	}
	for st := c.popDueLocked(now); st != nil; st = c.popDueLocked(now) {
		c.startLocked(st)
		waits = append(waits, st.inflight)
	}
	return waits
}
