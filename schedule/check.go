package schedule

import (
	"fmt"
	"math"
	"time"
)

// What the schedule takes back (estimates from a state file or a peer, a
// tuple's Poll) is checked like configuration: every number within what
// the schedule itself makes.

// ClockSkew is how far ahead of now a time taken back as past may lie: a
// clock set back a little, not a file from the future.
const ClockSkew = 10 * time.Minute

// MaxSpacing bounds the spacing of a series' rows taken back (a monthly
// series').
const MaxSpacing = 31 * 24 * time.Hour

// maxCount bounds the counters taken back: the schedule counts them in
// ones, never near this.
const maxCount = 1_000_000

// epoch is the earliest time taken back (but the zero time): earlier
// ones overflow what is computed from them.
var epoch = time.Unix(0, 0)

// MaxDelay bounds a learned delay, a planned offset and their steps for
// rows of spacing w: four rows, at least an hour; a day when the spacing
// is not known.
func MaxDelay(w time.Duration) time.Duration {
	if w <= 0 {
		return 24 * time.Hour
	}
	return max(4*w, time.Hour)
}

// CheckTime says why a time taken back is not one of the past (up to
// ahead after now), or nil. A zero time is never, and fine.
func CheckTime(name string, t, now time.Time, ahead time.Duration) error {
	switch {
	case t.IsZero():
	case t.Before(epoch):
		return fmt.Errorf("%s %s is before 1970", name, t.UTC().Format(time.RFC3339))
	case t.After(now.Add(ahead)):
		return fmt.Errorf("%s %s is more than %v ahead of now (%s)", name, t.UTC().Format(time.RFC3339), ahead, now.UTC().Format(time.RFC3339))
	}
	return nil
}

// CheckInstant is CheckTime for an Instant, refusing one that stands for
// a time an Instant does not hold.
func CheckInstant(name string, i Instant, now time.Time, ahead time.Duration) error {
	switch {
	case i >= maxInstant:
		return fmt.Errorf("%s is past the year 2262, more than %v ahead of now (%s)", name, ahead, now.UTC().Format(time.RFC3339))
	case i <= minInstant:
		return fmt.Errorf("%s is before 1970", name)
	}
	return CheckTime(name, i.Time(), now, ahead)
}

// Check says why a poll taken back is not one the schedule makes for rows
// of spacing w, or nil; when it is due is judged by Outcome.Restored.
func (pl *Poll) Check(w time.Duration) error {
	d := MaxDelay(w)
	switch {
	case pl.Polls < 0 || pl.Polls > maxCount:
		return fmt.Errorf("polls %d is not between 0 and %d", pl.Polls, maxCount)
	case pl.Due < -d || pl.Due > d || pl.Missed < -d || pl.Missed > d:
		return fmt.Errorf("planned offsets (due %v, missed %v) are beyond %v", pl.Due, pl.Missed, d)
	case pl.Spacing < 0 || pl.Spacing > MaxSpacing:
		return fmt.Errorf("planned spacing %v is not between 0 and %v", pl.Spacing, MaxSpacing)
	case pl.Why > WhyRevalidate:
		return fmt.Errorf("the poll's reason %d is none the policy gives (0 to %d)", pl.Why, WhyRevalidate)
	}
	return nil
}

// Check says why an estimate taken back is not one the schedule learns
// for rows of spacing w (0: not known) at now, or nil.
func (e *Estimate) Check(w time.Duration, now time.Time) error {
	d := MaxDelay(w)
	for _, x := range []struct {
		name string
		v    time.Duration
	}{{"first", e.First}, {"depth", e.Depth}, {"low", e.Low}, {"late", e.Late}} {
		if x.v < -d || x.v > d {
			return fmt.Errorf("learned %s %v is beyond %v", x.name, x.v, d)
		}
	}
	if len(e.Released) > ReleaseRows {
		return fmt.Errorf("%d release offsets, more than the %d kept", len(e.Released), ReleaseRows)
	}
	for _, r := range e.Released {
		if r < -d || r > d {
			return fmt.Errorf("a release offset %v is beyond %v", r, d)
		}
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"credit", e.Credit}, {"spent", e.Spent}} {
		if math.IsNaN(x.v) || math.Abs(x.v) > maxCount {
			return fmt.Errorf("%s %v is not a number the schedule keeps", x.name, x.v)
		}
	}
	for _, n := range []int{e.Rows, e.Descent, e.Tight, e.FollowHits, e.FollowMisses} {
		if n < 0 || n > maxCount {
			return fmt.Errorf("a count (%d) is not between 0 and %d", n, maxCount)
		}
	}
	// Seen is a row's time: up to a spacing ahead, as a tuple's.
	return CheckTime("seen", e.Seen, now, max(d/4, ClockSkew))
}
