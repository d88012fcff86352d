package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is an ISO 8601 duration as the plan gives history depths:
// P1D, P7D, P1Y, P3Y, PT12H. The zero Duration (P0D) means no limit.
// Years, months and days are calendar steps (AddDate), the rest a
// time.Duration.
type Duration struct {
	Years, Months, Days int
	Clock               time.Duration
}

// Unlimited says the depth is P0D: the plan reads the whole history.
func (d Duration) Unlimited() bool { return d == Duration{} }

// Earliest is the oldest time the depth reaches back to from now; the
// zero time when the depth is unlimited.
func (d Duration) Earliest(now time.Time) time.Time {
	if d.Unlimited() {
		return time.Time{}
	}
	return now.AddDate(-d.Years, -d.Months, -d.Days).Add(-d.Clock)
}

// String writes the duration back in ISO 8601: P1Y, P7D, PT12H, P0D.
func (d Duration) String() string {
	if d.Unlimited() {
		return "P0D"
	}
	var b strings.Builder
	b.WriteByte('P')
	for _, p := range []struct {
		n    int
		unit byte
	}{{d.Years, 'Y'}, {d.Months, 'M'}, {d.Days, 'D'}} {
		if p.n != 0 {
			b.WriteString(strconv.Itoa(p.n))
			b.WriteByte(p.unit)
		}
	}
	if d.Clock != 0 {
		b.WriteByte('T')
		c := d.Clock
		for _, p := range []struct {
			unit time.Duration
			c    byte
		}{{time.Hour, 'H'}, {time.Minute, 'M'}, {time.Second, 'S'}} {
			if n := c / p.unit; n != 0 {
				b.WriteString(strconv.FormatInt(int64(n), 10))
				b.WriteByte(p.c)
				c -= n * p.unit
			}
		}
	}
	return b.String()
}

// maxDurationPart keeps each number of a duration within what AddDate and
// time.Duration hold: ten thousand years of days at most.
const maxDurationPart = 3_650_000

// ParseDuration reads an ISO 8601 duration of whole numbers: PnYnMnWnD
// and TnHnMnS after it, at least one part (P0D for no limit). Weeks are
// read as seven days. Fractions and negative durations are refused.
func ParseDuration(s string) (Duration, error) {
	var d Duration
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || rest == "" {
		return d, fmt.Errorf("%q is not an ISO 8601 duration (P1D, P1Y, PT12H, P0D)", s)
	}
	date, clock, hasClock := strings.Cut(rest, "T")
	if hasClock && clock == "" {
		return d, fmt.Errorf("%q is not an ISO 8601 duration: nothing after T", s)
	}
	parts := 0
	read := func(field, units string, each func(n int, unit byte)) error {
		last := -1
		for field != "" {
			i := 0
			for i < len(field) && field[i] >= '0' && field[i] <= '9' {
				i++
			}
			if i == 0 || i == len(field) {
				return fmt.Errorf("%q is not an ISO 8601 duration of whole numbers", s)
			}
			n, err := strconv.Atoi(field[:i])
			if err != nil || n > maxDurationPart {
				return fmt.Errorf("%q is not an ISO 8601 duration: %s is too large", s, field[:i])
			}
			at := strings.IndexByte(units, field[i])
			if at < 0 || at <= last {
				return fmt.Errorf("%q is not an ISO 8601 duration: unit %q out of place", s, field[i])
			}
			last = at
			each(n, field[i])
			parts++
			field = field[i+1:]
		}
		return nil
	}
	err := read(date, "YMWD", func(n int, unit byte) {
		switch unit {
		case 'Y':
			d.Years = n
		case 'M':
			d.Months = n
		case 'W':
			d.Days += 7 * n
		case 'D':
			d.Days += n
		}
	})
	if err == nil {
		err = read(clock, "HMS", func(n int, unit byte) {
			d.Clock += time.Duration(n) * map[byte]time.Duration{'H': time.Hour, 'M': time.Minute, 'S': time.Second}[unit]
		})
	}
	if err != nil {
		return Duration{}, err
	}
	if parts == 0 {
		return d, fmt.Errorf("%q is not an ISO 8601 duration (P1D, P1Y, PT12H, P0D)", s)
	}
	return d, nil
}
