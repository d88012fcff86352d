package collector

import (
	"container/heap"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// engineConfig is what a configuration gives one API's engine.
type engineConfig struct {
	api    *config.API
	up     *upstream.Client
	sched  *apiSchedule
	fams   *exposition.Families
	tf     *tupleFamilies
	saved  map[string]Tuple // what the last run left, checked, by key
	reload bool             // not the start: tuples that fail are retried at once
}

// reconcile puts a configuration in force in a running engine: kept
// tuples keep their values, plan and refresh in flight; removed ones
// leave the queue; new ones are due at once. It waits for no call.
func (c *apiCollector) reconcile(ec engineConfig) {
	c.mu.Lock()
	old := make(map[string]*tupleState, len(c.states))
	for _, st := range c.states {
		old[st.tuple.Key] = st
	}
	c.api, c.up, c.sched, c.fams, c.tf = ec.api, ec.up, ec.sched, ec.fams, ec.tf
	states := make([]*tupleState, 0, len(ec.api.Tuples))
	unfilled := c.unfilled
	for i, t := range ec.api.Tuples {
		st := old[t.Key]
		switch saved, ok := ec.saved[t.Key]; {
		case st != nil:
			delete(old, t.Key)
			st.tuple, st.key, st.info = t, "", nil // made again from the new tuple
			if ec.reload && st.failed() && !st.inflight {
				c.transitLocked(st, event{kind: evReset}) // failing: a reload may have fixed it
			}
			c.logLocked(st, c.transitLocked(st, event{kind: evRebuild}).logs) // its labels may have changed
		case ok:
			st = &tupleState{tuple: t, slot: -1}
			ev := event{kind: evSaved, row: &saved}
			c.noteLocked(st, ev, c.transitLocked(st, ev)) // a failing entry's page says why
		default:
			st = &tupleState{tuple: t, slot: -1}
		}
		st.buildInfo(c.tf)
		if !ec.reload && !st.first && st.LastAttempt.IsZero() && st.values == nil && !st.inflight {
			// The first scrape waits for it; a reload never holds a scrape.
			st.first = true
			c.unfilled++
		}
		st.order = int32(i)
		states = append(states, st)
	}
	for _, st := range old {
		st.removed = true
		if st.slot >= 0 {
			heap.Remove(&c.queue, int(st.slot))
		}
		if st.first {
			st.first = false
			c.unfilled--
		}
	}
	switch {
	case unfilled == 0 && c.unfilled > 0:
		c.filled = make(chan struct{}) // new tuples to fill: closed when they are
	case unfilled > 0 && c.unfilled == 0:
		close(c.filled)
	}
	c.states = states
	c.byKey, c.byTuple = map[string][]*tupleState{}, make(map[string]*tupleState, len(states))
	for _, st := range states {
		if same := c.byKey[st.delayKey()]; len(same) > 0 {
			st.key = same[0].key // one string for the key's tuples
		}
		c.byKey[st.delayKey()] = append(c.byKey[st.delayKey()], st)
		c.byTuple[st.tuple.Key] = st
	}
	if c.cm != nil {
		c.cm.Owned.WithLabelValues(c.name).Set(float64(c.ownedLocked()))
	}
	for _, st := range states {
		c.planLocked(st) // where it was, unless something above moved it; publishes it
	}
	c.recountLocked(c.clk.Now()) // the fill, and the queue's order
	c.publishViewLocked()
	c.unlockWake()
}

// reloaded is a reload that changed nothing of the API: a rejected
// credential's pauses are lifted and failing tuples retried at once.
func (c *apiCollector) reloaded() {
	c.view.Load().up.Reloaded() // published by the reconcile that made it served
	c.mu.Lock()
	for _, st := range c.states {
		if st.failed() && !st.inflight {
			c.handleLocked(st, event{kind: evReset})
		}
	}
	c.unlockWake()
}

// PlanChanged says the key's plan of an API changed: the series held for
// a refusal are asked again at once (what it still refuses is held again
// without a call).
func (e *Exporter) PlanChanged(api string) {
	for _, c := range *e.served.Load() {
		if c.name == api {
			c.planChanged()
		}
	}
}

func (c *apiCollector) planChanged() {
	c.mu.Lock()
	for _, st := range c.states {
		if st.refused() && !st.inflight {
			c.handleLocked(st, event{kind: evPlanChanged})
		}
	}
	c.unlockWake()
}
