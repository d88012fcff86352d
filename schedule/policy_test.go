package schedule

import (
	"testing"
	"time"
)

// TestPolicyNext: the policy as a table. Each case is what is known of a
// key, a series of it with its plan, the outcome of its last refresh and
// the time; it checks when the next refresh is and what the policy
// changed. An hour window: the first guess is 18 s after the interval
// closes, a learn step 72 s.
func TestPolicyNext(t *testing.T) {
	p := &Default
	h := time.Hour
	row := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC) // the newest row, 10:00-11:00
	next := row.Add(h)                                    // the row polled for, 11:00-12:00
	learned := Estimate{First: h + 10*time.Minute, Depth: 72 * time.Second, Learned: true}
	for _, tc := range []struct {
		name  string
		known Known
		s     Series
		plan  Poll
		out   Outcome
		now   time.Time
		want  time.Time
		check func(t *testing.T, k Known, pl Poll)
	}{{
		name: "cold start, closed intervals: the newest row's age bounds the delay",
		s:    Series{Newest: row}, out: Outcome{}, now: row.Add(h + 10*time.Second),
		want: next.Add(h + 10*time.Second),
		check: func(t *testing.T, k Known, pl Poll) {
			if k.Key.First != h+10*time.Second || k.Key.Learned {
				t.Errorf("estimate %+v, want First 1h0m10s (before the first guess), not learned yet", k.Key)
			}
		},
	}, {
		name: "cold start, a live upstream: the next row is probed for at its start",
		s:    Series{Newest: next}, out: Outcome{}, now: next.Add(45 * time.Minute),
		want: next.Add(h),
		check: func(t *testing.T, k Known, pl Poll) {
			if !k.Key.Learned || !pl.Probing || pl.Due != 0 {
				t.Errorf("estimate %+v plan %+v, want a probe at the interval's start", k.Key, pl)
			}
		},
	}, {
		name:  "a new row found at the estimate: the next is polled for at the estimate",
		known: Known{Key: learned}, s: Series{Newest: next}, out: Outcome{PrevNewest: row},
		now: next.Add(h + 10*time.Minute), want: next.Add(h + 10*time.Minute + h),
	}, {
		name:  "the row is due and not there: polled again a learn step later",
		known: Known{Key: learned}, s: Series{Newest: row}, plan: Poll{Planned: true, Due: learned.First},
		out: Outcome{PrevNewest: row}, now: next.Add(learned.First),
		want: next.Add(learned.First + 72*time.Second),
		check: func(t *testing.T, k Known, pl Poll) {
			if pl.Polls != 1 || pl.Missed != learned.First || k.Key.Chaser != "a" {
				t.Errorf("plan %+v chaser %q, want one miss at the estimate, chased by a", pl, k.Key.Chaser)
			}
		},
	}, {
		name:  "a late row found: the estimate rises to it plus a jitter margin, the miss is the low bound",
		known: Known{Key: learned}, s: Series{Newest: next}, plan: Poll{Planned: true, Polls: 2, Missed: h + 12*time.Minute},
		out: Outcome{PrevNewest: row}, now: next.Add(h + 14*time.Minute),
		// The bracket (1h12m, 1h14m36s] is wider than two learn steps:
		// the next row is probed for at once, 78 s (half of it) below.
		want: next.Add(h + h + 13*time.Minute + 18*time.Second),
		check: func(t *testing.T, k Known, pl Poll) {
			if k.Key.First != h+14*time.Minute+36*time.Second || !k.Key.HasLow || k.Key.Low != h+12*time.Minute {
				t.Errorf("estimate %+v, want First 1h14m36s and Low 1h12m", k.Key)
			}
			if !pl.Probing || pl.Polls != 0 {
				t.Errorf("plan %+v: the wide bracket is bisected at once", pl)
			}
		},
	}, {
		name:  "a probe that missed: its offset is the new low bound, and the estimate is polled",
		known: Known{Key: learned}, s: Series{Newest: row}, plan: Poll{Planned: true, Probing: true, Due: h + 8*time.Minute},
		out: Outcome{PrevNewest: row}, now: next.Add(h + 8*time.Minute + 48*time.Second),
		want: next.Add(learned.First),
		check: func(t *testing.T, k Known, pl Poll) {
			if !k.Key.HasLow || k.Key.Low != learned.First-learned.Depth || k.Key.RowMisses != 1 {
				t.Errorf("estimate %+v, want Low at the probe", k.Key)
			}
		},
	}, {
		name:  "a second series of a key with a leader follows it",
		known: Known{Members: 2, Key: Estimate{First: learned.First, Depth: learned.Depth, Learned: true, Leader: "b", LeaderAt: row.Add(h + 10*time.Minute)}},
		s:     Series{Newest: next}, out: Outcome{PrevNewest: row}, now: next.Add(h + 10*time.Minute),
		want: next.Add(h + learned.First + 15*time.Minute),
		check: func(t *testing.T, k Known, pl Poll) {
			if !pl.Following || k.Key.Leader != "b" {
				t.Errorf("plan %+v leader %q, want a follower of b, its fallback a quarter window on", pl, k.Key.Leader)
			}
		},
	}, {
		name: "revalidate caps the wait", known: Known{Key: learned},
		s: Series{Newest: next, Revalidate: 10 * time.Minute}, out: Outcome{PrevNewest: row},
		now: next.Add(h + 10*time.Minute), want: next.Add(h + 20*time.Minute),
	}, {
		name: "cache_ttl replaces the schedule", known: Known{Key: learned},
		s: Series{Newest: next, CacheTTL: 90 * time.Second}, out: Outcome{PrevNewest: row},
		now: next.Add(h + 10*time.Minute), want: next.Add(h + 11*time.Minute + 30*time.Second),
	}, {
		name: "no row time: the window's fallback", s: Series{Window: "hour"}, now: row,
		want: row.Add(5 * time.Minute),
	}, {
		name: "a third failure in a row waits a minute", known: Known{Key: Estimate{Leader: "a", Chaser: "a"}},
		s: Series{Newest: row, Failures: 3}, out: Outcome{Err: &Failure{}}, now: row,
		want: row.Add(time.Minute),
		check: func(t *testing.T, k Known, pl Poll) {
			if k.Key.Leader != "" || k.Key.Chaser != "" {
				t.Errorf("a failing series still leads: %+v", k.Key)
			}
		},
	}, {
		name: "a pause of the endpoint outlasts the back-off", s: Series{Failures: 1},
		out: Outcome{Err: &Failure{PauseUntil: row.Add(time.Hour)}}, now: row, want: row.Add(time.Hour),
	}, {
		name: "a reset (a reload, labels changed) asks at once", s: Series{Failures: 2},
		out: Outcome{Reset: true}, now: row.Add(time.Minute), want: row.Add(time.Minute),
	}, {
		name: "a follower due while its leader chases the row waits a learn step",
		out:  Outcome{LeaderChasing: true}, now: row, want: row.Add(p.LearnStep(h)),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			s.ID = "a"
			if s.W == 0 && s.Window == "" {
				s.W, s.Window = h, "hour"
			}
			k, pl := tc.known, tc.plan
			if k.Key.First == 0 && !k.Key.Learned {
				first := k.Key
				k.Key = p.fresh(h)
				k.Key.Leader, k.Key.Chaser = first.Leader, first.Chaser
			}
			k, pl = p.Next(k, s, pl, tc.out, tc.now)
			got := pl.Next
			if !got.Time().Equal(tc.want) {
				t.Errorf("next refresh %v, want %v", got.Time().Format(time.TimeOnly), tc.want.Format(time.TimeOnly))
			}
			if !pl.Next.Time().Equal(got.Time()) {
				t.Errorf("the plan holds %v, not the next refresh", pl.Next)
			}
			if tc.check != nil {
				tc.check(t, k, pl)
			}
		})
	}
}

// TestDerivedQuantities pins what is derived from the Policy's fields
// rather than set: the first guess a quarter learn step after the
// interval closes, the jitter margin half a step (at most LearnMax), a
// follower's wait at most the longest wait between polls of a late row,
// and the split once followers miss more than one row in SplitShare.
func TestDerivedQuantities(t *testing.T) {
	p := &Default
	for _, tc := range []struct {
		w                     time.Duration
		first, jitter, follow time.Duration
	}{
		{time.Minute, time.Minute + 1250*time.Millisecond, 600 * time.Millisecond, 15 * time.Second},
		{10 * time.Minute, 10*time.Minute + 3*time.Second, 6 * time.Second, 150 * time.Second},
		{time.Hour, time.Hour + 18*time.Second, 36 * time.Second, 15 * time.Minute},
		{24 * time.Hour, 24*time.Hour + 432*time.Second, 5 * time.Minute, 40 * time.Minute},
	} {
		if got := p.FirstGuess(tc.w); got != tc.first {
			t.Errorf("%v: first guess %v, want %v", tc.w, got, tc.first)
		}
		if got := p.jitterMargin(tc.w); got != tc.jitter {
			t.Errorf("%v: jitter margin %v, want %v", tc.w, got, tc.jitter)
		}
		if got := p.followerWait(tc.w); got != tc.follow {
			t.Errorf("%v: follower's wait %v, want %v", tc.w, got, tc.follow)
		}
	}
	if d := p.spentDecay(); d < 0.899 || d > 0.901 {
		t.Errorf("spent decay %v, want 0.9", d)
	}
	for _, tc := range []struct{ hits, split int }{{0, 2}, {19, 2}, {20, 3}, {100, 7}} {
		k := Known{Members: 2}
		k.Key.FollowHits = tc.hits
		misses := 0
		for row := time.Unix(0, 0); !k.Key.Split && misses < 100; row = row.Add(time.Hour) {
			p.followed(&k, row, false)
			misses++
		}
		if misses != tc.split {
			t.Errorf("%d rows followed: split after %d misses, want %d", tc.hits, misses, tc.split)
		}
	}
}

// TestScrapeQuestionsDoNotAllocate: a scrape asks the Book, for every
// tuple, where its rows are taken to be out (Earliest): that costs no
// allocation for a key whose series learn together, or a scrape of
// thousands of tuples pays as many.
func TestScrapeQuestionsDoNotAllocate(t *testing.T) {
	b := NewBook(nil)
	// Names as long as real ones: a short key would fit the buffer Go
	// keeps on the stack for a concatenation, and hide one.
	st := newTuple(b, "data/v1/btc/market-data/open-interest?exchange=binance&window=hour", "/v1/btc/market-data/open-interest", "hour")
	st.Newest = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	st.success(time.Time{}, st.Newest.Add(time.Hour+time.Minute))
	if n := testing.AllocsPerRun(100, func() { b.Earliest(st.key, st.ID, time.Hour) }); n != 0 {
		t.Errorf("Earliest allocates %.0f times a call", n)
	}
}

// TestNextSaysWhenSiblingsMayBeDue: Book.Next reports a refresh that
// found a newer row of its key (its waiting siblings may be due), and not
// one that found nothing new, so that the engine places the key's other
// series again only when something changed for them.
func TestNextSaysWhenSiblingsMayBeDue(t *testing.T) {
	b := NewBook(nil)
	st := newTuple(b, "a", "/p", "hour")
	row := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	st.Newest = row
	now := row.Add(time.Hour + time.Minute)
	st.success(time.Time{}, now) // the first refresh: nothing found yet
	st.Newest = row.Add(time.Hour)
	now = st.Newest.Add(time.Hour + time.Minute)
	var siblings bool
	if st.Poll, siblings = b.Next(st.key, st.Series, st.Poll, Outcome{PrevNewest: row}, now); !siblings {
		t.Error("a new row found, and Next does not say so")
	}
	if st.Poll, siblings = b.Next(st.key, st.Series, st.Poll, Outcome{PrevNewest: st.Newest}, now.Add(time.Minute)); siblings {
		t.Error("nothing new found, and Next says the siblings may be due")
	}
}

// TestTradingDaysSkipWeekends: a series whose rows were seen on weekdays
// only (Series.Skip) is next polled for Monday's row after Friday's, not
// for a Saturday row that never comes; without Skip it is polled for
// Saturday's.
func TestTradingDaysSkipWeekends(t *testing.T) {
	p := &Default
	day := 24 * time.Hour
	friday := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	if friday.Weekday() != time.Friday {
		t.Fatal("the test's Friday is not one")
	}
	s := Series{ID: "a", W: day, Newest: friday}
	found := friday.Add(day + 2*time.Hour) // Friday's row, found Saturday 02:00
	k := Known{Key: p.fresh(day)}
	_, plain := p.Next(k, s, Poll{}, Outcome{PrevNewest: friday.Add(-day)}, found)
	s.Skip = 1<<time.Saturday | 1<<time.Sunday
	_, trading := p.Next(k, s, Poll{}, Outcome{PrevNewest: friday.Add(-day)}, found)
	monday := friday.Add(3 * day)
	if plain.Next.Time().After(monday) {
		t.Errorf("without Skip the next poll is at %v, want one for Saturday's row", plain.Next)
	}
	if got := trading.Next.Time().Sub(monday); got < day || got > day+2*time.Hour {
		t.Errorf("with weekends skipped the next poll is at %v, want about when Monday's row closes (%v)", trading.Next, monday.Add(day))
	}
	// A series with rows on every day, or hourly rows, skips nothing.
	if got := (Series{W: time.Hour, Skip: s.Skip}).after(friday.Add(23 * time.Hour)); !got.Equal(friday.Add(day)) {
		t.Errorf("hourly rows after Friday 23:00: %v, want Saturday 00:00", got)
	}
}
