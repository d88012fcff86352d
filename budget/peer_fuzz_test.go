package budget

import (
	"testing"
	"time"
)

// Whatever count a peer gossips (any name, any day, any number, at any
// time of this member's) is taken within its bounds or refused, never a
// panic: the cluster's count stays between this member's own and its own
// plus what the other members can have spent, and this member's bucket
// is its own.
func FuzzObservePeer(f *testing.F) {
	f.Add("b", int64(0), int64(5), int64(0), int64(960), true)
	f.Add("rogue", int64(-3600), int64(1<<62), int64(43200), int64(20000), true)
	f.Add("", int64(86400*400), int64(-1), int64(-86400), int64(0), false)
	f.Add("b", int64(1<<40), int64(9223372036854775807), int64(1<<40), int64(100000000), true)
	f.Fuzz(func(t *testing.T, member string, daySeconds, used, atSeconds, limit int64, serving bool) {
		start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		b := New(int(max(min(limit, MaxDailyCalls), 0)), start)
		if serving {
			b.SetMembers([]string{member}, 2)
		}
		at := start.Add(time.Duration(atSeconds%(7*86400)) * time.Second)
		day := start.Add(time.Duration(daySeconds%(400*86400)) * time.Second)
		b.ObservePeer(member, day, int(used), at)
		b.ObservePeer(member, day, int(used), at.Add(time.Second))
		got, own := b.Used(at), b.Own(at)
		if got < own || got-own > MaxDailyCalls {
			t.Fatalf("the cluster counts %d calls, this member %d", got, own)
		}
		if l := b.Limit(at); l > 0 && got-own > l {
			t.Fatalf("one member counted %d calls of a day of %d", got-own, l)
		}
	})
}
