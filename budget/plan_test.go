package budget

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// many returns n series of one entry and window with rows every `every`,
// at the schedule's overhead.
func many(n int, entry, window string, every time.Duration) []Series {
	out := make([]Series, n)
	for i := range out {
		out[i] = Series{Entry: entry, Window: window, Every: every, CallsPerDay: Overhead * float64(24*time.Hour) / float64(every)}
	}
	return out
}

func concat(lists ...[]Series) []Series {
	var out []Series
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func factors(p Plan) string {
	var parts []string
	for _, g := range p.Groups {
		parts = append(parts, fmt.Sprintf("%s/%s×%d", g.Window, human(g.Every), g.Factor))
	}
	return strings.Join(parts, " ")
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		series  []Series
		listing float64
		budget  int
		want    string // the factor of each group, finest first
		fits    bool
		note    string // part of the note; "" for none
	}{
		{"no budget", many(10, "a", "min", time.Minute), 0, 0, "min/1m×1", true, ""},
		{"within the budget", concat(many(2, "a", "hour", time.Hour), many(5, "b", "day", 24*time.Hour)), 2, 100, "hour/1h×1 day/1d×1", true, ""},
		// 100 min series cost 151 200 a day; 10 000 less the 10 % reserve
		// and 2 listing calls leaves 8 998: 151 200/17 + 10.5 fits, /16 not.
		{"min cut before day", concat(many(100, "a", "min", time.Minute), many(10, "b", "day", 24*time.Hour)), 2, 10000, "min/1m×17 day/1d×1", true, ""},
		// min and 10min are cut to a common interval; hour is untouched.
		// 1800 left: 30 240/44 + 3 024/5 + 504 fits, 30 240/43 + 3 024/5 not.
		{"finest first", concat(many(20, "a", "min", time.Minute), many(20, "b", "10min", 10*time.Minute), many(20, "c", "hour", time.Hour)), 0, 2000,
			"min/1m×44 10min/10m×5 hour/1h×1", true, ""},
		// Eth blocks (12 s) are cut before btc blocks (10 min).
		{"blocks of two chains", concat(many(2, "a", "block", 12*time.Second), many(1, "b", "block", 10*time.Minute)), 1, 5000,
			"block/12s×4 block/10m×1", true, ""},
		// 50 series at a call a day are 52.5 calls; 40 left: day rows are
		// missed, every other day.
		{"not even a day", many(50, "a", "day", 24*time.Hour), 0, 45, "day/1d×2", true, "even a call a day per series exceeds"},
		{"listing eats the budget", many(5, "a", "hour", time.Hour), 20, 10, "hour/1h×168", false, "leave nothing of daily budget 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlan(tc.series, tc.listing, tc.budget)
			if got := factors(p); got != tc.want {
				t.Errorf("factors %s, want %s", got, tc.want)
			}
			if p.Fits != tc.fits {
				t.Errorf("fits = %v (planned %.1f of %.1f), want %v", p.Fits, p.Planned, p.Available, tc.fits)
			}
			if (tc.note == "") != (p.Note == "") || !strings.Contains(p.Note, tc.note) {
				t.Errorf("note %q, want one with %q", p.Note, tc.note)
			}
			for _, g := range p.Groups {
				if g.Factor < 1 {
					t.Errorf("%s: factor %d: the series starve", g.Window, g.Factor)
				}
			}
		})
	}
}

// On any mix of windows, the plan fits the budget with the smallest
// common interval: every group is polled every max(Every, T) rounded up
// to a multiple of Every, and one step less would not fit.
func TestPlanIsTheSmallestCommonInterval(t *testing.T) {
	spacings := []time.Duration{12 * time.Second, time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour, 10 * time.Minute}
	windows := []string{"block", "min", "10min", "hour", "day", "block"}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		var series []Series
		for j := range spacings {
			series = append(series, many(r.IntN(30), fmt.Sprint("e", j), windows[j], spacings[j])...)
		}
		natural := NewPlan(series, 0, 0).Natural
		budget := 1 + r.IntN(int(natural)+10)
		p := NewPlan(series, 3, budget)
		if !p.Fits {
			if p.Note == "" {
				t.Errorf("case %d: does not fit and says nothing", i)
			}
			continue
		}
		if p.Planned > p.Available {
			t.Fatalf("case %d: planned %.1f > available %.1f", i, p.Planned, p.Available)
		}
		// T lies above (Factor-1)×Every of every cut group and at or
		// below each cut group's interval.
		var below time.Duration
		for _, g := range p.Groups {
			if g.Factor > 1 {
				below = max(below, g.Every*time.Duration(g.Factor-1))
			}
		}
		if below == 0 {
			if p.Natural > p.Available {
				t.Fatalf("case %d: nothing cut, yet natural %.1f > available %.1f", i, p.Natural, p.Available)
			}
			continue
		}
		for _, g := range p.Groups {
			if g.Factor > 1 && g.Interval() <= below {
				t.Errorf("case %d: %s polled every %s, not above another cut group's step %s", i, g.Window, g.Interval(), below)
			}
			if g.Factor == 1 && g.Every <= below {
				t.Errorf("case %d: %s (every %s) not cut although the common interval is above %s", i, g.Window, g.Every, below)
			}
		}
		var less float64
		for _, g := range p.Groups {
			less += g.Natural / float64(factor(g.Every, below))
		}
		if less <= p.Available {
			t.Errorf("case %d: factors %s; at %s the plan would fit too (%.1f ≤ %.1f)", i, factors(p), below, less, p.Available)
		}
	}
}

// A series whose spacing is not known is counted, never cut.
func TestPlanFixedSeries(t *testing.T) {
	s := concat(many(10, "a", "min", time.Minute), []Series{{Entry: "b", Window: "block", CallsPerDay: 1000}})
	p := NewPlan(s, 0, 5000)
	if p.Factor("block", 0) != 1 || !p.Fits || p.Planned > p.Available {
		t.Errorf("plan %s, planned %.1f of %.1f", factors(p), p.Planned, p.Available)
	}
	if p.Planned < 1000 {
		t.Errorf("the fixed series' 1000 calls are not counted: planned %.1f", p.Planned)
	}
}

func TestPlanEntriesAndSummary(t *testing.T) {
	s := concat(
		many(2, "data.metrics[4] /v2/network/events-count", "block", 12*time.Second),
		many(3, "data.metrics[0] /v1/btc/market-data/open-interest", "hour", time.Hour),
		many(1, "data.metrics[2] /v1/{asset}/network-data/supply", "block", 10*time.Minute),
	)
	p := NewPlan(s, 1, 10000)
	if len(p.Entries) != 3 || p.Entries[0].Entry != "data.metrics[4] /v2/network/events-count" || p.Entries[0].Series != 2 ||
		len(p.Entries[0].Cut) != 1 || p.Entries[1].Cut != nil {
		t.Fatalf("entries %+v", p.Entries)
	}
	want := "natural cost 15347 calls a day, daily budget 10000 (8999 for series after the 10 % reserve and 1 listing call): " +
		"block (12s) polled every 24s (×2), 7787 calls a day planned; costliest: data.metrics[4] /v2/network/events-count 15120 → 7560, " +
		"data.metrics[2] /v1/{asset}/network-data/supply 151 → 151"
	if got := p.Summary(2); got != want {
		t.Errorf("summary\n got %s\nwant %s", got, want)
	}
	if got := NewPlan(s, 1, 20000).Summary(2); !strings.HasSuffix(got, ": nothing cut") {
		t.Errorf("summary within the budget: %s", got)
	}
	if got := p.WindowFactors(); got["block"] != 2 || got["hour"] != 1 {
		t.Errorf("window factors %v", got)
	}
}
