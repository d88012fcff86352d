package collector

import (
	"container/heap"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// engineConfig is what a configuration gives one API's engine.
type engineConfig struct {
	api   *config.API
	up    *upstream.Client
	sched *apiSchedule
	fams  *exposition.Families
	tf    *tupleFamilies
	// saved is what the last run left of the API's tuples, checked, by
	// key (first start only).
	saved map[string]Tuple
	// reload: a reload, not the start; tuples that fail are retried at
	// once (the user may have fixed the cause).
	reload bool
}

// reconcile puts a configuration in force in a running engine: the
// tuples it keeps keep their values, plan and any refresh in flight (their
// series are rebuilt only for labels that changed), removed ones leave
// the queue and are dropped when a refresh under way ends, new ones are
// queued, due at once. It makes no call and waits for none.
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
			// At start, the first scrape waits for it, within its
			// deadline; a tuple a reload adds is served once filled: a
			// reload never holds a scrape.
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

// reloaded is a reload that changed nothing of the API: the pauses of a
// rejected credential are lifted (the user may have fixed it upstream),
// and the tuples that fail are retried at once.
func (c *apiCollector) reloaded() {
	c.mu.Lock()
	up := c.up
	c.mu.Unlock()
	up.Reloaded()
	c.mu.Lock()
	for _, st := range c.states {
		if st.failed() && !st.inflight {
			c.handleLocked(st, event{kind: evReset})
		}
	}
	c.unlockWake()
}

// PlanChanged says the key's plan of an API changed (it was read again
// and differs): the series held for a refusal are asked again at once
// (evPlanChanged), and those the new plan refuses too are held again
// without a call (upstream.Client asks nothing the plan in force
// refuses).
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
