package benchmark

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEverythingAboutBTC: one entry, path: /v1/btc/**, beside entries
// named one by one, on the fake's professional plan: as many series as
// the plan allows, no call it refuses, and within the plan's rate limit;
// then with a daily_budget of half the natural cost: never over it, at
// least 90 % of it spent, the pattern's series coarsened first.
func TestEverythingAboutBTC(t *testing.T) {
	days := 1
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		days = 3
	}
	natural, err := RunEverything(EverythingOptions{Plan: "professional", Days: days + 1, Interval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(natural.Table())
	if natural.PatternTuples < 50 || natural.NamedTuples != 3 {
		t.Errorf("%d tuples by the pattern, %d named; want the plan's dozens, and 3", natural.PatternTuples, natural.NamedTuples)
	}
	if natural.Refused != 0 {
		t.Errorf("%d calls refused by the plan, want 0", natural.Refused)
	}
	// A day past the first (which learns), as the natural cost.
	cost := natural.CallsPerDay[len(natural.CallsPerDay)-1]
	if natural.MaxPerHour > 1000 {
		t.Errorf("%d calls in one hour: over the professional plan's 1000 an hour", natural.MaxPerHour)
	}

	budget := int(cost / 2)
	halved, err := RunEverything(EverythingOptions{Plan: "professional", DailyBudget: budget, Days: days + 1, Interval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(halved.Table())
	for i, n := range halved.CallsPerDay {
		if n > int64(budget) {
			t.Errorf("day %d: %d calls, over the daily_budget of %d", i+1, n, budget)
		}
	}
	if last := halved.CallsPerDay[len(halved.CallsPerDay)-1]; float64(last) < 0.9*float64(budget) {
		t.Errorf("%d calls on the last day, under 90 %% of the daily_budget of %d", last, budget)
	}
	if halved.Refused != 0 {
		t.Errorf("%d calls refused by the plan with the budget, want 0", halved.Refused)
	}
}

// Table renders a run: tuples, calls a day, refused calls, and the mean
// excess staleness per window of the named series and the pattern's.
func (e *Everything) Table() string {
	var b strings.Builder
	budget := "plan's"
	if e.DailyBudget > 0 {
		budget = fmt.Sprint(e.DailyBudget)
	}
	fmt.Fprintf(&b, "plan %s, daily_budget %s: %d tuples by the pattern, %d named; calls a day %v (%.0f planned), at most %d in an hour; refused %d\n",
		e.Plan, budget, e.PatternTuples, e.NamedTuples, e.CallsPerDay, e.Planned, e.MaxPerHour, e.Refused)
	fmt.Fprintf(&b, "| series | window | mean excess staleness |\n|---|---|---:|\n")
	for _, kind := range []string{"named", "pattern"} {
		var ws []string
		for w := range e.Excess[kind] {
			ws = append(ws, w)
		}
		slices.Sort(ws)
		for _, w := range ws {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", kind, w, e.Excess[kind][w].Round(time.Second))
		}
	}
	return b.String()
}
