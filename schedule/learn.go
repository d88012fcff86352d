package schedule

import (
	"math"
	"time"
)

// Estimate is what the series of one key (an API, endpoint and window)
// taught of when their rows appear; what the model learned (16 fields)
// is saved and sent to peers, the parts its series play here are not.
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
type Estimate struct {
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
	// Spent is the mean count of polls per row, beyond the first, that
	// missed (a moving average); Rows counts the rows found (up to 100).
	Spent float64 `json:"spent,omitempty"`
	Rows  int     `json:"rows,omitempty"`
	// Descent counts probes in a row that found the row with no lower
	// bound known: the provider became faster.
	Descent int `json:"descent,omitempty"`
	// Tight counts the probes in a row that missed within a narrow
	// bracket: the estimate is as good as it gets, and probes thin out.
	Tight int `json:"tight,omitempty"`
	// FollowHits counts the rows a follower got once its leader found
	// them, FollowMisses the rows a follower then missed: rows, not
	// followers' polls (FollowHit, FollowMiss below), so that how many
	// followers a key has and which of them leads do not decide when it
	// splits.
	FollowHits   int `json:"follow_hits,omitempty"`
	FollowMisses int `json:"follow_misses,omitempty"`
	// Split says the key's series were seen to be published apart: each
	// then learns on its own, from the key's estimate.
	Split bool `json:"split,omitempty"`
	// Released are the offsets from their start at which the key's last
	// rows found on time (by their due time) were first found here,
	// oldest first, at most ReleaseRows; Late is the offset of the last
	// row, when it was found past its due time (0: it was not). See
	// release.go.
	Released []time.Duration `json:"released,omitempty"`
	Late     time.Duration   `json:"late,omitempty"`
	// pooled is what the due time allows past the learned release when
	// the spread is pooled across the keys of the API and window
	// (PooledTolerance), 0 when it is not: set by the Book on the copies
	// it hands out, neither saved nor sent (it is made again from the
	// keys' Released).
	pooled time.Duration

	// The parts the key's series play in this process, and the row under
	// way: neither saved nor sent to peers (what the model learned is
	// above; these are taken again at the next row's plan). Chaser is the
	// one series polling for a late row (Chased) while the others wait
	// for it to find the row; Leader polls for the rows of the key,
	// LeaderAt is when it last planned one; RowMisses counts the polls
	// of the row under way that missed, for Spent. SeenAt is when Seen
	// was found: a sibling polled since has had what that find could
	// tell it (SiblingFound). FollowHit and FollowMiss are the newest
	// rows counted in FollowHits and FollowMisses.
	Chaser     string    `json:"-"`
	Chased     time.Time `json:"-"`
	Leader     string    `json:"-"`
	LeaderAt   time.Time `json:"-"`
	RowMisses  int       `json:"-"`
	SeenAt     time.Time `json:"-"`
	FollowHit  time.Time `json:"-"`
	FollowMiss time.Time `json:"-"`
}

// keepLocal keeps the parts the key's series play in this process (not
// saved, not sent) from from, when the estimate is replaced by a peer's:
// the peer's carry none.
func (e *Estimate) keepLocal(from *Estimate) {
	e.Chaser, e.Chased, e.Leader, e.LeaderAt = from.Chaser, from.Chased, from.Leader, from.LeaderAt
	e.RowMisses, e.SeenAt, e.FollowHit, e.FollowMiss = from.RowMisses, from.SeenAt, from.FollowHit, from.FollowMiss
}

// Known is what the policy is given of one series' key: a copy, taken
// and put back by the Book, so that the policy's functions hold no lock
// and change nothing but it.
type Known struct {
	// Members counts the series of the key in the configuration.
	Members int
	// Key is the key's estimate.
	Key Estimate
	// Own is the series' own estimate, once the key's series are
	// published apart (Key.Split); HasOwn says it exists.
	Own    Estimate
	HasOwn bool
	// OwnFirst is the earliest First of the key's series that learn
	// apart (for Publication), when Key.Split.
	OwnFirst []time.Duration
	// Fresh: nothing was learned of the key; Next starts it from the
	// first guess for the series' spacing.
	Fresh bool
}

// Adopt takes the estimate a peer's owner of the key learned, unless a
// newer row of the key was seen here: the owner polls and learns, the
// other members plan from what it learned. The parts the key's series
// play in this process are kept.
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
// the key's series were seen to be published apart.
func (k *Known) entry() *Estimate {
	if !k.Key.Split {
		return &k.Key
	}
	if !k.HasOwn {
		// All the key learned of the delay, bracket and misses
		// included: a series that starts from the estimate alone
		// probes and descends as if nothing bounded it, and what it
		// pays then depends on how many rows the key followed before
		// it split, that is on which series led.
		e := &k.Key
		k.Own = Estimate{First: e.First, Depth: e.Depth, Low: e.Low, HasLow: e.HasLow, Learned: e.Learned,
			Spent: e.Spent, Rows: e.Rows, Tight: e.Tight}
		k.HasOwn = true
	}
	return &k.Own
}

// following says whether the key's series follow a leader.
func (k *Known) following() bool { return k.Members > 1 && !k.Key.Split }

// plan places the first poll of a series' next row: the offset from the
// row's start, whether it is a probe, and whether the series follows the
// key's leader (then the offset is only a fallback, should the leader not
// find the row).
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
// first guess (just after the interval closes) unless rows were seen
// earlier than that.
func (p *Policy) probeAt(e *Estimate, w time.Duration) time.Duration {
	probe := e.First - e.Depth
	if floor := p.FirstGuess(w); e.First > floor {
		probe = max(probe, floor)
	}
	return probe
}

// found records that a row was found `at` after its start: by a probe,
// at the first try, or (missed > 0) late, after `misses` polls, the last
// at `missed`, did not find it. A late row's delay lies between the two:
// First goes to the top (plus a margin for jitter) and the next probes
// bisect the bracket.
func (p *Policy) found(k *Known, row time.Time, w, at, missed time.Duration, misses int, probe bool) {
	late := false
	if row.After(k.Key.Seen) {
		// The first find of the row here: its offset teaches the due
		// time, unless it was past it (release.go).
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
		// Past its due time: the provider's incident, not its habit
		// (release.go). The next row is polled for as this one was: a
		// First at the top of this bracket would have it polled, and
		// due, hours after the provider's usual time for days.
	case missed > 0:
		// Late: the delay lies in (missed, at]. Poll the next row safely
		// at the top, and probe the bracket from there on.
		top := at + p.jitterMargin(w)
		if n := k.Members; n > 1 && k.following() && top > e.First && e.Rows > 3 && e.Spent < p.MissBudget*float64(n) {
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
		switch {
		case e.HasLow:
			e.bisect(step)
		case e.Spent > p.MissBudget:
			// Its rows were late more often than the budget allows,
			// and this one came early: the delay spreads (a provider
			// that jitters); nothing says it became faster. The
			// estimate comes down to this row, no further.
		default:
			// No lower bound: rows came earlier than they did. Look
			// four times as far down next time and, when that works
			// too (at once for a leader, whose misses its followers
			// share; twice more for a lone series), at the first
			// guess, bisecting from there: a provider that became
			// much faster is followed in a few rows.
			e.Depth, e.Credit = min(descentDepth*e.Depth, p.longestWait(w)), 1
			wait := 1 // a lone series: its probes' misses are its own
			if k.following() {
				wait = -1 // a leader: shared by its followers
			}
			if e.Descent > wait {
				// Down to the first guess or, for rows seen before
				// their interval closed (a live upstream), to the
				// interval's start.
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
// the row with no lower bound known (4: four times as deep; then at the
// first guess).
const descentDepth = 4

// bisect aims the next probe at the middle of the bracket (Low, First],
// at once while the bracket is wide, at the usual share once it is narrow.
func (e *Estimate) bisect(step time.Duration) {
	gap := e.First - e.Low
	e.Depth = max(gap/2, step)
	if gap > 2*step {
		e.Credit = 1
	}
}

// followed records whether a follower polled after the leader found the
// row starting at row got it too, once per row however many followers
// polled; a key whose followers miss too many rows learns apart.
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
// refresh after start): its delay is no later. When that is before the
// row's interval even closed (a live upstream, showing rows as they
// grow), the next row is probed for at its interval start: one call
// that, if it finds the row, has the upstream followed from the second
// row on, and if it misses, bounds the delay from below for the probes
// that bisect what is left. Otherwise probing waits for a row found by
// the schedule.
func (p *Policy) bound(k *Known, w, at time.Duration) {
	e := k.entry()
	e.First = min(e.First, at)
	if !e.Learned && e.First < w && e.First > p.LearnStep(w) {
		e.Depth, e.Credit, e.Learned = e.First, 1, true
	}
}

// chase says whether the series `id` is the one to poll for a late row
// starting at row: the first to find it missing is, and the others of the
// key wait until it is found.
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

// resign hands on the parts a failing series plays for its key: its
// followers would otherwise wait for rows it cannot find.
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
// starts at row: its followers then wait for it rather than poll
// themselves (it resigns when it fails).
func (e *Estimate) Chasing(row time.Time) bool {
	return !e.Split && e.Leader != "" && e.Chaser == e.Leader && e.Chased.Equal(row)
}

// FoundSince says whether a series of the key found a row starting at or
// after row; never for a key whose series are published apart.
func (e *Estimate) FoundSince(row time.Time) bool {
	return !e.Split && !e.Seen.Before(row)
}

// Publication is the estimated delay between the end of a row's interval
// and its publication, for the gauge: the first guess until something is
// learned, the earliest series' once the key's series learn apart.
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
// learned bracket where a poll that missed gave one (the delay lies
// between its bottom and the estimate, where the engine polls), the
// estimate otherwise.
func (k *Known) Earliest() time.Duration {
	e := k.entry()
	if e.HasLow && e.Low < e.First {
		return e.Low + (e.First-e.Low)/2
	}
	return e.First
}
