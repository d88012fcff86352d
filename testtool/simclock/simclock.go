// Package simclock is a simulated clock.Clock for tests and benchmarks:
// time moves only when they move it, and the timers due fire then, so that
// the refresh engine's own loop runs days in seconds.
package simclock

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/internal/clock"
)

// Clock is a simulated clock, safe for concurrent use: time moves only when
// Set or Add moves it, and the timers whose time has come fire then, in
// the order of their deadlines, before Set or Add returns.
type Clock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*simTimer
	seq    uint64
}

// New starts a simulated clock at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

type simTimer struct {
	c   *Clock
	at  time.Time
	seq uint64
	f   func()
}

// Now is the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// AfterFunc arms f for d from the simulated now; d <= 0 fires it at the
// next move of the clock (or at once through Fire).
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armLocked(c.t.Add(d), f)
}

// At arms f for the simulated time at; one not after now fires at the
// next move of the clock (or at once through Fire).
func (c *Clock) At(at time.Time, f func()) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armLocked(at, f)
}

func (c *Clock) armLocked(at time.Time, f func()) *simTimer {
	c.seq++
	t := &simTimer{c: c, at: at, seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *simTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			// slices.Delete clears the slot left past the end: a
			// stopped timer's function is not kept alive by the array.
			c.timers = slices.Delete(c.timers, i, i+1)
			return true
		}
	}
	return false
}

// Next is the deadline of the earliest armed timer, false when none is.
func (c *Clock) Next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return time.Time{}, false
	}
	first := c.timers[0].at
	for _, t := range c.timers[1:] {
		if t.at.Before(first) {
			first = t.at
		}
	}
	return first, true
}

// Set moves the clock to t and fires the timers due by then. Moving it
// back fires nothing: timers keep their deadlines.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
	c.Fire()
}

// Add moves the clock on by d and fires the timers due by then.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
	c.Fire()
}

// Fire fires the timers due at the simulated now, earliest first. A timer
// a fired function arms for now or earlier fires in the same call.
func (c *Clock) Fire() {
	for {
		c.mu.Lock()
		var due []*simTimer
		kept := c.timers[:0]
		for _, t := range c.timers {
			if !t.at.After(c.t) {
				due = append(due, t)
			} else {
				kept = append(kept, t)
			}
		}
		for i := len(kept); i < len(c.timers); i++ {
			c.timers[i] = nil
		}
		c.timers = kept
		c.mu.Unlock()
		if len(due) == 0 {
			return
		}
		sort.Slice(due, func(i, j int) bool {
			if !due[i].at.Equal(due[j].at) {
				return due[i].at.Before(due[j].at)
			}
			return due[i].seq < due[j].seq
		})
		for _, t := range due {
			t.f() // without the lock: f may arm another timer
		}
	}
}

var _ clock.Clock = (*Clock)(nil)
