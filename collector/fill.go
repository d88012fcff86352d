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

// The first fill, and the wait for a turn. At start, or when a reload
// adds tuples, some tuples were never asked: until each has been asked
// once, the queue gives them the calls first (planQueue.key), one log
// line a minute says how far the fill is, and the page says when it will
// be done. A call rate_limit or daily_budget has no turn for is not a
// failure: the engine starts no refresh while none is free, and waits
// for the next (wait), which the page and onchain_exporter_tuples_due
// show.

// fillLogEvery is how often a fill is logged: one line a minute at most,
// whatever the number of series, its end included.
const fillLogEvery = time.Minute

// noRate is the fill's length when no rate is in force (no rate_limit,
// no daily_budget): the calls go as fast as concurrency allows, and
// every tuple is asked once before any is asked again.
const noRate = maxFill

// maxFill is the longest fill that asks every tuple once before any
// twice: a fill at a rate the configuration fits takes minutes (10 102
// series at 540 calls a minute, 19), and one longer than an hour is one
// the daily budget cannot afford at its pace (79 series at 63 calls a
// day take 30 hours), where the series asked first would wait a day for
// their second row. Such a fill goes in the plan's order.
const maxFill = time.Hour

// fillState is an engine's fill: the tuples never asked, since when it
// runs, and what was logged of it. Guarded by the engine's lock.
type fillState struct {
	unasked int
	since   time.Time
	// askedAtStart is how many tuples were asked when it began: the rate
	// of the fill is measured from there.
	askedAtStart int
	logged       time.Time
	// done is when the last fill ended, its line not logged yet: it
	// waits for the minute after the last line about the fill.
	done time.Time
}

// waitState is a wait of the engine for a turn: due tuples wait for
// rate_limit's next turn or daily_budget's next call (by), until.
type waitState struct {
	until time.Time
	by    string
}

// engineView is what the engine publishes of its API beyond the tuples:
// the fill and the wait. Immutable once published.
type engineView struct {
	// filling: tuples never asked remain; asked of total are asked;
	// perMinute is the fill's rate (0: not known yet), done when it is
	// expected to end at that rate.
	filling      bool
	asked, total int
	since        time.Time
	perMinute    float64
	done         time.Time
	wait         waitState
}

// recountLocked counts the tuples never asked after a reconcile, and
// starts a fill when some are, or ends one none is left of.
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
	// A fill longer than maxFill is one the daily budget cannot afford
	// at its pace: it goes in the plan's order.
	c.queue.hold = c.fillLengthLocked(n)
	c.queue.filling = n > 0 && c.queue.hold <= maxFill
	heap.Init(&c.queue)
}

// askedLocked ends a tuple's part of the fill, once: the last one ends
// the fill, and the queue takes its plain order again.
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

// rateLocked is the rate in force, in calls a minute: the lower of
// rate_limit and daily_budget's pace; 0 when neither applies.
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

// fillLengthLocked is how long n tuples take to ask at the rate in force:
// a tuple asked already waits that much longer in the queue during a
// fill (planQueue.key).
func (c *apiCollector) fillLengthLocked(n int) time.Duration {
	r := c.rateLocked()
	if r <= 0 {
		return noRate
	}
	return time.Duration(float64(n) / r * float64(time.Minute))
}

// fillRateLocked is the fill's rate in calls a minute: measured once it
// has run a minute, the rate in force before; 0 when neither is known.
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
	v := &engineView{filling: c.fill.unasked > 0, total: len(c.states), asked: len(c.states) - c.fill.unasked,
		since: c.fill.since, wait: c.wait}
	if v.filling {
		v.perMinute = c.fillRateLocked(now)
		if v.perMinute > 0 {
			minutes := float64(c.fill.unasked) / v.perMinute
			v.done = now.Add(time.Duration(math.Min(minutes, 1e6) * float64(time.Minute)))
		}
		if now.Sub(c.fill.logged) >= fillLogEvery {
			c.fill.logged = now
			level.Info(c.logger).Log("msg", v.line())
		}
	}
	if !c.fill.done.IsZero() && !v.filling && now.Sub(c.fill.logged) >= fillLogEvery {
		level.Info(c.logger).Log("msg", fmt.Sprintf("filled: %d series asked once in %s", len(c.states),
			c.fill.done.Sub(c.fill.since).Round(time.Second)))
		c.fill.done, c.fill.logged = time.Time{}, now
	}
	if old := c.engine.Load(); old == nil || *old != *v {
		c.engine.Store(v)
	}
}

// published is the fill and the wait as the page reads them.
func (v *engineView) published() (published.Fill, published.Wait) {
	f := published.Fill{Filling: v.filling, Asked: v.asked, Total: v.total, Since: v.since, PerMinute: v.perMinute, Done: v.done}
	if v.filling {
		f.Line = v.line()
	}
	w := published.Wait{Until: v.wait.until}
	switch v.wait.by {
	case upstream.HeldByRateLimit:
		w.By = published.HeldByRateLimit
	case upstream.HeldByDailyBudget:
		w.By = published.HeldByDailyBudget
	}
	return f, w
}

// line says the fill in a sentence: "filling: 2851 of 10102 series, 540
// calls a minute, done at about 06:49 UTC".
func (v *engineView) line() string {
	s := fmt.Sprintf("filling: %d of %d series", v.asked, v.total)
	if v.perMinute > 0 {
		s += fmt.Sprintf(", %.0f calls a minute, done at about %s", v.perMinute, v.done.UTC().Format("15:04 MST"))
	}
	return s
}

// turnLocked takes a turn for a refresh to start now: none while a hold
// runs (a call held back by rate_limit or daily_budget), else one of
// rate_limit; and, when there is none, until when and by what.
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
