package collector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// TestTradingDaySeriesFollowsItsRows: a price-to-book band (no window, a
// dated row per trading day) is polled about once per new row once its
// rows taught the schedule their spacing and weekdays, not every few
// minutes; its newest row is served.
func TestTradingDaySeriesFollowsItsRows(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		e := newEnv(t, indicatorConfig, fakeapi.Options{Dialect: d})
		e.scrape("10")
		// Two weeks of hourly scrapes: the first teaches the schedule.
		for range 7 * 24 {
			e.clock.Add(time.Hour)
			e.scrape("10")
		}
		before := e.fake.Calls("indicator")
		var body string
		for range 7 * 24 {
			e.clock.Add(time.Hour)
			body = e.scrape("10")
		}
		calls := e.fake.Calls("indicator") - before
		t.Logf("%d calls in the second week for two trading-day series (10 new rows)", calls)
		// Two equities, five trading days: ten new rows. A few misses each
		// are the price of learning the delay; 288 a day each was the old
		// fixed cache.
		if calls > 2*5*3 {
			t.Errorf("%d calls in a week for two trading-day series, want about one per new row (10)", calls)
		}
		if calls < 2*5 {
			t.Errorf("%d calls in a week for two trading-day series: fewer than their new rows (10)", calls)
		}
		for _, equity := range []string{"KRX:005930", "NASDAQ:AAPL"} {
			if seriesValue(body, "onchain_exporter_query_success", "equity", equity) != "1" {
				t.Errorf("%s not served fresh:\n%s", equity, strings.Join(lines(body, "onchain_exporter_query_success"), "\n"))
			}
		}
	})
}

// TestTimelessSeriesLearnsHowOftenItChanges: an answer without times
// whose value changes every six (or 24) hours is polled at each change
// once the schedule has seen two, at most 1.5 calls a change, and each
// change is served within a tenth of the cadence.
func TestTimelessSeriesLearnsHowOftenItChanges(t *testing.T) {
	for _, cadence := range []int64{6, 24} {
		t.Run(fmt.Sprintf("every %dh", cadence), func(t *testing.T) {
			t.Parallel() // simulated days each, on its own clock and upstream
			timelessCase(t, cadence)
		})
	}
}

func timelessCase(t *testing.T, cadenceHours int64) {
	c := newClock()
	start := c.Now()
	version := func(at time.Time) int64 { return int64(at.Sub(start).Hours()+3) / cadenceHours } // changes at start+3h, then every cadenceHours
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"asset": "bitcoin", "score": float64(version(c.Now())), "bullish": 10})
	}))
	t.Cleanup(srv.Close)
	e := envOn(t, c, srv, `
consensus:
  url: "{{URL}}"
  metrics:
    - path: /consensus
      asset: btc
`)
	e.scrape("10")
	for range 2 * cadenceHours * 60 / 5 { // two changes to learn
		c.Add(5 * time.Minute)
		e.scrape("10")
	}
	before := calls.Load()
	lateSum, changes := time.Duration(0), 0
	served := version(c.Now())
	for range 8 * cadenceHours * 60 / 5 { // eight changes, scraped every 5 minutes
		c.Add(5 * time.Minute)
		body := e.scrape("10")
		v := counter(body, `onchain_consensus_score{`)
		if int64(v) != served {
			served = int64(v)
			changed := start.Add(time.Duration(served*cadenceHours-3) * time.Hour)
			lateSum += c.Now().Sub(changed)
			changes++
		}
	}
	n := calls.Load() - before
	if changes < 7 {
		t.Fatalf("%d changes served of a value that changed 8 times", changes)
	}
	// Measured: 11 calls for 8 changes at either cadence, each served
	// at the scrape after it (the changes come at the same offset of
	// their grid every time).
	if 2*n > 3*int64(changes) {
		t.Errorf("%d calls for %d changes, want at most 1.5 a change (a fixed 5 min cache makes %d)", n, changes, 8*cadenceHours*12)
	}
	if mean := lateSum / time.Duration(changes); mean > time.Duration(cadenceHours)*time.Hour/10 {
		t.Errorf("changes served %v after they happened on average, want within a tenth of the %d h cadence", mean, cadenceHours)
	}
	t.Logf("%d calls for %d changes; served %v after each change on average", n, changes, lateSum/time.Duration(changes))
}

// TestPlanCountsTheLearnedCadence: under a daily_budget of 20, two
// price-to-book bands never seen are taken to change hourly (50 calls a
// day) and the plan cuts them; once their rows showed a day's spacing, a
// reload plans them at about a call a day each, uncut, and the log line
// and landing page (Plans) say so.
func TestPlanCountsTheLearnedCadence(t *testing.T) {
	budgeted := strings.Replace(indicatorConfig, "  token_env: T\n", "  token_env: T\n  daily_budget: 20\n", 1)
	e := newEnv(t, budgeted, fakeapi.Options{})
	if p := e.exp.Plans()["indicator"]; !p.Cut() {
		t.Fatalf("never seen, two bands under daily_budget 20: plan %q, want them cut", p.Summary(3))
	}
	// The first fill shows the rows' spacing, a day; the budget's pace
	// lets the second band's call out within a few hours.
	for range 4 {
		e.scrape("10")
		e.clock.Add(time.Hour)
	}
	again := strings.Replace(budgeted, "daily_budget: 20", "daily_budget: 21", 1)
	if err := e.exp.ApplyConfig(testtool.Config(t, e.srv.URL, again)); err != nil {
		t.Fatal(err)
	}
	if p := e.exp.Plans()["indicator"]; p.Cut() {
		t.Errorf("after the bands showed daily rows: plan %q, want them uncut", p.Summary(3))
	}
}
