package benchmark

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestWindowless runs the realistic first file of docs/fake.md against the
// fake upstream, two replicas scraping every 15 s, in the timed payload
// and in the timeless one, and prints per tuple the calls a day and, for
// the Indicator and Analyst Consensus series (no window), calls per change
// of their answer and the mean excess staleness of the changes. Goal
// (issue 25): at most 1.5 calls per change and an excess staleness of at
// most 10 % of the series' cadence, against the 288 calls a day of a fixed
// 5-minute cache. The full run (ONCHAIN_BENCH_FULL=1) is three days; the
// short one (CI) two days scraped every minute, and it asserts only the
// logic: every tuple was called, every change published an hour before
// the end (max_staleness) was served, and no scrape served a version
// before the fake published it (RunWindowless fails then).
func TestWindowless(t *testing.T) {
	runs := []WindowlessOptions{{Days: 2, Replicas: 2, Interval: time.Minute}}
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		// Three days as a new user's first, then two weeks: the second
		// week is what the schedule costs once it has learned.
		runs = []WindowlessOptions{{Days: 3, Replicas: 2, Interval: 15 * time.Second},
			{Days: 14, Replicas: 2, Interval: 15 * time.Second, SteadyFrom: 7}}
	}
	for _, o := range runs {
		for _, timeless := range []bool{false, true} {
			o.Timeless = timeless
			windowlessRun(t, o)
		}
	}
}

func windowlessRun(t *testing.T, o WindowlessOptions) {
	{
		name := map[bool]string{false: "timed", true: "timeless"}[o.Timeless] + fmt.Sprintf("/%dd", o.Days)
		t.Run(name, func(t *testing.T) {
			began := time.Now()
			w, err := RunWindowless(o)
			if err != nil {
				t.Fatal(err)
			}
			end := windowlessStart.Add(time.Duration(o.Days) * day)
			for _, tc := range w.Tuples {
				if tc.Calls() == 0 {
					t.Errorf("%s %s: no call in %d days", tc.API, tc.Series, o.Days)
				}
				if !tc.Windowless {
					continue
				}
				if tc.Changes() < o.Days*5/7 {
					t.Errorf("%s %s: %d versions in %d days: the fake's cadence is not daily (trading days for a band)", tc.API, tc.Series, tc.Changes(), o.Days)
				}
				for k, d := range tc.Served {
					if r := tc.Revisions[k+1]; d < 0 && r.At.Before(end.Add(-time.Hour)) {
						t.Errorf("%s %s: the change of %s, published %s, was never served", tc.API, tc.Series, r.Day.Format(time.DateOnly), r.At.Format(time.RFC3339))
					}
				}
			}
			t.Logf("%s, %d days from %s, %d replicas every %s, %d scrapes (%.0f s)\n%s", name, o.Days,
				windowlessStart.Format("Mon 2006-01-02 15:04:05"), o.Replicas, o.Interval, w.Scrapes, time.Since(began).Seconds(), w.Table())
		})
	}
}

// Table renders the run: the windowless series first, then calls a day
// per API, then every tuple.
func (w *Windowless) Table() string {
	var b strings.Builder
	if w.SteadyFrom > 0 {
		fmt.Fprintf(&b, "From day %d on (the schedule learned):\n\n| series | changes | calls | calls per change | mean excess staleness | excess / cadence |\n|---|---:|---:|---:|---:|---:|\n", w.SteadyFrom+1)
		from := windowlessStart.Add(time.Duration(w.SteadyFrom) * day)
		for _, tc := range w.Tuples {
			if !tc.Windowless {
				continue
			}
			changes, calls, excess := tc.Since(from, w.SteadyFrom)
			fmt.Fprintf(&b, "| %s %s | %d | %d | %.2f | %s | %.1f %% |\n", tc.API, tc.Series, changes, calls,
				float64(calls)/float64(max(changes, 1)), fmtDur(excess), 100*excess.Seconds()/tc.Cadence.Seconds())
		}
		b.WriteString("\nThe whole run:\n\n")
	}
	b.WriteString("| series | changes | calls | calls per change | calls a day | mean excess staleness | cadence | excess / cadence |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, tc := range w.Tuples {
		if !tc.Windowless {
			continue
		}
		excess, unserved := tc.MeanExcess()
		note := ""
		if unserved > 0 {
			note = fmt.Sprintf(" (%d not served)", unserved)
		}
		share := "–"
		if tc.Cadence > 0 {
			share = fmt.Sprintf("%.1f %%", 100*excess.Seconds()/tc.Cadence.Seconds())
		}
		fmt.Fprintf(&b, "| %s %s | %d | %d | %.1f | %s | %s%s | %s | %s |\n", tc.API, tc.Series, tc.Changes(), tc.Calls(), tc.CallsPerChange(),
			perDay(tc.Days), fmtDur(excess), note, fmtDur(tc.Cadence), share)
	}
	b.WriteString("\n| API | tuples | calls a day | calls of no tuple (discovery), whole run |\n|---|---:|---|---:|\n")
	for _, api := range []string{"data", "indicator", "consensus"} {
		var days []int64
		n := 0
		for _, tc := range w.Tuples {
			if tc.API != api {
				continue
			}
			n++
			for i, d := range tc.Days {
				if i == len(days) {
					days = append(days, 0)
				}
				days[i] += d
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d |\n", api, n, perDay(days), w.Other[api])
	}
	b.WriteString("\n| entry | tuples | calls a day |\n|---|---:|---|\n")
	var entries []string
	sums, counts := map[string][]int64{}, map[string]int{}
	for _, tc := range w.Tuples {
		e := tc.API + " " + tc.Entry
		if counts[e] == 0 {
			entries = append(entries, e)
			sums[e] = make([]int64, len(tc.Days))
		}
		counts[e]++
		for i, d := range tc.Days {
			sums[e][i] += d
		}
	}
	for _, e := range entries {
		fmt.Fprintf(&b, "| %s | %d | %s |\n", e, counts[e], perDay(sums[e]))
	}
	b.WriteString("\n| entry | tuple | calls a day |\n|---|---|---|\n")
	for _, tc := range w.Tuples {
		fmt.Fprintf(&b, "| %s %s | %s | %s |\n", tc.API, tc.Entry, tc.Series, perDay(tc.Days))
	}
	return b.String()
}

// perDay renders calls per day, "12 / 8 / 8".
func perDay(days []int64) string {
	s := make([]string, len(days))
	for i, d := range days {
		s[i] = fmt.Sprint(d)
	}
	return strings.Join(s, " / ")
}

// Calls is the tuple's calls over the run.
func (t *TupleCalls) Calls() int64 {
	var n int64
	for _, d := range t.Days {
		n += d
	}
	return n
}

// Changes is the number of versions the exporter had to deliver: the one
// there at the start and every change.
func (t *TupleCalls) Changes() int { return len(t.Revisions) }

// CallsPerChange is calls per version delivered.
func (t *TupleCalls) CallsPerChange() float64 {
	return float64(t.Calls()) / float64(max(t.Changes(), 1))
}

// MeanExcess is the mean time from a change to its first serving, over
// the changes served, and how many were not.
func (t *TupleCalls) MeanExcess() (time.Duration, int) {
	var sum time.Duration
	n, unserved := 0, 0
	for _, d := range t.Served {
		if d < 0 {
			unserved++
			continue
		}
		sum += d
		n++
	}
	if n == 0 {
		return 0, unserved
	}
	return sum / time.Duration(n), unserved
}

// Since is the tuple's changes published from `from` on, the calls from
// day index `day` on, and the mean excess staleness of those changes.
func (t *TupleCalls) Since(from time.Time, day int) (changes int, calls int64, excess time.Duration) {
	for _, d := range t.Days[min(day, len(t.Days)):] {
		calls += d
	}
	n := 0
	for k, d := range t.Served {
		if r := t.Revisions[k+1]; r.At.Before(from) || d < 0 {
			continue
		}
		excess += d
		n++
	}
	if n > 0 {
		excess /= time.Duration(n)
	}
	return n, calls, excess
}
