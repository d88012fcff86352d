package schedule

import (
	"hash/crc32"
	"math"
	"slices"
	"time"

	"github.com/onchain-exporter/onchain_exporter/internal/clock"
)

// A row at s covers [s, s+w); the next row becomes visible some delay D
// after its start (w plus a publication lag for closed intervals, less
// for a live upstream), and until then the cached value is served. D is
// learned per key (learn.go); a late row is polled in widening steps.

// Series is what the policy reads of one tuple.
type Series struct {
	ID     string // the tuple's key, unique in the configuration
	Window string // its window's name, for FallbackTTL
	// W is the spacing of its rows: its window, or the learned spacing
	// (0 when unknown).
	W time.Duration
	// CacheTTL, when set, replaces the schedule.
	CacheTTL time.Duration
	// Revalidate caps the wait between refreshes (data is revised after
	// the fact); Factor > 1 polls for one row in Factor (the daily
	// budget's coarsening).
	Revalidate time.Duration
	Factor     float64
	// Newest is the newest row seen (after the refresh planned from);
	// LastAttempt when it was last asked.
	Newest      time.Time
	LastAttempt time.Time
	Deprecated  bool
	Failures    int // refreshes in a row that failed
	// Skip are the UTC weekdays (bit i: time.Weekday i) the series showed
	// no row on, for rows a day or more apart (trading days).
	Skip uint8
	// MaxWait, when set, caps the wait between polls of a late row (a
	// series without a window: its API's max_staleness).
	MaxWait time.Duration
}

// after is the start of the row that follows the one starting at t: a
// spacing later, past the weekdays the series has no rows on.
func (s Series) after(t time.Time) time.Time {
	t = t.Add(s.W)
	if s.Skip == 0 || s.Skip&0x7f == 0x7f || s.W < 24*time.Hour {
		return t
	}
	for i := 0; i < 7 && s.Skip&(1<<t.UTC().Weekday()) != 0; i++ {
		t = t.Add(24 * time.Hour)
	}
	return t
}

// sameRow says whether a row starting at `found` is the one expected at
// `expected`: within half a spacing (later, it follows a gap).
func (s Series) sameRow(found, expected time.Time) bool {
	return found.Sub(expected) < s.W/2
}

// Poll is a tuple's next poll, saved with the tuple's cache.
type Poll struct {
	Next Instant       `json:"next"` // when a refresh is due
	Due  time.Duration `json:"due"`  // offset from the next row's start of its first poll
	// Polls that missed the next row after it was due, and the offset of
	// the last of them.
	Polls  int           `json:"polls"`
	Missed time.Duration `json:"missed"`
	// Spacing is what a series without a window was planned for
	// (respaced).
	Spacing time.Duration `json:"spacing,omitempty"`
	Planned bool          `json:"planned"` // Due holds the first poll of the next row
	Probing bool          `json:"probing"` // that first poll is a probe, earlier than the estimate
	// Following: the series waits for its key's leader; Due is a fallback.
	Following bool `json:"following,omitempty"`
	// Why is the policy's reason for Next, for the page. The small fields
	// last: 48 bytes, not 56.
	Why Why `json:"why,omitempty"`
}

// Why is the reason of a poll's Next.
type Why uint8

// The reasons of a poll's Next.
const (
	WhyUnknown    Why = iota // set before reasons were kept (a state file of an earlier version)
	WhyNow                   // due at once: a reset (a reload, the key's plan changed, labels changed) or a saved poll not trusted
	WhyLeader                // its key's leader chases the row it waits for: a learn step on
	WhyUnread                // its last answer said nothing of its row (every row dated in the future)
	WhyAwaited               // another's find: a series of its key found the row, or it waits for its unit's owner
	WhyRetry                 // its last refresh failed: a back-off, or the hold or pause the upstream asked for
	WhyCacheTTL              // its cache_ttl
	WhyCadence               // no spacing known (no window, a block window): called again on its cadence
	WhyFirstRow              // no row yet: polled until one comes
	WhyNextRow               // the next row is due out then, by the learned delay
	WhyProbe                 // a probe for the next row, earlier than the estimate
	WhyFollow                // its key's leader polls for the next row; this one's poll is a fallback
	WhyLate                  // the next row is past due and not found: the late row's steps
	WhySibling               // its row is late and another series of its key chases it
	WhyCoarse                // the daily budget's allotment polls one row in Factor
	WhyRevalidate            // revalidate: polled at least this often
)

// Failure is what the policy needs of a refresh that failed (a call held
// back by the exporter's limits did not).
type Failure struct {
	// RetryAfter is the least wait the upstream asked for.
	RetryAfter time.Duration
	// Hold and PauseUntil: how long the upstream says not to ask again.
	Hold       time.Duration
	PauseUntil time.Time
}

// Outcome is the event a poll is set from: a refresh (failed, or a
// success whose answer is in Series and whose newest row before was
// PrevNewest), or an event without a call: Reset (ask at once),
// LeaderChasing (WaitsForLeader) or Restored (taken back from a state
// file or a peer).
type Outcome struct {
	Err        *Failure
	PrevNewest time.Time
	// MissedAt is when a series without times was last asked before the
	// first row it places (LearnCadence): its delay lies after it.
	MissedAt      time.Time
	Reset         bool
	LeaderChasing bool
	Restored      bool
	// Until: due then, nothing learned (SiblingFound, or a cluster
	// member waiting for its unit's owner). Unread: the answer said
	// nothing of the row (all dated in the future), nothing learned.
	Until  time.Time
	Unread bool
}

// Next is the policy, the one place a series' next refresh is decided:
// from what is known of its key, the series, its poll, an event and the
// time, it returns what is known and the poll after the event. No lock,
// no I/O.
func (p *Policy) Next(k Known, s Series, pl Poll, o Outcome, now time.Time) (Known, Poll) {
	if k.Fresh {
		k.Key, k.Fresh = p.fresh(s.W), false
	}
	k, pl = p.respaced(k, s, pl)
	switch {
	case o.Reset, o.Restored && pl.Next.Time().After(p.horizon(s, now)): // restored further ahead than this policy sets: not trusted
		pl.Next, pl.Why = InstantOf(now), WhyNow
	case o.Restored:
	case o.LeaderChasing:
		pl.Next, pl.Why = InstantOf(now.Add(max(p.LearnStep(s.W), p.MinInterval))), WhyLeader
	case o.Unread:
		pl.Next = InstantOf(p.cap(s, &pl, now, now.Add(p.unreadWait(s)), WhyUnread))
	case !o.Until.IsZero():
		pl.Next, pl.Why = InstantOf(o.Until), WhyAwaited
	case o.Err != nil:
		pl.Next, pl.Why = InstantOf(p.afterError(&k, s, *o.Err, now)), WhyRetry
	default:
		pl.Next = InstantOf(p.afterSuccess(&k, s, &pl, o, now))
	}
	d := MaxDelay(s.W)
	k.Key.bound(d)
	k.Own.bound(d)
	pl.Due, pl.Missed = clampDelay(pl.Due, d), clampDelay(pl.Missed, d)
	return k, pl
}

// bound keeps what an estimate learned within d (MaxDelay), which
// Estimate.Check enforces on restart.
func (e *Estimate) bound(d time.Duration) {
	e.First, e.Depth, e.Low = clampDelay(e.First, d), clampDelay(e.Depth, d), clampDelay(e.Low, d)
	e.Late = clampDelay(e.Late, d)
	if slices.ContainsFunc(e.Released, func(r time.Duration) bool { return r != clampDelay(r, d) }) {
		// A new slice: copies of the estimate share this one.
		rs := make([]time.Duration, len(e.Released))
		for i, r := range e.Released {
			rs[i] = clampDelay(r, d)
		}
		e.Released = rs
	}
}

func clampDelay(v, d time.Duration) time.Duration { return min(max(v, -d), d) }

// Step is Next, and says whether what the key's other series wait for
// changed (a row found, the key split): they may be due sooner.
func (p *Policy) Step(k Known, s Series, pl Poll, o Outcome, now time.Time) (Known, Poll, bool) {
	seen, split := k.Key.Seen, k.Key.Split
	k, pl = p.Next(k, s, pl, o, now)
	return k, pl, !k.Key.Seen.Equal(seen) || k.Key.Split != split
}

// respaced drops what a series without a window (W learned, its key its
// own) learned for another spacing: a delay at one spacing says nothing
// at another.
func (p *Policy) respaced(k Known, s Series, pl Poll) (Known, Poll) {
	if s.Window != "" || s.W <= 0 || pl.Spacing == s.W {
		return k, pl
	}
	if pl.Spacing != 0 {
		k.Key, k.Own, k.HasOwn = p.fresh(s.W), Estimate{}, false
	}
	return k, Poll{Next: pl.Next, Spacing: s.W}
}

// afterSuccess learns from a refresh that succeeded and plans the next.
func (p *Policy) afterSuccess(k *Known, s Series, pl *Poll, o Outcome, now time.Time) time.Time {
	w, prevNewest := s.W, o.PrevNewest
	if s.Factor > 1 && w > 0 && !s.Newest.IsZero() && s.CacheTTL == 0 {
		return p.coarse(k, s, pl, now)
	}
	if w > 0 && !s.Newest.IsZero() {
		switch {
		case prevNewest.IsZero() && o.MissedAt.After(s.Newest) && !s.Newest.After(now):
			p.found(k, s.Newest, w, now.Sub(s.Newest), o.MissedAt.Sub(s.Newest), 1, false)
		case prevNewest.IsZero():
			if !s.Newest.After(now) {
				p.bound(k, w, now.Sub(s.Newest))
			}
		case s.Newest.After(prevNewest):
			var missed time.Duration
			if at := now.Sub(s.Newest); pl.Polls > 0 && s.sameRow(s.Newest, s.after(prevNewest)) && pl.Missed < at {
				// The misses were for this row (not one before a gap):
				// they bound its delay from below.
				missed = pl.Missed
			}
			if pl.Following {
				p.followed(k, s.Newest, true)
			} else {
				p.found(k, s.Newest, w, now.Sub(s.Newest), missed, pl.Polls, pl.Probing)
			}
			pl.Polls, pl.Probing, pl.Planned, pl.Following = 0, false, false, false
		case !pl.Planned:
		case pl.Following && k.Key.FoundSince(s.after(prevNewest)):
			// Its leader found the row, this one did not.
			p.followed(k, s.after(prevNewest), false)
			pl.Following, pl.Polls, pl.Missed = false, pl.Polls+1, now.Sub(s.after(prevNewest))
		case now.Before(s.after(prevNewest).Add(pl.Due)):
			// Polled before the row was due: nothing learned.
		case pl.Probing:
			p.probeMissed(k, w)
			pl.Probing, pl.Planned = false, false
		default:
			pl.Polls, pl.Missed = pl.Polls+1, now.Sub(s.after(prevNewest)) // the row was due and is not there (yet)
		}
	}
	if s.CacheTTL > 0 {
		pl.Why = WhyCacheTTL
		return now.Add(s.CacheTTL)
	}
	if w <= 0 || s.Newest.IsZero() {
		why := WhyFirstRow
		if w <= 0 {
			why = WhyCadence
		}
		return p.cap(s, pl, now, now.Add(FallbackTTL(s.Window)), why)
	}
	nextStart := s.after(s.Newest)
	if pl.Polls > 0 {
		if !k.chase(s.ID, nextStart) {
			// Another series chases the row: wait for its find.
			return p.cap(s, pl, now, now.Add(p.lateWait(s, -1, max(p.longestWait(w), p.MinInterval))), WhySibling)
		}
		return p.cap(s, pl, now, now.Add(p.lateWait(s, pl.Polls-1, p.overdueStep(pl.Polls-1, w, pl.Missed-w, s.Deprecated))), WhyLate)
	}
	if !pl.Planned {
		pl.Due, pl.Probing, pl.Following = p.plan(k, s.ID, w, now)
		pl.Planned = true
	}
	due := nextStart.Add(pl.Due)
	if now.Before(due) {
		why := WhyNextRow
		switch {
		case pl.Following:
			why = WhyFollow
		case pl.Probing:
			why = WhyProbe
		}
		return p.cap(s, pl, now, clock.Later(due, now.Add(p.MinInterval)), why)
	}
	// Due already: poll again after the floor, late if still missing.
	return p.cap(s, pl, now, now.Add(p.MinInterval), WhyLate)
}

// coarse plans a series the daily budget coarsens: polled for one row in
// Factor when the learned delay says it is out, learning nothing. The
// rows are fixed by the clock: slot j starts at row ⌈φ + j·Factor⌉ (rows
// numbered from the epoch, φ the series' phase), so that its calls a day
// are the rows over Factor whatever a restart did, and the phases spread
// a window's series over the slot.
func (p *Policy) coarse(k *Known, s Series, pl *Poll, now time.Time) time.Time {
	pl.Polls, pl.Probing, pl.Planned, pl.Following = 0, false, false, false
	w, f := s.W, s.Factor
	// The next poll is for a row not out yet (out: w, the learned delay
	// and a learn step after its start).
	out := w + k.Publication(w) + p.LearnStep(w)
	newest := s.Newest.UnixNano() / int64(w)
	ahead := max(1, int64(math.Ceil(float64(now.Add(p.MinInterval).Sub(s.Newest)-out)/float64(w))))
	phase := f * float64(crc32.ChecksumIEEE([]byte(s.ID))) / (1 << 32)
	// The first slot whose row is at least ahead rows on: ⌈φ + j·f⌉ ≥ n
	// when φ + j·f > n - 1.
	slot := math.Floor((float64(newest+ahead-1)-phase)/f) + 1
	rows := max(int64(math.Ceil(phase+slot*f))-newest, ahead)
	start := s.Newest
	for range rows {
		start = s.after(start)
	}
	return p.cap(s, pl, now, clock.Later(start.Add(out), now.Add(p.MinInterval)), WhyCoarse)
}

// unreadWait is the wait after an Unread answer: a late row's (pollStep),
// the unread answers in a row (Failures) counted as its polls; a retry's
// (errorStep) without a spacing.
func (p *Policy) unreadWait(s Series) time.Duration {
	n := max(s.Failures, 1)
	if s.W <= 0 {
		return p.errorStep(n)
	}
	return p.pollStep(n-1, s.W)
}

// afterError plans the retry of a failing series.
func (p *Policy) afterError(k *Known, s Series, e Failure, now time.Time) time.Time {
	if s.CacheTTL == 0 {
		k.resign(s.ID)
	}
	next := now.Add(p.errorStep(s.Failures))
	if e.Hold > 0 {
		next = now.Add(e.Hold)
	}
	if e.RetryAfter > 0 && now.Add(e.RetryAfter).After(next) {
		next = now.Add(e.RetryAfter)
	}
	if !e.PauseUntil.IsZero() && e.PauseUntil.After(next) {
		next = e.PauseUntil
	}
	return next
}

// lateWait is the wait d before the n-th poll (from 0; -1 for a series
// waiting for another's find) of a late row; with MaxWait, doubling from
// the learn step up to MaxWait.
func (p *Policy) lateWait(s Series, n int, d time.Duration) time.Duration {
	if s.MaxWait <= 0 {
		return d
	}
	if n >= 0 {
		d = max(d, p.LearnStep(s.W)<<min(n, 20))
	}
	return max(min(d, s.MaxWait), p.MinInterval)
}

// horizon is the furthest ahead the policy plans a series' next refresh:
// two rows (of Factor rows each), cache_ttl, MaxWait or MaxPause, plus a
// minute.
func (p *Policy) horizon(s Series, now time.Time) time.Time {
	h := now.Add(max(s.CacheTTL, s.MaxWait, p.MaxPause))
	if s.W > 0 {
		t := now
		for range 2 * int(math.Ceil(max(1, s.Factor))) {
			t = s.after(t)
		}
		h = clock.Later(h, t)
	}
	return h.Add(time.Minute)
}

// cap applies the revalidation interval to a poll set at next for why,
// and sets pl.Why.
func (p *Policy) cap(s Series, pl *Poll, now, next time.Time, why Why) time.Time {
	pl.Why = why
	if r := max(s.Revalidate, p.MinInterval); s.Revalidate > 0 && next.After(now.Add(r)) {
		pl.Why = WhyRevalidate
		return now.Add(r) // the 5 s floor holds for revalidate too
	}
	return next
}

// WaitsForLeader says whether a follower whose poll is due waits for its
// leader still chasing a late row, and until when: a learn step later
// (or the leader's find, SiblingFound).
func (p *Policy) WaitsForLeader(key *Estimate, s Series, pl Poll, now time.Time) (bool, time.Time) {
	if !pl.Following || s.Newest.IsZero() || s.CacheTTL > 0 || s.W <= 0 {
		return false, time.Time{}
	}
	if !key.Chasing(s.after(s.Newest)) {
		return false, time.Time{}
	}
	_, pl = p.Next(Known{}, s, pl, Outcome{LeaderChasing: true}, now)
	return true, pl.Next.Time()
}

// SiblingFound says whether the row a series waits for was found by
// another series of its key, at `at`: it is then due at once (the 5 s
// floor kept). Once per find: a series that polled since waits on its own
// steps.
func (p *Policy) SiblingFound(key *Estimate, s Series, pl Poll, at time.Time) bool {
	if (pl.Polls == 0 && !pl.Following) || s.CacheTTL > 0 || s.Newest.IsZero() || s.W <= 0 {
		return false
	}
	return at.Sub(s.LastAttempt) >= p.MinInterval && key.FoundSince(s.after(s.Newest)) &&
		!s.LastAttempt.After(key.SeenAt)
}

// DefaultCadence is the spacing of a series without a window until it
// showed its own: about a call an hour (as --config.check forecasts).
const DefaultCadence = time.Hour

// FallbackTTL is how long a value is cached when the schedule cannot be
// derived (no row time, no spacing), by window.
func FallbackTTL(w string) time.Duration {
	if d, ok := fallbackTTLs[w]; ok {
		return d
	}
	return 5 * time.Minute
}

var fallbackTTLs = map[string]time.Duration{"block": 30 * time.Second, "min": 30 * time.Second,
	"10min": 2 * time.Minute, "hour": 5 * time.Minute, "day": 15 * time.Minute}
