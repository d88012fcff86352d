package schedule

import (
	"testing"
	"time"
)

// Series of one key that are published apart (each its own delay, row by
// row) must not learn more or less depending on which of them happened to
// lead: that is the order in which the first refreshes ended.

// TestSplitCountsRowsNotFollowers: two followers that miss the one row
// their leader found are one row missed, not two; the key splits at the
// second row its followers miss. Counted per follower poll, a key split
// at its first row whenever the leader's row happened to come early, and
// kept following when it came late.
func TestSplitCountsRowsNotFollowers(t *testing.T) {
	b := NewBook(nil)
	w := 10 * time.Minute
	row := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	b.SetMembers(map[string]int{"data /p 10min": 3}, map[string]bool{"a": true, "b": true, "c": true})
	lead, f1, f2 := newTuple(b, "a", "/p", "10min"), newTuple(b, "b", "/p", "10min"), newTuple(b, "c", "/p", "10min")
	now := row.Add(w + 30*time.Second)
	for _, st := range []*tuple{lead, f1, f2} {
		st.Newest = row
		st.success(time.Time{}, now)
	}
	if !f1.Following || !f2.Following || lead.Following {
		t.Fatalf("a leads, b and c follow: plans %+v %+v %+v", lead.Poll, f1.Poll, f2.Poll)
	}
	miss := func(next time.Time) {
		t.Helper()
		// The leader finds the row; both followers, polled at once, miss it.
		lead.Newest = next
		now = next.Add(w + 90*time.Second)
		lead.success(next.Add(-w), now)
		for _, f := range []*tuple{f1, f2} {
			if !f.Following {
				t.Fatalf("%s no longer follows before the row %v: %+v", f.ID, next, f.Poll)
			}
			f.LastAttempt = now.Add(5 * time.Second)
			f.success(next.Add(-w), f.LastAttempt)
			// ...then find it on their own.
			f.Newest = next
			f.success(next.Add(-w), now.Add(time.Minute))
		}
	}
	next := row.Add(w)
	miss(next)
	if k := lead.known(); k.Key.Split || k.Key.FollowMisses != 1 {
		t.Fatalf("after one row both followers missed: split %v, %d rows missed; want no split, 1 row", k.Key.Split, k.Key.FollowMisses)
	}
	// The next row the leader plans and the followers follow again.
	next = next.Add(w)
	miss(next)
	if k := lead.known(); !k.Key.Split || k.Key.FollowMisses != 2 {
		t.Errorf("after a second row missed: split %v, %d rows missed; want a split at 2 rows", k.Key.Split, k.Key.FollowMisses)
	}
}

// TestSiblingFoundOncePerFind: a follower is due at the 5 s floor when
// its leader finds the row; once it has polled after that find and
// missed, the find has told it all it could, and it waits for its own
// row on its own steps instead of being placed at the floor after each
// poll.
func TestSiblingFoundOncePerFind(t *testing.T) {
	p := &Default
	w := 10 * time.Minute
	row := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	next := row.Add(w)
	found := next.Add(w + 90*time.Second)
	key := Estimate{Seen: next, SeenAt: found}
	s := Series{ID: "b", W: w, Newest: row, LastAttempt: found.Add(-time.Minute)}
	following := Poll{Planned: true, Following: true, Due: w + 4*time.Minute}
	if !p.SiblingFound(&key, s, following, found) {
		t.Fatal("a follower that has not polled since its leader found the row is not due")
	}
	s.LastAttempt = found.Add(5 * time.Second) // polled after the find, and missed
	chasing := Poll{Planned: true, Polls: 1, Missed: w + 95*time.Second, Due: w + 4*time.Minute}
	if p.SiblingFound(&key, s, chasing, s.LastAttempt.Add(5*time.Second)) {
		t.Error("a series that polled after the find and missed is placed at the floor again")
	}
	// A newer find (another row) counts again.
	key.Seen, key.SeenAt = next.Add(w), found.Add(w)
	s.Newest = next
	s.LastAttempt = found.Add(w - time.Minute)
	if !p.SiblingFound(&key, s, following, found.Add(w)) {
		t.Error("the leader's next find does not make its follower due")
	}
}

// TestJitterIsNotAFasterProvider: a probe that finds a row below the
// learned bracket means the provider became faster only when its rows are
// not late more often than the miss budget; a series whose rows miss
// often (a delay that jitters) takes the estimate down to that row and
// does not descend to the first guess.
func TestJitterIsNotAFasterProvider(t *testing.T) {
	p := &Default
	w := 10 * time.Minute
	row := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		spent   float64
		descent bool
	}{{0.05, true}, {0.5, false}} {
		k := Known{Key: Estimate{First: w + 2*time.Minute + 50*time.Second, Low: w + 2*time.Minute + 30*time.Second, HasLow: true,
			Depth: 30 * time.Second, Learned: true, Spent: tc.spent, Rows: 20}}
		at := w + 2*time.Minute + 20*time.Second // below Low: earlier than any row lately
		p.found(&k, row, w, at, 0, 0, true)
		if k.Key.First != at {
			t.Errorf("spent %.2f: estimate %v, want the row's %v", tc.spent, k.Key.First, at)
		}
		descends := k.Key.Depth > 30*time.Second || k.Key.Descent > 0 // deeper probes, toward the first guess
		if descends != tc.descent {
			t.Errorf("spent %.2f: depth %v, descent %d; want a descent %v", tc.spent, k.Key.Depth, k.Key.Descent, tc.descent)
		}
	}
}

// TestOwnEstimateStartsFromAllTheKeyLearned: once a key's series learn
// apart, each starts from everything the key learned of the delay (its
// bracket and misses), not from the estimate alone.
func TestOwnEstimateStartsFromAllTheKeyLearned(t *testing.T) {
	key := Estimate{First: 12 * time.Minute, Low: 11 * time.Minute, HasLow: true, Depth: 30 * time.Second,
		Learned: true, Spent: 0.4, Rows: 7, Tight: 1, Split: true, Leader: "a", FollowMisses: 2}
	k := Known{Members: 3, Key: key}
	own := k.entry()
	if own.First != key.First || own.Low != key.Low || !own.HasLow || own.Spent != key.Spent || own.Rows != key.Rows || own.Tight != key.Tight {
		t.Errorf("own estimate %+v, want the key's delay, bracket and misses", *own)
	}
	if own.Leader != "" || own.Split || own.FollowMisses != 0 {
		t.Errorf("own estimate %+v carries the key's leader or following", *own)
	}
}
