package collector

import (
	"cmp"
	"fmt"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

func windowName(w string) string { return cmp.Or(w, "windowless") }

// TestWhatThePolicyWritesReadsBack: every estimate and plan the policy
// makes, for every window and every spacing a series can learn (block
// rows, a series without a window up to a weekly and a monthly cadence),
// through rows on time, rows days late, an upstream that stops for ten
// rows, failures and a coarsened plan, passes the checks a state file's
// entry meets when it is read back (Estimate.Check under delayWindow,
// Tuple.check): the exporter never refuses what it wrote itself. (A
// day-cadence series without a window once learned a first poll of
// 24h7m12s, which the reader bounded at 24h.)
func TestWhatThePolicyWritesReadsBack(t *testing.T) {
	type kind struct {
		window string
		w      time.Duration // the spacing of the rows
	}
	var kinds []kind
	for _, w := range []string{"min", "10min", "hour", "day"} {
		kinds = append(kinds, kind{w, plan.WindowDuration(w)})
	}
	for _, w := range []time.Duration{time.Second, 12 * time.Second, 10 * time.Minute, 6 * time.Hour} {
		kinds = append(kinds, kind{"block", w})
	}
	for _, w := range append(schedule.CadenceUnits(), schedule.MaxSpacing) {
		kinds = append(kinds, kind{"", w})
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for _, k := range kinds {
		for _, factor := range []float64{0, 2.5} {
			t.Run(fmt.Sprintf("%s/%v/factor%v", windowName(k.window), k.w, factor), func(t *testing.T) {
				tu := &config.Tuple{API: "data", Key: "k", Path: "/v1/x", Window: k.window}
				key := delayKey(tu)
				book := schedule.NewBook(nil)
				book.SetMembers(map[string]int{key: 1}, map[string]bool{"k": true})
				var s Tuple
				if k.window == "block" || k.window == "" {
					s.Interval = k.w
				}
				now := start
				// The delay after a row's end at which the upstream
				// publishes it, phase by phase: on time, a little late,
				// six rows late, stopped for ten rows, on time again.
				phases := []struct {
					rows  int
					delay time.Duration
					fails bool
				}{{8, 0, false}, {8, k.w / 3, false}, {4, 6 * k.w, false}, {3, 10 * k.w, true}, {8, 0, false}}
				for _, ph := range phases {
					until := now.Add(time.Duration(ph.rows) * k.w)
					for polls := 0; now.Before(until) && polls < 400; polls++ {
						se := schedule.Series{ID: "k", Window: k.window, W: k.w, Factor: factor, LastAttempt: s.LastAttempt.Time(),
							Failures: s.Failures, Newest: s.Newest.Time()}
						o := schedule.Outcome{PrevNewest: s.Newest.Time()}
						if ph.fails && polls%3 == 0 {
							s.Failures++
							se.Failures = s.Failures
							o = schedule.Outcome{Err: &schedule.Failure{RetryAfter: k.w}}
						} else {
							s.Failures = 0
							// The newest row out at now: its end plus the delay passed.
							newest := now.Add(-ph.delay).Truncate(k.w).Add(-k.w)
							if newest.After(s.Newest.Time()) {
								s.Newest, s.RowTime = schedule.InstantOf(newest), schedule.InstantOf(newest)
							}
							se.Newest = s.Newest.Time()
						}
						s.Poll, _ = book.Next(key, se, s.Poll, o, now)
						s.LastAttempt = schedule.InstantOf(now)
						for ek, e := range book.Snapshot() {
							if err := schedule.CheckSaved(ek, e, now); err != nil {
								t.Fatalf("at %s the policy learned %+v, which a restart refuses: %v", now, e, err)
							}
						}
						if err := admit(tu, &s, now); err != nil {
							t.Fatalf("at %s the tuple's state %+v is one a restart refuses: %v", now, s.Poll, err)
						}
						now = s.Next.Time()
					}
				}
			})
		}
	}
}
