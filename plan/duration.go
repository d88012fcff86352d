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
	for i, n := range []int{d.Years, d.Months, d.Days} {
		if n != 0 {
			b.WriteString(strconv.Itoa(n))
			b.WriteByte("YMD"[i])
		}
	}
	if d.Clock != 0 {
		b.WriteByte('T')
		c := d.Clock
		for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
			if n := c / unit; n != 0 {
				b.WriteString(strconv.FormatInt(int64(n), 10))
				b.WriteByte("HMS"[i])
				c -= n * unit
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
	// rest, or what follows T, is not empty: the loop reads a part at least.
	for side, field := range []string{date, clock} {
		units, last := [2]string{"YMWD", "HMS"}[side], -1
		for field != "" {
			i := 0
			for i < len(field) && field[i] >= '0' && field[i] <= '9' {
				i++
			}
			if i == 0 || i == len(field) {
				return Duration{}, fmt.Errorf("%q is not an ISO 8601 duration of whole numbers", s)
			}
			n, err := strconv.Atoi(field[:i])
			if err != nil || n > maxDurationPart {
				return Duration{}, fmt.Errorf("%q is not an ISO 8601 duration: %s is too large", s, field[:i])
			}
			at := strings.IndexByte(units, field[i])
			if at < 0 || at <= last {
				return Duration{}, fmt.Errorf("%q is not an ISO 8601 duration: unit %q out of place", s, field[i])
			}
			if side == 1 {
				d.Clock += time.Duration(n) * [...]time.Duration{time.Hour, time.Minute, time.Second}[at]
			} else {
				switch units[at] {
				case 'Y':
					d.Years = n
				case 'M':
					d.Months = n
				case 'W':
					d.Days += 7 * n
				case 'D':
					d.Days += n
				}
			}
			last, field = at, field[i+1:]
		}
	}
	return d, nil
}
