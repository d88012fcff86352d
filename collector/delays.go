package collector

import (
	"math"
	"strings"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// delays learns, per API, endpoint and window, when rows appear: the
// offset from a row's start at which to poll for it first.
type delays struct {
	mu  sync.Mutex
	est map[string]*estimate
	// members counts the tuples of each key in the configuration.
	members map[string]int
}

// estimate is what the series of one key taught; it is saved as it is.
//
// First is the offset from a row's start of its first poll. A poll that
// misses a row bounds its delay from below and the poll that then finds
// it from above: First goes to the top of that bracket (plus a margin for
// jitter), Low to its bottom, and probes bisect it. A poll that finds the
// row at once only says the delay is no later, so a share of first polls
// are probes, placed Depth earlier: a probe that finds the row brings
// First down to it; with no lower bound known the next probe looks four
// times deeper, then at the first guess (a provider that became faster is
// followed in a few rows). A probe that misses is a new Low.
//
// Series of one key are published together as a rule (one pipeline
// upstream): one of them, the Leader, polls for each row; the others
// follow, polled the moment it finds the row. A follower that then misses
// its row counts against following; a key whose series turn out to be
// published apart (Split) learns per series.
type estimate struct {
	First time.Duration `json:"first"`
	Depth time.Duration `json:"depth"`
	// Low, when HasLow, is the latest offset at which a recent row was
	// not there yet: probes bisect between it and First.
	Low     time.Duration `json:"low,omitempty"`
	HasLow  bool          `json:"has_low,omitempty"`
	Credit  float64       `json:"credit"`
	Learned bool          `json:"learned"`
	// Seen is the newest row any series of the key was found with.
	Seen time.Time `json:"seen"`
	// Chaser is the one series polling for a late row (Chased) while the
	// others wait for it to find the row.
	Chaser string    `json:"chaser,omitempty"`
	Chased time.Time `json:"chased"`
	// Leader polls for the rows of the key; LeaderAt is when it last
	// planned one.
	Leader   string    `json:"leader,omitempty"`
	LeaderAt time.Time `json:"leader_at"`
	// Spent is the mean count of polls per row, beyond the first, that
	// missed (a moving average); RowMisses counts those of the row under
	// way; Rows counts the rows found (up to 100).
	Spent     float64 `json:"spent,omitempty"`
	RowMisses int     `json:"row_misses,omitempty"`
	Rows      int     `json:"rows,omitempty"`
	// Descent counts probes in a row that found the row with no lower
	// bound known: the provider became faster.
	Descent int `json:"descent,omitempty"`
	// Tight counts the probes in a row that missed within a narrow
	// bracket: the estimate is as good as it gets, and probes thin out.
	Tight        int `json:"tight,omitempty"`
	FollowHits   int `json:"follow_hits,omitempty"`
	FollowMisses int `json:"follow_misses,omitempty"`
	// Split says the key's series were seen to be published apart: each
	// then learns on its own, from the key's estimate.
	Split bool `json:"split,omitempty"`
}

// delayKey names the series that share one publication delay.
func delayKey(t *config.Tuple) string { return t.API + " " + t.Path + " " + t.Window }

func (ds *delays) get(key string, w time.Duration) *estimate {
	if ds.est == nil {
		ds.est = map[string]*estimate{}
	}
	e := ds.est[key]
	if e == nil {
		e = &estimate{First: firstGuess(w), Depth: learnStep(w)}
		ds.est[key] = e
	}
	return e
}

// entry is the estimate a series goes by: its key's, or its own once the
// key's series were seen to be published apart.
func (ds *delays) entry(key, id string, w time.Duration) *estimate {
	e := ds.get(key, w)
	if !e.Split {
		return e
	}
	own := ds.est[key+"\x00"+id]
	if own == nil {
		own = &estimate{First: e.First, Depth: e.Depth, Learned: e.Learned}
		ds.est[key+"\x00"+id] = own
	}
	return own
}

// setMembers records how many tuples of the configuration share each key,
// and which tuples there are: a leader or chaser no longer configured
// hands its part to the next series that plans.
func (ds *delays) setMembers(m map[string]int, ids map[string]bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.members = m
	for _, e := range ds.est {
		if e.Leader != "" && !ids[e.Leader] {
			e.Leader = ""
		}
		if e.Chaser != "" && !ids[e.Chaser] {
			e.Chaser, e.Chased = "", time.Time{}
		}
	}
}

// resign hands on the parts a failing series plays for its key: its
// followers would otherwise wait for rows it cannot find.
func (ds *delays) resign(key, id string) {
	if ds == nil {
		return
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for _, e := range []*estimate{ds.est[key], ds.est[key+"\x00"+id]} {
		if e == nil {
			continue
		}
		if e.Leader == id {
			e.Leader = ""
		}
		if e.Chaser == id {
			e.Chaser, e.Chased = "", time.Time{}
		}
	}
}

// chasing says whether the key's leader is polling for the late row that
// starts at row: its followers then wait for it rather than poll
// themselves (it resigns when it fails).
func (ds *delays) chasing(key string, row time.Time) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.est[key]
	return e != nil && !e.Split && e.Leader != "" && e.Chaser == e.Leader && e.Chased.Equal(row)
}

// followerWait is how long after the estimate a follower polls for a row
// its leader has not found: a quarter of the window, at most 40 min (for
// day rows; 6 h would be a quarter), so that a leader that fails or is
// gone delays its followers by that much, once. A leader still chasing
// the row holds them longer (waitsForLeader).
func followerWait(w time.Duration) time.Duration {
	return max(min(w/4, policy.FollowerWaitMax), learnStep(w))
}

// following says whether the key's series follow a leader.
func (e *estimate) following(members int) bool {
	return members > 1 && !e.Split
}

// plan places the first poll of a series' next row: the offset from the
// row's start, whether it is a probe, and whether the series follows the
// key's leader (then the offset is only a fallback, should the leader not
// find the row).
func (ds *delays) plan(key, id string, w time.Duration, now time.Time) (time.Duration, bool, bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	n := ds.members[key]
	if e := ds.get(key, w); e.following(n) {
		if e.Leader != "" && e.Leader != id && now.Sub(e.LeaderAt) < w+e.First {
			return e.First + followerWait(w), false, true
		}
		e.Leader, e.LeaderAt = id, now
	}
	e := ds.entry(key, id, w)
	if e.Learned {
		share := policy.ProbeShare
		if ds.get(key, w).following(n) {
			share = min(policy.MaxProbeShare, policy.ProbeShare*float64(n))
		}
		share /= float64(1 + min(e.Tight, 1)) // thinned, never stopped: rows may come earlier one day
		e.Credit += share
		if e.Credit >= 1 {
			e.Credit--
			// Not below the first guess (just after the interval
			// closes) unless rows were seen earlier than that.
			probe := e.First - e.Depth
			if floor := firstGuess(w); e.First > floor {
				probe = max(probe, floor)
			}
			return probe, true, false
		}
	}
	return e.First, false, false
}

// found records that a row was found `at` after its start: by a probe,
// at the first try, or (missed > 0) late, after `misses` polls, the last
// at `missed`, did not find it. A late row's delay lies between the two:
// First goes to the top (plus a margin for jitter) and the next probes
// bisect the bracket.
func (ds *delays) found(key, id string, row time.Time, w, at, missed time.Duration, misses int, probe bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if k := ds.get(key, w); row.After(k.Seen) {
		k.Seen = row
	}
	e := ds.entry(key, id, w)
	if !e.Chased.After(row) {
		e.Chaser, e.Chased = "", time.Time{}
	}
	step := learnStep(w)
	if missed > 0 || probe {
		e.Tight = 0
	}
	if !probe || e.HasLow {
		e.Descent = 0
	}
	e.Spent = policy.SpentDecay*e.Spent + (1-policy.SpentDecay)*float64(e.RowMisses+misses)
	e.RowMisses = 0
	e.Rows = min(e.Rows+1, 100)
	switch {
	case missed > 0:
		// Late: the delay lies in (missed, at]. Poll the next row safely
		// at the top, and probe the bracket from there on.
		top := at + min(time.Duration(policy.JitterShare*float64(w)), policy.JitterMax)
		if n := ds.members[key]; n > 1 && ds.get(key, w).following(n) && top > e.First && e.Rows > 3 && e.Spent < policy.MissBudget*float64(n) {
			// A leader's missed polls are shared by its followers:
			// while they cost less than the budget, rise part of the
			// way only, and keep polling early.
			top = e.First + time.Duration(float64(top-e.First)/math.Sqrt(float64(n)))
		}
		e.First = max(e.First, top)
		e.Low, e.HasLow = missed, true
		e.bisect(step)
	case probe:
		if e.HasLow && at <= e.Low {
			e.HasLow = false // rows come earlier than they did
		}
		e.First = min(e.First, at)
		if e.HasLow {
			e.bisect(step)
		} else {
			// No lower bound: rows came earlier than they did. Look
			// four times as far down next time (a leader, whose misses
			// its followers share, at once) and, when that works too
			// (twice more for a lone series), at the first guess (just after the interval
			// closes), bisecting from there: a provider that became
			// much faster is followed in a few rows.
			e.Depth, e.Credit = min(4*e.Depth, w/4), 1
			wait := 1 // a lone series: its probes' misses are its own
			if n := ds.members[key]; ds.get(key, w).following(n) {
				wait = -1 // a leader: shared by its followers
			}
			if e.Descent > wait {
				// Down to the first guess or, for rows seen before
				// their interval closed (a live upstream), to the
				// interval's start.
				floor := firstGuess(w)
				if e.First <= floor {
					floor = 0
				}
				e.Depth = max(e.First-floor, step)
			}
			e.Descent++
		}
	default:
		e.First = min(e.First, at) // the delay is no later than this
	}
	e.Learned = true
}

// bisect aims the next probe at the middle of the bracket (Low, First],
// at once while the bracket is wide, at the usual share once it is narrow.
func (e *estimate) bisect(step time.Duration) {
	gap := e.First - e.Low
	e.Depth = max(gap/2, step)
	if gap > 2*step {
		e.Credit = 1
	}
}

// followed records whether a follower polled after the leader found its
// row got it too.
func (ds *delays) followed(key string, w time.Duration, hit bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.get(key, w)
	if hit {
		e.FollowHits++
	} else {
		e.FollowMisses++
	}
	if e.FollowMisses > e.FollowHits/policy.SplitShare+policy.SplitSlack {
		e.Split = true
	}
}

// bound records that a row was there `at` after its start (the first
// refresh after start): its delay is no later. When that is before the
// row's interval even closed (a live upstream, showing rows as they
// grow), the next row is probed for at its interval start: one call
// that, if it finds the row, has the upstream followed from the second
// row on, and if it misses, bounds the delay from below for the probes
// that bisect what is left. Otherwise probing waits for a row found by
// the schedule.
func (ds *delays) bound(key, id string, w, at time.Duration) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.entry(key, id, w)
	e.First = min(e.First, at)
	if !e.Learned && e.First < w && e.First > learnStep(w) {
		e.Depth, e.Credit, e.Learned = e.First, 1, true
	}
}

// chase says whether the series `id` is the one to poll for a late row
// starting at row: the first to find it missing is, and the others of the
// key wait until it is found.
func (ds *delays) chase(key, id string, row time.Time, w time.Duration) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.entry(key, id, w)
	if e.Chaser == "" || e.Chaser == id || e.Chased.Before(row) {
		e.Chaser, e.Chased = id, row
		return true
	}
	return false
}

// foundSince says whether a series of the key found a row starting at or
// after row; never for a key whose series are published apart.
func (ds *delays) foundSince(key string, row time.Time) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.est[key]
	return e != nil && !e.Split && !e.Seen.Before(row)
}

// probeMissed records that a probe came too early: its offset is a new
// lower bound.
func (ds *delays) probeMissed(key, id string, w time.Duration) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.entry(key, id, w)
	e.RowMisses++
	e.Descent = 0
	probe := e.First - e.Depth
	if floor := firstGuess(w); e.First > floor {
		probe = max(probe, floor)
	}
	if !e.HasLow || probe > e.Low {
		e.Low, e.HasLow = probe, true
	}
	e.bisect(learnStep(w))
	if e.First-e.Low <= 2*learnStep(w) {
		e.Tight++
	}
}

// publication is the estimated delay between the end of a row's interval
// and its publication, for the gauge: the first guess until something is
// learned, the earliest series' once the key's series learn apart.
func (ds *delays) publication(key string, w time.Duration) time.Duration {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.get(key, w)
	first := e.First
	if e.Split {
		// Learned per series: the earliest of them.
		for k, own := range ds.est {
			if strings.HasPrefix(k, key+"\x00") {
				first = min(first, own.First)
			}
		}
	}
	return first - w
}

// earliest is the offset from a row's start at which the series' rows
// are taken to be out, for excess_staleness_seconds: the middle of the
// learned bracket where a poll that missed gave one (the delay lies
// between its bottom and the estimate, where the engine polls), the
// estimate otherwise.
func (ds *delays) earliest(key, id string, w time.Duration) time.Duration {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	e := ds.entry(key, id, w)
	if e.HasLow && e.Low < e.First {
		return e.Low + (e.First-e.Low)/2
	}
	return e.First
}

// siblingFound says whether the row a tuple waits for (late, or following
// its key's leader) was found by another series of its key: then the
// tuple is due at once, the 5 s floor kept.
func (s *schedule) siblingFound(st *tupleState, now time.Time) bool {
	if (st.Polls == 0 && !st.Following) || st.tuple.CacheTTL > 0 || st.Newest.IsZero() {
		return false
	}
	w := rowWindow(st)
	return w > 0 && now.Sub(st.LastAttempt) >= minInterval && s.delays.foundSince(st.delayKey(), st.Newest.Add(w))
}
