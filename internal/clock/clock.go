// Package clock is the time the refresh engine runs on: the real clock in
// production, a simulated one (testtool/simclock) in tests and benchmarks,
// which move it by hand. The engine reads the time and arms timers only through a Clock,
// so the loop that runs in production is the loop every test and benchmark
// drives.
package clock

import (
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
