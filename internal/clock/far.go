package clock

import "time"

// ForgetFar forgets the times JSON cannot hold (a year past 9999, or
// before year 0): one row dated in year 10000 must not stop a whole state
// file, the day's count with it, from being written. A forgotten time is
// the zero time.
func ForgetFar(ts ...*time.Time) {
	for _, t := range ts {
		if y := t.Year(); y > 9999 || y < 0 {
			*t = time.Time{}
		}
	}
}
