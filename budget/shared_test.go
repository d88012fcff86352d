package budget

import (
	"testing"
	"time"
)

// shared marks series as a pattern's.
func shared(ss []Series) []Series {
	for i := range ss {
		ss[i].Shared = true
	}
	return ss
}

// The series of patterns are coarsened first: while they can absorb the
// cut, the series named one by one keep every row; past that, the named
// are cut too and the patterns' polled every MaxInterval.
func TestPlanCoarsensPatternsFirst(t *testing.T) {
	named := many(2, "named", "min", time.Minute)             // 3024 calls a day
	pattern := shared(many(20, "pattern", "hour", time.Hour)) // 504 calls a day
	natural := 2*Overhead*1440 + 20*Overhead*24

	// Room for the named and a little of the pattern's.
	p := NewPlan(concat(named, pattern), 0, 3500)
	if !p.Fits || p.Factor("min", time.Minute) != 1 {
		t.Fatalf("the named series are cut while the pattern's could absorb it: %s (fits %v)", factors(p), p.Fits)
	}
	fs := p.Factors()
	if fs[named[0].Key] != 0 || fs[pattern[0].Key] <= 1 {
		t.Errorf("factors by key: named %v, pattern %v", fs[named[0].Key], fs[pattern[0].Key])
	}
	if p.Planned > p.Available || p.Planned < 0.99*p.Available {
		t.Errorf("planned %.1f of %.1f available (natural %.1f)", p.Planned, p.Available, natural)
	}

	// Less than the named series alone cost: they are cut, the pattern's
	// polled every MaxInterval.
	p = NewPlan(concat(named, pattern), 0, 2000)
	if !p.Fits || p.Factor("min", time.Minute) <= 1 {
		t.Fatalf("the named series are not cut: %s (fits %v)", factors(p), p.Fits)
	}
	if got := p.Factors()[pattern[0].Key]; got != float64(MaxInterval/time.Hour) {
		t.Errorf("the pattern's hour series: factor %v, want %v", got, float64(MaxInterval/time.Hour))
	}
	if p.Planned > p.Available {
		t.Errorf("planned %.1f of %.1f", p.Planned, p.Available)
	}

	// Without patterns the plan is as before: one interval for all.
	q := NewPlan(concat(named, many(20, "other", "hour", time.Hour)), 0, 3500)
	if q.Factor("min", time.Minute) <= 1 {
		t.Errorf("without patterns the finest window is cut first: %s", factors(q))
	}
}
