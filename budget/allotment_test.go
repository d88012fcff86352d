package budget

import (
	"fmt"
	"math"
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
		out[i] = Series{Key: fmt.Sprintf("%s %s %d", entry, window, i), Entry: entry, Window: window, Every: every, CallsPerDay: Overhead * float64(24*time.Hour) / float64(every)}
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

func factors(p Allotment) string {
	var parts []string
	for _, g := range p.Groups {
		parts = append(parts, fmt.Sprintf("%s/%s×%s", g.Window, human(g.Every), FormatFactor(g.Factor)))
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
		// 100 min series cost 151 200 a day, 144 000 rows; 10 000 less the
		// 10 % reserve and 2 listing calls leaves 8 998, 8 987.5 after the
		// day rows: the min rows are polled one in 144 000/8 987.5 = 16.02.
		{"min cut before day", concat(many(100, "a", "min", time.Minute), many(10, "b", "day", 24*time.Hour)), 2, 10000, "min/1m×16.03 day/1d×1", true, ""},
		// min and 10min are cut to a common interval T; hour is untouched.
		// 1800 left, 1296 after the hour rows: 28 800 min rows × 60 s/T
		// + 2 880 10min rows × 600 s/T = 1296 at T = 2666.7 s.
		{"finest first", concat(many(20, "a", "min", time.Minute), many(20, "b", "10min", 10*time.Minute), many(20, "c", "hour", time.Hour)), 0, 2000,
			"min/1m×44.45 10min/10m×4.45 hour/1h×1", true, ""},
		// Eth blocks (12 s) are cut before btc blocks (10 min): 4 499
		// left, 4 347.8 after the btc rows, for 14 400 eth rows: one in 3.31.
		{"blocks of two chains", concat(many(2, "a", "block", 12*time.Second), many(1, "b", "block", 10*time.Minute)), 1, 5000,
			"block/12s×3.32 block/10m×1", true, ""},
		// 50 series at a call a day are 52.5 calls; 40.5 left: day rows
		// are missed, one row polled in 50/40.5.
		{"not even a day", many(50, "a", "day", 24*time.Hour), 0, 45, "day/1d×1.24", true, "even a call a day per series exceeds"},
		// 51.3 left: the 52.5 of a poll per row at the schedule's
		// overhead do not fit, a call a day per series does: every row is
		// polled for once, when it is out.
		{"a day, just", many(50, "a", "day", 24*time.Hour), 0, 57, "day/1d×1", true, ""},
		{"listing eats the budget", many(5, "a", "hour", time.Hour), 20, 10, "hour/1h×168", false, "leave nothing of daily budget 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewAllotment(tc.series, tc.listing, tc.budget)
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
					t.Errorf("%s: factor %g: the series starve", g.Window, g.Factor)
				}
			}
		})
	}
}

// On any mix of windows, the plan spends what the budget leaves: never
// more, and when it cuts, at least 95 % of it (to the rounding of the
// interval, all of it). Every cut group is polled at one common interval
// T, and every group left whole has rows at least T apart.
func TestPlanSpendsWhatTheBudgetLeaves(t *testing.T) {
	spacings := []time.Duration{12 * time.Second, time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour, 10 * time.Minute}
	windows := []string{"block", "min", "10min", "hour", "day", "block"}
	r := rand.New(rand.NewPCG(1, 2))
	var cut int
	for i := range 300 {
		var series []Series
		for j := range spacings {
			series = append(series, many(r.IntN(30), fmt.Sprint("e", j), windows[j], spacings[j])...)
		}
		natural := NewAllotment(series, 0, 0).Natural
		budget := 1 + r.IntN(int(natural)+10)
		p := NewAllotment(series, 3, budget)
		if !p.Fits {
			if p.Note == "" {
				t.Errorf("case %d: does not fit and says nothing", i)
			}
			continue
		}
		if p.Planned > p.Available {
			t.Fatalf("case %d: planned %.1f > available %.1f", i, p.Planned, p.Available)
		}
		if !p.Cut() {
			if p.Natural > p.Available {
				t.Fatalf("case %d: nothing cut, yet natural %.1f > available %.1f", i, p.Natural, p.Available)
			}
			continue
		}
		cut++
		if p.Planned < 0.95*p.Available {
			t.Errorf("case %d: factors %s plan %.1f calls a day of the %.1f left: %.1f %% unspent",
				i, factors(p), p.Planned, p.Available, 100*(1-p.Planned/p.Available))
		}
		var common time.Duration
		for _, g := range p.Groups {
			if g.Factor > 1 {
				common = max(common, g.Interval())
			}
		}
		for _, g := range p.Groups {
			if g.Factor > 1 && (g.Interval() < common-time.Microsecond) {
				t.Errorf("case %d: %s polled every %s, the common interval is %s", i, g.Window, g.Interval(), common)
			}
			if g.Factor == 1 && g.Every < common {
				t.Errorf("case %d: %s (every %s) not cut although the common interval is %s", i, g.Window, g.Every, common)
			}
		}
	}
	if cut < 100 {
		t.Errorf("only %d of 300 cases cut anything: the test tells little", cut)
	}
}

// The schedule takes each series' factor by its key: of one window, the
// series of the spacing cut (Ethereum blocks) and not the others.
func TestPlanFactorsBySeries(t *testing.T) {
	p := NewAllotment(concat(many(2, "a", "block", 12*time.Second), many(1, "b", "block", 10*time.Minute), many(1, "c", "hour", time.Hour)), 1, 5000)
	got := p.Factors()
	if len(got) != 2 || got["a block 0"] != p.Factor("block", 12*time.Second) || got["a block 1"] <= 1 {
		t.Errorf("factors by series %v: want the two Ethereum block series only, at %g", got, p.Factor("block", 12*time.Second))
	}
	if f := p.WindowFactors()["block"]; f != got["a block 0"] {
		t.Errorf("the block window's factor is %g, want the largest of its spacings, %g", f, got["a block 0"])
	}
}

// A series whose spacing is not known is counted, never cut.
func TestPlanFixedSeries(t *testing.T) {
	s := concat(many(10, "a", "min", time.Minute), []Series{{Entry: "b", Window: "block", CallsPerDay: 1000}})
	p := NewAllotment(s, 0, 5000)
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
	p := NewAllotment(s, 1, 10000)
	if len(p.Entries) != 3 || p.Entries[0].Entry != "data.metrics[4] /v2/network/events-count" || p.Entries[0].Series != 2 ||
		len(p.Entries[0].Cut) != 1 || p.Entries[1].Cut != nil {
		t.Fatalf("entries %+v", p.Entries)
	}
	want := "natural cost 15347 calls a day, daily budget 10000 (8999 for series after the 10 % reserve and 1 listing call): " +
		"block (12s) polled every 20s (one row in 1.65, 8772 calls a day), block (10m) every row (151 calls a day), hour every row (76 calls a day), " +
		"8999 calls a day planned; costliest: data.metrics[4] /v2/network/events-count 15120 → 8772, " +
		"data.metrics[2] /v1/{asset}/network-data/supply 151 → 151"
	if got := p.Summary(2); got != want {
		t.Errorf("summary\n got %s\nwant %s", got, want)
	}
	if got := NewAllotment(s, 1, 20000).Summary(2); !strings.HasSuffix(got, ": nothing cut") {
		t.Errorf("summary within the budget: %s", got)
	}
	// 8 999 less the btc blocks' 151.2 and the hour rows' 75.6 leaves
	// 8 772.2 for the 14 400 eth block rows.
	if got := p.WindowFactors(); math.Abs(got["block"]-14400/8772.2) > 1e-6 || got["hour"] != 1 {
		t.Errorf("window factors %v", got)
	}
}
