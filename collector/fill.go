package collector

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/published"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The first fill: until each tuple never asked has been asked once, the
// queue gives them the calls first (planQueue.key), logged once a
// minute. A call with no turn of rate_limit or daily_budget is a wait,
// not a failure (onchain_exporter_tuples_due).

// fillLogEvery is how often a fill is logged, its end included.
const fillLogEvery = time.Minute

// maxFill is the longest fill that asks every tuple once before any
// twice: one that fits takes minutes (10 102 series at 540 a minute, 19);
// a longer one is a budget's pace (79 series at 63 calls a day take 30
// hours), where the first asked would wait a day: it goes in plan order.
const maxFill = time.Hour

// fillState is an engine's fill, guarded by its lock.
type fillState struct {
	unasked      int
	since        time.Time
	askedAtStart int // the fill's rate is measured from there
	logged       time.Time
	// done is when the last fill ended, its line waiting for the minute
	// after the last line about it.
	done time.Time
}

// waitState is a wait of the engine for a turn of the limit by.
type waitState struct {
	until time.Time
	by    string
}

// engineView is the fill and the wait as published; immutable.
type engineView struct {
	fill published.Fill
	wait published.Wait
}

// heldBy is an upstream limit's name as published.
var heldBy = map[string]published.Limit{
	upstream.HeldByRateLimit:   published.HeldByRateLimit,
	upstream.HeldByDailyBudget: published.HeldByDailyBudget,
}

// recountLocked counts the tuples never asked after a reconcile, starting
// or ending a fill.
func (c *apiCollector) recountLocked(now time.Time) {
	n := 0
	for _, st := range c.states {
		if !st.asked() {
			n++
		}
	}
	was := c.fill.unasked > 0
	c.fill.unasked = n
	if n > 0 && !was {
		c.fill.since, c.fill.askedAtStart, c.fill.logged, c.fill.done = now, len(c.states)-n, now, time.Time{}
		c.queue.since = now
	}
	// How long n tuples take to ask at the rate in force; with none, every
	// tuple is still asked once before any twice.
	c.queue.hold = maxFill
	if r := c.rateLocked(); r > 0 {
		c.queue.hold = time.Duration(float64(n) / r * float64(time.Minute))
	}
	c.queue.filling = n > 0 && c.queue.hold <= maxFill
	heap.Init(&c.queue)
}

// askedLocked ends a tuple's part of the fill; the last ends the fill.
func (c *apiCollector) askedLocked(now time.Time) {
	c.fill.unasked--
	if c.fill.unasked > 0 {
		return
	}
	if c.queue.filling {
		c.queue.filling = false
		heap.Init(&c.queue)
	}
	if now.Sub(c.fill.since) >= fillLogEvery {
		c.fill.done = now // said once a minute has passed since the last line
	}
}

// rateLocked is the lower of rate_limit and daily_budget's pace, in calls
// a minute; 0 for neither.
func (c *apiCollector) rateLocked() float64 {
	r := c.api.RateLimit
	if b := c.up.Budget(); b != nil {
		if l := b.Limit(c.clk.Now()); l > 0 {
			pace := float64(l) / (24 * 60)
			if r == 0 || pace < r {
				r = pace
			}
		}
	}
	return r
}

// fillRateLocked is the fill's rate in calls a minute: measured once it
// has run a minute, the rate in force before.
func (c *apiCollector) fillRateLocked(now time.Time) float64 {
	if elapsed := now.Sub(c.fill.since); elapsed >= fillLogEvery {
		asked := len(c.states) - c.fill.unasked - c.fill.askedAtStart
		return float64(asked) / elapsed.Minutes()
	}
	return c.rateLocked()
}

// publishEngineLocked publishes the fill and the wait, and logs the fill
// once a minute while it runs.
func (c *apiCollector) publishEngineLocked(now time.Time) {
	f := published.Fill{Filling: c.fill.unasked > 0, Total: len(c.states), Asked: len(c.states) - c.fill.unasked, Since: c.fill.since}
	if f.Filling {
		f.PerMinute = c.fillRateLocked(now)
		f.Line = fmt.Sprintf("filling: %d of %d series", f.Asked, f.Total)
		if f.PerMinute > 0 {
			minutes := float64(c.fill.unasked) / f.PerMinute
			f.Done = now.Add(time.Duration(math.Min(minutes, 1e6) * float64(time.Minute)))
			f.Line += fmt.Sprintf(", %.0f calls a minute, done at about %s", f.PerMinute, f.Done.UTC().Format("15:04 MST"))
		}
		if now.Sub(c.fill.logged) >= fillLogEvery {
			c.fill.logged = now
			level.Info(c.logger).Log("msg", f.Line)
		}
	}
	if !c.fill.done.IsZero() && !f.Filling && now.Sub(c.fill.logged) >= fillLogEvery {
		level.Info(c.logger).Log("msg", fmt.Sprintf("filled: %d series asked once in %s", len(c.states),
			c.fill.done.Sub(c.fill.since).Round(time.Second)))
		c.fill.done, c.fill.logged = time.Time{}, now
	}
	v := &engineView{f, published.Wait{Until: c.wait.until, By: heldBy[c.wait.by]}}
	if old := c.engine.Load(); old == nil || *old != *v {
		c.engine.Store(v)
	}
}

// turnLocked takes a turn of rate_limit for a refresh to start now; none
// while a hold runs. Without one, it says what to wait for.
func (c *apiCollector) turnLocked(now time.Time) (*upstream.Turn, waitState) {
	if c.hold.until.After(now) {
		return nil, c.hold
	}
	t, next := c.up.TakeTurn()
	if t == nil {
		return nil, waitState{until: next, by: upstream.HeldByRateLimit}
	}
	return t, waitState{}
}
