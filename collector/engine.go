package collector

import (
	"container/heap"
	"time"

	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The refresh engine of one API: one loop refreshes each tuple when its
// plan says (queue.go), within concurrency, one refresh per tuple at a
// time, and publishes each outcome for scrapes. It runs on the engine's
// clock, simulated in tests (Exporter.Settle). A scrape never starts a
// call nor waits for one, except for the first fill.
//
// Demand: nobody scrapes, nothing is spent. The engine stops after
// idleAfter without a scrape (or three scrape gaps, if longer) and does
// nothing before the first. A cluster member, once the cluster is
// scraped, calls whether or not it is scraped itself.

// DefaultIdleAfter is how long the engine goes on calling upstream after
// the last scrape.
const DefaultIdleAfter = 10 * time.Minute

// start runs the engine's loop in the background.
func (c *apiCollector) start() {
	c.loopDone = make(chan struct{})
	go c.loop()
}

// wake asks the loop to plan again, without a lock: a scrape never waits
// for one.
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

// touch records a scrape, without a lock; after an idle spell it wakes
// the loop.
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

// idle says whether nobody scrapes, or this member is joining its
// cluster. A cluster member, once scraped or sent a peer's whole state,
// does not idle otherwise: the others serve what it owns to scrapers it
// may never see.
func (c *apiCollector) idle(now time.Time) bool {
	if c.peer.Joining() {
		return true // nothing fetched the others' full state may hold
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

// dispatch starts the refreshes due now, earliest first, within
// concurrency, and arms the clock for the next (not while idle).
func (c *apiCollector) dispatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A wake counted while this plan is made signals the loop again.
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
		// A refresh starts with a turn of rate_limit: without one, a due
		// tuple waits in its place, not sent to be held back.
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
			// Waiting for a slot, a refresh that ends wakes the loop (the
			// timer is a fallback); for a turn, the timer does.
			at := now.Add(time.Second)
			switch {
			case !c.wait.until.IsZero():
				at = c.wait.until
			case !c.queue.due(now):
				at = c.queue.key(next)
			}
			c.timer = c.clk.At(at, c.wake)
			// A simulated clock moved past at meanwhile: plan again now,
			// not at its next move.
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

// startLocked starts the refresh of a tuple taken off the queue.
func (c *apiCollector) startLocked(st *tupleState, turn *upstream.Turn) {
	c.running++
	st.inflight = true
	st.running.Store(true) // no view of its own: one a refresh, not two
	c.wg.Add(1)
	go c.refresh(st, refreshRun{tuple: st.tuple, api: c.api, up: c.up, turn: turn})
}

// settle waits until the loop has handled every wake and no refresh is
// under way.
func (c *apiCollector) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.closed && (c.handled != c.wakes.Load() || c.running > 0) {
		c.settled.Wait()
	}
}

// close stops the engine and the refreshes under way, and waits for them.
func (c *apiCollector) close() {
	c.m.due.DeleteLabelValues(c.name)
	c.m.unasked.DeleteLabelValues(c.name)
	c.m.rowDue.publish(c.name, nil)
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
