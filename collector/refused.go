package collector

import (
	"time"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// refusedLocked holds what the key's plan refused: the tuple's endpoint
// and window (its delay key), for every tuple of that key, and nothing
// else of the API. The refusal is the request's, not the key's
// (upstream.Error.Refused): the other series never notice. The tuple
// that was refused has had its failure counted and planned (refresh);
// its siblings take the same outcome without a call, so that a plan
// without the metric costs one call per endpoint and window, not one per
// series. A reload, or the next read of the plan, asks them again
// (reloaded, reconcile: failed).
func (c *apiCollector) refusedLocked(st *tupleState, e *upstream.Error, now time.Time) {
	l := level.Warn(c.logger)
	for _, sib := range c.byKey[st.delayKey()] {
		if sib != st && sib.refused() {
			l = level.Debug(c.logger) // a sibling in flight with it said so
		}
	}
	c.logOnce(st, l, "the key's plan refuses this endpoint and window; its series are held, asked again after a reload or in 24 h", e.Error())
	for _, sib := range c.byKey[st.delayKey()] {
		if sib == st || sib.inflight || sib.removed {
			continue
		}
		sib.OK, sib.LastCode = false, e.Code
		if sib.FailingSince.IsZero() {
			sib.FailingSince = now
		}
		c.sched.afterError(sib, e, now)
		c.filledLocked(sib)
		sib.logged = st.logged // logged once for the key
		sib.buildInfo(c.tf)
		c.planLocked(sib)
		c.publishLocked(sib)
		if c.peer != nil {
			c.sendLocked(sib)
		}
	}
}

// filledLocked ends a tuple's first fill: the first scrape waits no more
// for it.
func (c *apiCollector) filledLocked(st *tupleState) {
	if !st.first {
		return
	}
	st.first = false
	c.unfilled--
	if c.unfilled == 0 {
		close(c.filled)
	}
}

// PlanChanged says the key's plan of an API changed (it was read again
// and differs): the series held for a refusal are asked again at once,
// and those the new plan refuses too are held again without a call
// (upstream.Client asks nothing the plan in force refuses).
func (e *Exporter) PlanChanged(api string) {
	for _, c := range *e.served.Load() {
		if c.name == api {
			c.planChanged()
		}
	}
}

func (c *apiCollector) planChanged() {
	c.mu.Lock()
	now := c.clk.Now()
	for _, st := range c.states {
		if st.refused() && !st.inflight {
			c.sched.reset(st, now)
			c.planLocked(st)
			c.publishLocked(st)
		}
	}
	c.wakes++
	c.mu.Unlock()
	c.signal()
}
