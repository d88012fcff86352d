package budget

import (
	"testing"
	"time"
)

// TestClusterBudget: the calls the other members gossip count against the
// limit and the pace; a member that sees fewer members than there were
// spends at most its share.
func TestClusterBudget(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	b := New(960, now) // 40 an hour, a bucket of 10
	for i := 0; i < 5; i++ {
		if ok, _ := b.Take(now); !ok {
			t.Fatalf("call %d refused with a full bucket", i+1)
		}
	}
	b.ObservePeer("b", now, 5, now) // the other member spent the rest of the burst
	if ok, _ := b.Take(now); ok {
		t.Fatal("a call was allowed after the cluster spent the burst")
	}
	if got := b.Used(now); got != 10 {
		t.Fatalf("Used = %d, want the cluster's 10", got)
	}
	if got := b.Own(now); got != 5 {
		t.Fatalf("Own = %d, want this member's 5", got)
	}
	b.ObservePeer("b", now, 5, now) // the same count again: nothing more
	b.ObservePeer("b", now.Add(-24*time.Hour), 100, now)
	if got := b.Used(now); got != 10 {
		t.Fatalf("Used = %d after a repeated and a stale count, want 10", got)
	}
	// The other member made the day's calls but for one.
	later := now.Add(6 * time.Hour)
	b.ObservePeer("b", later, 954, later)
	later = later.Add(time.Hour) // the bucket refilled
	if ok, _ := b.Take(later); !ok {
		t.Fatal("the day's last call refused")
	}
	if ok, _ := b.Take(later.Add(time.Hour)); ok {
		t.Fatal("a call past the cluster's daily_budget allowed")
	}

	// Cut off: one of two members, it spends at most half the limit.
	midnight := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	c := New(96, midnight)
	c.SetShare(1, 2)
	n := 0
	for at := midnight; at.Before(midnight.Add(24 * time.Hour)); at = at.Add(time.Minute) {
		if ok, _ := c.Take(at); ok {
			n++
		}
	}
	if n != 48 {
		t.Fatalf("a member cut off from one other made %d calls in a day of 96, want its share 48", n)
	}
}
