package fakeapi

import (
	"sync"
	"time"
)

// SimClock is a settable clock, safe for concurrent use. Tests and
// benchmarks give its Now to the fake upstream and to the exporter, so
// that both live in the same simulated time.
type SimClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewSimClock starts a clock at t.
func NewSimClock(t time.Time) *SimClock { return &SimClock{t: t} }

// Now is the simulated time.
func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *SimClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Add moves the clock on by d.
func (c *SimClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
