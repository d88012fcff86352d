// Package clock is the time the refresh engine runs on: the real clock in
// production, a simulated one (Sim) in tests and benchmarks, which move it
// by hand. The engine reads the time and arms timers only through a Clock,
// so the loop that runs in production is the loop every test and benchmark
// drives.
package clock

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// Later is the later of a and b.
func Later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Clock tells the time and calls a function after a while.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has passed, in its own goroutine for the
	// real clock, from the call that moves a simulated clock past it.
	// f must not block.
	AfterFunc(d time.Duration, f func()) Timer
	// At calls f once the clock reaches t, as AfterFunc does; a t already
	// past fires as AfterFunc's d <= 0 does. Unlike AfterFunc(t.Sub(Now())),
	// a simulated clock moved in between cannot push the deadline later.
	At(t time.Time, f func()) Timer
}

// Timer is an armed AfterFunc.
type Timer interface {
	// Stop disarms it; it reports whether it had not fired yet.
	Stop() bool
}

// Real is the wall clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}

func (realClock) At(t time.Time, f func()) Timer {
	return time.AfterFunc(time.Until(t), f)
}

// Sim is a simulated clock, safe for concurrent use: time moves only when
// Set or Add moves it, and the timers whose time has come fire then, in
// the order of their deadlines, before Set or Add returns.
type Sim struct {
	mu     sync.Mutex
	t      time.Time
	timers []*simTimer
	seq    uint64
}

// NewSim starts a simulated clock at t.
func NewSim(t time.Time) *Sim { return &Sim{t: t} }

type simTimer struct {
	c   *Sim
	at  time.Time
	seq uint64
	f   func()
}

// Now is the simulated time.
func (c *Sim) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// AfterFunc arms f for d from the simulated now; d <= 0 fires it at the
// next move of the clock (or at once through Fire).
func (c *Sim) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armLocked(c.t.Add(d), f)
}

// At arms f for the simulated time at; one not after now fires at the
// next move of the clock (or at once through Fire).
func (c *Sim) At(at time.Time, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armLocked(at, f)
}

func (c *Sim) armLocked(at time.Time, f func()) *simTimer {
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
func (c *Sim) Next() (time.Time, bool) {
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
func (c *Sim) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
	c.Fire()
}

// Add moves the clock on by d and fires the timers due by then.
func (c *Sim) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
	c.Fire()
}

// Fire fires the timers due at the simulated now, earliest first. A timer
// a fired function arms for now or earlier fires in the same call.
func (c *Sim) Fire() {
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
