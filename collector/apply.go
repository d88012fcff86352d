package collector

import (
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// handleLocked passes an event of a tuple through the door and applies
// what it did: the one way a tuple's state changes.
func (c *apiCollector) handleLocked(st *tupleState, ev event) {
	asked := st.asked()
	fx := c.transitLocked(st, ev)
	c.noteLocked(st, ev, fx) // what the operator's page shows (view.go)
	c.applyLocked(st, fx)
	if !asked && st.asked() && !st.removed {
		c.askedLocked(c.clk.Now()) // after it is placed: the fill may end
	}
}

// transitLocked passes an event through the door and keeps the state it
// returns, unless the door refused what the event offered. The queue's
// own events need nothing more.
func (c *apiCollector) transitLocked(st *tupleState, ev event) effects {
	d := door{tuple: st.tuple, sched: c.sched, fams: c.fams, maxStaleness: c.api.MaxStaleness,
		clean: c.up.Clean, now: c.clk.Now()}
	if ev.kind == evRefused && !ev.sibling {
		for _, sib := range c.byKey[st.delayKey()] {
			d.siblingRefused = d.siblingRefused || (sib != st && sib.refused())
		}
	}
	var next cell
	var fx effects
	c.sched.book.Update(st.delayKey(), st.tuple.Key, func(k schedule.Known) schedule.Known {
		d.known = k
		next, fx = step(d, st.cell, ev)
		if !fx.planned {
			return k // nothing learned: the Book keeps what it had
		}
		return fx.known
	})
	if fx.refused == "" {
		st.cell = next
	}
	return fx
}

// applyLocked is the one place that turns a tuple's effects into metrics,
// log lines, messages to the cluster and the queue's order.
func (c *apiCollector) applyLocked(st *tupleState, fx effects) {
	t := st.tuple
	if fx.refused != "" {
		if c.cm != nil {
			c.cm.Refused.WithLabelValues(c.name, fx.refused).Inc()
		}
		if fx.why != "" && !c.refusedLogged[fx.refused] {
			c.refusedLogged[fx.refused] = true
			level.Warn(c.logger).Log("msg", "a row was refused; the tuple keeps what it had (logged once per reason)", "reason", fx.refused,
				"endpoint", t.Path, "query", upstream.ShownQuery(t.Query().URL()), "err", fx.why)
		}
		return
	}
	for code, n := range fx.codes {
		if n > 0 {
			c.up.CountErrors(code, n)
		}
	}
	c.logLocked(st, fx.logs)
	if fx.held && fx.holdBy == upstream.HeldByRateLimit && fx.holdUntil.After(c.hold.until) {
		// A turn of rate_limit taken elsewhere: no refresh starts before
		// the next. A daily_budget hold plans that call alone.
		c.hold = waitState{until: fx.holdUntil, by: fx.holdBy}
	}
	if fx.rowDelay != nil {
		c.m.rowDelay.WithLabelValues(c.name, t.Window).Observe(fx.rowDelay.Seconds())
	}
	if fx.pubDelay != nil {
		c.m.pubDelay.Set(c.name, t.Path, t.Window, *fx.pubDelay)
	}
	if fx.ownerHeard {
		delete(c.fallingBack, st.delayKey()) // the owner is heard again
	}
	if c.peer != nil {
		if fx.sent {
			role := "owner"
			if fx.fallback {
				role = "fallback"
			}
			c.cm.Refreshes.WithLabelValues(c.name, role).Inc()
		}
		if fx.received {
			c.cm.Received.WithLabelValues(c.name).Inc()
		}
		if fx.send {
			c.sendLocked(st)
		}
	}
	st.buildInfo(c.tf)
	if fx.refuseKey != nil {
		for _, sib := range c.byKey[st.delayKey()] {
			if sib != st && !sib.inflight && !sib.removed {
				c.handleLocked(sib, event{kind: evRefused, err: fx.refuseKey, sibling: true})
			}
		}
	}
	switch {
	case st.inflight || st.removed: // placed again when its refresh ends; or gone
	case fx.replanKey:
		c.replanKeyLocked(st.delayKey()) // st, and its key's followers
	default:
		c.planLocked(st)
	}
	c.publishLocked(st)
	if fx.filled {
		c.filledLocked(st) // after its view is published: a waiting scrape reads it
	}
}

// logLocked logs what the door said of a tuple.
func (c *apiCollector) logLocked(st *tupleState, logs []logLine) {
	for _, l := range logs {
		lg := level.Debug(c.logger)
		if l.warn {
			lg = level.Warn(c.logger)
		}
		kv := []any{"msg", l.msg, "endpoint", st.tuple.Path, "query", upstream.ShownQuery(st.tuple.Query().URL())}
		if l.err != "" {
			kv = append(kv, "err", l.err)
		}
		lg.Log(kv...)
	}
}

// filledLocked ends a tuple's first fill: scrapes wait no more for it.
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

// releaseFirstLocked ends the scrapes' wait for the first fill: the
// engine waits for a turn, so the rest will not come before a deadline.
func (c *apiCollector) releaseFirstLocked() {
	if c.unfilled == 0 {
		return
	}
	for _, st := range c.states {
		st.first = false
	}
	c.unfilled = 0
	close(c.filled)
}
