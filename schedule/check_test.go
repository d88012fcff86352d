package schedule

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A plan taken back (Outcome.Restored) further ahead than the policy ever
// plans the series is due at once, the rest of it kept; one within that
// stands. Every plan the policy itself makes, a pause of MaxPause
// included, is within it: a restart never undoes a plan it made.
func TestRestoredPlanBeyondTheHorizonIsDueAtOnce(t *testing.T) {
	now := time.Date(2026, 11, 20, 16, 30, 0, 0, time.UTC) // a Friday
	p := &Default
	for _, s := range []Series{
		{ID: "hour", Window: "hour", W: time.Hour},
		{ID: "day", Window: "day", W: 24 * time.Hour},
		{ID: "coarse", Window: "day", W: 24 * time.Hour, Factor: 3},
		{ID: "ttl", CacheTTL: 3 * 24 * time.Hour},
		{ID: "trading days", W: 24 * time.Hour, Skip: 1<<time.Saturday | 1<<time.Sunday},
		{ID: "late for days", W: time.Hour, MaxWait: 72 * time.Hour},
		{ID: "block", Window: "block"},
	} {
		s.Newest = now.Add(-time.Minute).Truncate(max(s.W, time.Second))
		var made []time.Time
		_, pl := p.Next(Known{Key: p.fresh(s.W)}, s, Poll{}, Outcome{PrevNewest: s.Newest.Add(-s.W)}, now)
		made = append(made, pl.Next.Time())
		for _, f := range []Failure{{Hold: p.MaxPause}, {PauseUntil: now.Add(p.MaxPause)}, {RetryAfter: p.MaxPause}} {
			_, e := p.Next(Known{Key: p.fresh(s.W)}, s, Poll{}, Outcome{Err: &f}, now)
			made = append(made, e.Next.Time())
		}
		h := p.horizon(s, now)
		for _, next := range made {
			if next.After(h) {
				t.Errorf("%s: the policy plans %v, beyond its horizon %v", s.ID, next, h)
			}
		}
		within := Poll{Next: InstantOf(h), Polls: 2, Due: time.Minute, Spacing: s.W}
		if _, got := p.Next(Known{}, s, within, Outcome{Restored: true}, now); got != within {
			t.Errorf("%s: a plan at the horizon (%v) became %+v", s.ID, h, got)
		}
		beyond := Poll{Next: InstantOf(h.Add(time.Second)), Polls: 2, Due: time.Minute, Spacing: s.W}
		_, got := p.Next(Known{}, s, beyond, Outcome{Restored: true}, now)
		if want := (Poll{Next: InstantOf(now), Polls: 2, Due: time.Minute, Spacing: s.W, Why: WhyNow}); got != want {
			t.Errorf("%s: a plan beyond the horizon (%v) became %+v, want it due at once, the rest kept", s.ID, h, got)
		}
	}
}

// A plan taken back teaches a key nothing: what the Book learned of it
// stays as it was.
func TestRestoredPlanLeavesTheBook(t *testing.T) {
	b := NewBook(nil)
	st := newTuple(b, "k", "/p", "hour")
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	now := start.Add(17 * time.Minute)
	for range 5 {
		prev := st.Newest
		st.Newest = now.Truncate(time.Hour).Add(-time.Hour)
		now = st.success(prev, now)
	}
	learned := b.Snapshot()
	next := st.Poll.Next
	pl, siblings := b.Next(st.key, st.Series, st.Poll, Outcome{Restored: true}, now.Add(-time.Minute))
	if !pl.Next.Time().Equal(next.Time()) || siblings {
		t.Errorf("plan %+v, siblings %v; want the plan for %v kept", pl, siblings, next)
	}
	if after := b.Snapshot(); !reflect.DeepEqual(after, learned) {
		t.Errorf("the Book changed: %+v, was %+v", after, learned)
	}
}

// An estimate or a plan taken back with a number the schedule never
// makes is refused, naming the number; one it makes is taken.
func TestChecksOfWhatIsTakenBack(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	good := Estimate{First: 5 * time.Minute, Depth: time.Minute, Credit: 1, Rows: 3, Seen: now.Add(-time.Hour)}
	if err := good.Check(time.Hour, now); err != nil {
		t.Errorf("a good estimate: %v", err)
	}
	for _, tc := range []struct {
		name, problem string
		change        func(*Estimate)
	}{
		{"first of 9e18 ns", "learned first 2562047h47m16.854775807s is beyond 4h0m0s", func(e *Estimate) { e.First = math.MaxInt64 }},
		{"negative depth", "learned depth -5h0m0s is beyond 4h0m0s", func(e *Estimate) { e.Depth = -5 * time.Hour }},
		{"a release offset of 9e18 ns", "a release offset 2562047h47m16.854775807s is beyond 4h0m0s", func(e *Estimate) { e.Released = []time.Duration{time.Minute, math.MaxInt64} }},
		{"17 release offsets", "17 release offsets, more than the 16 kept", func(e *Estimate) { e.Released = make([]time.Duration, 17) }},
		{"a late offset of -5 h", "learned late -5h0m0s is beyond 4h0m0s", func(e *Estimate) { e.Late = -5 * time.Hour }},
		{"credit of 1e300", "credit 1e+300 is not a number the schedule keeps", func(e *Estimate) { e.Credit = 1e300 }},
		{"negative rows", "a count (-1) is not between 0 and 1000000", func(e *Estimate) { e.Rows = -1 }},
		{"row seen in 9999", "seen 9999-12-31T23:00:00Z is more than 1h0m0s ahead", func(e *Estimate) { e.Seen = time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC) }},
		{"seen before 1970", "seen 1969-12-31T00:00:00Z is before 1970", func(e *Estimate) { e.Seen = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC) }},
	} {
		e := good
		tc.change(&e)
		if err := e.Check(time.Hour, now); err == nil || !strings.Contains(err.Error(), tc.problem) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.problem)
		}
	}
	// Without a known spacing (block, no window), a day bounds the delays.
	if err := (&Estimate{First: 23 * time.Hour}).Check(0, now); err != nil {
		t.Errorf("a delay of 23 h without a spacing: %v", err)
	}
	if err := (&Poll{Due: 5 * time.Minute, Polls: 2, Why: WhyRevalidate}).Check(time.Hour); err != nil {
		t.Errorf("a good plan: %v", err)
	}
	for _, pl := range []Poll{{Due: math.MaxInt64}, {Missed: -5 * time.Hour}, {Polls: -1}, {Polls: math.MaxInt}, {Spacing: -time.Hour}, {Spacing: math.MaxInt64}, {Why: WhyRevalidate + 1}, {Why: 255}} {
		if err := pl.Check(time.Hour); err == nil {
			t.Errorf("plan %+v taken", pl)
		}
	}
}

// TestEstimateSavesWhatWasLearned: the parts the key's series play in
// this process (leader, chaser, the misses of the row under way) are not
// saved or sent; what the model learned comes back whole.
func TestEstimateSavesWhatWasLearned(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	e := Estimate{First: time.Hour, Depth: time.Minute, Low: 50 * time.Minute, HasLow: true, Credit: 0.3, Learned: true,
		Seen: now.Add(-time.Hour), Spent: 0.2, Rows: 7, Descent: 1, FollowHits: 4, FollowMisses: 1, Split: true,
		Released: []time.Duration{70 * time.Minute, 80 * time.Minute}, Late: 5 * time.Hour,
		Chaser: "a", Chased: now, Leader: "b", LeaderAt: now, RowMisses: 2}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"leader", "chase", "row_misses"} {
		if strings.Contains(string(b), role) {
			t.Errorf("the saved estimate carries %q: %s", role, b)
		}
	}
	var back Estimate
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want := e
	want.Chaser, want.Chased, want.Leader, want.LeaderAt, want.RowMisses = "", time.Time{}, "", time.Time{}, 0
	if !reflect.DeepEqual(back, want) {
		t.Errorf("read back %+v, want %+v", back, want)
	}
}

// TestAdoptKeepsWhatThisProcessPlays: a peer's estimate replaces what the
// key learned here, and keeps which of this member's series leads and
// when the row was found here (a peer sends neither).
func TestAdoptKeepsWhatThisProcessPlays(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	k := Known{Key: Estimate{First: time.Hour, Seen: now.Add(-2 * time.Hour), Leader: "a", LeaderAt: now, SeenAt: now.Add(-time.Minute)}}
	k.Adopt(Estimate{First: 70 * time.Minute, Seen: now.Add(-time.Hour)})
	got := k.Key
	if got.First != 70*time.Minute || !got.Seen.Equal(now.Add(-time.Hour)) {
		t.Errorf("the peer's estimate not taken: %+v", got)
	}
	if got.Leader != "a" || !got.LeaderAt.Equal(now) || !got.SeenAt.Equal(now.Add(-time.Minute)) {
		t.Errorf("this member's leader and find were lost: %+v", got)
	}
}

// TestAdoptKeepsANewerFind: a peer's estimate older than a row found here
// is not taken; on a key nothing was learned of, it is taken whole.
func TestAdoptKeepsANewerFind(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	k := Known{Key: Estimate{First: time.Hour, Seen: now}}
	k.Adopt(Estimate{First: 70 * time.Minute, Seen: now.Add(-time.Hour)})
	if k.Key.First != time.Hour {
		t.Errorf("an older estimate replaced a newer find: %+v", k.Key)
	}
	fresh := Known{Fresh: true}
	fresh.Adopt(Estimate{First: 70 * time.Minute, Depth: -time.Second, Seen: now.Add(-time.Hour)})
	if fresh.Fresh || fresh.Key.First != 70*time.Minute || fresh.Key.Depth != 0 {
		t.Errorf("a fresh key adopted %+v (fresh %v), want the peer's, its depth not negative", fresh.Key, fresh.Fresh)
	}
}
