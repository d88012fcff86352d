package schedule

import (
	"math"
	"time"
)

// Instant is a time as a tuple's state keeps it: Unix nanoseconds, 0 for
// none (the zero time, and 1970-01-01 00:00:00 UTC itself). Eight bytes
// where a time.Time takes 24, and the same JSON as a time.Time in UTC. It
// holds the years 1678 to 2262; a time outside reads as the nearest it
// holds, which CheckInstant refuses.
type Instant int64

// InstantOf is t as an Instant.
func InstantOf(t time.Time) Instant {
	if t.IsZero() {
		return 0
	}
	switch s := t.Unix(); {
	case s < minInstant.Unix():
		return minInstant
	case s > maxInstant.Unix():
		return maxInstant
	}
	return Instant(t.UnixNano())
}

// The first and last times an Instant holds, off by a second from
// time.Unix's bounds so that nothing near them overflows.
const (
	minInstant = Instant(math.MinInt64 + int64(time.Second))
	maxInstant = Instant(math.MaxInt64 - int64(time.Second))
)

// Unix is i in Unix seconds.
func (i Instant) Unix() int64 {
	s := int64(i) / int64(time.Second)
	if int64(i)%int64(time.Second) < 0 {
		s--
	}
	return s
}

// Time is the instant as a time in UTC; 0 is the zero time.
func (i Instant) Time() time.Time {
	if i == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(i)).UTC()
}

// IsZero says whether i is none (and omitzero leaves it out of JSON).
func (i Instant) IsZero() bool { return i == 0 }

// MarshalJSON writes i as time.Time writes the time in UTC.
func (i Instant) MarshalJSON() ([]byte, error) { return i.Time().MarshalJSON() }

// UnmarshalJSON reads a time as time.Time reads it (null leaves i as it
// is).
func (i *Instant) UnmarshalJSON(b []byte) error {
	t := i.Time()
	if err := t.UnmarshalJSON(b); err != nil {
		return err
	}
	*i = InstantOf(t)
	return nil
}

// String is the time's, as time.Time says it.
func (i Instant) String() string { return i.Time().String() }

// ForgetFar forgets the instants that stand for a time an Instant does
// not hold, as clock.ForgetFar does: a row of year 10000 is none, not one
// of 2262.
func ForgetFar(is ...*Instant) {
	for _, i := range is {
		if *i <= minInstant || *i >= maxInstant {
			*i = 0
		}
	}
}
