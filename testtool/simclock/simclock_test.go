package simclock

import (
	"testing"
	"time"
)

func TestFiresDueTimersInOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(start)
	var fired []string
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "b") })
	c.AfterFunc(time.Second, func() { fired = append(fired, "a") })
	stopped := c.AfterFunc(time.Second, func() { fired = append(fired, "stopped") })
	c.AfterFunc(10*time.Second, func() { fired = append(fired, "late") })
	if !stopped.Stop() {
		t.Fatal("Stop of an armed timer reported false")
	}
	if next, ok := c.Next(); !ok || !next.Equal(start.Add(time.Second)) {
		t.Fatalf("Next = %v, %v; want %v", next, ok, start.Add(time.Second))
	}
	c.Add(5 * time.Second)
	if got := len(fired); got != 2 || fired[0] != "a" || fired[1] != "b" {
		t.Fatalf("fired %v after 5 s; want [a b]", fired)
	}
	if !c.Now().Equal(start.Add(5 * time.Second)) {
		t.Fatalf("Now = %v", c.Now())
	}
	c.Set(start) // back: the late timer keeps its deadline
	c.Add(9 * time.Second)
	if len(fired) != 2 {
		t.Fatalf("fired %v at start+9s after a move back; want [a b]", fired)
	}
	c.Add(time.Second)
	if len(fired) != 3 {
		t.Fatalf("fired %v at start+10s; want the late one too", fired)
	}
}

func TestTimerArmedByAFiredOneFiresInTheSameMove(t *testing.T) {
	c := New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	n := 0
	var again func()
	again = func() {
		n++
		if n < 3 {
			c.AfterFunc(0, again)
		}
	}
	c.AfterFunc(time.Second, again)
	c.Add(time.Second)
	if n != 3 {
		t.Fatalf("fired %d times; want 3", n)
	}
	if _, ok := c.Next(); ok {
		t.Fatal("a timer is still armed")
	}
}

func TestAtKeepsItsDeadlineAcrossAMove(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(start)
	c.Add(30 * time.Second) // a move between reading the time and arming
	fired := 0
	c.At(start.Add(time.Minute), func() { fired++ })
	c.Add(30 * time.Second)
	if fired != 1 {
		t.Fatalf("fired %d times at the deadline; want 1", fired)
	}
	c.At(start, func() { fired++ }) // already past: at the next move
	if fired != 1 {
		t.Fatal("a past deadline fired while being armed")
	}
	c.Add(0)
	if fired != 2 {
		t.Fatalf("a past deadline did not fire at the next move: %d", fired)
	}
}
