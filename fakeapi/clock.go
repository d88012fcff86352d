package fakeapi

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/internal/clock"
)

// SimClock is a simulated clock, safe for concurrent use, with timers
// (package clock). Tests and benchmarks give it to the fake upstream (its
// Now) and to the exporter (the clock its engine runs on), so that both
// live in the same simulated time.
type SimClock = clock.Sim

// NewSimClock starts a clock at t.
func NewSimClock(t time.Time) *SimClock { return clock.NewSim(t) }
