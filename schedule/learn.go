package schedule

import (
	"math"
	"time"
)

// Estimate is what the series of one key taught of when their rows
// appear; the exported fields are saved and sent to peers.
//
// First is the offset from a row's start of its first poll. A miss then a
// find bracket the delay: First goes to the top (plus a jitter margin),
// Low to the bottom, and probes bisect it. A find at once only bounds the
// delay from above, so a share of first polls are probes, Depth earlier;
// with no lower bound a probe that finds the row looks four times deeper
// next, then at the first guess. A probe that misses is a new Low.
//
// A key's series are published together as a rule: the Leader polls for
// each row, the others follow the moment it finds it. A key whose
// followers miss too often (Split) learns per series.
type Estimate struct {
	First time.Duration `json:"first"`
	Depth time.Duration `json:"depth"`
	// Low, when HasLow, is the latest offset at which a recent row was
	// not there yet.
	Low     time.Duration `json:"low,omitempty"`
	HasLow  bool          `json:"has_low,omitempty"`
	Credit  float64       `json:"credit"`
	Learned bool          `json:"learned"`
	// Seen is the newest row any series of the key was found with.
	Seen time.Time `json:"seen"`
	// Spent is the moving average of missed polls per row; Rows counts
	// the rows found (up to 100).
	Spent float64 `json:"spent,omitempty"`
	Rows  int     `json:"rows,omitempty"`
	// Descent counts probes in a row that found the row with no lower
	// bound known.
	Descent int `json:"descent,omitempty"`
	// Tight counts probes in a row that missed within a narrow bracket:
	// probes then thin out.
	Tight int `json:"tight,omitempty"`
	// FollowHits and FollowMisses count the rows followers got or missed
	// once their leader found them: rows, not polls, so that the number
	// of followers does not decide when a key splits.
	FollowHits   int `json:"follow_hits,omitempty"`
	FollowMisses int `json:"follow_misses,omitempty"`
	// Split says the key's series publish apart: each learns on its own.
	Split bool `json:"split,omitempty"`
	// Released are the offsets at which the key's last rows found on time
	// were first found, oldest first, at most ReleaseRows; Late is the
	// last row's when it was found past due (release.go).
	Released []time.Duration `json:"released,omitempty"`
	Late     time.Duration   `json:"late,omitempty"`
	// pooled is the due tolerance pooled across the keys of the API and
	// window (pool.go), 0 when not: set by the Book on the copies it
	// hands out, never saved.
	pooled time.Duration

	// The parts the key's series play in this process, never saved nor
	// sent. Chaser polls for a late row (Chased) while the others wait;
	// Leader polls for the key's rows, LeaderAt when it last planned one;
	// RowMisses counts the missed polls of the row under way (for Spent);
	// SeenAt is when Seen was found (SiblingFound); FollowHit and
	// FollowMiss are the newest rows counted in FollowHits, FollowMisses.
	Chaser     string    `json:"-"`
	Chased     time.Time `json:"-"`
	Leader     string    `json:"-"`
	LeaderAt   time.Time `json:"-"`
	RowMisses  int       `json:"-"`
	SeenAt     time.Time `json:"-"`
	FollowHit  time.Time `json:"-"`
	FollowMiss time.Time `json:"-"`
}

// keepLocal keeps from from the parts the key's series play in this
// process, when a peer's estimate replaces it.
func (e *Estimate) keepLocal(from *Estimate) {
	e.Chaser, e.Chased, e.Leader, e.LeaderAt = from.Chaser, from.Chased, from.Leader, from.LeaderAt
	e.RowMisses, e.SeenAt, e.FollowHit, e.FollowMiss = from.RowMisses, from.SeenAt, from.FollowHit, from.FollowMiss
}

// Known is what the policy is given of one series' key: a copy the Book
// takes and puts back, so that the policy holds no lock.
type Known struct {
	// Members counts the series of the key in the configuration.
	Members int
	// Key is the key's estimate.
	Key Estimate
	// Own is the series' own estimate once Key.Split; HasOwn says it
	// exists.
	Own    Estimate
	HasOwn bool
	// OwnFirst are the First of the key's series that learn apart, for
	// Publication.
	OwnFirst []time.Duration
	// Fresh: nothing was learned of the key yet.
	Fresh bool
}

// Adopt takes the estimate the key's owner in a cluster learned, unless
// a newer row was seen here, keeping the parts played in this process.
func (k *Known) Adopt(e Estimate) {
	if !k.Fresh && k.Key.Seen.After(e.Seen) {
		return
	}
	e.Depth = max(e.Depth, 0)
	if !k.Fresh {
		e.keepLocal(&k.Key)
	}
	k.Key, k.Fresh = e, false
}

// fresh is the estimate of a key nothing was learned of.
func (p *Policy) fresh(w time.Duration) Estimate {
	return Estimate{First: p.FirstGuess(w), Depth: p.LearnStep(w)}
}

// entry is the estimate the series goes by: its key's, or its own once
// the key split.
func (k *Known) entry() *Estimate {
	if !k.Key.Split {
		return &k.Key
	}
	if !k.HasOwn {
		// The bracket and misses too: without them the series would
		// probe as if nothing bounded it.
		e := &k.Key
		k.Own = Estimate{First: e.First, Depth: e.Depth, Low: e.Low, HasLow: e.HasLow, Learned: e.Learned,
			Spent: e.Spent, Rows: e.Rows, Tight: e.Tight}
		k.HasOwn = true
	}
	return &k.Own
}

// following says whether the key's series follow a leader.
func (k *Known) following() bool { return k.Members > 1 && !k.Key.Split }

// plan places the first poll of a series' next row: its offset, whether
// it is a probe, and whether the series follows the leader (the offset a
// fallback then).
func (p *Policy) plan(k *Known, id string, w time.Duration, now time.Time) (time.Duration, bool, bool) {
	if k.following() {
		if k.Key.Leader != "" && k.Key.Leader != id && now.Sub(k.Key.LeaderAt) < w+k.Key.First {
			return k.Key.First + p.followerWait(w), false, true
		}
		k.Key.Leader, k.Key.LeaderAt = id, now
	}
	e := k.entry()
	if e.Learned {
		share := p.ProbeShare
		if k.following() {
			share = min(p.MaxProbeShare, p.ProbeShare*float64(k.Members))
		}
		share /= float64(1 + min(e.Tight, 1)) // thinned, never stopped: rows may come earlier one day
		e.Credit += share
		if e.Credit >= 1 {
			e.Credit--
			return p.probeAt(e, w), true, false
		}
	}
	return e.First, false, false
}

// probeAt is where a probe goes: Depth below the estimate, not below the
// first guess unless rows came earlier than that.
func (p *Policy) probeAt(e *Estimate, w time.Duration) time.Duration {
	probe := e.First - e.Depth
	if floor := p.FirstGuess(w); e.First > floor {
		probe = max(probe, floor)
	}
	return probe
}

// found records that a row was found `at` after its start: by a probe,
// at the first try, or late (missed > 0) after `misses` polls, the last
// at `missed`.
func (p *Policy) found(k *Known, row time.Time, w, at, missed time.Duration, misses int, probe bool) {
	late := false
	if row.After(k.Key.Seen) {
		late = k.Key.released(w, at)
		k.Key.Seen, k.Key.SeenAt = row, row.Add(at)
	}
	e := k.entry()
	if !e.Chased.After(row) {
		e.Chaser, e.Chased = "", time.Time{}
	}
	step := p.LearnStep(w)
	if missed > 0 || probe {
		e.Tight = 0
	}
	if !probe || e.HasLow {
		e.Descent = 0
	}
	decay := p.spentDecay()
	e.Spent = decay*e.Spent + (1-decay)*float64(e.RowMisses+misses)
	e.RowMisses = 0
	e.Rows = min(e.Rows+1, 100)
	switch {
	case missed > 0 && late:
		// Past due: the provider's incident, not its habit (release.go);
		// the next row is polled for as this one was.
	case missed > 0:
		// The delay lies in (missed, at]: poll at the top, probe below.
		top := at + p.jitterMargin(w)
		if n := k.Members; n > 1 && k.following() && top > e.First && e.Rows > 3 && e.Spent < p.MissBudget*float64(n) {
			// Within the budget a leader (whose misses its followers
			// share) rises part of the way only.
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
		switch {
		case e.HasLow:
			e.bisect(step)
		case e.Spent > p.MissBudget:
			// Late often, early now: the delay spreads, nothing says it
			// became faster; the estimate comes down to this row only.
		default:
			// No lower bound: look four times as deep next, and when
			// that works too (at once for a leader, twice more for a
			// lone series), at the first guess, bisecting from there.
			e.Depth, e.Credit = min(descentDepth*e.Depth, p.longestWait(w)), 1
			wait := 1 // a lone series: its probes' misses are its own
			if k.following() {
				wait = -1 // a leader: shared by its followers
			}
			if e.Descent > wait {
				// To the interval's start for a live upstream.
				floor := p.FirstGuess(w)
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

// descentDepth is how much deeper the next probe looks when one found
// the row with no lower bound known.
const descentDepth = 4

// bisect aims the next probe at the middle of (Low, First], at once while
// the bracket is wide.
func (e *Estimate) bisect(step time.Duration) {
	gap := e.First - e.Low
	e.Depth = max(gap/2, step)
	if gap > 2*step {
		e.Credit = 1
	}
}

// followed records, once per row, whether a follower polled after the
// leader's find got the row too; too many misses split the key.
func (p *Policy) followed(k *Known, row time.Time, hit bool) {
	e := &k.Key
	switch {
	case hit && row.After(e.FollowHit):
		e.FollowHits++
		e.FollowHit = row
	case !hit && row.After(e.FollowMiss):
		e.FollowMisses++
		e.FollowMiss = row
	}
	if e.FollowMisses*p.SplitShare > e.FollowHits+p.SplitShare {
		e.Split = true
	}
}

// bound records that a row was there `at` after its start (the first
// refresh after start): its delay is no later. Before its interval closed
// (a live upstream), the next row is probed for at its start.
func (p *Policy) bound(k *Known, w, at time.Duration) {
	e := k.entry()
	e.First = min(e.First, at)
	if !e.Learned && e.First < w && e.First > p.LearnStep(w) {
		e.Depth, e.Credit, e.Learned = e.First, 1, true
	}
}

// chase says whether the series `id` is the one to poll for a late row:
// the first to find it missing; the others wait.
func (k *Known) chase(id string, row time.Time) bool {
	e := k.entry()
	if e.Chaser == "" || e.Chaser == id || e.Chased.Before(row) {
		e.Chaser, e.Chased = id, row
		return true
	}
	return false
}

// probeMissed records that a probe came too early: its offset is a new
// lower bound.
func (p *Policy) probeMissed(k *Known, w time.Duration) {
	e := k.entry()
	e.RowMisses++
	e.Descent = 0
	if probe := p.probeAt(e, w); !e.HasLow || probe > e.Low {
		e.Low, e.HasLow = probe, true
	}
	e.bisect(p.LearnStep(w))
	if e.First-e.Low <= 2*p.LearnStep(w) {
		e.Tight++
	}
}

// resign hands on the parts a failing series plays, so that no follower
// waits for rows it cannot find.
func (k *Known) resign(id string) {
	for _, e := range []*Estimate{&k.Key, &k.Own} {
		if e.Leader == id {
			e.Leader = ""
		}
		if e.Chaser == id {
			e.Chaser, e.Chased = "", time.Time{}
		}
	}
}

// Chasing says whether the key's leader is polling for the late row that
// starts at row: its followers wait for it.
func (e *Estimate) Chasing(row time.Time) bool {
	return !e.Split && e.Leader != "" && e.Chaser == e.Leader && e.Chased.Equal(row)
}

// FoundSince says whether a series of the key found a row starting at or
// after row; never for a key whose series are published apart.
func (e *Estimate) FoundSince(row time.Time) bool {
	return !e.Split && !e.Seen.Before(row)
}

// Publication is the estimated delay between the end of a row's interval
// and its publication, the earliest series' once the key split.
func (k *Known) Publication(w time.Duration) time.Duration {
	first := k.Key.First
	if k.Key.Split {
		for _, f := range k.OwnFirst {
			first = min(first, f)
		}
	}
	return first - w
}

// Earliest is the offset from a row's start at which the series' rows
// are taken to be out, for excess_staleness_seconds: the middle of the
// learned bracket, or the estimate without one.
func (k *Known) Earliest() time.Duration {
	e := k.entry()
	if e.HasLow && e.Low < e.First {
		return e.Low + (e.First-e.Low)/2
	}
	return e.First
}
