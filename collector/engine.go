package collector

import (
	"container/heap"
	"time"

	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The refresh engine of one API. It owns the plan of its tuples: a queue
// ordered by when each is due (queue.go), its next refresh set by the
// policy of package schedule after every refresh, moved earlier when
// another series of its key found the row it waits for, later when it
// waits for its key's leader. Its one loop refreshes every tuple when the
// plan says, within the API's concurrency (and rate_limit, which the
// client holds), one refresh per tuple at a time, and publishes each
// outcome where scrapes read it (a tupleView, state.go). The loop runs on
// the engine's clock: the real one in production, a simulated one in
// tests and benchmarks, which drive this same loop by moving the clock
// and waiting for it to settle (Exporter.Settle). A scrape never starts a
// call nor waits for one, except for the first fill of tuples never asked
// (collect).
//
// Demand: an exporter nobody scrapes spends nothing. The engine calls
// upstream only while scrapes come: after idleAfter (or three times the
// gap between the last two scrapes, if longer) without one it stops, and
// the next scrape wakes it. Until the first scrape it does nothing. A
// member of a cluster, once the cluster is scraped, calls whether or not
// it is scraped itself.

// DefaultIdleAfter is how long the engine goes on calling upstream after
// the last scrape.
const DefaultIdleAfter = 10 * time.Minute

// start runs the engine's loop in the background.
func (c *apiCollector) start() {
	c.loopDone = make(chan struct{})
	go c.loop()
}

// wake asks the loop to plan again: a scrape after an idle spell, a
// timer, a reload. It takes no lock: a scrape never waits for a refresh
// or a save that holds the engine's.
func (c *apiCollector) wake() {
	c.wakes.Add(1)
	c.signal()
}

// unlockWake releases the engine's lock after a change to plan from,
// counting the wake before (settle waits for it).
func (c *apiCollector) unlockWake() {
	c.wakes.Add(1)
	c.mu.Unlock()
	c.signal()
}

// signal hands the loop a wake already counted in c.wakes.
func (c *apiCollector) signal() {
	select {
	case c.wakeup <- struct{}{}:
	default:
	}
}

// touch records a scrape: demand. A scrape after an idle spell wakes the
// loop. It takes no lock.
func (c *apiCollector) touch(now time.Time) {
	idle := c.idle(now)
	n := now.UnixNano()
	if prev := c.lastScrape.Swap(n); prev != 0 && n > prev {
		c.scrapeGap.Store(n - prev)
	}
	if idle {
		c.wake()
	}
}

// idle says whether nobody scrapes: never yet, or not for a while; or
// whether this member is joining its cluster. A member of a cluster, once
// the cluster is scraped (it was, or a peer sent it its whole state), does
// not idle otherwise: the others serve what it owns to scrapers it may
// never see (a Service target balanced to one pod).
func (c *apiCollector) idle(now time.Time) bool {
	if c.peer.Joining() {
		// The others' full state is on its way (cluster.go): nothing is
		// fetched that it may hold; the join's end wakes the engine.
		return true
	}
	last := c.lastScrape.Load()
	if last == 0 {
		return true
	}
	if c.peer != nil {
		return false
	}
	return now.Sub(time.Unix(0, last)) > max(c.idleAfter, 3*time.Duration(c.scrapeGap.Load()))
}

func (c *apiCollector) loop() {
	defer close(c.loopDone)
	for {
		c.dispatch()
		select {
		case <-c.ctx.Done():
			return
		case <-c.wakeup:
		}
	}
}

// dispatch starts the refreshes due now, first those planned earliest, as
// many as the API's concurrency leaves room for, and arms the clock for
// when the next is due (nothing while the engine idles: a scrape wakes
// it).
func (c *apiCollector) dispatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The wakes counted by now are handled by this plan; one counted
	// while it is made (a scrape takes no lock) signals the loop again.
	wakes := c.wakes.Load()
	c.replanPendingLocked() // keys a peer's deltas touched (cluster.go)
	now := c.clk.Now()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	late := false
	c.wait = waitState{}
	if !c.closed && !c.idle(now) {
		// A refresh starts with a turn of rate_limit taken for it: a due
		// tuple that has none waits for the next in its place; it is not
		// sent to be held back and planned again.
		for c.running < c.api.Concurrency && c.queue.due(now) {
			turn, wait := c.turnLocked(now)
			if turn == nil {
				c.wait = wait
				if c.running == 0 {
					c.releaseFirstLocked() // no scrape waits for a turn
				}
				break
			}
			st := c.popDueLocked(now)
			if st == nil {
				turn.Release()
				break
			}
			if c.awaitOwnerLocked(st, now) {
				turn.Release()
				heap.Push(&c.queue, st) // the owner's row is expected by then
				continue
			}
			c.startLocked(st, turn)
		}
		if next := c.queue.first(); next != nil {
			// Due and waiting for a slot: a refresh that ends wakes
			// the loop; the timer is the fallback. Due and waiting for a
			// turn: the timer wakes it when the turn frees.
			at := now.Add(time.Second)
			switch {
			case !c.wait.until.IsZero():
				at = c.wait.until
			case !c.queue.due(now):
				at = c.queue.key(next)
			}
			c.timer = c.clk.At(at, c.wake)
			// A simulated clock moved past at while this plan was made
			// fired the timers due before this one was armed: the loop
			// plans again at the new time, or the tuple would wait for
			// the next move of the clock.
			late = !c.clk.Now().Before(at)
		}
	}
	c.publishEngineLocked(now)
	c.handled = wakes
	if late {
		c.wake()
	}
	c.settled.Broadcast()
}

// startLocked starts the refresh of a tuple taken off the queue, with
// the turn of rate_limit taken for it.
func (c *apiCollector) startLocked(st *tupleState, turn *upstream.Turn) {
	c.running++
	st.inflight = true
	st.running.Store(true) // no view of its own: a view a refresh, not two
	c.wg.Add(1)
	go c.refresh(st, refreshRun{tuple: st.tuple, api: c.api, up: c.up, turn: turn})
}

// settle waits until the loop has handled every wake and no refresh is
// under way: all that is due at the clock's time is done.
func (c *apiCollector) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.closed && (c.handled != c.wakes.Load() || c.running > 0) {
		c.settled.Wait()
	}
}

// close stops the engine and the refreshes under way, and waits for them;
// its gauges of the fill and the wait go with it.
func (c *apiCollector) close() {
	c.m.due.DeleteLabelValues(c.name)
	c.m.unasked.DeleteLabelValues(c.name)
	c.m.rowDue.drop(c.name)
	c.mu.Lock()
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.settled.Broadcast()
	c.mu.Unlock()
	c.cancel()
	if c.loopDone != nil {
		<-c.loopDone
	}
	c.wg.Wait()
	c.mu.Lock()
	if c.unfilled > 0 {
		c.unfilled = 0
		close(c.filled) // nobody fills them now: scrapes go on
	}
	c.mu.Unlock()
}
