package budget

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// What peers claim can never exceed what the cluster can have spent, nor
// hold this member's calls. At 05:39 UTC with a budget of 20 000 (the
// hostile run's figures):
//
//   - 64 names gossiping counts at the pace were taken, 310 057 calls
//     counted, every call held until 00:00; now only the members that
//     serve are counted, each at most its pace since 00:00;
//   - two serving names claiming near int64's max were cut, but drained
//     this member's bucket: every series held 15 minutes; now this
//     member's bucket is its own;
//   - names that serve one after another (rogues rotating through the
//     slots) count together at most what the members that served at once
//     can have spent.
func TestPeerClaimsBoundedByTheCluster(t *testing.T) {
	at := time.Date(2026, 11, 29, 5, 39, 0, 0, time.UTC)
	const limit = 20000
	dayStart := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	pace := int(burst(limit) + rate(limit)*at.Sub(dayStart).Seconds()) // one member's most since 00:00

	// 64 names, one of which serves.
	b := New(limit, at.Add(-time.Hour))
	b.SetMembers([]string{"m0"}, 2)
	for i := range 64 {
		for s := range 10 { // every gossip of a row carries the count again
			now := at.Add(time.Duration(s) * time.Second)
			b.ObservePeer(fmt.Sprintf("m%d", i), dayStart, pace*(s+1), now)
		}
	}
	now := at.Add(10 * time.Second)
	if most := pace + int(rate(limit)*10) + 1; b.Used(now) > most {
		t.Errorf("64 names counted %d calls at 05:39; one member serves, whose pace allowed %d", b.Used(now), most)
	}
	if ok, next := b.Take(now); !ok {
		t.Errorf("this member's calls are held until %s", next)
	}

	// Two serving names near int64's max, gossiped again and again.
	c := New(limit, at.Add(-time.Hour))
	c.SetMembers([]string{"x", "y"}, 3)
	for s := range 60 {
		now := at.Add(time.Duration(s) * time.Second)
		c.ObservePeer("x", dayStart, math.MaxInt64-s, now)
		c.ObservePeer("y", dayStart, math.MaxInt64, now)
	}
	now = at.Add(time.Minute)
	if used := c.Used(now); used > 2*(pace+int(rate(limit)*60))+2 {
		t.Errorf("two names near int64's max counted %d calls at 05:40, want at most two members' pace, %d", used, 2*pace)
	}
	taken := 0
	for range int(burst(limit)) {
		if ok, _ := c.Take(now); ok {
			taken++
		}
	}
	if taken < int(burst(limit)) {
		t.Errorf("this member made %d of its burst of %v after the claims: they drained its bucket", taken, burst(limit))
	}

	// 64 names serving one at a time, each claiming its pace: together at
	// most one member's.
	r := New(limit, at.Add(-time.Hour))
	for i := range 64 {
		name := fmt.Sprintf("rotating-%d", i)
		r.SetMembers([]string{name}, 2)
		r.ObservePeer(name, dayStart, pace, at)
	}
	if used := r.Used(at); used > pace+1 {
		t.Errorf("64 names serving in turn counted %d calls, want at most one member's pace, %d", used, pace)
	}
}
