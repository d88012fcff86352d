package schedule

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// PooledTolerance is pooledTolerance of the keys' Released: own's, and
// the other keys' of its pool.
func PooledTolerance(own []time.Duration, others [][]time.Duration, w time.Duration) time.Duration {
	spans := make([]span, 0, len(others))
	for _, rs := range others {
		spans = append(spans, spanOf(rs))
	}
	return pooledTolerance(spanOf(own), spans, w)
}

// evenly is n offsets after a day row's close, from first on, spread
// over s.
func evenly(n int, first, s time.Duration) []time.Duration {
	rs := make([]time.Duration, n)
	for i := range rs {
		rs[i] = 24*time.Hour + first + s*time.Duration(i)/time.Duration(max(n-1, 1))
	}
	return rs
}

// dayBook is a Book that knows the day keys of the API "data" with the
// given offsets found on time, one endpoint each.
func dayBook(released ...[]time.Duration) *Book {
	b := NewBook(nil)
	saved := map[string]Estimate{}
	for i, rs := range released {
		saved[dayKey(i)] = Estimate{First: rs[len(rs)-1], Learned: true, Released: rs}
	}
	b.Restore(saved)
	return b
}

func dayKey(i int) string { return NewKey("data", "/v1/e"+string(rune('a'+i)), "day", "").String() }

// tolerance is what the book's due time of key i allows past its learned
// release.
func tolerance(t *testing.T, b *Book, i int) time.Duration {
	t.Helper()
	e, ok := b.Estimate(dayKey(i))
	if !ok {
		t.Fatalf("no estimate of %s", dayKey(i))
	}
	return e.DueTolerance(24 * time.Hour)
}

// The pooled margin on synthetic offsets: day keys of 3 rows each, whose
// own spread explains nothing (the cap, 2 h), are due within the spread
// their pool explains; with 16 rows each, the margin is below the key's
// own rule's.
func TestPooledTolerance(t *testing.T) {
	day := 24 * time.Hour
	three := dayBook(evenly(3, 30*time.Minute, 30*time.Minute), evenly(3, 40*time.Minute, 25*time.Minute),
		evenly(3, 28*time.Minute, 35*time.Minute), evenly(3, 45*time.Minute, 20*time.Minute))
	for i := range 4 {
		got := tolerance(t, three, i)
		e, _ := three.Estimate(dayKey(i))
		own := DueTolerance(e.Released, day)
		t.Logf("3 rows, key %d: pooled %v, own %v", i, got, own)
		if own != 2*time.Hour || got < 10*time.Minute || got > 75*time.Minute {
			t.Errorf("3 rows, key %d: pooled %v (own %v), want between 10 min and 75 min (own: the cap)", i, got, own)
		}
	}
	sixteen := dayBook(evenly(16, 25*time.Minute, 44*time.Minute), evenly(16, 30*time.Minute, 46*time.Minute),
		evenly(16, 20*time.Minute, 45*time.Minute), evenly(16, 35*time.Minute, 43*time.Minute))
	for i := range 4 {
		got := tolerance(t, sixteen, i)
		e, _ := sixteen.Estimate(dayKey(i))
		own := DueTolerance(e.Released, day)
		t.Logf("16 rows, key %d: pooled %v, own %v", i, got, own)
		if got < 2*time.Minute || got >= own {
			t.Errorf("16 rows, key %d: pooled %v, want below the key's own %v", i, got, own)
		}
	}
}

// A key whose rows spread otherwise than its API's others moves neither
// way the margin of the others; wider, it keeps its own rule; narrower, it
// is due no sooner than its own rule says.
func TestPooledOtherHabit(t *testing.T) {
	day := 24 * time.Hour
	usual := [][]time.Duration{evenly(8, 25*time.Minute, 40*time.Minute), evenly(8, 30*time.Minute, 45*time.Minute),
		evenly(8, 20*time.Minute, 42*time.Minute), evenly(8, 35*time.Minute, 38*time.Minute)}
	alone := dayBook(usual...)
	for _, tc := range []struct {
		name   string
		rows   []time.Duration
		narrow bool
	}{
		{"16 rows within 3 min", evenly(16, 50*time.Minute, 3*time.Minute), true},
		{"16 rows over 3 h", evenly(16, 20*time.Minute, 3*time.Hour), false},
		{"16 rows over 70 min", evenly(16, 20*time.Minute, 70*time.Minute), false},
	} {
		b := dayBook(append(slices.Clone(usual), tc.rows)...)
		got, own := tolerance(t, b, 4), DueTolerance(tc.rows, day)
		if tc.narrow && got < own || !tc.narrow && got != own {
			t.Errorf("%s: tolerance %v, want the key's own %v (narrower: at least)", tc.name, got, own)
		}
		for i := range usual {
			if got, want := tolerance(t, b, i), tolerance(t, alone, i); got != want {
				t.Errorf("%s: key %d's tolerance %v, want %v as without it", tc.name, i, got, want)
			}
		}
	}
}

// Fewer than poolKeys keys with 2 rows found on time: each keeps its own
// rule.
func TestPooledFewKeys(t *testing.T) {
	day := 24 * time.Hour
	for _, released := range [][][]time.Duration{
		{evenly(3, 30*time.Minute, 30*time.Minute), evenly(3, 40*time.Minute, 25*time.Minute)},
		{evenly(3, 30*time.Minute, 30*time.Minute), evenly(3, 40*time.Minute, 25*time.Minute), evenly(1, 40*time.Minute, 0)},
		{evenly(16, 30*time.Minute, 40*time.Minute), evenly(16, 40*time.Minute, 45*time.Minute)},
	} {
		b := dayBook(released...)
		for i, rs := range released {
			if got, own := tolerance(t, b, i), DueTolerance(rs, day); got != own {
				t.Errorf("%d keys, key %d (%d rows): tolerance %v, want its own %v", len(released), i, len(rs), got, own)
			}
		}
	}
}

// Over many simulated weeks of day rows, keys of one API whose delays
// spread uniformly over one width, each about its own location, pass
// their pooled due time about once in a thousand rows (dueFalseShare),
// from their second row on; and from the third day on they are due
// within half the width past the learned release at the median, where
// each key's own spread allows the cap.
func TestPooledFalseShare(t *testing.T) {
	const weeks, keys, days = 200, 5, 8
	w := 24 * time.Hour
	rng := rand.New(rand.NewPCG(3, 4))
	past, rows := 0, 0
	var early []time.Duration // margins on days 3 and 4
	for range weeks {
		width := time.Duration((20 + 60*rng.Float64()) * float64(time.Minute))
		p := newDuePool(w)
		es := make([]*Estimate, keys)
		loc := make([]time.Duration, keys)
		for i := range es {
			es[i] = &Estimate{}
			p.keys = append(p.keys, es[i])
			loc[i] = time.Duration(rng.Float64() * float64(3*time.Hour))
		}
		for d := range days {
			for i, e := range es {
				at := w + loc[i] + time.Duration(rng.Float64()*float64(width))
				e.pooled = p.margin(e)
				if due, ok := e.DueOffset(w); ok {
					rows++
					if at > due {
						past++
					}
					if d == 3 || d == 4 {
						early = append(early, e.DueTolerance(w))
					}
				}
				before := e.Released
				e.released(w, at)
				if !slices.Equal(before, e.Released) {
					p.version++
				}
			}
		}
	}
	slices.Sort(early)
	med := early[len(early)/2]
	t.Logf("%d of %d rows past their pooled due time; on days 3 and 4 the due time %v past the learned release at the median, %v at p95",
		past, rows, med, early[len(early)*95/100])
	if past > 2*rows/1000+10 {
		t.Errorf("%d of %d rows past their due time, want about one in a thousand", past, rows)
	}
	if med > 40*time.Minute {
		t.Errorf("on days 3 and 4 the due time is %v past the learned release at the median, want within 40 min (widths of 20 to 80 min)", med)
	}
}

// The pooled margin follows the rows the other keys learn: a key's
// tolerance is made again once another key of its API and window learns
// a row, and a window of another API or spacing is another pool.
func TestPooledFollowsTheRows(t *testing.T) {
	b := dayBook(evenly(3, 30*time.Minute, 10*time.Minute), evenly(3, 40*time.Minute, 12*time.Minute))
	saved := map[string]Estimate{}
	for _, k := range []Key{NewKey("other", "/v1/x", "day", ""), NewKey("other", "/v1/y", "day", ""),
		NewKey("data", "/v1/h", "hour", ""), NewKey("data", "/v1/i", "hour", "")} {
		saved[k.String()] = Estimate{Learned: true, Released: evenly(3, 30*time.Minute, 11*time.Minute)}
	}
	b.Restore(saved)
	for i := range 2 {
		e, _ := b.Estimate(dayKey(i))
		if got, own := tolerance(t, b, i), DueTolerance(e.Released, 24*time.Hour); got != own {
			t.Errorf("two day keys of the API: key %d's tolerance %v, want its own %v (another API's or window's keys pool apart)", i, got, own)
		}
	}
	b.Restore(map[string]Estimate{dayKey(2): {Learned: true, Released: evenly(3, 28*time.Minute, 11*time.Minute)}})
	before := tolerance(t, b, 0)
	b.Update(dayKey(1), "", func(k Known) Known {
		k.Key.Released = append(slices.Clone(k.Key.Released), 24*time.Hour+95*time.Minute)
		return k
	})
	after := tolerance(t, b, 0)
	t.Logf("key 0: %v, then %v once key 1 learned a row 55 min past its others", before, after)
	if after <= before {
		t.Errorf("key 0's tolerance %v, then %v once key 1 learned a row far from its others; want it wider", before, after)
	}
}

// A key the configuration no longer has leaves its pool, and joins it
// again when a reload brings it back: the pooled margin of the keys left
// is what their own rows and those of the configured keys explain.
func TestPoolForgetsKeysNoLongerConfigured(t *testing.T) {
	b := dayBook(evenly(3, 30*time.Minute, 10*time.Minute), evenly(3, 40*time.Minute, 12*time.Minute),
		evenly(3, 20*time.Minute, 11*time.Minute))
	all := map[string]int{dayKey(0): 1, dayKey(1): 1, dayKey(2): 1}
	b.SetMembers(all, nil)
	pooled := tolerance(t, b, 0)
	e, _ := b.Estimate(dayKey(0))
	own := DueTolerance(e.Released, 24*time.Hour)
	if pooled >= own {
		t.Fatalf("three day keys of 3 rows: key 0's tolerance %v, want the pooled one, below its own %v", pooled, own)
	}
	b.SetMembers(map[string]int{dayKey(0): 1, dayKey(1): 1}, nil) // key 2 removed by a reload
	if got := tolerance(t, b, 0); got != own {
		t.Errorf("key 2 no longer configured: key 0's tolerance %v, want its own %v (two keys do not pool)", got, own)
	}
	if _, ok := b.Estimate(dayKey(2)); !ok {
		t.Errorf("key 2's estimate forgotten; want it kept for a reload that brings it back")
	}
	b.SetMembers(all, nil)
	if got := tolerance(t, b, 0); got != pooled {
		t.Errorf("key 2 configured again: key 0's tolerance %v, want the pooled %v again", got, pooled)
	}
}
