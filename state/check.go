package state

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// A state file is checked like configuration: every number restored is
// within the range the exporter itself writes, or its entry (a tuple, a
// learned delay, the day's count) is dropped with a warning naming the
// file and the entry, and the rest of the file is used.

// clockSkew is how far ahead of now a time saved as past (a last
// attempt, a row seen) may lie: a clock set back a little, not a file
// from the future.
const clockSkew = 10 * time.Minute

// maxCount bounds the counters of a saved tuple or delay (polls,
// failures, rows): the exporter counts them in ones, never near this.
const maxCount = 1_000_000

// maxSpacing bounds the spacing of a tuple's rows: block rows of the
// slowest chain are minutes apart, day rows a day.
const maxSpacing = 31 * 24 * time.Hour

// epoch is the earliest time a file may hold (a zero time, for never,
// aside): earlier ones are no row or attempt, and overflow what is
// computed from them.
var epoch = time.Unix(0, 0)

// maxDelay bounds a learned publication delay, a planned offset and their
// steps for rows of spacing w: four rows late, at least an hour; a day
// when the spacing is not known (block windows, no window). A learned
// delay of 9e18 ns (year 2312) is not one.
func maxDelay(w time.Duration) time.Duration {
	if w <= 0 {
		return 24 * time.Hour
	}
	return max(4*w, time.Hour)
}

// CheckTuple says why a tuple's state, saved or sent by a peer, is not
// one the exporter writes for t at now, or "".
func CheckTuple(s *Tuple, t *config.Tuple, now time.Time) string {
	w := config.WindowDuration(t.Window)
	for i, x := range s.Samples {
		if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
			return fmt.Sprintf("sample %d is %v, not a finite number", i, x.Value)
		}
	}
	if s.Block != nil && *s.Block < 0 {
		return fmt.Sprintf("block height %v is not a block", *s.Block)
	}
	if s.Interval < 0 || s.Interval > maxSpacing {
		return fmt.Sprintf("row spacing %v is not between 0 and %v", s.Interval, maxSpacing)
	}
	// A row may be up to a row's spacing ahead of now (decode.LatestAt
	// takes no newer one), the spacing seen for block rows; anything else
	// the exporter did is past.
	rowAhead := max(w, clockSkew)
	if w == 0 {
		rowAhead = max(min(s.Interval, maxDelay(0)), clockSkew)
	}
	for _, tm := range []struct {
		name  string
		t     time.Time
		ahead time.Duration
	}{
		{"row_time", s.RowTime, rowAhead}, {"newest", s.Newest, rowAhead},
		{"last_success", s.LastSuccess, clockSkew}, {"last_attempt", s.LastAttempt, clockSkew},
		{"failing_since", s.FailingSince, clockSkew}, {"since", s.Since, rowAhead}, {"changed", s.Changed, clockSkew},
	} {
		if msg := checkTime(tm.name, tm.t, now, tm.ahead); msg != "" {
			return msg
		}
	}
	spacing := w
	if spacing == 0 {
		spacing = s.Interval // learned: block rows, or a series without a window
	}
	switch d := maxDelay(spacing); {
	case s.Failures > maxCount || s.Polls > maxCount:
		return fmt.Sprintf("counts (failures %d, polls %d) are beyond %d", s.Failures, s.Polls, maxCount)
	case s.Due < -d || s.Due > d || s.Missed < -d || s.Missed > d:
		return fmt.Sprintf("planned offsets (due %v, missed %v) are beyond %v for %s rows", s.Due, s.Missed, d, windowName(t.Window))
	}
	return ""
}

// checkTime says why a saved time is not one of the past (up to ahead
// after now), or "". A zero time is never.
func checkTime(name string, t, now time.Time, ahead time.Duration) string {
	switch {
	case t.IsZero():
	case t.Before(epoch):
		return fmt.Sprintf("%s %s is before 1970", name, t.UTC().Format(time.RFC3339))
	case t.After(now.Add(ahead)):
		return fmt.Sprintf("%s %s is more than %v ahead of now (%s)", name, t.UTC().Format(time.RFC3339), ahead, now.UTC().Format(time.RFC3339))
	}
	return ""
}

// checkDelay says why a learned delay of key is not one the exporter
// learns, or "". The key names the window it was learned for: "API PATH
// WINDOW", a series' own estimate followed by NUL and its id.
func checkDelay(key string, e schedule.Estimate, now time.Time) string {
	window := key
	if i := strings.IndexByte(window, 0); i >= 0 {
		window = window[:i]
	}
	if i := strings.LastIndexByte(window, ' '); i >= 0 {
		window = window[i+1:]
	}
	d := maxDelay(config.WindowDuration(window))
	for _, x := range []struct {
		name string
		v    time.Duration
	}{{"first", e.First}, {"depth", e.Depth}, {"low", e.Low}} {
		if x.v < -d || x.v > d {
			return fmt.Sprintf("learned %s %v is beyond %v for %s rows", x.name, x.v, d, windowName(window))
		}
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"credit", e.Credit}, {"spent", e.Spent}} {
		if math.Abs(x.v) > maxCount { // JSON holds no NaN or infinity
			return fmt.Sprintf("%s %v is not a number the schedule keeps", x.name, x.v)
		}
	}
	for _, n := range []int{e.RowMisses, e.Rows, e.Descent, e.Tight, e.FollowHits, e.FollowMisses} {
		if n < 0 || n > maxCount {
			return fmt.Sprintf("a count (%d) is not between 0 and %d", n, maxCount)
		}
	}
	for _, tm := range []struct {
		name string
		t    time.Time
	}{{"seen", e.Seen}, {"chased", e.Chased}, {"leader_at", e.LeaderAt}} {
		// Seen is a row's time: up to a spacing ahead, as a tuple's.
		if msg := checkTime(tm.name, tm.t, now, max(d/4, clockSkew)); msg != "" {
			return msg
		}
	}
	return ""
}

func windowName(w string) string {
	if w == "" {
		return "windowless"
	}
	return w
}

// maxWarnings is how many dropped entries of one file are named one by
// one; the rest are counted in one more line.
const maxWarnings = 10

// warnDropped logs the entries of a file that are not taken.
func warnDropped(logger log.Logger, path string, bad []problem) {
	for i, p := range bad {
		if i == maxWarnings {
			level.Warn(logger).Log("msg", "more state entries dropped", "file", path, "count", len(bad)-maxWarnings)
			return
		}
		level.Warn(logger).Log("msg", "state entry dropped: not what the exporter writes", "file", path, "entry", p.entry, "err", p.err)
	}
}

// check drops the learned delays, listing answers and the day's count of
// a file read at now that are not what the exporter writes, and says
// which; the tuples
// are checked when taken (Store.Take), against their configuration.
func (f *File) check(now time.Time) []problem {
	var bad []problem
	for _, k := range slices.Sorted(maps.Keys(f.Delays)) {
		if msg := checkDelay(k, f.Delays[k], now); msg != "" {
			bad = append(bad, problem{"delays." + strings.ReplaceAll(k, "\x00", "/"), msg})
			delete(f.Delays, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(f.Lists)) {
		// A listing answer dated ahead would be reused for ever.
		if msg := checkTime("at", f.Lists[k].At, now, clockSkew); msg != "" {
			bad = append(bad, problem{"lists." + k, msg})
			delete(f.Lists, k)
		}
	}
	if f.Budget != nil {
		if err := f.Budget.Check(now); err != nil {
			bad = append(bad, problem{"budget", err.Error()})
			f.Budget = nil
		}
	}
	return bad
}

// writable forgets the times of f that JSON cannot hold (a year past 9999,
// or before year 0): one row dated in year 10000 must not stop the whole
// file, the day's count with it, from being written. A tuple's forgotten
// plan is due at once; a forgotten row time is none.
func (f *File) writable() {
	fix := func(ts ...*time.Time) {
		for _, t := range ts {
			if y := t.Year(); y > 9999 || y < 0 {
				*t = time.Time{}
			}
		}
	}
	for k, st := range f.Tuples {
		s := &st.State
		fix(&s.RowTime, &s.Newest, &s.LastSuccess, &s.LastAttempt, &s.FailingSince, &s.Next)
		f.Tuples[k] = st
	}
	for k, e := range f.Delays {
		fix(&e.Seen, &e.Chased, &e.LeaderAt)
		f.Delays[k] = e
	}
	for i := range f.Pauses {
		fix(&f.Pauses[i].Until)
	}
	if f.Budget != nil {
		b := *f.Budget
		fix(&b.At)
		f.Budget = &b
	}
}
