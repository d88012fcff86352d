package budget

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// Saved is what a Budget keeps across reloads and restarts (JSON), so
// that a restart loop gets no fresh day and no fresh burst.
type Saved struct {
	// Day is the UTC day Used counts, as YYYY-MM-DD.
	Day  string `json:"day"`
	Used int    `json:"used"`
	// Paced says a limit was in force at At; Tokens is then the bucket's
	// level.
	Paced  bool      `json:"paced,omitempty"`
	Tokens float64   `json:"tokens,omitempty"`
	At     time.Time `json:"at"`
	// UpstreamLimit is X-Daily-Limit as seen on Day; 0 when none was.
	UpstreamLimit int `json:"upstream_limit,omitempty"`
}

// Saved returns the state at now, to be kept.
func (b *Budget) Saved(now time.Time) Saved {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	return b.savedLocked()
}

// savedLocked is the state as last advanced; the lock is held.
func (b *Budget) savedLocked() Saved {
	s := Saved{Day: b.day.Format(time.DateOnly), Used: b.used, Paced: b.paced, At: b.at.UTC()}
	if b.paced {
		s.Tokens = b.tokens
	}
	if b.upLimit > 0 && b.upDay.Equal(b.day) {
		s.UpstreamLimit = b.upLimit
	}
	return s
}

// MaxDailyCalls bounds a day's count, limit or bucket level, saved or
// read from a header: past it the value is garbage, not a count.
const MaxDailyCalls = config.MaxDailyBudget

// Check says why a saved value cannot be restored at now, or nil: saved
// later than now, or with impossible numbers.
func (s Saved) Check(now time.Time) error {
	day, err := time.Parse(time.DateOnly, s.Day)
	switch {
	case err != nil:
		return fmt.Errorf("saved day %q is not a date (YYYY-MM-DD)", s.Day)
	case s.At.IsZero():
		return errors.New("saved without a time")
	case s.At.After(now):
		return fmt.Errorf("saved at %s, later than now (%s)", s.At.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case day.Before(midnight(s.At.Add(-maxClockShift))) || day.After(midnight(s.At.Add(maxClockShift))):
		// In a cluster the day is the cluster's (SetClock), whose clock
		// is up to maxClockShift from this one's.
		return fmt.Errorf("saved day %s is not the day of its time %s (within %s, as a cluster's clock may be)", s.Day, s.At.UTC().Format(time.RFC3339), maxClockShift)
	case s.Used < 0 || s.UpstreamLimit < 0:
		return fmt.Errorf("saved counts are negative (used %d, upstream limit %d)", s.Used, s.UpstreamLimit)
	case s.Used > MaxDailyCalls || s.UpstreamLimit > MaxDailyCalls:
		return fmt.Errorf("saved counts are beyond any day's calls (used %d, upstream limit %d; at most %d)", s.Used, s.UpstreamLimit, MaxDailyCalls)
	case s.Tokens < 0 || s.Tokens > MaxDailyCalls || math.IsNaN(s.Tokens) || math.IsInf(s.Tokens, 0):
		return fmt.Errorf("saved bucket level %v is not a number of calls", s.Tokens)
	}
	return nil
}

// Restore takes back a value Check accepts (else its error): the bucket's
// level refilled since, and when saved today the day's count (if more)
// and upstream limit; an earlier day's value gives no count but no fresh
// burst either. A Reserver's chunk counts as spent, made or not: a crash
// loses those calls rather than spend them twice.
func (b *Budget) Restore(s Saved, now time.Time) error {
	if err := s.Check(now); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	b.chunk = 1 // a process that restarts may be one of a crash loop
	if s.Day == b.day.Format(time.DateOnly) {
		b.used = max(b.used, s.Used)
		if s.UpstreamLimit > 0 {
			b.upLimit, b.upDay = s.UpstreamLimit, b.day
		}
	}
	if s.Paced {
		// Unless the bucket holds less (calls taken before the restore).
		held, paced := b.tokens, b.paced
		b.tokens, b.at, b.paced = s.Tokens, s.At, true
		b.advance(now)
		if paced {
			b.tokens = min(b.tokens, held)
		}
	}
	b.advance(now)
	return nil
}
